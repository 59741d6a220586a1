#include "binding/session.h"
#include "binding/packing.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/deploy.h"
#include "eth/hex.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "ml/lr.h"
#include "binding/fit.h"

static const char *const WIRE_NAMES[] = {"lane", "hashed", "packed", "optimistic"};

int bbvfl_session_parse_aggregation(const char *name, int *mode, bbvfl_err *err) {
  for (int i = 0; name && i < 4; i++)
    if (!strcmp(name, WIRE_NAMES[i])) {
      *mode = i;
      return 0;
    }
  return bbvfl_fail(err, BBVFL_E_ARG, "--aggregation '%s': expected lane, hashed, packed or optimistic",
                    name ? name : "");
}

const char *bbvfl_session_aggregation_name(int mode) {
  return mode >= 0 && mode < 4 ? WIRE_NAMES[mode] : "unknown";
}

int bbvfl_session_set_aggregation(bbvfl_session *s, const char *name, bbvfl_err *err) {
  int mode = BBVFL_WIRE_LANES;
  if (bbvfl_session_parse_aggregation(name, &mode, err) < 0) return -1;
  s->cparams.hashed = mode != BBVFL_WIRE_LANES;
  s->cparams.wire = mode;
  return 0;
}

int bbvfl_session_parse_seed(const char *text, uint64_t *seed, bbvfl_err *err) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text || *end || text[0] == '-' || v > INT64_MAX)
    return bbvfl_fail(err, BBVFL_E_ARG, "--seed '%s': expected a number 0..2^63-1", text);
  *seed = v;
  return 0;
}

int bbvfl_session_check_setup(const bbvfl_session *s, bbvfl_err *err) {
  const bbvfl_offchain_cfg *t = &s->train;
  /* the model's own constraints on chain first (offchain/lr_train.h, docs/LR.md "On chain") */
  int lr = t->model == BBVFL_MODEL_LR;
  if (!lr && t->B == 0) return bbvfl_fail(err, BBVFL_E_ARG, "--batch 0 (full batch) is for --model lr");
  if (lr && t->opt.kind == BBVFL_OPT_SQN && t->B != 0)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "--optimizer sqn on chain runs with --batch 0 (its curvature rounds follow whole epochs: "
                      "docs/LR.md); minibatch sqn runs off chain (bbvfl train --offchain)");
  if (lr && t->opt.kind == BBVFL_OPT_SQN && t->sqn_pairs == BBVFL_SQN_PAIRS_GLOBAL)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "--sqn-pairs global runs off chain only (its round of dot products per step is not in the "
                      "contract's layout); on chain use local (the default) or round");
  if (lr && t->staleness != 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--model lr runs with --staleness 0 (each gradient applied before the next forward)");
  if (lr && t->opt.kind == BBVFL_OPT_SQN && s->cparams.hashed)
    return bbvfl_fail(err, BBVFL_E_ARG, "--optimizer sqn on chain runs with --aggregation lane (its curvature rounds)");
  if (t->mech.kind != BBVFL_MECH_PBM)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "--mechanism '%s': on chain only pbm is supported (npq and gaussian are off-chain baselines: "
                      "bbvfl train --offchain)",
                      bbvfl_mech_name(t->mech.kind));
  if (t->M < 1 || t->M > 64) return bbvfl_fail(err, BBVFL_E_ARG, "--clients must be in 1..64, got %d", t->M);
  if (bbvfl_mech_check(&t->mech, err) < 0) return -1;
  long lanes = (long)t->M * t->mech.b;
  if (s->cparams.masked && lanes >= 65536)
    return bbvfl_fail(err, BBVFL_E_ARG, "--masked needs M*b < 65536 (the masked lanes are 16 bits), got %ld", lanes);
  if (!bbvfl_pbm_lanes_fit(t->M, t->mech.b))
    return bbvfl_fail(err, BBVFL_E_ARG, "M*b = %ld exceeds 65535, the widest lane of the aggregator", lanes);
  if (t->staleness < 0 || t->staleness > 8)
    return bbvfl_fail(err, BBVFL_E_ARG, "--staleness %d must be in 0..8", t->staleness);
  if (s->cparams.wire >= BBVFL_WIRE_PACKED && s->cparams.masked)
    return bbvfl_fail(err, BBVFL_E_ARG, "--aggregation %s takes plain values: not with --masked",
                      bbvfl_session_aggregation_name(s->cparams.wire));
  if (t->staleness > 0 && !s->cparams.hashed)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "--staleness %d needs --aggregation hashed (the lane contract keeps one round open at a time)",
                      t->staleness);
  return 0;
}

