/* One participant's arithmetic in vertical logistic regression (`--model lr`, docs/LR.md), shared
 * by the off-chain trainer (offchain/lr_train.c: the M clients and the head in one process) and the
 * on-chain client (onchain/onchain_lr.c: one client, the head when it is the active client), so both
 * compute the same numbers from the same seed.
 *
 *  - bbvfl_lr_setup: what the session fixes (loss, mechanism with C = the logit clip under PBM,
 *    the clip, the L2 penalty, K values per row).
 *  - bbvfl_lr_block: one parameter block (a client's W_m, ncols x K, or the head's K biases) with
 *    its optimizer (sqn: a plain step along H g; capped at cfg.sqn_cap times |g| only when that
 *    is set, no cap by default). Before its first pair a block's H is h0 I with h0 from a bound
 *    on its own curvature (bbvfl_lr_client_step: 1 / (nblocks lambda_b), lambda_b >= the largest
 *    eigenvalue of its diagonal block of the Hessian, from its own columns), which keeps the
 *    first steps stable at lr 1 whatever the loss (docs/LR.md).
 *  - bbvfl_lr_client: a client's columns, its block and its noise stream; its release (clip, then
 *    the mechanism) and its gradient step for one minibatch.
 *  - the head: z = sum + b, the loss and dLoss/dz of rows, its bias step.
 *
 * Ownership: each struct owns its arrays (the _free functions); pointers passed in are borrowed
 * for the call unless said otherwise. */
#ifndef BBVFL_VFL_LR_CLIENT_H
#define BBVFL_VFL_LR_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "dp/mech.h"
#include "dp/rng.h"
#include "ml/lr.h"
#include "ml/optim.h"
#include "ml/sqn.h"
#include "core/config.h"

typedef struct {
  bbvfl_loss_kind loss;
  bbvfl_mech mech;  /* the session's, with C = the logit clip under PBM */
  float clip;       /* partial logits clipped to [-clip, clip]; 0: none */
  float l2;         /* L2 penalty on the clients' weights */
  int K;            /* values per row: 1 for two classes, else the class count */
  int nclasses;
  int nblocks;      /* parameter blocks: the M clients' and the head's biases */
  int pairs;        /* sqn: BBVFL_SQN_PAIRS_* (offchain/offchain.h) */
} bbvfl_lr_setup;

/* Checks c's LR settings against a table of nclasses classes (errors name the flag) and fills st. */
int bbvfl_lr_setup_init(bbvfl_lr_setup *st, const bbvfl_offchain_cfg *c, int nclasses, bbvfl_err *err);

typedef struct {
  size_t n;
  float *w, *g, *d, *wsum, *wprev, *s, *y; /* n each: weights, gradient, step, sqn's averages and pair */
  bbvfl_optim opt;
  int have_opt;
  bbvfl_sqn sqn;
  int have_sqn;
  double cap;   /* sqn: > 0 caps |H g| at cap |g| (cfg.sqn_cap); 0: none */
  int h0_set;   /* sqn: h0 of the first step set */
  int nblocks;  /* blocks of the model (cfg.M + 1), for h0 */
  int defer;    /* head, sqn global: bbvfl_lr_head_step sets g and h0 but does not step */
} bbvfl_lr_block;

/* n parameters at zero, c's optimizer (sqn: c->sqn_memory pairs). */
int bbvfl_lr_block_init(bbvfl_lr_block *b, size_t n, const bbvfl_offchain_cfg *c, bbvfl_err *err);
void bbvfl_lr_block_free(bbvfl_lr_block *b);
/* One optimizer step along b->g (sqn: along H g, capped if b->cap > 0). */
void bbvfl_lr_block_step(bbvfl_lr_block *b);
/* One optimizer step along b->d as it is (sqn global: d = the block's part of H g). */
void bbvfl_lr_block_step_d(bbvfl_lr_block *b);
/* sqn, after the block's step of training round number done (1, 2, ...): its iterate summed;
 * every L rounds the average of the last L, s = it minus the previous average (from the second).
 * Returns 1 when a curvature round follows (s is set: round done = kL, k >= 2). */
int bbvfl_lr_block_tick(bbvfl_lr_block *b, uint64_t done, int L);

