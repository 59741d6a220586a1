/* A multilayer perceptron on OpenBLAS (cblas_sgemm), for one client's local model.
 *
 * Layers in -> w[0] -> w[1] -> ... -> out: every hidden layer is linear + ReLU; the output layer
 * is linear + tanh, so the embedding is bounded to [-1, 1] (C = 1 for PBM). Weights W_l are
 * (in_l x out_l) row-major, so a batch X (B x in_l, row-major) maps to X W_l + b_l.
 * Initialisation: He normal for ReLU layers, Xavier (Glorot) uniform for the tanh layer, biases 0,
 * drawn from a seeded ChaCha20 stream.
 *
 * All parameters live in one float array (params, nparams), gradients in grads (same layout), so
 * optimizers and checkpoints treat the model as one vector. The mlp owns its arrays
 * (bbvfl_mlp_free). Forward caches the activations of the last batch for backward; a copy of
 * that cache (bbvfl_mlp_cache_copy) can be back-propagated later (bbvfl_mlp_backward_cached). */
#ifndef BBVFL_ML_MLP_H
#define BBVFL_ML_MLP_H

#include <stddef.h>

#include "common/err.h"
#include "dp/rng.h"

#define BBVFL_MLP_MAX_LAYERS 8

typedef struct {
  int nlayers;                          /* number of linear layers */
  int dims[BBVFL_MLP_MAX_LAYERS + 1];   /* dims[0] = in, dims[nlayers] = out */
  size_t nparams;
  float *params, *grads;
  size_t woff[BBVFL_MLP_MAX_LAYERS], boff[BBVFL_MLP_MAX_LAYERS];
  /* forward cache for the last batch */
  size_t cap_rows, rows;
  float *act[BBVFL_MLP_MAX_LAYERS + 1]; /* act[0] = input copy, act[l+1] = output of layer l */
  size_t scratch_rows;
  float *scratch_a, *scratch_b;         /* backward deltas, scratch_rows x max dim */
} bbvfl_mlp;

/* dims: nlayers+1 sizes (in, hidden..., out), each >= 1. Parameters initialised from rng. */
int bbvfl_mlp_init(bbvfl_mlp *m, int nlayers, const int *dims, bbvfl_rng *rng, bbvfl_err *err);
void bbvfl_mlp_free(bbvfl_mlp *m);

/* Forward of rows x dims[0] inputs; out (rows x dims[nlayers]) is caller-owned. Caches for backward. */
int bbvfl_mlp_forward(bbvfl_mlp *m, const float *x, size_t rows, float *out, bbvfl_err *err);
/* Backward for the cached batch: dout = dLoss/d(output), rows x out. Sets m->grads (overwrites). */
void bbvfl_mlp_backward(bbvfl_mlp *m, const float *dout);
/* The same for row i of the cached batch alone (dout_row: dLoss/d(output) of that row, out
 * values): m->grads becomes that row's own gradient (per-example gradients for DP-SGD). No-op
 * when i is not a cached row. */
void bbvfl_mlp_backward_row(bbvfl_mlp *m, size_t i, const float *dout_row);

/* A forward's activations kept outside the model, so that several forwards can wait for their
 * gradients (pipelined rounds): one block of bbvfl_mlp_cache_floats(m, rows) floats, layer by
 * layer (act[0] = the input rows x dims[0], then each layer's output, rows x dims[l+1]).
 * The caller owns the block. */
size_t bbvfl_mlp_cache_floats(const bbvfl_mlp *m, size_t rows);
/* Copies the model's own cache of the last forward (m->rows rows) into out (that many floats). */
void bbvfl_mlp_cache_copy(const bbvfl_mlp *m, float *out);
/* Backward through rows first .. first+rows-1 of a kept block of cache_rows rows (dout: rows x
 * out, dLoss/d(output) of those rows) with the parameters params (nparams floats, the ones the
 * forward ran with; NULL: the current m->params): m->grads is overwritten with the gradient at
 * those parameters, exactly what bbvfl_mlp_backward (or _row, rows = 1) gives right after the
 * forward that produced the block. The model's own cache and parameters are left alone. Fails on
 * an out-of-range slice or out of memory. */
int bbvfl_mlp_backward_cached(bbvfl_mlp *m, const float *params, const float *cache, size_t cache_rows, size_t first,
                              size_t rows, const float *dout, bbvfl_err *err);

#endif