int bbvfl_session_check_contract(const bbvfl_session *s, const char *addr, bbvfl_err *err) {
  uint8_t a[20];
  if (bbvfl_addr_parse(addr, a, err) < 0) return bbvfl_wrap(err, "--contract");
  if (memcmp(a, s->contract, 20))
    return bbvfl_fail(err, BBVFL_E_ARG, "--contract %s is not the session's aggregator", addr);
  return 0;
}

int bbvfl_session_check_table(const bbvfl_session *s, const bbvfl_dataset *ds, bbvfl_err *err) {
  if ((size_t)s->train.M > ds->d)
    return bbvfl_fail(err, BBVFL_E_ARG, "%d clients but the data has only %zu feature columns", s->train.M, ds->d);
  return 0;
}

int bbvfl_session_devnet_key(bbvfl_rpc *rpc, const char *flag, bbvfl_key *k, bbvfl_err *err) {
  uint64_t id;
  if (bbvfl_rpc_chain_id(rpc, &id, err) < 0) return -1;
  if (id != BBVFL_ANVIL_CHAIN_ID)
    return bbvfl_fail(err, BBVFL_E_ARG, "the node has chain id %llu, not a devnet (%llu): give %s FILE with a funded key",
                      (unsigned long long)id, BBVFL_ANVIL_CHAIN_ID, flag);
  return bbvfl_key_from_hex(BBVFL_ANVIL_DEV_KEY0, k, err);
}

static json_t *u256_json(const bbvfl_u256 *v) {
  char dec[80];
  bbvfl_u256_to_dec(v, dec);
  return json_string(dec);
}

