/* End of stream: the sums the contract still stores, unpaid epochs, the clients' figures, the
 * checks with nothing to check, the privacy figures. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "audit/audit_int.h"
#include "dp/accountant.h"
#include "eth/abi.h"
#include "core/cfgprivacy.h"
#include "offchain/offchain.h"

/* roundSum(rr) of the stored slot k as of block blk against the sum recomputed for that round
 * (got: scratch of max_coords values). */
static void compare_stored_sum(st_t *S, size_t k, const char *blk, uint32_t *got) {
  uint64_t rr = S->ring_round[k];
  size_t coords = S->ring_coords[k];
  uint8_t cd[BBVFL_CENC_ROUND_SUM_LEN], *out = NULL, *sum = NULL;
  size_t olen = 0, slen = 0;
  bbvfl_cenc_round_sum(rr, cd);
  bbvfl_err e = {0};
  if (bbvfl_rpc_eth_call(S->rpc, NULL, S->r->contract, cd, sizeof cd, blk, &out, &olen, &e) < 0) {
    if (e.code == BBVFL_E_REVERT)
      bbvfl_au_fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL, "roundSum(%llu) reverted for a stored round: %s",
              (unsigned long long)rr, e.msg);
    else
      snprintf(S->r->checks[BBVFL_AC_SUMS].note, sizeof S->r->checks[BBVFL_AC_SUMS].note,
               "stored sums not compared: %.200s", e.msg);
    free(out);
    return;
  }
  if (bbvfl_cdec_bytes(out, olen, &sum, &slen, &e) < 0 || bbvfl_cdec_sum(sum, slen, S->p.lane_bits, got, coords, &e) < 0) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL, "roundSum(%llu): %s", (unsigned long long)rr, e.msg);
  } else if (slen != coords * (S->p.lane_bits / 8)) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL, "roundSum(%llu) is %zu bytes, the round's sum has %zu",
            (unsigned long long)rr, slen, coords * (S->p.lane_bits / 8));
  } else {
    uint32_t mask = S->p.cfg.masked ? 0xFFFFu : 0xFFFFFFFFu;
    size_t bad = SIZE_MAX;
    for (size_t j = 0; j < coords && bad == SIZE_MAX; j++)
      if ((S->ring[k][j] & mask) != got[j]) bad = j;
    if (bad != SIZE_MAX)
      bbvfl_au_fail(S, BBVFL_AC_SUMS, NULL, 1, rr, -1, NULL,
              "stored sum (roundSum) lane %zu: %u, the submitted bytes add up to %u", bad, got[bad],
              S->ring[k][bad] & mask);
    else
      bbvfl_au_ok(S, BBVFL_AC_SUMS);
  }
  free(out);
  free(sum);
}

/* The sums the contract still stores (roundSum(r) for the last RING complete rounds, as of the
 * last block read) against the sums recomputed from the submitted bytes. */
static void check_stored_sums(st_t *S) {
  if (!S->elected || S->hashed) return; /* hashed mode stores hashes, not sums */
  char blk[24];
  snprintf(blk, sizeof blk, "0x%llx", (unsigned long long)S->r->to_block);
  uint32_t *got = malloc((S->max_coords ? S->max_coords : 1) * sizeof *got);
  if (!got) return;
  for (size_t k = 0; k < RING; k++) {
    uint64_t rr = S->ring_round[k];
    if (!S->ring_have[k] || rr + RING <= S->round) continue;
    if (rr == S->round && !S->complete) continue;
    compare_stored_sum(S, k, blk, got);
  }
  free(got);
}

/* Every complete epoch paid, unless its payout is not due yet: the active client has activeBlocks
 * blocks from the later of the epoch's completion (the latest completion is used, so never too
 * early) and its own election. */
