/* The active client replayed (core/headcheck.h): an honest active client simulated with the session's
 * own head code (bbvfl_vhead_train, the split-label path, the LR head) passes bit for bit over
 * several epochs; each tamper (a label flipped in one epoch, a gradient scaled by 1.01, a step
 * skipped, a gradient on a stale head, a holder's label flipped, a sum out of range) is caught at
 * its round with its verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/head.h"
#include "core/headcheck.h"
#include "core/lr_client.h"
#include "offchain/offchain.h"

#define MC 3
#define BS 4
#define NROWS 24 /* R = 6 minibatches per epoch */
#define EPOCHS 3
#define SEED 11

typedef enum { T_NONE, T_FLIP, T_SCALE, T_SKIP, T_STALE, T_HOLDER_FLIP, T_SUM, T_SOFT, T_ZERO_OWN, T_BACK_FLIP } tamper;

typedef struct {
  int nclasses, P, nb, split, lr, full_batch;
  /* re-elections: client 1 is the active client in epoch 1 (on its own labels, here y + 1 mod C),
     client 0 again in epoch 2 (T_BACK_FLIP: with its labels changed to y + 1 mod C) */
  int takeover;
  tamper t;
  uint64_t at; /* the tampered round (training rounds numbered 0, 1, ... across epochs) */
} sim;

typedef struct {
  int failed;
  bbvfl_hcheck_result first;
  bbvfl_hcheck_stats stats;
  uint64_t rounds;
} outcome;

static uint32_t rnd(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (uint32_t)(*s >> 33);
}

