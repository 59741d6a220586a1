/* AUROC, accuracy and F1 against hand-computed cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include <math.h>

#include "ml/metrics.h"

static void test_auroc(void **st) {
  (void)st;
  double a;
  bbvfl_err err = {0};
  /* perfect and reversed */
  float s1[] = {0.1f, 0.2f, 0.8f, 0.9f};
  int y1[] = {0, 0, 1, 1}, y1r[] = {1, 1, 0, 0};
  assert_int_equal(bbvfl_auroc(s1, y1, 4, &a, &err), 0);
  assert_true(a == 1.0);
  assert_int_equal(bbvfl_auroc(s1, y1r, 4, &a, &err), 0);
  assert_true(a == 0.0);
  /* hand case: positives {0.8, 0.4}, negatives {0.5, 0.1, 0.3}: pairs won 3 + 2 = 5 of 6 */
  float s2[] = {0.8f, 0.5f, 0.4f, 0.1f, 0.3f};
  int y2[] = {1, 0, 1, 0, 0};
  assert_int_equal(bbvfl_auroc(s2, y2, 5, &a, &err), 0);
  assert_true(fabs(a - 5.0 / 6.0) < 1e-12);
  /* ties: positives {0.5, 0.7}, negatives {0.5, 0.5, 0.2}:
   * 0.5+ vs (0.5, 0.5, 0.2) = 0.5 + 0.5 + 1 = 2; 0.7 vs all = 3; total 5 of 6 */
  float s3[] = {0.5f, 0.5f, 0.7f, 0.5f, 0.2f};
  int y3[] = {1, 0, 1, 0, 0};
  assert_int_equal(bbvfl_auroc(s3, y3, 5, &a, &err), 0);
  assert_true(fabs(a - 5.0 / 6.0) < 1e-12);
  /* all scores equal: 0.5 */
  float s4[] = {0.3f, 0.3f, 0.3f, 0.3f};
  int y4[] = {1, 0, 1, 0};
  assert_int_equal(bbvfl_auroc(s4, y4, 4, &a, &err), 0);
  assert_true(a == 0.5);
  /* one class only: error */
  int y5[] = {1, 1, 1, 1};
  assert_int_equal(bbvfl_auroc(s4, y5, 4, &a, &err), -1);
}

static void test_median(void **st) {
  (void)st;
  double odd[] = {5, -1, 3, 9, 2}, even[] = {4, 1, 3, 2}, one[] = {7};
  assert_true(bbvfl_median(odd, 5) == 3);
  assert_true(odd[0] == -1 && odd[4] == 9); /* sorted in place */
  assert_true(bbvfl_median(even, 4) == 2.5);
  assert_true(bbvfl_median(one, 1) == 7);
  assert_true(bbvfl_median(one, 0) == 0);
}

static void test_acc_f1(void **st) {
  (void)st;
  /* preds at 0.5: 1 1 0 0 1 ; labels 1 0 0 1 1 -> tp 2, fp 1, fn 1, tn 1 */
  float s[] = {0.9f, 0.6f, 0.2f, 0.4f, 0.5f};
  int y[] = {1, 0, 0, 1, 1};
  assert_true(fabs(bbvfl_accuracy_bin(s, y, 5, 0.5) - 3.0 / 5.0) < 1e-12);
  assert_true(fabs(bbvfl_f1_bin(s, y, 5, 0.5) - 4.0 / 6.0) < 1e-12);
  int none[] = {0, 0, 0, 0, 0};
  float low[] = {0.1f, 0.1f, 0.1f, 0.1f, 0.1f};
  assert_true(bbvfl_f1_bin(low, none, 5, 0.5) == 0);
  /* multiclass, 3 classes, rows: argmax 0, 1, 2, 1 ; labels 0, 2, 2, 1 */
  float p[] = {0.7f, 0.2f, 0.1f, 0.1f, 0.6f, 0.3f, 0.2f, 0.3f, 0.5f, 0.3f, 0.4f, 0.3f};
  int yl[] = {0, 2, 2, 1};
  assert_true(fabs(bbvfl_accuracy_multi(p, yl, 4, 3) - 0.75) < 1e-12);
  /* class 0: tp1 -> F1 1; class 1: tp1 fp1 -> 2/3; class 2: tp1 fn1 -> 2/3; macro = (1 + 4/3)/3 */
  assert_true(fabs(bbvfl_f1_macro(p, yl, 4, 3) - (1 + 4.0 / 3.0) / 3.0) < 1e-12);
  double a;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_auroc_multi(p, yl, 4, 3, &a, &err), 0);
  /* one-vs-rest: class 0 -> 1; class 1 -> 2/3; class 2: (1 + 0.5) + 2 = 3.5 of 4 */
  assert_true(fabs(a - (1 + 2.0 / 3.0 + 0.875) / 3.0) < 1e-12);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_auroc), cmocka_unit_test(test_acc_f1),
                                     cmocka_unit_test(test_median)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
