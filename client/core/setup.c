#include "core/setup.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dp/dpscale.h"
#include "dp/rng.h"

void bbvfl_vfl_data_free(bbvfl_vfl_data *v) {
  if (!v) return;
  free(v->train);
  free(v->test);
  free(v->xstd);
  bbvfl_partition_free(&v->part);
  memset(v, 0, sizeof *v);
}

/* Row mode: each column scaled by a DP centre and scale (dp/dpscale.h) from the training rows,
   clipped to +-BBVFL_DPSCALE_CLIP (encoder mode: sign(x - DP median), no scale); a party's scale_eps split evenly over its columns. The
   randomness of column j is the stream (seed, SCALE, j) in seeded mode, so every process that
   holds the column draws the same, else getrandom. Columns outside the partition stay 0. */
static int dp_scale(const bbvfl_dataset *ds, bbvfl_vfl_data *v, const bbvfl_rowdp *rd, uint64_t seed, int seeded,
                    const uint8_t *noise_key,
                    bbvfl_err *err) {
  double *col = malloc(v->n_train * sizeof *col);
  if (!col) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memset(v->xstd, 0, ds->n * ds->d * sizeof *v->xstd);
  int rc = 0;
  for (int m = 0; m < v->part.M && rc == 0; m++) {
    size_t nc = v->part.off[m + 1] - v->part.off[m];
    double eps = rd->scale_eps / (double)nc;
    for (size_t k = 0; k < nc && rc == 0; k++) {
      size_t j = v->part.cols[v->part.off[m] + k];
      for (size_t i = 0; i < v->n_train; i++) col[i] = ds->x[v->train[i] * ds->d + j];
      bbvfl_rng r;
      if (bbvfl_rng_init_noise(&r, seeded, seed, noise_key, bbvfl_rng_stream(BBVFL_STREAM_SCALE, (uint32_t)j), err) != 0) {
        rc = -1;
        break;
      }
      double c, sc = 1;
      /* the encoder mode: sign features around a DP median (the column's whole share on it) */
      rc = rd->encoder ? bbvfl_dp_centre(col, v->n_train, eps, &r, &c, err)
                       : bbvfl_dp_robust_scale(col, v->n_train, eps, &r, &c, &sc, err);
      bbvfl_rng_wipe(&r);
      if (rc != 0) {
        bbvfl_wrap(err, "column %zu", j);
        break;
      }
      for (size_t i = 0; i < ds->n; i++) {
        double x = ds->x[i * ds->d + j], z = (x - c) / sc;
        v->xstd[i * ds->d + j] = rd->encoder ? (x >= c ? 1.0f : -1.0f)
                                             : (float)fmax(-BBVFL_DPSCALE_CLIP, fmin(BBVFL_DPSCALE_CLIP, z));
      }
    }
  }
  free(col);
  return rc;
}

int bbvfl_vfl_data_prepare(const bbvfl_dataset *ds, uint64_t seed, double test_frac, int M, const char *partition,
                           bbvfl_vfl_data *v, bbvfl_err *err) {
  return bbvfl_vfl_data_prepare_dp(ds, seed, test_frac, M, partition, NULL, 1, NULL, v, err);
}

int bbvfl_vfl_data_prepare_dp(const bbvfl_dataset *ds, uint64_t seed, double test_frac, int M, const char *partition,
                              const bbvfl_rowdp *rd, int seeded_noise, const uint8_t *noise_key, bbvfl_vfl_data *v,
                              bbvfl_err *err) {
  memset(v, 0, sizeof *v);
  if (M < 1) return bbvfl_fail(err, BBVFL_E_ARG, "need at least one client, got %d", M);
  v->n = ds->n;
  v->d = ds->d;
  double *mean = NULL, *sd = NULL;
  if (bbvfl_split(ds->n, test_frac, seed, &v->train, &v->n_train, &v->test, &v->n_test, err) != 0) goto fail;
  mean = malloc(ds->d * sizeof *mean);
  sd = malloc(ds->d * sizeof *sd);
  v->xstd = malloc(ds->n * ds->d * sizeof *v->xstd);
  if (!mean || !sd || !v->xstd) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto fail;
  }
  if (bbvfl_partition_for(partition, ds->d, M, "the partition", "there are", &v->part, err) < 0) goto fail;
  for (int m = 0; m < M; m++)
    if (v->part.off[m + 1] == v->part.off[m]) {
      bbvfl_fail(err, BBVFL_E_ARG, "client %d holds no columns in the partition", m);
      goto fail;
    }
  if (rd && rd->on) {
    if (dp_scale(ds, v, rd, seed, seeded_noise, noise_key, err) != 0) goto fail;
  } else {
    if (bbvfl_standardize_fit(ds, v->train, v->n_train, mean, sd, err) != 0) goto fail;
    for (size_t i = 0; i < ds->n; i++)
      for (size_t j = 0; j < ds->d; j++) v->xstd[i * ds->d + j] = (float)((ds->x[i * ds->d + j] - mean[j]) / sd[j]);
  }
  free(mean);
  free(sd);
  return 0;
fail:
  free(mean);
  free(sd);
  bbvfl_vfl_data_free(v);
  return -1;
}

int bbvfl_vfl_data_client_cols(const bbvfl_vfl_data *v, int m, float **cols, size_t *ncols, bbvfl_err *err) {
  if (m < 0 || m >= v->part.M) return bbvfl_fail(err, BBVFL_E_ARG, "client %d does not exist (0..%d)", m, v->part.M - 1);
  size_t nc = v->part.off[m + 1] - v->part.off[m];
  float *c = malloc(v->n * nc * sizeof *c);
  if (!c) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  const size_t *idx = v->part.cols + v->part.off[m];
  for (size_t i = 0; i < v->n; i++)
    for (size_t k = 0; k < nc; k++) c[i * nc + k] = v->xstd[i * v->d + idx[k]];
  *cols = c;
  *ncols = nc;
  return 0;
}

void bbvfl_offchain_session_seed(uint64_t seed, uint8_t S[32]) {
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, seed, bbvfl_rng_stream(BBVFL_STREAM_SCHEDULE, 0));
  bbvfl_rng_bytes(&r, S, 32);
  bbvfl_rng_wipe(&r);
}
