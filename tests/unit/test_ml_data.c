/* CSV loader, split, standardisation and partition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ml/data.h"

static int parse(const char *text, const bbvfl_csv_opts *o, bbvfl_dataset *ds, bbvfl_err *err) {
  return bbvfl_csv_parse(text, strlen(text), "t.csv", o, ds, err);
}

static void expect_error(const char *text, const bbvfl_csv_opts *o, const char *needle1, const char *needle2) {
  bbvfl_dataset ds;
  bbvfl_err err = {0};
  assert_int_equal(parse(text, o, &ds, &err), -1);
  if (!strstr(err.msg, needle1) || (needle2 && !strstr(err.msg, needle2))) {
    print_error("message '%s' lacks '%s' / '%s'\n", err.msg, needle1, needle2 ? needle2 : "");
    fail();
  }
  assert_null(ds.x);
}

static void test_good(void **st) {
  (void)st;
  bbvfl_dataset ds;
  bbvfl_err err = {0};
  const char *t = "id,a,b,y\r\n7,1.5,-2,yes\n8, 3 ,4e1,no\n9,0,0,yes\n\n";
  bbvfl_csv_opts o = {.label = "y", .id_column = "id"};
  assert_int_equal(parse(t, &o, &ds, &err), 0);
  assert_int_equal(ds.n, 3);
  assert_int_equal(ds.d, 2);
  assert_string_equal(ds.feature_names[0], "a");
  assert_string_equal(ds.feature_names[1], "b");
  assert_true(ds.x[0] == 1.5f && ds.x[1] == -2.0f && ds.x[2] == 3.0f && ds.x[3] == 40.0f);
  assert_int_equal(ds.nclasses, 2);
  assert_string_equal(ds.class_names[0], "no");
  assert_string_equal(ds.class_names[1], "yes");
  assert_int_equal(ds.y[0], 1);
  assert_int_equal(ds.y[1], 0);
  bbvfl_dataset_free(&ds);
  /* numeric labels in numeric order, several classes, label not last */
  const char *t2 = "y,f\n10,1\n2,2\n3,3\n10,4\n";
  bbvfl_csv_opts o2 = {.label = "y"};
  assert_int_equal(parse(t2, &o2, &ds, &err), 0);
  assert_int_equal(ds.nclasses, 3);
  assert_string_equal(ds.class_names[0], "2");
  assert_string_equal(ds.class_names[2], "10");
  assert_int_equal(ds.y[0], 2);
  assert_int_equal(ds.y[1], 0);
  assert_int_equal(ds.y[3], 2);
  bbvfl_dataset_free(&ds);
}

static void test_errors(void **st) {
  (void)st;
  expect_error("", NULL, "empty", NULL);
  expect_error("\n\n", NULL, "empty", NULL);
  expect_error("a,b,y\n", NULL, "no data rows", NULL);
  expect_error("a,b,y\n1,2,0\n1,x2,1\n", NULL, "line 3, column 2 ('b')", "'x2' is not a number");
  expect_error("a,b,y\n1,2,0\n1,2\n", NULL, "line 3 has 2 fields", "header has 3");
  expect_error("a,b,y\n1,2,0,5\n", NULL, "line 2 has 4 fields", NULL);
  expect_error("a,b,y\n1,nan,0\n2,3,1\n", NULL, "line 2, column 2 ('b')", "not a finite number");
  expect_error("a,b,y\ninf,1,0\n2,3,1\n", NULL, "line 2, column 1 ('a')", "finite");
  expect_error("a,b,y\n1,,0\n2,3,1\n", NULL, "line 2, column 2 ('b'): empty cell", NULL);
  expect_error("a,b,y\n1,2,0\n2,3,0\n", NULL, "only one value", NULL);
  bbvfl_csv_opts o = {.label = "nope"};
  expect_error("a,b,y\n1,2,0\n2,3,1\n", &o, "no label column named 'nope'", NULL);
  bbvfl_csv_opts o2 = {.id_column = "zz"};
  expect_error("a,b,y\n1,2,0\n2,3,1\n", &o2, "no id column named 'zz'", NULL);
  expect_error("a,a,y\n1,2,0\n2,3,1\n", NULL, "appears twice", NULL);
  expect_error("a,b,y\n1,2,0\n2,3,\n", NULL, "line 3, column 3 ('y'): the label is empty", NULL);
}

