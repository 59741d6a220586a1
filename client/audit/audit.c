/* The audit's entry (audit.h): params() checked, the run's buffers, reading the range, clean-up.
 * The verifier itself is spread by concern over the audit_*.c files (audit_int.h). */
#include "audit/audit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_int.h"
#include "common/fsutil.h"
#include "dp/mech.h"

static const char *const CHECK_NAMES[BBVFL_AC_COUNT] = {
    "params", "registration", "election", "submissions", "sums",
    "contributors", "schedule", "gradients", "metrics", "rewards", "balances", "privacy", "head"};

const char *bbvfl_audit_check_name(bbvfl_audit_check_id id) {
  return (id >= 0 && id < BBVFL_AC_COUNT) ? CHECK_NAMES[id] : "?";
}

const char *bbvfl_audit_status_name(bbvfl_audit_status s) {
  return s == BBVFL_AS_PASS ? "PASS" : s == BBVFL_AS_FAIL ? "FAIL" : "SKIP";
}

bbvfl_audit_verdict bbvfl_audit_verdict_of(const bbvfl_audit_result *r) {
  if (!r->ok) return BBVFL_AV_FAIL;
  return r->nmissing ? BBVFL_AV_INCOMPLETE : BBVFL_AV_PASS;
}

const char *bbvfl_audit_verdict_name(bbvfl_audit_verdict v) {
  return v == BBVFL_AV_PASS ? "PASS" : v == BBVFL_AV_FAIL ? "FAIL" : "INCOMPLETE";
}

int bbvfl_audit_exit_status(bbvfl_audit_verdict v) {
  return v == BBVFL_AV_PASS ? 0 : v == BBVFL_AV_FAIL ? BBVFL_AUDIT_EXIT_FAIL : BBVFL_AUDIT_EXIT_INCOMPLETE;
}

/* params(): the values the contract derives (T, V, totalRounds, maxCoords, lane width) recomputed
 * from its Config fields; the audit then runs on its own figures. Returns -1 only for a session no
 * contract could run (err filled). */
static int check_params(st_t *S, bbvfl_err *err) {
  bbvfl_cparams *p = &S->p;
  bbvfl_cconfig d = p->cfg;
  bbvfl_err e = {0};
  if (p->cfg.batches_per_epoch == 0 || bbvfl_cconfig_derive(&d, &e) < 0 || p->cfg.clients == 0 ||
      p->cfg.clients > MAX_CLIENTS || p->cfg.batch == 0 || p->cfg.dim == 0 || p->cfg.epochs == 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "params() returned an impossible session (M = %u, B = %u, P = %u, R = %u, "
                      "K = %u, epochs = %u%s%s)", p->cfg.clients, p->cfg.batch, p->cfg.dim, p->cfg.batches_per_epoch,
                      p->cfg.window, p->cfg.epochs, e.msg[0] ? ": " : "", e.msg);
  uint64_t total = bbvfl_cconfig_total(&d);
  uint64_t maxc = bbvfl_cconfig_max_coords(&d);
  unsigned sum_max = (unsigned)d.clients * d.levels;
  unsigned bits = d.masked ? 16 : sum_max < 256 ? 8 : 16;
  if (maxc == 0 || maxc > (1u << 20) || (!d.masked && !bbvfl_pbm_lanes_fit(d.clients, d.levels)))
    return bbvfl_fail(err, BBVFL_E_STATE, "params() returned an impossible session (%llu values in the largest round, "
                      "M*b = %u)", (unsigned long long)maxc, sum_max);
  if (d.train_rounds != p->cfg.train_rounds || d.eval_rounds != p->cfg.eval_rounds || total != p->total_rounds ||
      maxc != p->max_coords || bits != p->lane_bits || d.curv_rounds != p->cfg.curv_rounds)
    bbvfl_au_fail(S, BBVFL_AC_PARAMS, NULL, 0, 0, -1, NULL,
         "params() derives T = %u, V = %u, %llu rounds, %u values at most, %u-bit lanes; from its Config they are "
         "T = %u, V = %u, %llu, %llu, %u", p->cfg.train_rounds, p->cfg.eval_rounds, (unsigned long long)p->total_rounds,
         p->max_coords, p->lane_bits, d.train_rounds, d.eval_rounds, (unsigned long long)total,
         (unsigned long long)maxc, bits);
  if (!d.hashed && d.staleness)
    bbvfl_au_fail(S, BBVFL_AC_PARAMS, NULL, 0, 0, -1, NULL, "staleness %u without hashed aggregation", d.staleness);
  p->cfg = d;
  p->total_rounds = total;
  p->max_coords = (uint32_t)maxc;
  p->lane_bits = (uint8_t)bits;
  return 0;
}

/* ------------------------------------------------------------------ entry */

void bbvfl_audit_result_free(bbvfl_audit_result *res) {
  if (!res) return;
  free(res->rounds);
  free(res->clients);
  free(res->epochs);
  res->rounds = NULL;
  res->clients = NULL;
  res->epochs = NULL;
  res->nrounds = res->nclients = res->nepochs = 0;
}

/* The chain's view of the session: chain id and params() (checked), and the figures derived from
 * them. -1 when the contract is no bbvfl aggregator or its params() are impossible. */
