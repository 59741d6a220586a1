/* The VFL-AFE ablation (seed 004, Table 2): the same configuration, epsilon and delta, trained at
 * four levels (vanilla: clipped Gaussian release; +rescaling; +distribution adjusting; both), each
 * over nseeds seeds (seed 1..nseeds), the final test accuracy's median per level. Never prints. */
#ifndef BBVFL_BENCH_AFE_H
#define BBVFL_BENCH_AFE_H

#include "common/err.h"
#include "ml/data.h"
#include "offchain/offchain.h"

#define BBVFL_AFE_LEVELS 4
#define BBVFL_AFE_MAX_SEEDS 20
/* "vanilla", "+rescaling", "+adjusting", "+rescaling+adjusting" */
const char *bbvfl_bench_afe_level(int level);

typedef struct {
  double acc[BBVFL_AFE_LEVELS][BBVFL_AFE_MAX_SEEDS]; /* final test accuracy per level and seed */
  double median[BBVFL_AFE_LEVELS];
  int nseeds;
} bbvfl_afe_ablation;

/* base: the gaussian mechanism with its clip and sigma, afe weights (on/rescale/adjust are set per
 * level). progress (nullable) is called after each run. */
int bbvfl_bench_afe(const bbvfl_dataset *ds, const bbvfl_offchain_cfg *base, int nseeds, bbvfl_afe_ablation *out,
                    void (*progress)(void *ctx, int level, int seed, double acc), void *ctx, bbvfl_err *err);

#endif