static void test_bundled(void **st) {
  (void)st;
  const char *src = getenv("BBVFL_SOURCE_DIR");
  if (!src) bbvfl_test_skip(BBVFL_SKIP_SETUP, "BBVFL_SOURCE_DIR is not set (run through ctest)");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/breast_cancer.csv", src);
  bbvfl_dataset ds;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_csv_load(path, NULL, &ds, &err), 0);
  assert_int_equal(ds.n, 569);
  assert_int_equal(ds.d, 30);
  assert_int_equal(ds.nclasses, 2);
  int pos = 0;
  for (size_t i = 0; i < ds.n; i++) pos += ds.y[i];
  assert_int_equal(pos, 357); /* benign = 1 */
  assert_string_equal(ds.label_name, "diagnosis");
  assert_true(fabsf(ds.x[0] - 17.99f) < 1e-5f);
  /* the paper's split: 455 / 114, deterministic, disjoint, covering */
  size_t *tr, *te, ntr, nte, *tr2, *te2, ntr2, nte2;
  assert_int_equal(bbvfl_split(ds.n, 0.2, 42, &tr, &ntr, &te, &nte, &err), 0);
  assert_int_equal(ntr, 455);
  assert_int_equal(nte, 114);
  assert_int_equal(bbvfl_split(ds.n, 0.2, 42, &tr2, &ntr2, &te2, &nte2, &err), 0);
  assert_memory_equal(tr, tr2, ntr * sizeof *tr);
  unsigned char *seen = calloc(ds.n, 1);
  for (size_t i = 0; i < ntr; i++) seen[tr[i]]++;
  for (size_t i = 0; i < nte; i++) seen[te[i]]++;
  for (size_t i = 0; i < ds.n; i++) assert_int_equal(seen[i], 1);
  free(seen);
  free(tr2);
  free(te2);
  assert_int_equal(bbvfl_split(ds.n, 0.2, 43, &tr2, &ntr2, &te2, &nte2, &err), 0);
  assert_true(memcmp(te, te2, nte * sizeof *te) != 0);
  free(tr2);
  free(te2);
  /* standardisation on the training rows: mean 0, sd 1 there */
  double mean[30], sd[30];
  assert_int_equal(bbvfl_standardize_fit(&ds, tr, ntr, mean, sd, &err), 0);
  bbvfl_standardize_apply(&ds, mean, sd);
  for (size_t j = 0; j < ds.d; j++) {
    double s = 0, s2 = 0;
    for (size_t i = 0; i < ntr; i++) {
      double v = ds.x[tr[i] * ds.d + j];
      s += v;
      s2 += v * v;
    }
    assert_true(fabs(s / ntr) < 1e-4);
    assert_true(fabs(s2 / ntr - 1) < 1e-3);
  }
  free(tr);
  free(te);
  bbvfl_dataset_free(&ds);
}

static void test_partition(void **st) {
  (void)st;
  bbvfl_partition p;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_partition_even(30, 4, &p, &err), 0);
  size_t want[] = {0, 8, 16, 23, 30};
  for (int m = 0; m <= 4; m++) assert_int_equal(p.off[m], want[m]);
  assert_int_equal(p.cols[29], 29);
  bbvfl_partition_free(&p);
  assert_int_equal(bbvfl_partition_even(3, 4, &p, &err), -1);
  assert_int_equal(bbvfl_partition_parse("0-2,9/3-5/8,6,7", 10, &p, &err), 0);
  assert_int_equal(p.M, 3);
  assert_int_equal(p.off[1], 4);
  assert_int_equal(p.cols[3], 9);
  assert_int_equal(p.cols[7], 8);
  assert_int_equal(p.cols[8], 6);
  bbvfl_partition_free(&p);
  assert_int_equal(bbvfl_partition_parse("0-2/2-3", 10, &p, &err), -1);
  assert_non_null(strstr(err.msg, "column 2 is given to more than one client"));
  assert_int_equal(bbvfl_partition_parse("0-10", 10, &p, &err), -1);
  assert_non_null(strstr(err.msg, "column 10 does not exist"));
  assert_int_equal(bbvfl_partition_parse("0-2/", 10, &p, &err), -1);
  assert_int_equal(bbvfl_partition_parse("a", 10, &p, &err), -1);
  assert_int_equal(bbvfl_partition_parse("3-1", 10, &p, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_bundled),
      cmocka_unit_test(test_partition),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