static void perm_of(int e, size_t *p) {
  uint64_t s = 1000 + (uint64_t)e;
  for (size_t i = 0; i < NROWS; i++) p[i] = i;
  for (size_t i = NROWS - 1; i > 0; i--) {
    size_t j = rnd(&s) % (i + 1), t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

static void cfg_of(const sim *o, bbvfl_offchain_cfg *t) {
  bbvfl_offchain_defaults(t);
  t->M = MC;
  t->B = o->full_batch ? 0 : BS;
  t->P = o->P;
  t->seed = SEED;
  t->opt.lr = 0.01;
  if (o->lr) {
    t->model = BBVFL_MODEL_LR;
    t->loss = BBVFL_LOSS_LOGISTIC;
  }
}

/* dLoss/dlogits of the rows labelled in y (others -1), the head's parameters set to w first */
static void label_grad_at(bbvfl_vhead *v, const float *w, const uint32_t *sum, const int *y, float *dlog) {
  bbvfl_err err = {0};
  double ls;
  size_t nh;
  memcpy(v->fh.params, w, v->fh.nparams * sizeof(float));
  assert_int_equal(bbvfl_vhead_label_grad(v, sum, NULL, y, BS, &ls, &nh, dlog, &err), 0);
}

static outcome run(const sim *o) {
  bbvfl_err err = {0};
  bbvfl_offchain_cfg t;
  cfg_of(o, &t);
  int P = o->P, K = o->nclasses == 2 ? 1 : o->nclasses;
  size_t nb = (size_t)o->nb, rows = nb * BS, R = NROWS / BS, T = (R + nb - 1) / nb;
  size_t lb = o->full_batch ? NROWS : BS;
  bbvfl_hcheck_cfg hc = {.train = &t, .P = P, .nclasses = o->nclasses, .B = BS, .lb = lb, .seed = SEED,
                         .n_rows = NROWS};
  bbvfl_hcheck *h = NULL;
  assert_int_equal(bbvfl_hcheck_new(&h, &hc, &err), 0);

  /* the honest active client: the session's head (MLP) or LR head block */
  bbvfl_vhead act, aux;
  bbvfl_lr_setup st;
  bbvfl_lr_block lh;
  float *dzb = calloc(lb * (size_t)K, sizeof(float));
  size_t np;
  if (o->lr) {
    assert_int_equal(bbvfl_lr_setup_init(&st, &t, o->nclasses, &err), 0);
    assert_int_equal(bbvfl_lr_block_init(&lh, (size_t)K, &t, &err), 0);
    np = (size_t)K;
  } else {
    assert_int_equal(bbvfl_vhead_init(&act, P, o->nclasses, MC, &t.mech, &t.opt, SEED, &err), 0);
    assert_int_equal(bbvfl_vhead_init(&aux, P, o->nclasses, MC, &t.mech, &t.opt, SEED, &err), 0);
    np = bbvfl_vhead_nparams(&act);
  }
  int y[NROWS];
  uint64_t s = 77;
  for (int i = 0; i < NROWS; i++) y[i] = (int)(rnd(&s) % (uint32_t)o->nclasses);
  size_t perm[NROWS];
  uint32_t *sum = malloc(rows * (size_t)P * sizeof *sum);
  float *grad = malloc(rows * (size_t)P * sizeof *grad), *hs = malloc(rows * (size_t)P * sizeof *hs);
  float *dlog = malloc(rows * (size_t)K * sizeof *dlog), *dh = malloc(rows * (size_t)K * sizeof *dh);
  float *w0 = malloc(np * sizeof *w0), *stale = malloc(np * sizeof *stale);
  float *z = malloc(rows * (size_t)K * sizeof *z);
  uint8_t *gbe = malloc(4 * rows * (size_t)P), *pbe = malloc(4 * np), *hbe = malloc(4 * rows * (size_t)K);
  int yb[NROWS], yown[NROWS], yh[NROWS];
  outcome out = {0};
  if (!o->lr) memcpy(stale, act.fh.params, np * sizeof(float));
  uint64_t round = 0;
  for (int e = 0; e < EPOCHS && !out.failed; e++) {
    perm_of(e, perm);
    for (size_t w = 0; w < T && !out.failed; w++, round++) {
      size_t nbw = (w + 1) * nb <= R ? nb : R - w * nb, n = nbw * BS;
      const size_t *rw = perm + w * nb * BS;
      for (size_t j = 0; j < n * (size_t)P; j++) sum[j] = rnd(&s) % (MC * (uint32_t)t.mech.b + 1);
      int active = o->takeover && e == 1 ? 1 : 0;
      int shift = (o->takeover && e == 1) || (o->t == T_BACK_FLIP && e == 2);
      for (size_t i = 0; i < n; i++) yb[i] = shift ? (y[rw[i]] + 1) % o->nclasses : y[rw[i]];
      if (o->t == T_FLIP && round == o->at) yb[1] = (yb[1] + 1) % o->nclasses;
      if (o->takeover && w == 0 && e > 0) {
        /* the new active client restarts the optimizer from the posted head; the checker follows */
        bbvfl_hcheck_takeover(h);
        act.opt.t = 0;
        memset(act.opt.m, 0, act.opt.n * sizeof *act.opt.m);
        if (act.opt.v) memset(act.opt.v, 0, act.opt.n * sizeof *act.opt.v);
      }
      if (o->lr) {
        /* as bbvfl_oc_lr_active_train */
        double inv = 1.0 / (double)lb;
        size_t a = w * nb * BS, end = a + n;
        bbvfl_optim_epoch(&lh.opt, e);
        bbvfl_pbm_estimate(&st.mech, MC, sum, n * (size_t)K, hs);
        for (size_t pos = a; pos < end;) {
          size_t j = pos / lb, bend = (j + 1) * lb < end ? (j + 1) * lb : end, off = pos - a;
          bbvfl_lr_head_rows(&st, &lh, hs + off * K, yb + off, bend - pos, inv, z, grad + off * K, NULL);
          memcpy(dzb + (pos - j * lb) * K, grad + off * K, (bend - pos) * K * sizeof(float));
          if (bend == (j + 1) * lb && !(o->t == T_SKIP && round == o->at)) bbvfl_lr_head_step(&lh, K, dzb, lb);
          pos = bend;
        }
        bbvfl_f32_to_be(lh.w, (size_t)K, pbe);
      } else {
        bbvfl_vhead_epoch(&act, e);
        act.M = MC;
        memcpy(w0, act.fh.params, np * sizeof(float));
        if (o->split) {
          /* holder 1 labels the odd training rows, the active client the even ones */
          for (size_t i = 0; i < n; i++) {
            yown[i] = rw[i] % 2 || (o->t == T_ZERO_OWN && round >= o->at) ? -1 : yb[i];
            yh[i] = rw[i] % 2 ? y[rw[i]] : -1;
          }
          if (o->t == T_HOLDER_FLIP && round == o->at)
            for (size_t i = 0; i < n; i++)
              if (yh[i] >= 0) {
                yh[i] = (yh[i] + 1) % o->nclasses;
                break;
              }
          for (size_t k = 0; k < nbw; k++) {
            label_grad_at(&aux, w0, sum + k * BS * P, yh + k * BS, dh + k * BS * K);
            label_grad_at(&act, w0, sum + k * BS * P, yown + k * BS, dlog + k * BS * K);
          }
          for (size_t j = 0; j < n * (size_t)K; j++) dlog[j] += dh[j];
          for (size_t k = 0; k < nbw; k++)
            assert_int_equal(bbvfl_vhead_train_dlogits(&act, sum + k * BS * P, NULL, BS, dlog + k * BS * K,
                                                       grad + k * BS * P, &err), 0);
          bbvfl_f32_to_be(dh, n * (size_t)K, hbe);
        } else {
          for (size_t k = 0; k < nbw; k++) {
            double loss;
            if (o->t == T_STALE && round == o->at) {
              /* the gradient on the head of the previous round, the step on the current one */
              memcpy(aux.fh.params, stale, np * sizeof(float));
              aux.M = MC;
              assert_int_equal(bbvfl_vhead_train(&aux, sum + k * BS * P, NULL, yb + k * BS, BS, &loss, grad + k * BS * P,
                                                 NULL, &err), 0);
              float *tmp = malloc(BS * (size_t)P * sizeof *tmp);
              assert_int_equal(bbvfl_vhead_train(&act, sum + k * BS * P, NULL, yb + k * BS, BS, &loss, tmp, NULL, &err),
                               0);
              free(tmp);
            } else if (o->t == T_SKIP && round == o->at && k == nbw - 1) {
              /* the last batch's gradient, but its step left out of the posted head */
              memcpy(w0, act.fh.params, np * sizeof(float));
              assert_int_equal(bbvfl_vhead_train(&act, sum + k * BS * P, NULL, yb + k * BS, BS, &loss, grad + k * BS * P,
                                                 NULL, &err), 0);
              memcpy(act.fh.params, w0, np * sizeof(float));
            } else {
              assert_int_equal(bbvfl_vhead_train(&act, sum + k * BS * P, NULL, yb + k * BS, BS, &loss, grad + k * BS * P,
                                                 NULL, &err), 0);
            }
          }
        }
        memcpy(stale, w0, np * sizeof(float));
        bbvfl_vhead_params_be(&act, pbe);
      }
      if (o->t == T_SCALE && round == o->at)
        for (size_t j = 0; j < n * (size_t)P; j++) grad[j] *= 1.01f;
      if (o->t == T_SOFT && round == o->at) /* row 0 implies y - (p - y)/2: a soft label, no class */
        for (size_t j = 0; j < (size_t)P; j++) grad[j] *= 1.5f;
      bbvfl_f32_to_be(grad, n * (size_t)P, gbe);
      if (o->t == T_SUM && round == o->at) sum[3] = MC * (uint32_t)t.mech.b + 1; /* what the checker is given */
      const uint8_t *lp[1] = {hbe};
      size_t ll[1] = {4 * n * (size_t)K};
      int who[1] = {1};
      bbvfl_hcheck_input in = {.round = round, .epoch = e, .nb = nbw, .first_pos = w * nb * BS, .rows = rw,
                               .contributors = MC, .sum_q = sum, .grad = gbe, .grad_len = 4 * n * (size_t)P,
                               .params = pbe, .params_len = 4 * np, .nlabel = o->split ? 1 : 0,
                               .label = o->split ? lp : NULL, .label_len = o->split ? ll : NULL,
                               .label_holder = o->split ? who : NULL, .active = active};
      bbvfl_hcheck_result r;
      assert_int_equal(bbvfl_hcheck_round(h, &in, &r, &err), 0);
      if (r.verdict != BBVFL_HC_OK) {
        out.failed = 1;
        out.first = r;
      }
      out.rounds++;
    }
  }
  bbvfl_hcheck_get_stats(h, &out.stats);
  if (out.failed) {
    char line[400];
    bbvfl_hcheck_describe(&out.first, line, sizeof line);
    print_message("%s\n", line);
    /* the verdict latches */
    bbvfl_hcheck_result again;
    bbvfl_hcheck_input in = {.round = round + 5, .nb = 1, .contributors = MC, .sum_q = sum};
    assert_int_equal(bbvfl_hcheck_round(h, &in, &again, &err), 0);
    assert_int_equal(again.verdict, out.first.verdict);
    assert_true(again.round == out.first.round);
  }
  bbvfl_hcheck_free(h);
  if (o->lr) bbvfl_lr_block_free(&lh);
  else {
    bbvfl_vhead_free(&act);
    bbvfl_vhead_free(&aux);
  }
  free(dzb);
  free(sum);
  free(grad);
  free(hs);
  free(dlog);
  free(dh);
  free(w0);
  free(stale);
  free(z);
  free(gbe);
  free(pbe);
  free(hbe);
  return out;
}

static void honest(const sim *o) {
  outcome r = run(o);
  if (r.failed) fail_msg("honest session failed the head check");
  assert_true(r.stats.rounds == r.rounds);
  assert_true(r.stats.exact_rounds == r.rounds); /* the same code in the same order: bit for bit */
  assert_true(r.stats.max_dev_grad == 0 && r.stats.max_dev_params == 0);
}

static void caught(const sim *o, bbvfl_hcheck_verdict want, bbvfl_hcheck_verdict or_want) {
  outcome r = run(o);
  assert_true(r.failed);
  if (r.first.verdict != want && r.first.verdict != or_want)
    fail_msg("verdict %s, expected %s", bbvfl_hcheck_verdict_name(r.first.verdict), bbvfl_hcheck_verdict_name(want));
  assert_true(r.first.round == o->at);
  assert_true(r.stats.rounds == o->at); /* every round before it passed */
}

static void test_honest_binary(void **st) {
  (void)st;
  honest(&(sim){.nclasses = 2, .P = 5, .nb = 1});
  honest(&(sim){.nclasses = 2, .P = 5, .nb = 4}); /* windows: 4 batches, then 2 */
}

static void test_honest_multiclass(void **st) {
  (void)st;
  honest(&(sim){.nclasses = 3, .P = 4, .nb = 2});
}

static void test_honest_split(void **st) {
  (void)st;
  honest(&(sim){.nclasses = 2, .P = 5, .nb = 2, .split = 1});
  honest(&(sim){.nclasses = 3, .P = 4, .nb = 1, .split = 1});
}

static void test_honest_lr(void **st) {
  (void)st;
  honest(&(sim){.nclasses = 2, .P = 1, .nb = 2, .lr = 1});
  honest(&(sim){.nclasses = 3, .P = 3, .nb = 1, .lr = 1});
  honest(&(sim){.nclasses = 2, .P = 1, .nb = 2, .lr = 1, .full_batch = 1}); /* one step per epoch */
}

static void test_flip(void **st) {
  (void)st;
  /* round 8 is in the second epoch (T = 6): the row implied another class in the first */
  sim o = {.nclasses = 2, .P = 5, .nb = 1, .t = T_FLIP, .at = 8};
  outcome r = run(&o);
  assert_true(r.failed);
  assert_int_equal(r.first.verdict, BBVFL_HC_LABEL_CHANGED);
  assert_true(r.first.round == 8);
  assert_int_equal(r.first.row, 1);
  assert_int_equal(r.first.cls, 1 - r.first.prev_cls);
  assert_true(r.first.prev_round < 6);
  caught(&(sim){.nclasses = 3, .P = 4, .nb = 2, .t = T_FLIP, .at = 4}, BBVFL_HC_LABEL_CHANGED, BBVFL_HC_LABEL_CHANGED);
  caught(&(sim){.nclasses = 2, .P = 1, .nb = 1, .lr = 1, .t = T_FLIP, .at = 9}, BBVFL_HC_LABEL_CHANGED,
         BBVFL_HC_LABEL_CHANGED);
}

static void test_scale(void **st) {
  (void)st;
  caught(&(sim){.nclasses = 2, .P = 5, .nb = 1, .t = T_SCALE, .at = 3}, BBVFL_HC_GRADIENT_MISMATCH,
         BBVFL_HC_LABEL_NOT_CLASS);
  caught(&(sim){.nclasses = 3, .P = 4, .nb = 2, .t = T_SCALE, .at = 5}, BBVFL_HC_GRADIENT_MISMATCH,
         BBVFL_HC_LABEL_NOT_CLASS);
  caught(&(sim){.nclasses = 2, .P = 5, .nb = 2, .split = 1, .t = T_SCALE, .at = 2}, BBVFL_HC_GRADIENT_MISMATCH,
         BBVFL_HC_LABEL_NOT_CLASS);
  caught(&(sim){.nclasses = 2, .P = 1, .nb = 2, .lr = 1, .t = T_SCALE, .at = 4}, BBVFL_HC_GRADIENT_MISMATCH,
         BBVFL_HC_LABEL_NOT_CLASS);
  /* scaled by 1.01, the rows whose label is far from the score imply no class */
  outcome r = run(&(sim){.nclasses = 2, .P = 5, .nb = 1, .t = T_SCALE, .at = 3});
  assert_true(r.first.max_dev > 0 || r.first.label_dist > 0);
}

static void test_soft_label(void **st) {
  (void)st;
  outcome r = run(&(sim){.nclasses = 2, .P = 5, .nb = 1, .t = T_SOFT, .at = 2});
  assert_true(r.failed);
  assert_int_equal(r.first.verdict, BBVFL_HC_LABEL_NOT_CLASS);
  assert_true(r.first.round == 2);
  assert_int_equal(r.first.row, 0);
  assert_true(r.first.label_dist > BBVFL_HCHECK_LABEL_TOL);
  caught(&(sim){.nclasses = 3, .P = 4, .nb = 1, .t = T_SOFT, .at = 3}, BBVFL_HC_LABEL_NOT_CLASS,
         BBVFL_HC_LABEL_NOT_CLASS);
}

static void test_skip(void **st) {
  (void)st;
  outcome r = run(&(sim){.nclasses = 2, .P = 5, .nb = 1, .t = T_SKIP, .at = 7});
  assert_true(r.failed);
  assert_int_equal(r.first.verdict, BBVFL_HC_PARAMS_NOT_STEP);
  assert_true(r.first.round == 7);
  assert_true(r.first.max_dev > r.first.tol);
  caught(&(sim){.nclasses = 3, .P = 4, .nb = 3, .t = T_SKIP, .at = 2}, BBVFL_HC_PARAMS_NOT_STEP,
         BBVFL_HC_PARAMS_NOT_STEP);
  caught(&(sim){.nclasses = 2, .P = 1, .nb = 1, .lr = 1, .t = T_SKIP, .at = 5}, BBVFL_HC_PARAMS_NOT_STEP,
         BBVFL_HC_PARAMS_NOT_STEP);
}

static void test_stale(void **st) {
  (void)st;
  caught(&(sim){.nclasses = 2, .P = 5, .nb = 1, .t = T_STALE, .at = 4}, BBVFL_HC_GRADIENT_MISMATCH,
         BBVFL_HC_GRADIENT_MISMATCH);
  caught(&(sim){.nclasses = 3, .P = 4, .nb = 2, .t = T_STALE, .at = 7}, BBVFL_HC_GRADIENT_MISMATCH,
         BBVFL_HC_GRADIENT_MISMATCH);
}

static void test_holder(void **st) {
  (void)st;
  caught(&(sim){.nclasses = 2, .P = 5, .nb = 2, .split = 1, .t = T_HOLDER_FLIP, .at = 4}, BBVFL_HC_HOLDER_CHANGED,
         BBVFL_HC_HOLDER_CHANGED);
}

/* Labels split: the active client posts zero rows for its own rows from epoch 1 on (their
   gradients dropped): each such row gave a class in epoch 0, so a zero row now is a change. */
static void test_zero_own_rows(void **st) {
  (void)st;
  caught(&(sim){.nclasses = 2, .P = 5, .nb = 2, .split = 1, .t = T_ZERO_OWN, .at = 3}, BBVFL_HC_LABEL_CHANGED,
         BBVFL_HC_LABEL_CHANGED);
  caught(&(sim){.nclasses = 3, .P = 4, .nb = 1, .split = 1, .t = T_ZERO_OWN, .at = 6}, BBVFL_HC_LABEL_CHANGED,
         BBVFL_HC_LABEL_CHANGED);
}

/* Re-elections keep the class memory per client: the client elected in between trains on its own
   labels (accepted), and the first client, elected again, is held to its own earlier classes. */
static void test_takeover_memory(void **st) {
  (void)st;
  honest(&(sim){.nclasses = 2, .P = 5, .nb = 2, .takeover = 1});
  caught(&(sim){.nclasses = 2, .P = 5, .nb = 2, .takeover = 1, .t = T_BACK_FLIP, .at = 6}, BBVFL_HC_LABEL_CHANGED,
         BBVFL_HC_LABEL_CHANGED);
  caught(&(sim){.nclasses = 3, .P = 4, .nb = 1, .takeover = 1, .t = T_BACK_FLIP, .at = 12}, BBVFL_HC_LABEL_CHANGED,
         BBVFL_HC_LABEL_CHANGED);
}

static void test_sum(void **st) {
  (void)st;
  caught(&(sim){.nclasses = 2, .P = 5, .nb = 1, .t = T_SUM, .at = 2}, BBVFL_HC_SUM_INVALID, BBVFL_HC_SUM_INVALID);
}

static void test_malformed_and_order(void **st) {
  (void)st;
  bbvfl_err err = {0};
  bbvfl_offchain_cfg t;
  sim o = {.nclasses = 2, .P = 5, .nb = 1};
  cfg_of(&o, &t);
  bbvfl_hcheck_cfg hc = {.train = &t, .P = 5, .nclasses = 2, .B = BS, .seed = SEED, .n_rows = NROWS};
  bbvfl_hcheck *h = NULL;
  assert_int_equal(bbvfl_hcheck_new(&h, &hc, &err), 0);
  uint32_t sum[BS * 5] = {0};
  uint8_t g[4 * BS * 5] = {0}, p[4 * 6] = {0};
  bbvfl_hcheck_result r;
  /* a gradient one value short */
  bbvfl_hcheck_input in = {.round = 3, .nb = 1, .contributors = MC, .sum_q = sum, .grad = g, .grad_len = sizeof g - 4,
                           .params = p, .params_len = sizeof p};
  assert_int_equal(bbvfl_hcheck_round(h, &in, &r, &err), 0);
  assert_int_equal(r.verdict, BBVFL_HC_MALFORMED);
  bbvfl_hcheck_free(h);
  /* rounds out of order: a verdict; a bad configuration: an error */
  assert_int_equal(bbvfl_hcheck_new(&h, &hc, &err), 0);
  in.grad_len = sizeof g;
  in.round = 5;
  assert_int_equal(bbvfl_hcheck_round(h, &in, &r, &err), 0);
  in.round = 4;
  assert_int_equal(bbvfl_hcheck_round(h, &in, &r, &err), 0);
  assert_true(r.verdict == BBVFL_HC_ORDER || r.round == 5); /* the first round's own verdict may latch */
  hc.nclasses = 1;
  bbvfl_hcheck *bad = NULL;
  assert_int_equal(bbvfl_hcheck_new(&bad, &hc, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  bbvfl_hcheck_free(h);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_honest_binary), cmocka_unit_test(test_honest_multiclass),
      cmocka_unit_test(test_honest_split),  cmocka_unit_test(test_honest_lr),
      cmocka_unit_test(test_flip),          cmocka_unit_test(test_scale),
      cmocka_unit_test(test_soft_label),
      cmocka_unit_test(test_skip),          cmocka_unit_test(test_stale),
      cmocka_unit_test(test_holder),        cmocka_unit_test(test_sum),
      cmocka_unit_test(test_zero_own_rows), cmocka_unit_test(test_takeover_memory),
      cmocka_unit_test(test_malformed_and_order),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