static void check_unpaid_epochs(st_t *S) {
  bbvfl_audit_result *r = S->r;
  uint32_t pending = 0, first_pending = 0;
  for (uint32_t e = 0; e < r->epochs_completed && e < S->p.cfg.epochs; e++) {
    bbvfl_audit_epoch_fig *f = bbvfl_au_epoch_fig(S, e, 0);
    if (f && f->rewards_paid) continue;
    uint64_t from = S->epoch_done_block > S->active_since ? S->epoch_done_block : S->active_since;
    if (r->to_block > from + S->p.cfg.active_blocks) {
      bbvfl_au_fail(S, BBVFL_AC_REWARDS, NULL, 0, 0, e, S->active >= 0 ? S->cl[S->active].addr : NULL,
              "epoch %u's rewards were not paid by block %llu (activeBlocks after it completed)", e,
              (unsigned long long)(from + S->p.cfg.active_blocks));
    } else if (pending++ == 0) {
      first_pending = e;
    }
  }
  if (pending)
    snprintf(r->checks[BBVFL_AC_REWARDS].note, sizeof r->checks[BBVFL_AC_REWARDS].note,
             "%u complete epoch(s) from epoch %u not paid yet (not overdue at block %llu)", pending, first_pending,
             (unsigned long long)r->to_block);
}

/* The clients' figures (each one's tokens received = rate x its rewarded submissions) and the
 * active client. */
static void client_figures(st_t *S) {
  bbvfl_audit_result *r = S->r;
  r->nclients = S->ncl;
  r->clients = calloc(S->ncl ? S->ncl : 1, sizeof *r->clients);
  for (size_t i = 0; r->clients && i < S->ncl; i++) {
    client_st *c = &S->cl[i];
    bbvfl_audit_client_fig *f = &r->clients[i];
    memcpy(f->addr, c->addr, 20);
    f->index = (uint8_t)i;
    f->excluded = c->excluded;
    f->excluded_reason = c->reason;
    f->accepted = c->accepted;
    f->rewarded = c->rewarded;
    f->paid = c->paid;
    f->transferred = c->transferred;
    f->gas = c->gas;
    bbvfl_u256 want;
    bbvfl_u256_mul_u64(&want, &S->p.cfg.reward_per_submission, c->rewarded);
    if (bbvfl_u256_cmp(&want, &c->transferred))
      bbvfl_au_fail(S, BBVFL_AC_REWARDS, NULL, 0, 0, -1, c->addr, "received tokens != rate x %llu rewarded submissions",
              (unsigned long long)c->rewarded);
  }
  if (S->active >= 0 && (size_t)S->active < S->ncl) {
    memcpy(r->active, S->cl[S->active].addr, 20);
    r->has_active = 1;
  }
}

static void note(bbvfl_audit_result *r, bbvfl_audit_check_id id, const char *text) {
  snprintf(r->checks[id].note, sizeof r->checks[id].note, "%s", text);
}

/* Before the election there is nothing to check after it: those checks are skipped. */
static void skip_before_election(st_t *S) {
  bbvfl_audit_result *r = S->r;
  if (S->elected) return;
  for (int c = BBVFL_AC_ELECTION; c < BBVFL_AC_COUNT; c++)
    if (c != BBVFL_AC_PRIVACY && c != BBVFL_AC_ELECTION && r->checks[c].status == BBVFL_AS_PASS &&
        !r->checks[c].checked) {
      r->checks[c].status = BBVFL_AS_SKIP;
      note(r, (bbvfl_audit_check_id)c, "no election yet: nothing to check");
    }
}

/* The epsilon of the parameters actually used (dp/privacy.h). After dropouts the masked sums cover
 * fewer clients: the masked bound for the smallest set, against one of its participants; the
 * feature-set level needs the training row count. */
