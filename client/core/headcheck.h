/* The active client replayed from public data only (issue 28, "a verifiable active client").
 *
 * Everything the active client posts for a training round follows from what is public: the
 * session's head (initialised from the session seed's HEAD stream, core/head.h), its optimizer
 * configuration and learning-rate schedule (session file "training"), the round's sum and
 * contributor count (RoundCompleted), the posted gradient (GradientPosted data: nb batches of
 * B x P binary32 big-endian, batch order) and the posted head parameters (GradientPosted data2),
 * and with labels split across clients the holders' dLoss/dlogits (LabelGradientPosted). The one
 * thing it keeps secret is its labels; the gradient gives each row's label back (dLoss/dh =
 * (softmax(z) - y) W^T / B), so the label may be anything, but it must be a class, the same class
 * for a training row in every epoch (label DP: the randomized label, drawn once per row), and the
 * gradient and the step must be the session head's own for those labels.
 *
 * Per training round, in round order (bbvfl_hcheck_round), the checker
 *   1. loads the parameters of the previous GradientPosted (the session's initialisation before
 *      the first) and sets the epoch's learning rate;
 *   2. forms h_hat from the sum with the contributor count (bbvfl_vhead_estimate: the same code);
 *   3. for each minibatch k of the window, at the head of the moment (the previous posted
 *      parameters stepped k times by the replay): the class each row's posted gradient implies
 *      (every class tried, the nearest taken; its distance in label units, binary: |y_implied - c|,
 *      must be <= label_tol), checked against the class that row implied in earlier epochs (the
 *      memory of the client that decides it, kept across re-elections); then
 *      the gradient recomputed by the session's head code (bbvfl_fhead_train_batch: the same
 *      arithmetic in the same order as bbvfl_vhead_train) for those classes and compared with the
 *      posted one, and the optimizer step taken with the optimizer state replayed from the start;
 *   4. compares the stepped parameters with the posted ones.
 * Labels split across clients: each holder's dLoss/dlogits (at the window's start, as holders
 * compute them) must imply a class for every row it posts (zero rows: not its rows), consistent
 * over epochs; the active client's own rows are read from its gradient, where a zero row (no
 * class) is remembered like a class: a row it gave a class cannot become a zero row later (its
 * gradient dropped), nor a zero row a class; the step is the head's
 * from their sum (own first, then the posts in chain order, as onchain_labels.c adds them).
 * `--model lr`: the gradient is dLoss/dz (rows x K, scaled by 1/lb), the parameters the K biases;
 * rows are read the same way through bbvfl_lr_head_rows (the session's loss) and the bias step is
 * bbvfl_lr_head_step once a logical batch of lb rows is complete. The sqn optimizer's curvature
 * rounds (in.curv) are counted, not checked, and with sqn the biases' steps are not checked
 * (their curvature pairs are not replayed here): only the labels are.
 *
 * Tolerance (bbvfl_hcheck_cfg): on the same build and machine the replay is bit-exact (same code,
 * same order: result.exact = 1 and max deviation 0), which is what the tests require of honest
 * sessions. Another machine's BLAS may round sgemm differently, so a comparison passes when
 * |posted - replayed| <= rel_tol * max|replayed| over the vector compared (one batch's gradient,
 * or the parameter vector); default BBVFL_HCHECK_REL_TOL = 1e-5, far below what a tamper moves (a
 * gradient scaled by 1.01: 1e-2; a step skipped or a gradient on a stale head: about lr / |W|,
 * 1e-3 at the default lr). Labels: BBVFL_HCHECK_LABEL_TOL = 0.05 label units.
 *
 * The checker owns its head, optimizer, scratch and per-row class memory (bbvfl_hcheck_free); the
 * round's inputs are borrowed for the call. The first failing verdict latches: later calls return
 * it again without checking. Never prints. */
#ifndef BBVFL_VFL_HEADCHECK_H
#define BBVFL_VFL_HEADCHECK_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "core/config.h"

#define BBVFL_HCHECK_REL_TOL 1e-5
#define BBVFL_HCHECK_LABEL_TOL 0.05

typedef enum {
  BBVFL_HC_OK = 0,
  BBVFL_HC_MALFORMED,         /* a posted length is not the round's, or a value is not finite */
  BBVFL_HC_SUM_INVALID,       /* the sum cannot be estimated (a value above contributors * b) */
  BBVFL_HC_LABEL_NOT_CLASS,   /* a row's gradient implies no class (distance > label_tol) */
  BBVFL_HC_LABEL_CHANGED,     /* a training row implies another class than in an earlier epoch */
  BBVFL_HC_GRADIENT_MISMATCH, /* the posted gradient is not the head's for the implied classes */
  BBVFL_HC_PARAMS_NOT_STEP,   /* the posted parameters are not the optimizer's step */
  BBVFL_HC_HOLDER_NOT_CLASS,  /* a label holder's dLoss/dlogits imply no class for a row */
  BBVFL_HC_HOLDER_CHANGED,    /* a label holder's row implies another class than before */
  BBVFL_HC_ORDER,             /* rounds given out of order (a caller's error, reported as a verdict) */
} bbvfl_hcheck_verdict;

