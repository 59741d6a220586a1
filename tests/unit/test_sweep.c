/* offchain/sweep.h: the sweep's grid run directly on a tiny grid (2 clients, NPQ and PBM b 4 x beta
 * 0.1, two seeds, one epoch) on the Breast Cancer table: the cells' order and shape, the medians
 * against the runs, each cell's epsilon against bbvfl_cfg_privacy, the progress callback, the
 * reproducible-noise case (no epsilon, runs repeat exactly), bad lists refused before any run and
 * a failing run reported with its cell and nothing left allocated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_skip.h"
#include "train_fixture.h"
#include <math.h>
#include <string.h>

#include "ml/metrics.h"
#include "offchain/sweep.h"
#include "core/cfgprivacy.h"

static const double CL[] = {2}, B[] = {4, 8}, BETA[] = {0.1, 0.2};

typedef struct {
  int calls, last_done, total;
} seen;

static void on_run(void *ctx, const bbvfl_sweep_progress *p) {
  seen *s = ctx;
  assert_int_equal(p->done, s->calls); /* called before each run, runs done so far */
  s->calls++;
  s->total = p->total;
  s->last_done = p->done;
}

static bbvfl_sweep_in tiny(seen *s) {
  return (bbvfl_sweep_in){.clients = CL, .nclients = 1, .b = B, .nb = 2, .beta = BETA, .nbeta = 2, .seeds = 2,
                          .first_seed = 3, .delta = 1e-5, .on_run = on_run, .ctx = s};
}

static void base_cfg(bbvfl_offchain_cfg *c) {
  bbvfl_offchain_defaults(c);
  c->epochs = 1;
}

static void test_grid(void **st) {
  (void)st;
  bbvfl_offchain_cfg base;
  base_cfg(&base);
  seen s = {0};
  bbvfl_sweep_in in = tiny(&s);
  bbvfl_sweep_out r;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_sweep(&bbvfl_test_ds, &base, &in, &r, &err), 0);
  assert_int_equal(r.ncells, 5);
  assert_int_equal(r.cells_per_M, 5);
  assert_int_equal(r.runs, 10);
  assert_int_equal(s.calls, 10);
  assert_int_equal(s.total, 10);
  /* NPQ first: no guarantee */
  const bbvfl_sweep_cell *n = &r.cells[0];
  assert_int_equal(n->M, 2);
  assert_int_equal(n->mech, BBVFL_MECH_NPQ);
  assert_true(n->b == 0 && n->beta == 0);
  assert_true(isinf(n->eps_person) && isinf(n->eps_party));
  /* then PBM, b major and beta minor, each with the epsilon the one home of a configuration's
     epsilon gives (at the 455 training rows of the default split) */
  for (int k = 1; k < 5; k++) {
    const bbvfl_sweep_cell *p = &r.cells[k];
    assert_int_equal(p->M, 2);
    assert_int_equal(p->mech, BBVFL_MECH_PBM);
    assert_true(p->b == B[(k - 1) / 2] && p->beta == BETA[(k - 1) % 2]);
    bbvfl_offchain_cfg c = base;
    c.M = 2;
    c.mech.kind = BBVFL_MECH_PBM;
    c.mech.b = p->b;
    c.mech.beta = p->beta;
    bbvfl_privacy pv;
    assert_int_equal(bbvfl_cfg_privacy(&c, 455, 0, 0, 1e-5, &pv, &err), 0);
    assert_true(isfinite(p->eps_person) && p->eps_person > 0);
    assert_true(p->eps_person == pv.row_sample.epsilon); /* features only, the smaller method, as printed */
    assert_true(p->eps_party == pv.row_feature.epsilon);
    assert_true(p->eps_party < p->eps_person);
  }
  assert_true(r.cells[2].eps_person > r.cells[1].eps_person); /* a larger beta: less privacy */
  double wall = 0;
  for (int k = 0; k < 5; k++) {
    const bbvfl_sweep_cell *cl = &r.cells[k];
    assert_int_equal(cl->nruns, 2);
    double a[2];
    for (int i = 0; i < 2; i++) {
      assert_int_equal(cl->runs[i].seed, 3 + i);
      assert_int_equal(cl->runs[i].epochs, 1);
      assert_true(cl->runs[i].auroc_per_epoch[0] == cl->runs[i].auroc);
      assert_true(cl->runs[i].auroc > (k == 0 ? 0.9 : 0.5) && cl->runs[i].auroc <= 1); /* NPQ: 0.99 */
      a[i] = cl->runs[i].auroc;
      wall += cl->runs[i].wall_s;
    }
    assert_true(fabs(cl->auroc_median - bbvfl_median(a, 2)) < 1e-15);
  }
  assert_true(fabs(r.mean_run_wall_s - wall / 10) < 1e-12);
  bbvfl_sweep_free(&r);
  assert_null(r.cells);
}