int bbvfl_session_save(const bbvfl_session *s, const char *path, bbvfl_err *err) {
  char contract[43], token[43];
  bbvfl_addr_checksum(s->contract, contract);
  bbvfl_addr_checksum(s->token, token);
  bbvfl_cconfig derived = s->cparams; /* a configuration given in the pre-window form is written whole */
  if (bbvfl_cconfig_derive(&derived, err) < 0) return bbvfl_wrap(err, "session file: the contract parameters");
  const bbvfl_cconfig *c = &derived;
  const bbvfl_offchain_cfg *t = &s->train;
  json_t *hidden = json_array();
  for (int i = 0; hidden && i < t->nhidden; i++) json_array_append_new(hidden, json_integer(t->hidden[i]));
  json_t *cp = json_pack(
      "{s:i, s:I, s:I, s:i, s:I, s:b, s:I, s:I, s:I, s:o, s:o, s:I, s:I, s:I, s:I, s:i}", "clients", c->clients,
      "batch", (json_int_t)c->batch, "dim", (json_int_t)c->dim, "levels", c->levels, "beta_micro",
      (json_int_t)c->beta_micro, "masked", c->masked, "train_rounds", (json_int_t)c->train_rounds, "eval_rounds",
      (json_int_t)c->eval_rounds, "epochs", (json_int_t)c->epochs, "reward_per_submission",
      u256_json(&c->reward_per_submission), "reward_pool", u256_json(&c->reward_pool), "commit_blocks",
      (json_int_t)c->commit_blocks, "reveal_blocks", (json_int_t)c->reveal_blocks, "active_blocks",
      (json_int_t)c->active_blocks, "round_timeout_blocks", (json_int_t)c->round_timeout_blocks, "lane_bits",
      (int)s->lane_bits);
  json_t *tr = json_pack("{s:I, s:f, s:s, s:s, s:I, s:o, s:s, s:f, s:f, s:f, s:s, s:i, s:f, s:f, s:I}", "seed",
                         (json_int_t)t->seed, "test_frac", t->test_frac, "label", s->label, "data", s->data,
                         "n_rows", (json_int_t)s->n_rows, "hidden", hidden, "optimizer",
                         t->opt.kind == BBVFL_OPT_ADAM ? "adam" : t->opt.kind == BBVFL_OPT_SQN ? "sqn" : "sgd", "lr", t->opt.lr, "lr_decay", t->opt.decay,
                         "momentum", t->opt.momentum, "mechanism", bbvfl_mech_name(t->mech.kind), "b", t->mech.b,
                         "beta", t->mech.beta, "C", t->mech.C, "batch", (json_int_t)t->B);
  if (tr && t->label_eps > 0) json_object_set_new(tr, "label_epsilon", json_real(t->label_eps));
  /* --reproducible-noise: every client's noise from (seed, purpose, index), regenerable by anyone
     holding this file; absent: private noise (each client's own key) */
  if (tr && t->seeded_noise) json_object_set_new(tr, "reproducible_noise", json_true());
  /* VFL-AFE's local steps before PBM (ml/afe.h, core/party.c): absent when off */
  if (tr && t->afe.on)
    json_object_set_new(tr, "afe",
                        json_pack("{s:f, s:b, s:b, s:f, s:f, s:f, s:f, s:f}", "clip", t->mech.clip, "rescale",
                                  t->afe.rescale, "adjust", t->afe.adjust, "lambda", t->afe.lambda, "kl", t->afe.alpha,
                                  "conf", t->afe.conf, "p1", t->afe.p1, "p2", t->afe.p2));
  if (tr && t->model == BBVFL_MODEL_LR) /* absent: the MLP (every file written before LR on chain) */
    json_object_set_new(tr, "lr_model",
                        json_pack("{s:s, s:f, s:f, s:i, s:i, s:I}", "loss", bbvfl_loss_name((bbvfl_loss_kind)t->loss),
                                  "l2", t->l2, "logit_clip", t->logit_clip, "sqn_memory", t->sqn_memory,
                                  "sqn_interval", t->sqn_interval, "sqn_sample", (json_int_t)t->sqn_sample));
  if (tr && t->model == BBVFL_MODEL_LR) {
    json_t *lm = json_object_get(tr, "lr_model");
    json_object_set_new(lm, "sqn_pairs", json_string(t->sqn_pairs == BBVFL_SQN_PAIRS_GLOBAL  ? "global"
                                                     : t->sqn_pairs == BBVFL_SQN_PAIRS_ROUND ? "round"
                                                                                              : "local"));
    json_object_set_new(lm, "sqn_cap", json_real(t->sqn_cap));
  }
  if (tr && t->rowdp.on)
    json_object_set_new(tr, "row_privacy", json_pack("{s:f, s:f, s:f}", "dpsgd_clip", t->rowdp.clip, "dpsgd_noise",
                                                     t->rowdp.noise, "scale_epsilon", t->rowdp.scale_eps));
  if (tr && t->rowdp.on && t->rowdp.encoder) { /* the frozen DP-PCA encoder, each row released once */
    json_t *rpo = json_object_get(tr, "row_privacy");
    json_object_set_new(rpo, "encoder", json_string("pca"));
    json_object_set_new(rpo, "pca_noise", json_real(t->rowdp.pca_noise));
  }
  json_t *classes = json_array();
  for (int i = 0; classes && i < s->n_classes; i++) json_array_append_new(classes, json_string(s->classes[i]));
  if (tr && classes && s->n_classes > 0) json_object_set(tr, "classes", classes);
  json_decref(classes);
  json_t *o = json_pack("{s:i, s:s, s:I, s:s, s:s, s:I, s:o, s:o}", "version", 1, "rpc_url", s->rpc_url, "chain_id",
                        (json_int_t)s->chain_id, "contract", contract, "token", token, "deploy_block",
                        (json_int_t)s->deploy_block, "contract_params", cp, "training", tr);
  if (!o) return bbvfl_fail(err, BBVFL_E_NOMEM, "session file: out of memory");
  /* no member list: open (a deployment refuses a closed session without its members) */
  int open = s->open_registration || s->nmembers == 0;
  json_object_set_new(o, "registration", json_string(open ? "open" : "members"));
  if (!open) {
    json_t *mem = json_array();
    for (int i = 0; mem && i < s->nmembers; i++) {
      char a[43];
      bbvfl_addr_checksum(s->members[i], a);
      json_array_append_new(mem, json_string(a));
    }
    json_object_set_new(o, "members", mem);
  }
  if (s->round_timeout_s > 0 || s->active_timeout_s > 0 || s->block_time_s > 0)
    json_object_set_new(o, "deadlines",
                        json_pack("{s:f, s:f, s:f, s:I, s:I}", "block_time_s", s->block_time_s, "round_timeout_s",
                                  s->round_timeout_s, "active_timeout_s", s->active_timeout_s, "round_timeout_blocks",
                                  (json_int_t)c->round_timeout_blocks, "active_blocks", (json_int_t)c->active_blocks));
  /* the round structure (windows, evaluation rounds, pipelining, aggregation mode) */
  json_t *rs = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:b}", "batches_per_epoch",
                         (json_int_t)c->batches_per_epoch, "window", (json_int_t)c->window, "eval_rows",
                         (json_int_t)c->eval_rows, "eval_rows_per_round", (json_int_t)c->eval_rows_per_round,
                         "train_rows", (json_int_t)c->train_rows, "test_rows", (json_int_t)c->test_rows, "staleness",
                         (int)c->staleness, "hashed", c->hashed);
  if (rs && c->curv_every) { /* curvature rounds (LR's sqn); absent: none */
    json_object_set_new(rs, "curv_every", json_integer((json_int_t)c->curv_every));
    json_object_set_new(rs, "curv_rows", json_integer((json_int_t)c->curv_rows));
  }
  if (!rs || json_object_update(cp, rs) < 0) {
    json_decref(rs);
    json_decref(o);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "session file: out of memory");
  }
  json_decref(rs);
  if (c->wire >= BBVFL_WIRE_PACKED) /* packed or optimistic (absent: lane or hashed, from "hashed") */
    json_object_set_new(cp, "aggregation", json_string(bbvfl_session_aggregation_name(c->wire)));
  char *text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
  json_decref(o);
  if (!text) return bbvfl_fail(err, BBVFL_E_NOMEM, "session file: out of memory");
  size_t n = strlen(text);
  text[n] = '\n';
  int rc = bbvfl_write_file_atomic(path, text, n + 1, 0644, err);
  free(text);
  return rc < 0 ? bbvfl_wrap(err, "writing the session file %s", path) : 0;
}

