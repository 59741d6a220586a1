#include "core/plan.h"

#include <string.h>

#include "core/aggregator.h"

int bbvfl_plan_init(bbvfl_plan *pl, size_t n_train, size_t n_test, size_t B, size_t K, size_t E, int staleness,
                    int epochs, bbvfl_err *err) {
  memset(pl, 0, sizeof *pl);
  if (B < 1) return bbvfl_fail(err, BBVFL_E_ARG, "batch size must be >= 1, got 0");
  if (n_train < B)
    return bbvfl_fail(err, BBVFL_E_ARG, "%zu training rows are fewer than one batch of %zu", n_train, B);
  if (n_test < 1) return bbvfl_fail(err, BBVFL_E_ARG, "no test rows to evaluate on");
  if (K < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--window must be >= 1 minibatch per round, got %zu", K);
  if (staleness < 0 || staleness > BBVFL_MAX_STALENESS)
    return bbvfl_fail(err, BBVFL_E_ARG, "--staleness must be in 0..%d, got %d", BBVFL_MAX_STALENESS, staleness);
  if (epochs < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--epochs must be >= 1, got %d", epochs);
  pl->n_train = n_train;
  pl->n_test = n_test;
  pl->B = B;
  pl->R = n_train / B;
  pl->K = K;
  if (K > pl->R) {
    pl->K = pl->R;
    pl->clamped = 1;
  }
  pl->E = E == 0 || E > n_test ? n_test : E;
  pl->staleness = staleness;
  pl->epochs = epochs;
  pl->T = (pl->R + pl->K - 1) / pl->K;
  pl->V = (n_test + pl->E - 1) / pl->E;
  return 0;
}

uint64_t bbvfl_plan_rounds(const bbvfl_plan *pl) { return (uint64_t)pl->epochs * (pl->T + pl->V); }

size_t bbvfl_plan_window_batches(const bbvfl_plan *pl, size_t w) {
  if (w >= pl->T) return 0;
  size_t first = w * pl->K, end = first + pl->K < pl->R ? first + pl->K : pl->R;
  return end - first;
}

/* Windows applied once round seq's pre-forward apply is done: window g = e*T + w applies every
   window but the latest s (g - s of them); an evaluation round of epoch e every window of the
   epoch but the latest s ((e+1)T - s), of the last epoch all of them. */
static uint64_t plan_applied(const bbvfl_plan *pl, uint64_t seq) {
  uint64_t per = pl->T + pl->V, e = seq / per, i = seq % per, s = (uint64_t)pl->staleness;
  uint64_t g = i < pl->T ? e * pl->T + i : (e + 1) * pl->T;
  if (i >= pl->T && e + 1 == (uint64_t)pl->epochs) return g;
  return g > s ? g - s : 0;
}

int bbvfl_window_plan(const bbvfl_plan *pl, uint64_t seq, bbvfl_round_plan *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  uint64_t per = pl->T + pl->V;
  if (per == 0 || seq >= bbvfl_plan_rounds(pl))
    return bbvfl_fail(err, BBVFL_E_ARG, "round %llu is outside the plan (%llu rounds)", (unsigned long long)seq,
                      (unsigned long long)bbvfl_plan_rounds(pl));
  uint64_t e = seq / per, i = seq % per;
  out->epoch = (int)e;
  out->epoch_start = i == 0;
  out->epoch_end = i == per - 1;
  if (i < pl->T) {
    size_t w = (size_t)i;
    out->train = 1;
    out->index = w;
    out->round = e * pl->T + w;
    out->first_batch = w * pl->K;
    out->nbatches = bbvfl_plan_window_batches(pl, w);
    out->first = out->first_batch * pl->B;
    out->nrows = out->nbatches * pl->B;
  } else {
    size_t v = (size_t)(i - pl->T);
    out->train = 0;
    out->index = v;
    out->round = BBVFL_EVAL_ROUND_BASE + e * pl->V + v;
    out->first = v * pl->E;
    out->nrows = out->first + pl->E <= pl->n_test ? pl->E : pl->n_test - out->first;
  }
  /* the staleness rule as counts of windows applied (global window numbers, across epochs) */
  uint64_t before = seq ? plan_applied(pl, seq - 1) : 0, after = plan_applied(pl, seq);
  out->apply = (size_t)(after - before);
  out->apply_round = out->apply ? before : 0;
  return 0;
}

int bbvfl_plan_seq_of_round(const bbvfl_plan *pl, uint64_t round, uint64_t *seq, bbvfl_err *err) {
  uint64_t per = pl->T + pl->V, e, i;
  if (round >= BBVFL_EVAL_ROUND_BASE) {
    uint64_t r = round - BBVFL_EVAL_ROUND_BASE;
    e = pl->V ? r / pl->V : 0;
    i = pl->T + (pl->V ? r % pl->V : 0);
  } else {
    e = pl->T ? round / pl->T : 0;
    i = pl->T ? round % pl->T : 0;
  }
  if (pl->T == 0 || pl->V == 0 || e >= (uint64_t)pl->epochs)
    return bbvfl_fail(err, BBVFL_E_ARG, "round %llu is outside the plan", (unsigned long long)round);
  *seq = e * per + i;
  return 0;
}