/* Reproducible noise: no epsilon holds, and the same grid twice repeats every run exactly. */
static void test_reproducible(void **st) {
  (void)st;
  bbvfl_offchain_cfg base;
  base_cfg(&base);
  base.seeded_noise = 1;
  seen s = {0};
  bbvfl_sweep_in in = tiny(&s);
  in.on_run = NULL;
  in.nb = in.nbeta = 1; /* NPQ and PBM b 4, beta 0.1: the runs stay few under valgrind */
  bbvfl_sweep_out r1, r2;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_sweep(&bbvfl_test_ds, &base, &in, &r1, &err), 0);
  assert_int_equal(bbvfl_sweep(&bbvfl_test_ds, &base, &in, &r2, &err), 0);
  assert_int_equal(s.calls, 0);
  assert_true(r1.cells[1].pv.reproducible);
  assert_true(isnan(r1.cells[1].eps_person) && isnan(r1.cells[1].eps_party));
  assert_int_equal(r1.ncells, 2);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 2; i++) assert_true(r1.cells[k].runs[i].auroc == r2.cells[k].runs[i].auroc);
  bbvfl_sweep_free(&r1);
  bbvfl_sweep_free(&r2);
}

static void test_bad_input(void **st) {
  (void)st;
  bbvfl_offchain_cfg base;
  base_cfg(&base);
  seen s = {0};
  bbvfl_sweep_out r;
  bbvfl_err err = {0};
  static const double half[] = {0.5}, zero[] = {0}, b300[] = {300}, frac[] = {2.5};
  bbvfl_sweep_in in = tiny(&s);
  in.beta = half;
  assert_int_equal(bbvfl_sweep(&bbvfl_test_ds, &base, &in, &r, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  assert_non_null(strstr(err.msg, "--beta: 0.5 is not in (0, 0.5)"));
  in = tiny(&s);
  in.clients = zero;
  assert_int_equal(bbvfl_sweep_check(&in, &err), -1);
  in.clients = frac;
  assert_int_equal(bbvfl_sweep_check(&in, &err), -1);
  in = tiny(&s);
  in.b = b300;
  assert_int_equal(bbvfl_sweep_check(&in, &err), -1);
  in = tiny(&s);
  in.seeds = 0;
  assert_int_equal(bbvfl_sweep_check(&in, &err), -1);
  in.seeds = BBVFL_SWEEP_MAX_SEEDS + 1;
  assert_int_equal(bbvfl_sweep_check(&in, &err), -1);
  in = tiny(&s);
  in.nbeta = 0;
  assert_int_equal(bbvfl_sweep_check(&in, &err), -1);
  in = tiny(&s);
  assert_int_equal(bbvfl_sweep_check(&in, &err), 0);
  assert_int_equal(s.calls, 0); /* nothing ran */
}

/* A run that fails (more clients than the table has columns) stops the grid: its cell is named
   and nothing stays allocated (the sanitizer build checks the leak). */
static void test_failing_run(void **st) {
  (void)st;
  bbvfl_offchain_cfg base;
  base_cfg(&base);
  static const double many[] = {2, 1000};
  seen s = {0};
  bbvfl_sweep_in in = tiny(&s);
  in.clients = many;
  in.nclients = 2;
  in.nb = in.nbeta = 1;
  bbvfl_sweep_out r;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_sweep(&bbvfl_test_ds, &base, &in, &r, &err), -1);
  assert_non_null(strstr(err.msg, "M=1000 npq"));
  assert_int_equal(s.calls, 5); /* the first M's four runs, then the failing one */
  assert_null(r.cells);
  assert_int_equal(r.ncells, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_grid), cmocka_unit_test(test_reproducible),
                                     cmocka_unit_test(test_bad_input), cmocka_unit_test(test_failing_run)};
  return bbvfl_test_exit(cmocka_run_group_tests(tests, bbvfl_test_ds_setup, bbvfl_test_ds_teardown));
}