static int read_session(st_t *S, bbvfl_err *err) {
  bbvfl_audit_result *res = S->r;
  if (bbvfl_rpc_chain_id(S->rpc, &res->chain_id, err) < 0) return -1;
  bbvfl_aggc ag;
  bbvfl_aggc_init(&ag, S->rpc, S->o->contract);
  if (bbvfl_aggc_params(&ag, &S->p, err) < 0)
    return bbvfl_wrap(err, "reading params() of the contract (is it a bbvfl aggregator?)");
  res->params = S->p;
  memcpy(res->token, S->p.token, 20);
  if (check_params(S, err) < 0) return -1;
  S->hashed = S->p.cfg.hashed;
  S->max_coords = (size_t)bbvfl_cconfig_max_coords(&S->p.cfg);
  res->train_rows = S->p.cfg.train_rows;
  return 0;
}

/* The schedule from the chain alone (params() records the training row count): the
 * permutation's buffer, or the reason it cannot be re-derived. */
static int prepare_schedule(st_t *S, bbvfl_err *err) {
  const bbvfl_cconfig *c = &S->p.cfg;
  if (S->o->train_rows && S->o->train_rows != c->train_rows)
    bbvfl_au_fail(S, BBVFL_AC_SCHEDULE, NULL, 0, 0, -1, NULL,
            "--train-rows %llu, but the session's params() record %u training rows (the permutation's size)",
            (unsigned long long)S->o->train_rows, c->train_rows);
  if ((uint64_t)c->batches_per_epoch * c->batch > c->train_rows) {
    bbvfl_au_fail(S, BBVFL_AC_SCHEDULE, NULL, 0, 0, -1, NULL, "%u training rows cannot fill R = %u minibatches of B = %u",
            c->train_rows, c->batches_per_epoch, c->batch);
  } else if (c->train_rows > (1u << 28)) {
    bbvfl_audit_check *k = &S->r->checks[BBVFL_AC_SCHEDULE];
    k->status = BBVFL_AS_SKIP;
    snprintf(k->note, sizeof k->note, "%u training rows: too many to re-derive the permutation here", c->train_rows);
  } else {
    S->perm = malloc((size_t)c->train_rows * sizeof *S->perm);
    S->perm_epoch = -1;
    if (!S->perm) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  return 0;
}

/* The run's buffers: the stored-sum ring (lane mode) and the round figures. */
static int alloc_buffers(st_t *S, bbvfl_err *err) {
  for (size_t k = 0; k < RING && !S->hashed; k++)
    if (!(S->ring[k] = calloc(S->max_coords, sizeof *S->ring[k]))) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  S->r->rounds = calloc(BBVFL_AUDIT_MAX_BUCKETS, sizeof *S->r->rounds);
  if (!S->r->rounds) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

static void state_free(st_t *S) {
  bbvfl_rpc_free(S->rpc);
  for (size_t i = 0; i < S->nslots; i++) {
    bbvfl_au_slot_clear(&S->slots[i]);
    free(S->slots[i].sum);
  }
  free(S->slots);
  for (size_t k = 0; k < RING; k++) free(S->ring[k]);
  free(S->perm);
  free(S->leak);
  free(S->hold);
  bbvfl_au_head_clear(S);
  free(S);
}

int bbvfl_audit_run(const bbvfl_audit_opts *o, bbvfl_audit_result *res, bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  double t0 = bbvfl_now();
  st_t *S = calloc(1, sizeof *S);
  if (!S) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  S->o = o;
  S->r = res;
  S->active = -1;
  S->raw_ok = 1;
  memcpy(res->contract, o->contract, 20);
  res->delta = o->delta > 0 ? o->delta : 1e-5;
  res->bucket_width = 1;
  res->train_rows = o->train_rows;
  int rc = -1;
  uint64_t to = o->to_block;
  S->rpc = bbvfl_rpc_new(o->rpc_url, NULL, err);
  if (!S->rpc || read_session(S, err) < 0 || alloc_buffers(S, err) < 0 || prepare_schedule(S, err) < 0 ||
      bbvfl_au_head_init(S, err) < 0)
    goto out;
  if (to == 0 && bbvfl_rpc_block_number(S->rpc, &to, err) < 0) goto out;
  res->from_block = o->from_block;
  res->to_block = to;
  if (bbvfl_au_read_range(S, o->from_block, to, err) < 0) goto out;
  bbvfl_au_finish(S);
  res->elapsed_s = bbvfl_now() - t0;
  rc = 0;
out:
  if (rc < 0) bbvfl_audit_result_free(res);
  state_free(S);
  return rc;
}

void bbvfl_audit_opts_for_session(const bbvfl_session *s, const char *rpc_url, bbvfl_audit_opts *o) {
  memset(o, 0, sizeof *o);
  o->rpc_url = rpc_url ? rpc_url : s->rpc_url;
  memcpy(o->contract, s->contract, 20);
  o->from_block = s->deploy_block;
  o->delta = 1e-5;
  if (s->train.rowdp.on) o->declared_rowdp = &s->train.rowdp;
  o->declared_label_eps = s->train.label_eps;
  o->declared_reproducible = s->train.seeded_noise;
  o->head_train = &s->train;
  o->head_nclasses = s->n_classes;
}

void bbvfl_audit_count(const bbvfl_audit_result *r, int *checks, int *failed, char *first, size_t n) {
  *checks = *failed = 0;
  if (n) first[0] = 0;
  for (int i = 0; i < BBVFL_AC_COUNT; i++) {
    const bbvfl_audit_check *c = &r->checks[i];
    if (c->status == BBVFL_AS_SKIP) continue;
    (*checks)++;
    if (c->status != BBVFL_AS_FAIL) continue;
    if (!(*failed)++ && n)
      snprintf(first, n, "%.40s: %.200s", bbvfl_audit_check_name((bbvfl_audit_check_id)i), c->first.detail);
  }
}