static void privacy_figures(st_t *S) {
  bbvfl_audit_result *r = S->r;
  const bbvfl_cconfig *c = &S->p.cfg;
  bbvfl_err e = {0};
  unsigned M = c->clients;
  unsigned parts = c->masked && S->min_reopen && S->min_reopen < M ? (unsigned)S->min_reopen : M;
  /* the accountant's input from the one place that builds it (core/cfgprivacy.h), for the setup the
     chain shows: each curvature epoch (LR's sqn, the contract's round layout) releases its
     curvature rows once more, so it counts as an epoch */
  bbvfl_offchain_cfg t;
  bbvfl_offchain_defaults(&t);
  t.model = BBVFL_MODEL_MLP;
  t.mech.kind = BBVFL_MECH_PBM;
  t.mech.b = c->levels;
  t.mech.beta = c->beta_micro / 1e6;
  t.mech.clip = 0;
  t.mech.sigma = 0;
  t.P = (int)c->dim;
  t.M = (int)M;
  t.epochs = (int)(c->epochs + bbvfl_cconfig_curv_epochs(c->epochs, c->curv_every));
  memset(&t.rowdp, 0, sizeof t.rowdp);
  /* as the session file declares (the chain shows neither the label draw nor where the noise came from) */
  t.label_eps = S->o->declared_label_eps;
  t.seeded_noise = S->o->declared_reproducible;
  const size_t rows = c->train_rows <= INT_MAX ? c->train_rows : 0;
  const int releases = t.epochs;
  if (!(t.mech.beta > 0)) {
    r->checks[BBVFL_AC_PRIVACY].status = BBVFL_AS_SKIP;
    note(r, BBVFL_AC_PRIVACY, "beta = 0: the outputs carry no information about the inputs");
    return;
  }
  if (bbvfl_cfg_privacy(&t, rows, c->masked, (int)parts, r->delta, &r->priv, &e) < 0) {
    bbvfl_au_fail(S, BBVFL_AC_PRIVACY, NULL, 0, 0, -1, NULL, "accountant: %s", e.msg);
    return;
  }
  r->has_eps = 1;
  /* the figures every command prints: per person the headline (the label composed in), per party */
  r->eps_feature = r->priv.row_feature.epsilon;
  r->eps_sample = r->priv.person.epsilon;
  r->eps_at_edge = r->priv.rdp.at_grid_edge;
  bbvfl_au_ok(S, BBVFL_AC_PRIVACY);
  if (c->masked) {
    r->masked_participants = parts;
    r->has_masked_eps = 1;
    r->eps_masked_feature = r->priv.masked_row_feature.epsilon;
  }
  char lab[128];
  if (t.label_eps > 0)
    snprintf(lab, sizeof lab, "; labels %.4g (rr, as the session file declares)", t.label_eps);
  else
    snprintf(lab, sizeof lab, "; labels unprotected (no label DP declared)");
  if (t.seeded_noise)
    snprintf(r->checks[BBVFL_AC_PRIVACY].note, sizeof r->checks[BBVFL_AC_PRIVACY].note,
             "PBM b=%u beta=%.6g P=%u M=%u epochs=%u (%d releases): every epsilon is %s", c->levels, t.mech.beta,
             c->dim, c->clients, c->epochs, releases, BBVFL_PRIVACY_VOID);
  else
    snprintf(r->checks[BBVFL_AC_PRIVACY].note, sizeof r->checks[BBVFL_AC_PRIVACY].note,
             "PBM b=%u beta=%.6g P=%u M=%u epochs=%u (%d releases), not end-to-end: per person %.4g (%s%s), "
             "features only %.4g (%s), per party %.4g (%s) at delta %g%s%s",
             c->levels, t.mech.beta, c->dim, c->clients, c->epochs, releases, r->priv.person.epsilon,
             r->priv.person.method, isfinite(r->priv.person.epsilon) ? ", the label included" : ": unbounded, the labels are unprotected",
             r->priv.row_sample.epsilon, r->priv.row_sample.method, r->priv.row_feature.epsilon,
             r->priv.row_feature.method, r->delta, c->masked ? " (local mode; masked bound in figures)" : "", lab);
  const bbvfl_rowdp *d = S->o->declared_rowdp;
  if (d && d->on && !t.seeded_noise) { /* the session file's declaration: what the accountant gives if it is true */
    t.rowdp = *d;
    bbvfl_err e2 = {0};
    if (bbvfl_cfg_privacy(&t, rows, c->masked, (int)parts, r->delta, &r->declared, &e2) == 0) {
      r->has_declared = 1;
      size_t used = strlen(r->checks[BBVFL_AC_PRIVACY].note);
      snprintf(r->checks[BBVFL_AC_PRIVACY].note + used, sizeof r->checks[BBVFL_AC_PRIVACY].note - used,
               "; the session file declares row mode (%s): end to end if so, per person %.4g (%s), features "
               "only %.4g (%s), per party %.4g (%s): not recorded on chain",
               d->encoder ? "DP-PCA encoder" : "DP-SGD", r->declared.person.epsilon, r->declared.person.method,
               r->declared.row_sample.epsilon, r->declared.row_sample.method, r->declared.row_feature.epsilon,
               r->declared.row_feature.method);
    }
  }
}