int bbvfl_session_block_time(bbvfl_rpc *rpc, double *out, bbvfl_err *err) {
  *out = 0;
  uint64_t n;
  if (bbvfl_rpc_block_number(rpc, &n, err) < 0) return -1;
  if (n < 2) return 0;
  uint64_t lo = n > 15 ? n - 15 : 0, k = n - lo + 1;
  bbvfl_rpc_req reqs[16];
  memset(reqs, 0, sizeof reqs);
  for (uint64_t i = 0; i < k; i++) {
    char b[24];
    snprintf(b, sizeof b, "0x%llx", (unsigned long long)(lo + i));
    reqs[i] = (bbvfl_rpc_req){"eth_getBlockByNumber", json_pack("[s,b]", b, 0), NULL, {0}};
  }
  int rc = bbvfl_rpc_batch(rpc, reqs, k, err);
  uint64_t ts[16];
  for (uint64_t i = 0; rc == 0 && i < k; i++) {
    if (reqs[i].err.code) {
      *err = reqs[i].err;
      rc = -1;
    } else if (bbvfl_rpc_parse_u64(json_object_get(reqs[i].result, "timestamp"), &ts[i], err) < 0) {
      rc = -1;
    }
  }
  bbvfl_rpc_batch_clear(reqs, k);
  if (rc < 0) return -1;
  for (uint64_t i = 1; i < k; i++)
    if (ts[i] <= ts[i - 1]) return 0; /* blocks within one second: made per transaction */
  *out = (double)(ts[k - 1] - ts[0]) / (double)(k - 1);
  return 0;
}

