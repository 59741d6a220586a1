/* The data every client of a session derives identically from the shared table and seed: the
 * train/test split (ChaCha20 stream SPLIT of the seed), standardisation fitted on the training
 * rows, the vertical partition, and each client's standardised columns. Off-chain all M parties
 * come from one bbvfl_vfl_data; on-chain each client process prepares the same and takes its own
 * columns, so both modes train on bit-identical inputs.
 * Ownership: bbvfl_vfl_data owns its arrays (bbvfl_vfl_data_free); client columns are malloc'd
 * for the caller. */
#ifndef BBVFL_VFL_SETUP_H
#define BBVFL_VFL_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/rowdp.h"
#include "ml/data.h"

typedef struct {
  size_t n, d;               /* rows and feature columns of the table */
  size_t *train, *test;      /* row indices, ascending */
  size_t n_train, n_test;
  float *xstd;               /* n x d, standardised with the training rows' statistics */
  bbvfl_partition part;
} bbvfl_vfl_data;

/* partition: NULL = even split over M clients; else a spec (see bbvfl_partition_parse) that
 * must name exactly M clients, each holding at least one column. */
int bbvfl_vfl_data_prepare(const bbvfl_dataset *ds, uint64_t seed, double test_frac, int M, const char *partition,
                           bbvfl_vfl_data *out, bbvfl_err *err);
/* The same with the row mode's scaling (rd non-NULL and on): each column's centre and scale are
 * DP estimates from the training rows (dp/dpscale.h, rd->scale_eps per party, split over its
 * columns), the scaled values clipped to +-BBVFL_DPSCALE_CLIP (rd->encoder: sign(x - DP median) in
 * {-1, +1}, the column's share on the median); randomness from the seed's SCALE
 * streams when seeded_noise, else of noise_key (nullable, dp/rng.h), else getrandom. rd NULL or
 * off: as bbvfl_vfl_data_prepare. */
int bbvfl_vfl_data_prepare_dp(const bbvfl_dataset *ds, uint64_t seed, double test_frac, int M, const char *partition,
                              const bbvfl_rowdp *rd, int seeded_noise, const uint8_t *noise_key, bbvfl_vfl_data *out,
                              bbvfl_err *err);
/* Client m's columns of every row: *cols (n x *ncols, row-major) is malloc'd, caller frees. */
int bbvfl_vfl_data_client_cols(const bbvfl_vfl_data *v, int m, float **cols, size_t *ncols, bbvfl_err *err);
void bbvfl_vfl_data_free(bbvfl_vfl_data *v);

/* The off-chain session seed S (32 bytes from the seed's ChaCha20 stream SCHEDULE); on chain S
 * comes from the election instead. */
void bbvfl_offchain_session_seed(uint64_t seed, uint8_t S[32]);

#endif
