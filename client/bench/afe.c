#include "bench/afe.h"

#include <stdlib.h>
#include <string.h>

const char *bbvfl_bench_afe_level(int level) {
  static const char *const names[BBVFL_AFE_LEVELS] = {"vanilla", "+rescaling", "+adjusting", "+rescaling+adjusting"};
  return level >= 0 && level < BBVFL_AFE_LEVELS ? names[level] : "?";
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int bbvfl_bench_afe(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *base, int nseeds, bbvfl_afe_ablation *out,
                    void (*progress)(void *ctx, int level, int seed, double acc), void *ctx, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (nseeds < 1 || nseeds > BBVFL_AFE_MAX_SEEDS)
    return bbvfl_fail(err, BBVFL_E_ARG, "--seeds must be in 1..%d, got %d", BBVFL_AFE_MAX_SEEDS, nseeds);
  if (base->mech.kind == BBVFL_MECH_NPQ) return bbvfl_fail(err, BBVFL_E_ARG, "the AFE ablation needs the gaussian or pbm mechanism");
  out->nseeds = nseeds;
  for (int l = 0; l < BBVFL_AFE_LEVELS; l++) {
    for (int s = 0; s < nseeds; s++) {
      bbvfl_offchain_cfg c = *base;
      c.afe.on = 1;
      c.afe.rescale = l == 1 || l == 3;
      c.afe.adjust = l == 2 || l == 3;
      c.seed = (uint64_t)s + 1;
      c.seeded_noise = 1;
      c.on_round = NULL;
      c.on_epoch = NULL;
      bbvfl_offchain_result r;
      if (bbvfl_offchain_train(ds, &c, &r, err) != 0)
        return bbvfl_wrap(err, "%s, seed %d", bbvfl_bench_afe_level(l), s + 1);
      out->acc[l][s] = r.per_epoch[r.epochs - 1].accuracy;
      bbvfl_offchain_result_free(&r);
      if (progress) progress(ctx, l, s + 1, out->acc[l][s]);
    }
    double v[BBVFL_AFE_MAX_SEEDS];
    memcpy(v, out->acc[l], (size_t)nseeds * sizeof *v);
    qsort(v, (size_t)nseeds, sizeof *v, cmp_d);
    out->median[l] = nseeds % 2 ? v[nseeds / 2] : 0.5 * (v[nseeds / 2 - 1] + v[nseeds / 2]);
  }
  return 0;
}
