/* Tabular data for vertical federated learning: a CSV loader, a deterministic train/test split,
 * standardisation fitted on the training rows, and the vertical partition (which feature columns
 * each client holds).
 *
 * CSV: a header row of column names; every row has the same number of comma-separated fields;
 * feature cells are decimal numbers (no NaN/inf, no empty cells); one label column (any values:
 * the distinct labels are the classes, numbered in ascending numeric order when all are numbers,
 * else in byte order); optionally one id column that is ignored. Errors name the line and column.
 *
 * Ownership: a bbvfl_dataset owns all its arrays; free it with bbvfl_dataset_free. */
#ifndef BBVFL_ML_DATA_H
#define BBVFL_ML_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct {
  size_t n, d;          /* rows, feature columns */
  float *x;             /* n x d, row-major */
  int *y;               /* n class indices in 0..nclasses-1 */
  int nclasses;
  char **feature_names; /* d names */
  char **class_names;   /* nclasses label values as written in the file */
  char *label_name;
} bbvfl_dataset;

typedef struct {
  const char *label;     /* label column name; NULL = the last column */
  const char *id_column; /* NULL = no id column */
} bbvfl_csv_opts;

/* Parses CSV text (len bytes; need not be NUL-terminated). src names the input in errors. */
int bbvfl_csv_parse(const char *text, size_t len, const char *src, const bbvfl_csv_opts *o,
                    bbvfl_dataset *ds, bbvfl_err *err);
int bbvfl_csv_load(const char *path, const bbvfl_csv_opts *o, bbvfl_dataset *ds, bbvfl_err *err);
/* The bundled Breast Cancer table every command defaults to: breast_cancer.csv in the data folder
 * of common/rundirs.h ($BBVFL_DATA_DIR, the source tree's data/ or the installed share/bbvfl/data;
 * a static buffer, overwritten by the next call). */
const char *bbvfl_default_data_path(void);
void bbvfl_dataset_free(bbvfl_dataset *ds);

/* Deterministic split from seed: a uniform permutation of the rows (ChaCha20 stream SPLIT);
 * the first n_test = round(test_frac * n) positions are the test rows, the rest training rows,
 * each list sorted ascending. *train and *test are malloc'd, owned by the caller. */
int bbvfl_split(size_t n, double test_frac, uint64_t seed, size_t **train, size_t *n_train,
                size_t **test, size_t *n_test, bbvfl_err *err);

/* Standardisation: mean and standard deviation (population) per column over the given rows;
 * a constant column gets sd 1. apply: x = (x - mean) / sd for every row of ds. */
int bbvfl_standardize_fit(const bbvfl_dataset *ds, const size_t *rows, size_t nrows, double *mean,
                          double *sd, bbvfl_err *err);
void bbvfl_standardize_apply(bbvfl_dataset *ds, const double *mean, const double *sd);

/* Vertical partition: client m holds cols[off[m] .. off[m+1]) (feature column indices). */
typedef struct {
  int M;
  size_t *off;  /* M+1 */
  size_t *cols; /* off[M] */
} bbvfl_partition;

/* Even split of d columns over M clients (the first d % M clients get one more). */
int bbvfl_partition_even(size_t d, int M, bbvfl_partition *p, bbvfl_err *err);
/* Spec: clients separated by '/', each a comma list of column indices or ranges a-b (0-based,
 * inclusive), e.g. "0-5/6-11/12,13,20-29". Every column index must be < d, at most once. */
int bbvfl_partition_parse(const char *spec, size_t d, bbvfl_partition *p, bbvfl_err *err);
void bbvfl_partition_free(bbvfl_partition *p);
/* The one home of the partition's client count: spec parsed (NULL: the even split of d columns
 * over M), and it must name exactly M clients. On a mismatch *p is freed and err (BBVFL_E_ARG)
 * reads "<who> names <n> clients but <against> <M>" (who, against: the caller's words, e.g.
 * "--partition", "--clients is"). Returns 0, or -1 with err (*p then holds nothing). */
int bbvfl_partition_for(const char *spec, size_t d, int M, const char *who, const char *against, bbvfl_partition *p,
                        bbvfl_err *err);

#endif