typedef struct {
  const bbvfl_offchain_cfg *train; /* borrowed for init: model, mech, opt, loss, clip (session "training") */
  int P;                           /* values per row (the contract's dim) */
  int nclasses;
  size_t B;                        /* rows per minibatch of a window (the contract's batch) */
  size_t lb;                       /* lr: rows of a logical batch (B, or N_train with the full batch); 0: B */
  uint64_t seed;                   /* the session seed: the head's initialisation (seed, HEAD, 0) */
  size_t n_rows;                   /* training-row ids given in rounds are < n_rows (class memory) */
  double rel_tol;                  /* 0: BBVFL_HCHECK_REL_TOL */
  double label_tol;                /* 0: BBVFL_HCHECK_LABEL_TOL */
} bbvfl_hcheck_cfg;

/* One training round's public data, borrowed for the call. */
typedef struct {
  uint64_t round;
  int epoch;                        /* 0-based: the learning rate of the epoch */
  size_t nb;                        /* minibatches of B rows (lr: rows = nb * B positions) */
  size_t first_pos;                 /* lr: the window's first position in the epoch's permutation */
  const size_t *rows;               /* nb*B training-row ids (the schedule); NULL: no memory check */
  unsigned contributors;            /* RoundCompleted's count (the PBM estimate's n) */
  const uint32_t *sum_q;            /* PBM: nb*B*P integer sums ... */
  const float *sum_f;               /* ... or the float sums (exactly one non-NULL) */
  const uint8_t *grad; size_t grad_len;     /* GradientPosted data */
  const uint8_t *params; size_t params_len; /* GradientPosted data2 */
  size_t nlabel;                    /* LabelGradientPosted posts of the round, chain order (0: none) */
  const uint8_t *const *label; const size_t *label_len;
  const int *label_holder;          /* each post's client index (for the result) */
  int curv;                         /* lr with sqn: a curvature round (counted, not checked) */
  int active;                       /* the posting (active) client's index, whose class memory the
                                       rows it decides are held to; -1: not named (one memory) */
} bbvfl_hcheck_input;

/* Where the first deviation is and how large. */
typedef struct {
  bbvfl_hcheck_verdict verdict;
  uint64_t round;
  int epoch;
  size_t batch;          /* minibatch of the window (SIZE_MAX: n/a) */
  size_t row;            /* row of the window, batch*B + i (SIZE_MAX: n/a) */
  size_t train_row;      /* its training-row id (SIZE_MAX: unknown) */
  size_t coord;          /* coordinate of the row's gradient, or parameter index (SIZE_MAX: n/a) */
  int holder;            /* a label holder's client index; -1: the active client */
  int cls, prev_cls;     /* LABEL_*: implied class now and earlier (-1: none) */
  uint64_t prev_round;   /* LABEL_*CHANGED: the round of the earlier class */
  double label_dist;     /* distance of the implied label from the nearest class (label units) */
  double posted, expected; /* the values at (row, coord) or parameter coord */
  double max_dev, tol;   /* largest |posted - replayed| of the vector and the tolerance */
  int exact;             /* OK: gradient and parameters equal bit for bit */
} bbvfl_hcheck_result;

typedef struct bbvfl_hcheck bbvfl_hcheck;

/* Counters over the rounds checked so far. */
typedef struct {
  uint64_t rounds, exact_rounds, batches, rows, skipped_curv;
  double max_dev_grad, max_dev_params; /* relative to each vector's max|replayed| */
} bbvfl_hcheck_stats;

/* A checker for one session (*out allocated; bbvfl_hcheck_free). Errors: BBVFL_E_ARG (bad cfg),
 * BBVFL_E_NOMEM. */
int bbvfl_hcheck_new(bbvfl_hcheck **out, const bbvfl_hcheck_cfg *cfg, bbvfl_err *err);
void bbvfl_hcheck_free(bbvfl_hcheck *h);
/* One training round (rounds in increasing order). Returns 0 with *res filled (res->verdict: OK or
 * the first deviation), -1 on an error that is not a verdict (out of memory, bad arguments). */
int bbvfl_hcheck_round(bbvfl_hcheck *h, const bbvfl_hcheck_input *in, bbvfl_hcheck_result *res, bbvfl_err *err);
/* Another client took the head over (re-election): it starts a fresh optimizer state from the last
 * posted parameters, so the replayed optimizer state starts afresh. The class memory is kept: it
 * is per deciding client (in.active, a holder's index), so the new active client, which trains on
 * its own labels, is held to its own classes, and a client elected again to the ones it gave
 * before. */
void bbvfl_hcheck_takeover(bbvfl_hcheck *h);
void bbvfl_hcheck_get_stats(const bbvfl_hcheck *h, bbvfl_hcheck_stats *st);

/* "ok", "malformed", "sum invalid", "label not a class", "label changed between epochs",
 * "gradient mismatch", "params not the step", "holder label not a class", "holder label changed",
 * "rounds out of order". */
const char *bbvfl_hcheck_verdict_name(bbvfl_hcheck_verdict v);
/* One line describing res (round, batch, row, coordinate, values) into buf. */
void bbvfl_hcheck_describe(const bbvfl_hcheck_result *res, char *buf, size_t n);

#endif