/* What the schedule and submission checks covered; params skipped with no log in range. */
static void check_notes(st_t *S) {
  bbvfl_audit_result *r = S->r;
  if (r->checks[BBVFL_AC_SCHEDULE].status == BBVFL_AS_PASS && !r->checks[BBVFL_AC_SCHEDULE].note[0])
    snprintf(r->checks[BBVFL_AC_SCHEDULE].note, sizeof r->checks[BBVFL_AC_SCHEDULE].note,
             "permutation of the %u training rows (params) per epoch from S; window w = batches w*%u.. of it%s",
             S->p.cfg.train_rows, S->p.cfg.window, S->o->train_rows ? "; --train-rows agrees" : "");
  if (!S->p.cfg.masked && !r->checks[BBVFL_AC_SUBMISSIONS].note[0])
    note(r, BBVFL_AC_SUBMISSIONS, "signer recovered from each signed transaction; values checked <= b");
  else if (S->p.cfg.masked)
    note(r, BBVFL_AC_SUBMISSIONS, "masked mode: values cannot be range-checked; sums verified mod 2^16");
  if (!r->has_deploy && r->checks[BBVFL_AC_PARAMS].status == BBVFL_AS_PASS) {
    r->checks[BBVFL_AC_PARAMS].status = BBVFL_AS_SKIP;
    note(r, BBVFL_AC_PARAMS, "no log in range");
  }
}

/* One thing a finished session has and this one lacks. */
__attribute__((format(printf, 2, 3))) static void missing(bbvfl_audit_result *r, const char *fmt, ...) {
  if (r->nmissing >= BBVFL_AUDIT_MAX_MISSING) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->missing[r->nmissing++], sizeof r->missing[0], fmt, ap);
  va_end(ap);
}

/* Epochs below cfg.epochs lacking metrics (want_metrics) or a payout: how many, the first. */
static uint32_t epochs_lacking(st_t *S, int want_metrics, uint32_t *first) {
  uint32_t n = 0;
  for (uint32_t e = 0; e < S->p.cfg.epochs; e++) {
    bbvfl_audit_epoch_fig *f = bbvfl_au_epoch_fig(S, e, 0);
    if (f && (want_metrics ? f->has_metrics : f->rewards_paid)) continue;
    if (n++ == 0) *first = e;
  }
  return n;
}

/* Has the session finished as of the last block read? A finished session has every registration
 * and the election, all totalRounds rounds done, SessionEnded, and every epoch's metrics and
 * payout; what it lacks goes into r->missing (the verdict is then INCOMPLETE unless a check
 * failed). */
static void completeness(st_t *S) {
  bbvfl_audit_result *r = S->r;
  const bbvfl_cconfig *c = &S->p.cfg;
  if (!r->has_deploy) missing(r, "the deployment is not in the blocks read");
  if (!S->elected) {
    missing(r, "no election yet (%zu of %u clients registered%s)", S->ncl, c->clients,
            S->closed ? ", registration closed" : "");
    return;
  }
  if (!S->ended) /* the head round is the oldest not done: every round below it is done */
    missing(r, "rounds: %llu of %llu done (round %llu %s since block %llu)", (unsigned long long)S->round,
            (unsigned long long)S->p.total_rounds, (unsigned long long)S->round,
            S->complete ? "has its sum, waiting for its gradient," : "open", (unsigned long long)S->opened_at);
  if (!r->session_ended) missing(r, "no SessionEnded event");
  uint32_t first = 0, n = epochs_lacking(S, 1, &first);
  if (n) missing(r, "metrics: %u of %u epochs not posted (from epoch %u)", n, c->epochs, first);
  n = epochs_lacking(S, 0, &first);
  if (n) missing(r, "rewards: %u of %u epochs not paid (from epoch %u)", n, c->epochs, first);
}

void bbvfl_au_finish(st_t *S) {
  bbvfl_audit_result *r = S->r;
  check_stored_sums(S);
  bbvfl_au_close_rewards_group(S);
  check_unpaid_epochs(S);
  client_figures(S);
  skip_before_election(S);
  bbvfl_au_check_balances(S);
  privacy_figures(S);
  bbvfl_au_head_finish(S);
  check_notes(S);
  completeness(S);
  r->ok = 1;
  for (int c = 0; c < BBVFL_AC_COUNT; c++)
    if (r->checks[c].status == BBVFL_AS_FAIL) r->ok = 0;
}
