/* bbvfl public API: a data set (a table of rows; every party's columns of the same rows).
 *
 * CSV format: a header row of column names; every row has the same number of comma-separated
 * fields; feature cells are decimal numbers (no NaN or infinity, no empty cells); one label column
 * (any values: the distinct labels are the classes, numbered in ascending numeric order when all
 * are numbers, else in byte order); optionally one id column that is ignored. Errors name the line
 * and the column.
 *
 * Ownership: a bbvfl_table is opaque and owned by the caller from a successful load or parse until
 * bbvfl_table_destroy. The library copies everything it needs from the caller's arguments (path,
 * text, column names): none of them must outlive the call. Strings a table returns belong to the
 * table and live until it is destroyed. A table is never modified after loading: one table may
 * feed any number of bbvfl_train calls, also from several threads at once. */
#ifndef BBVFL_PUBLIC_DATA_H
#define BBVFL_PUBLIC_DATA_H

#include <stddef.h>

#include "bbvfl/common.h"
#include "bbvfl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bbvfl_table bbvfl_table;

/* Loads the CSV file at path.
 *   path       the file (non-NULL).
 *   label      the label column's name; NULL: the last column.
 *   id_column  a row-id column to ignore; NULL: none.
 *   out        non-NULL; receives the new table on success, NULL on failure.
 *   err        nullable (see bbvfl/error.h).
 * Returns BBVFL_STATUS_OK, or IO (cannot read), PARSE (malformed, line and column named; no
 * feature column; a label column with one value), ARG (a NULL argument, an unknown label or id
 * column), NOMEM. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_table_load_csv(const char *path, const char *label,
                                                                    const char *id_column, bbvfl_table **out,
                                                                    bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(4);

/* As bbvfl_table_load_csv, from len bytes of CSV text in memory (need not be NUL-terminated; the
 * library does not keep it). name (nullable: "<memory>") names the input in error messages. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_table_parse_csv(const char *text, size_t len, const char *name,
                                                                     const char *label, const char *id_column,
                                                                     bbvfl_table **out, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(6);

/* Frees a table and every string it returned. NULL: nothing happens. */
BBVFL_API void bbvfl_table_destroy(bbvfl_table *table);

/* Rows, and feature columns (label and id column excluded). 0 for a NULL table. */
BBVFL_API size_t bbvfl_table_rows(const bbvfl_table *table);
BBVFL_API size_t bbvfl_table_features(const bbvfl_table *table);
/* Number of classes (>= 2 for a loaded table); 0 for a NULL table. */
BBVFL_API int bbvfl_table_classes(const bbvfl_table *table);

/* Names as written in the file, owned by the table. NULL for a NULL table or an index out of
 * range: feature i in 0..features-1 (file order, label and id column left out), class c in
 * 0..classes-1 (class c is the label value the models' class index c stands for). */
BBVFL_API const char *bbvfl_table_feature_name(const bbvfl_table *table, size_t i);
BBVFL_API const char *bbvfl_table_class_name(const bbvfl_table *table, int c);
BBVFL_API const char *bbvfl_table_label_name(const bbvfl_table *table);

#ifdef __cplusplus
}
#endif

#endif
