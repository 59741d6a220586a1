/* include/bbvfl/data.h over ml/data.h. */
#include <stdlib.h>

#include "api/api_int.h"

static bbvfl_status table_from(int rc, bbvfl_dataset *ds, const bbvfl_err *ierr, bbvfl_table **out,
                               bbvfl_error *err) {
  if (rc != 0) return bbvfl_api_from(ierr, err);
  bbvfl_table *t = malloc(sizeof *t);
  if (!t) {
    bbvfl_dataset_free(ds);
    return bbvfl_api_fail(err, BBVFL_STATUS_NOMEM, "out of memory");
  }
  t->ds = *ds;
  *out = t;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_table_load_csv(const char *path, const char *label, const char *id_column, bbvfl_table **out,
                                  bbvfl_error *err) {
  if (!out) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_table_load_csv: out is NULL");
  *out = NULL;
  if (!path) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_table_load_csv: path is NULL");
  bbvfl_csv_opts o = {.label = label, .id_column = id_column};
  bbvfl_dataset ds;
  bbvfl_err ierr = {0};
  int rc = bbvfl_csv_load(path, &o, &ds, &ierr);
  return table_from(rc, &ds, &ierr, out, err);
}

bbvfl_status bbvfl_table_parse_csv(const char *text, size_t len, const char *name, const char *label,
                                   const char *id_column, bbvfl_table **out, bbvfl_error *err) {
  if (!out) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_table_parse_csv: out is NULL");
  *out = NULL;
  if (!text) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_table_parse_csv: text is NULL");
  bbvfl_csv_opts o = {.label = label, .id_column = id_column};
  bbvfl_dataset ds;
  bbvfl_err ierr = {0};
  int rc = bbvfl_csv_parse(text, len, name ? name : "<memory>", &o, &ds, &ierr);
  return table_from(rc, &ds, &ierr, out, err);
}

void bbvfl_table_destroy(bbvfl_table *table) {
  if (!table) return;
  bbvfl_dataset_free(&table->ds);
  free(table);
}

size_t bbvfl_table_rows(const bbvfl_table *table) { return table ? table->ds.n : 0; }

size_t bbvfl_table_features(const bbvfl_table *table) { return table ? table->ds.d : 0; }

int bbvfl_table_classes(const bbvfl_table *table) { return table ? table->ds.nclasses : 0; }

const char *bbvfl_table_feature_name(const bbvfl_table *table, size_t i) {
  return table && i < table->ds.d ? table->ds.feature_names[i] : NULL;
}

const char *bbvfl_table_class_name(const bbvfl_table *table, int c) {
  return table && c >= 0 && c < table->ds.nclasses ? table->ds.class_names[c] : NULL;
}

const char *bbvfl_table_label_name(const bbvfl_table *table) { return table ? table->ds.label_name : NULL; }