uint64_t bbvfl_session_blocks_for(double seconds, double bt, uint64_t instant) {
  if (!(bt > 0)) return instant;
  double b = ceil(seconds / bt);
  if (b < 8) b = 8;
  if (b > 4294967295.0) b = 4294967295.0;
  return (uint64_t)b;
}

int bbvfl_session_deploy(bbvfl_rpc *rpc, struct bbvfl_sender *snd, const bbvfl_dataset *ds, bbvfl_session *s, bbvfl_err *err) {
  const bbvfl_offchain_cfg *t = &s->train;
  if (bbvfl_session_check_setup(s, err) < 0) return -1;
  size_t *tr = NULL, *te = NULL, ntr = 0, nte = 0;
  if (bbvfl_split(ds->n, t->test_frac, t->seed, &tr, &ntr, &te, &nte, err) < 0) return -1;
  free(tr);
  free(te);
  int lr = t->model == BBVFL_MODEL_LR, full = lr && t->B == 0;
  size_t B = full ? 1 : t->B; /* full batch: rounds of single-row "minibatches", see below */
  if (ntr < B || nte < 1 || B == 0)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "%zu training / %zu test rows: training needs at least one batch of %zu, evaluation one row", ntr,
                      nte, t->B);
  bbvfl_cconfig *c = &s->cparams;
  int masked = c->masked, hashed = c->hashed, wire = c->wire;
  uint32_t round_rows = c->window;
  uint64_t timeout_blocks = c->round_timeout_blocks, active_blocks = c->active_blocks;
  memset(c, 0, sizeof *c);
  c->masked = masked != 0;
  /* a caller that set only one of the two (the public API's and the benchmarks' `hashed`): every
     mode but lane aggregates hashed rounds, and hashed rounds without a named mode are the
     hashed contract's */
  c->hashed = hashed != 0 || wire != BBVFL_WIRE_LANES;
  c->wire = wire == BBVFL_WIRE_LANES && c->hashed ? BBVFL_WIRE_HASHED : wire;
  c->clients = (uint8_t)t->M;
  c->batch = (uint32_t)B;
  /* LR: each client releases its K partial logits per row (K = 1 for two classes) */
  c->dim = lr ? (uint32_t)(ds->nclasses == 2 ? 1 : ds->nclasses) : (uint32_t)t->P;
  c->levels = (uint8_t)t->mech.b;
  c->beta_micro = (uint32_t)(t->mech.beta * 1e6 + 0.5);
  c->batches_per_epoch = (uint32_t)(ntr / B);
  size_t K = t->window ? t->window : 1;
  /* LR full batch (docs/LR.md "On chain"): the contract's minibatches are single rows of the
     epoch's permutation and its windows chunks of them, as many rows as fit the chain (below):
     the epoch's one batch spread over ceil(N_train/chunk) rounds */
  if (full) K = round_rows ? round_rows : SIZE_MAX;
  /* windows sized for the chain (binding/fit.h): the requested window (clamped to an epoch: a window
     never crosses one) and evaluation split, lowered to the largest whose transactions fit the
     2^24 cap and whose block fits the node's block gas limit; above it only when insisted on */
  bbvfl_fit_chain ch;
  if (bbvfl_fit_read_chain(rpc, &ch, err) < 0) return -1;
  s->block_gas_limit = ch.block_gas;
  size_t nout = lr ? c->dim : (ds->nclasses == 2 ? 1 : (size_t)ds->nclasses);
  bbvfl_fit_setup fs = {.hashed = c->hashed, .masked = c->masked, .M = c->clients, .levels = c->levels, .wire = c->wire,
                        .head_len = 4 * (lr ? nout : (size_t)c->dim * nout + nout)};
  size_t E = t->eval_rows_per_round;
  if (bbvfl_fit_window(&fs, &ch, c->batches_per_epoch, B, nte, c->dim, &K, full ? round_rows != 0 : s->window_insist,
                       &E, s->eval_insist, err) < 0)
    return -1;
  c->window = (uint32_t)K;
  c->train_rows = (uint32_t)ntr;
  c->test_rows = (uint32_t)nte;
  c->eval_rows = (uint32_t)nte; /* every test row, every epoch */
  c->eval_rows_per_round = (uint32_t)E;
  /* staleness 1 by default on a chain with a block time (hashed, not LR): one block per window */
  if (s->staleness_auto && c->hashed && !lr && t->staleness == 0) {
    if (bbvfl_session_block_time(rpc, &s->block_time_s, err) < 0) return bbvfl_wrap(err, "measuring the block time");
    if (s->block_time_s > 0) s->train.staleness = 1;
  }
  c->staleness = (uint8_t)t->staleness;
  c->epochs = (uint32_t)t->epochs;
  if (lr && t->opt.kind == BBVFL_OPT_SQN && t->sqn_pairs == BBVFL_SQN_PAIRS_ROUND) {
    /* (local pairs need no round) the curvature rounds (docs/LR.md "On chain"): the full batch is one training round per epoch,
       so every sqn_interval-th epoch from the 2*sqn_interval-th has them, on its first S rows */
    c->curv_every = (uint32_t)t->sqn_interval;
    c->curv_rows = t->sqn_sample > 0 && t->sqn_sample < ntr ? (uint32_t)t->sqn_sample : (uint32_t)ntr;
  }
  if (bbvfl_cconfig_derive(c, err) < 0) return -1;
  /* the training setup follows the contract's round structure (K clamped to R) */
  if (!full) s->train.window = c->window;
  s->train.eval_rows_per_round = c->eval_rows_per_round;
  bbvfl_u256 one = bbvfl_u256_from_u64(1000000000000000000ULL);
  c->reward_per_submission = one;
  uint64_t total = bbvfl_cconfig_total(c) * c->clients;
  if (bbvfl_u256_mul_u64(&c->reward_pool, &one, total))
    return bbvfl_fail(err, BBVFL_E_ARG, "reward pool overflows");
  c->commit_blocks = 1000;
  c->reveal_blocks = 1000;
  if (!timeout_blocks || !active_blocks) {
    if (bbvfl_session_block_time(rpc, &s->block_time_s, err) < 0) return bbvfl_wrap(err, "measuring the block time");
    if (!(s->round_timeout_s > 0)) s->round_timeout_s = BBVFL_DEFAULT_ROUND_TIMEOUT_S;
    if (!(s->active_timeout_s > 0)) s->active_timeout_s = BBVFL_DEFAULT_ACTIVE_TIMEOUT_S;
  }
  c->active_blocks = active_blocks ? active_blocks : bbvfl_session_blocks_for(s->active_timeout_s, s->block_time_s, 100000);
  c->round_timeout_blocks =
      timeout_blocks ? timeout_blocks : bbvfl_session_blocks_for(s->round_timeout_s, s->block_time_s, 100000);
  s->n_rows = ds->n;
  if (ds->nclasses > BBVFL_SESSION_MAX_CLASSES)
    return bbvfl_fail(err, BBVFL_E_ARG, "the label column has %d classes; a session takes at most %d", ds->nclasses,
                      BBVFL_SESSION_MAX_CLASSES);
  for (int i = 0; i < ds->nclasses; i++)
    if (strlen(ds->class_names[i]) >= sizeof s->classes[i])
      return bbvfl_fail(err, BBVFL_E_ARG, "label value '%.40s...' is too long for a session (at most %zu characters)",
                        ds->class_names[i], sizeof s->classes[i] - 1);
  s->n_classes = ds->nclasses;
  for (int i = 0; i < ds->nclasses; i++) snprintf(s->classes[i], sizeof s->classes[i], "%s", ds->class_names[i]);
  s->chain_id = bbvfl_sender_chain_id(snd);
  if (!s->open_registration && s->nmembers != (int)c->clients)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "a session of %u clients needs its %u members' addresses (--members ADDR,... or --client-keys DIR), "
                      "or --open-registration to let anyone join; got %d (nothing was deployed)",
                      c->clients, c->clients, s->nmembers);
  uint8_t *args = NULL;
  size_t alen = 0;
  if (bbvfl_cenc_ctor(c, (const uint8_t(*)[20])s->members, s->open_registration ? 0 : (size_t)s->nmembers, &args,
                      &alen, err) < 0)
    return -1;
  bbvfl_receipt rc;
  memset(&rc, 0, sizeof rc);
  /* lane storage, hashed, packed and optimistic aggregation: four contracts on one base (contract/src/BbvflBase.sol) */
  const char *name = bbvfl_wire_contract(c->wire);
  if (!name) return bbvfl_fail(err, BBVFL_E_ARG, "aggregation mode %d is unknown", c->wire);
  int ok = bbvfl_deploy(snd, name, args, alen, 120, s->contract, &rc, err);
  free(args);
  s->deploy_block = rc.block_number;
  bbvfl_receipt_clear(&rc);
  if (ok < 0) return bbvfl_wrap(err, "deploying %s", name);
  bbvfl_aggc a;
  bbvfl_aggc_init(&a, rpc, s->contract);
  bbvfl_cparams p;
  if (bbvfl_aggc_params(&a, &p, err) < 0) return bbvfl_wrap(err, "reading the new aggregator's parameters");
  memcpy(s->token, p.token, 20);
  s->lane_bits = p.lane_bits;
  return 0;
}