typedef struct {
  const bbvfl_lr_setup *st; /* borrowed for the client's life */
  size_t ncols;
  float *x;                 /* table rows x ncols (owned) */
  bbvfl_lr_block bl;
  bbvfl_rng noise;
  float *a;                 /* one minibatch's masked dLoss/dz (scratch, maxrows x K) */
} bbvfl_lr_client;

/* Client `index` on x (rows x ncols, ownership taken, also on failure): noise stream
 * (seeded, seed, BBVFL_STREAM_NOISE index) as the MLP party's; maxrows: the largest minibatch. */
int bbvfl_lr_client_init(bbvfl_lr_client *p, const bbvfl_lr_setup *st, const bbvfl_offchain_cfg *c, float *x,
                         size_t ncols, int index, size_t maxrows, bbvfl_err *err);
void bbvfl_lr_client_free(bbvfl_lr_client *p);
/* The partial logits X[rows] W into out (nrows x K). */
void bbvfl_lr_client_logits(const bbvfl_lr_client *p, const size_t *rows, size_t nrows, float *out);
/* Releases vals (nrows x K): clipped in place, then PBM into q (nrows*K bytes), or Gaussian noise in
 * place with the rows' clip scales into scale (nullable), or nothing (none). */
void bbvfl_lr_client_release(bbvfl_lr_client *p, float *vals, size_t nrows, float *scale, uint8_t *q);
/* One minibatch of B rows: its gradient X^T a + l2 W with a = grad (B x K) times the row's clip
 * scale (Gaussian; scale nullable), zero where the partial logit u (before the clip) was clipped,
 * then one step. */
void bbvfl_lr_client_step(bbvfl_lr_client *p, const size_t *rows, size_t B, const float *u, const float *scale,
                          const float *grad);
/* The gradient of bbvfl_lr_client_step into p->bl.g without the step (sqn global), and sqn's h0
 * set on the first call as the step would. */
void bbvfl_lr_client_grad(bbvfl_lr_client *p, const size_t *rows, size_t B, const float *u, const float *scale,
                          const float *grad);

/* sqn local pairs (no curvature round): y_m = H_mm s_m of the client's own block on its first S
 * rows (rows: the last training window's, g: their posted gradient, scaled by 1/lb), d2L/dz2 from
 * g (bbvfl_lr_hvp_rows_grad): y_m = X_m^T (d2L/dz2 . X_m s_m) / S + l2 s_m; pushed. The head's:
 * y_b = sum_i d2L/dz2_i s_b / S. */
void bbvfl_lr_client_local_pair(bbvfl_lr_client *p, const size_t *rows, size_t S, const float *g, double lb);
void bbvfl_lr_head_local_pair(const bbvfl_lr_setup *st, bbvfl_lr_block *head, const float *g, double lb, size_t S);

/* The curvature round (docs/LR.md): a client's X[rows] s_m (nrows x K) into out, released as
 * partial logits are; then, given r of its S rows (all of them, in order), its pair
 * (s_m, X^T r + l2 s_m) pushed (sqn global: y set, the caller pushes the joint pair; the head's
 * likewise when head->defer). */
void bbvfl_lr_client_curv_logits(const bbvfl_lr_client *p, const size_t *rows, size_t nrows, float *out);
void bbvfl_lr_client_curv_pair(bbvfl_lr_client *p, const size_t *rows, size_t S, const float *r);
/* The head's part: h = sum + s_b in place (nrows x K), r = d2L/dz2(z) h / S (z: the logits of the
 * training step); then, given r of all S rows, its pair (s_b, sum of r) pushed. */
void bbvfl_lr_head_curv_r(const bbvfl_lr_setup *st, const bbvfl_lr_block *head, float *sum, const float *z,
                          size_t nrows, size_t S, float *r);
void bbvfl_lr_head_curv_pair(bbvfl_lr_block *head, int K, const float *r, size_t S);

/* The head on rows that belong to a batch of 1/inv rows: z = sum + b (rows x K), the sum of their
 * losses (returned), dz = dLoss/dz scaled by inv (nullable), probs the scores (nullable). */
double bbvfl_lr_head_rows(const bbvfl_lr_setup *st, const bbvfl_lr_block *head, const float *sum, const int *y,
                          size_t rows, double inv, float *z, float *dz, float *probs);
/* The head's bias step for one batch: g = the sum of dz (B x K) over its rows (sqn: h0 set on the
 * first call; head->defer: g set, no step). */
void bbvfl_lr_head_step(bbvfl_lr_block *head, int K, const float *dz, size_t B);

#endif