int bbvfl_session_parse_members(bbvfl_session *s, const char *list, const char *flag, bbvfl_err *err) {
  s->nmembers = 0;
  const char *p = list;
  while (p && *p) {
    const char *e = strchr(p, ',');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char one[64];
    if (n == 0 || n >= sizeof one)
      return bbvfl_fail(err, BBVFL_E_ARG, "%s: '%.*s' is not an address (0x and 40 hex digits)", flag, (int)(n < 60 ? n : 60), p);
    memcpy(one, p, n);
    one[n] = 0;
    if (s->nmembers >= 64) return bbvfl_fail(err, BBVFL_E_ARG, "%s: at most 64 members", flag);
    bbvfl_err pe = {0};
    if (bbvfl_addr_parse(one, s->members[s->nmembers], &pe) < 0)
      return bbvfl_fail(err, BBVFL_E_ARG, "%s: member %d: %s", flag, s->nmembers + 1, pe.msg);
    for (int i = 0; i < s->nmembers; i++)
      if (!memcmp(s->members[i], s->members[s->nmembers], 20))
        return bbvfl_fail(err, BBVFL_E_ARG, "%s: %s is named twice", flag, one);
    s->nmembers++;
    p = e ? e + 1 : NULL;
  }
  if (s->nmembers == 0) return bbvfl_fail(err, BBVFL_E_ARG, "%s: no address given", flag);
  return 0;
}

int bbvfl_session_may_register(const bbvfl_session *s, const uint8_t addr[20]) {
  if (s->open_registration) return 1;
  for (int i = 0; i < s->nmembers; i++)
    if (!memcmp(s->members[i], addr, 20)) return 1;
  return 0;
}
