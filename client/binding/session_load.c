/* Reading a session file (binding/session.h: bbvfl_session_load, bbvfl_session_locate): every field
 * checked, each error naming the file and the field. Writing it is binding/session.c's
 * (bbvfl_session_save); the two must agree on the format (tests/unit/test_vfl_session.c). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/wallet.h"
#include "ml/lr.h"
#include "binding/packing.h"
#include "binding/session.h"

static int get_int(json_t *o, const char *key, long long lo, long long hi, long long *out, const char *path,
                   bbvfl_err *err) {
  json_t *v = json_object_get(o, key);
  if (!json_is_integer(v))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"%s\" is missing or not an integer", path, key);
  long long x = json_integer_value(v);
  if (x < lo || x > hi)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"%s\" = %lld is outside %lld..%lld", path, key, x, lo, hi);
  *out = x;
  return 0;
}

static int get_num(json_t *o, const char *key, double *out, const char *path, bbvfl_err *err) {
  json_t *v = json_object_get(o, key);
  if (!json_is_number(v))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"%s\" is missing or not a number", path, key);
  *out = json_number_value(v);
  return 0;
}

static int get_str(json_t *o, const char *key, char *out, size_t cap, const char *path, bbvfl_err *err) {
  json_t *v = json_object_get(o, key);
  if (!json_is_string(v))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"%s\" is missing or not a string", path, key);
  const char *s = json_string_value(v);
  if (strlen(s) >= cap) return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"%s\" is too long", path, key);
  strcpy(out, s);
  return 0;
}

/* "training"."afe" (absent: off): VFL-AFE's local steps before PBM, each field checked. */
static int load_afe(json_t *tr, bbvfl_offchain_cfg *t, const char *path, bbvfl_err *err) {
  bbvfl_afe_defaults(&t->afe);
  json_t *a = json_object_get(tr, "afe");
  if (!a) return 0;
  if (!json_is_object(a)) return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"afe\" must be an object", path);
  json_t *rs = json_object_get(a, "rescale"), *ad = json_object_get(a, "adjust");
  if (!json_is_boolean(rs) || !json_is_boolean(ad))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"afe\".\"rescale\" and \"adjust\" must be true or false",
                      path);
  t->afe.on = 1;
  t->afe.rescale = json_is_true(rs);
  t->afe.adjust = json_is_true(ad);
  if (get_num(a, "clip", &t->mech.clip, path, err) < 0 || get_num(a, "lambda", &t->afe.lambda, path, err) < 0 ||
      get_num(a, "kl", &t->afe.alpha, path, err) < 0 || get_num(a, "conf", &t->afe.conf, path, err) < 0 ||
      get_num(a, "p1", &t->afe.p1, path, err) < 0 || get_num(a, "p2", &t->afe.p2, path, err) < 0)
    return -1;
  if (!(t->mech.clip > 0) || !isfinite(t->mech.clip))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"afe\".\"clip\" must be > 0 and finite", path);
  if (bbvfl_afe_check(&t->afe, err) < 0) return bbvfl_wrap(err, "session file %s: \"afe\"", path);
  return 0;
}

/* The session file at path as a JSON object (caller decrefs), or NULL with err set: unreadable
 * (wrapped with `context`), or not a JSON object ("session file <path>: not a JSON object"). */
static json_t *load_object(const char *path, const char *context, bbvfl_err *err) {
  char *text = NULL;
  size_t len = 0;
  if (bbvfl_read_file(path, 1 << 20, &text, &len, err) < 0) {
    bbvfl_wrap(err, "%s", context);
    return NULL;
  }
  json_error_t je;
  json_t *o = json_loadb(text, len, 0, &je);
  free(text);
  if (!o || !json_is_object(o)) {
    json_decref(o);
    bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: not a JSON object (line %d: %s)", path, je.line,
               o ? "another JSON value" : je.text);
    return NULL;
  }
  return o;
}

/* The "lr_model" object of the training setup (absent: the MLP). Full batch: "batch" 0 in the
   training setup (the contract's batch is then 1, its windows chunks of the one batch). */
static int load_lr_model(json_t *tr, bbvfl_offchain_cfg *t, const char *path, bbvfl_err *err) {
  json_t *lm = json_object_get(tr, "lr_model");
  t->model = BBVFL_MODEL_MLP;
  if (!lm) return 0;
  char buf[32];
  long long v = 0;
  bbvfl_loss_kind lk;
  if (!json_is_object(lm)) return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"lr_model\" must be an object", path);
  t->model = BBVFL_MODEL_LR;
  if (get_str(lm, "loss", buf, sizeof buf, path, err) < 0) return -1;
  if (bbvfl_loss_parse(buf, &lk) != 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: loss '%s' is not logistic or taylor", path, buf);
  t->loss = (int)lk;
  if (get_num(lm, "l2", &t->l2, path, err) < 0 || get_num(lm, "logit_clip", &t->logit_clip, path, err) < 0) return -1;
  if (get_int(lm, "sqn_memory", 1, 1000, &v, path, err) < 0) return -1;
  t->sqn_memory = (int)v;
  if (get_int(lm, "sqn_interval", 1, 100000, &v, path, err) < 0) return -1;
  t->sqn_interval = (int)v;
  if (get_int(lm, "sqn_sample", 0, INT32_MAX, &v, path, err) < 0) return -1;
  t->sqn_sample = (size_t)v;
  /* sqn_pairs, sqn_cap: absent in files written before them, whose sqn had curvature rounds */
  json_t *jp = json_object_get(lm, "sqn_pairs"), *jc = json_object_get(lm, "sqn_cap");
  t->sqn_pairs = BBVFL_SQN_PAIRS_ROUND;
  if (jp) {
    const char *ps = json_is_string(jp) ? json_string_value(jp) : "";
    if (!strcmp(ps, "local")) t->sqn_pairs = BBVFL_SQN_PAIRS_LOCAL;
    else if (!strcmp(ps, "round")) t->sqn_pairs = BBVFL_SQN_PAIRS_ROUND;
    else return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: sqn_pairs must be \"local\" or \"round\"", path);
  }
  t->sqn_cap = 0;
  if (jc && get_num(lm, "sqn_cap", &t->sqn_cap, path, err) < 0) return -1;
  if (!(t->sqn_cap >= 0)) return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: sqn_cap must be >= 0", path);
  if (get_int(tr, "batch", 0, 1 << 20, &v, path, err) < 0) return -1;
  if (v == 0) t->B = 0;
  return 0;
}

int bbvfl_session_locate(const char *path, bbvfl_session_loc *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  json_t *o = load_object(path, "--session", err);
  if (!o) return -1;
  const char *u = json_string_value(json_object_get(o, "rpc_url"));
  const char *c = json_string_value(json_object_get(o, "contract"));
  json_t *d = json_object_get(o, "deploy_block");
  if (!u || !c || !json_is_integer(d) || json_integer_value(d) < 0) {
    json_decref(o);
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: needs rpc_url, contract and deploy_block (a session file of bbvfl deploy)",
                      path);
  }
  snprintf(out->rpc_url, sizeof out->rpc_url, "%s", u);
  snprintf(out->contract, sizeof out->contract, "%s", c);
  out->deploy_block = (uint64_t)json_integer_value(d);
  json_decref(o);
  return 0;
}

/* "registration" and "members": who may register. A file without them predates closed sessions:
 * its contract took anyone. */
static int load_members(json_t *o, bbvfl_session *s, const char *path, bbvfl_err *err) {
  json_t *reg = json_object_get(o, "registration"), *mem = json_object_get(o, "members");
  s->nmembers = 0;
  s->open_registration = !reg || (json_is_string(reg) && !strcmp(json_string_value(reg), "open"));
  if (reg && !s->open_registration && !(json_is_string(reg) && !strcmp(json_string_value(reg), "members")))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"registration\" is \"open\" or \"members\"", path);
  if (s->open_registration) return 0;
  if (!json_is_array(mem) || json_array_size(mem) < 1 || json_array_size(mem) > 64)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"members\" must list 1..64 addresses", path);
  for (size_t i = 0; i < json_array_size(mem); i++) {
    json_t *a = json_array_get(mem, i);
    if (!json_is_string(a) || bbvfl_addr_parse(json_string_value(a), s->members[i], err) < 0) {
      if (!err->code) bbvfl_fail(err, BBVFL_E_PARSE, "not an address");
      return bbvfl_wrap(err, "session file %s: \"members\"[%zu]", path, i);
    }
  }
  s->nmembers = (int)json_array_size(mem);
  return 0;
}

/* "version" .. "deploy_block": where the session lives. */
static int load_where(json_t *o, bbvfl_session *s, const char *path, bbvfl_err *err) {
  long long v = 0;
  char buf[128];
  if (get_int(o, "version", 1, 1, &v, path, err) < 0) return -1;
  if (get_str(o, "rpc_url", s->rpc_url, sizeof s->rpc_url, path, err) < 0) return -1;
  if (get_int(o, "chain_id", 1, INT64_MAX, &v, path, err) < 0) return -1;
  s->chain_id = (uint64_t)v;
  if (get_str(o, "contract", buf, sizeof buf, path, err) < 0) return -1;
  if (bbvfl_addr_parse(buf, s->contract, err) < 0) return bbvfl_wrap(err, "session file %s: \"contract\"", path);
  if (get_str(o, "token", buf, sizeof buf, path, err) < 0) return -1;
  if (bbvfl_addr_parse(buf, s->token, err) < 0) return bbvfl_wrap(err, "session file %s: \"token\"", path);
  if (get_int(o, "deploy_block", 0, INT64_MAX, &v, path, err) < 0) return -1;
  s->deploy_block = (uint64_t)v;
  return load_members(o, s, path, err);
}

#define CP(key, field, lo, hi)                                            \
  do {                                                                    \
    if (get_int(cp, key, lo, hi, &v, path, err) < 0) return -1;          \
    c->field = (__typeof__(c->field))v;                                   \
  } while (0)

/* The round structure of "contract_params" written since windows: the window, the row counts,
 * staleness, the aggregation mode, LR's curvature rounds. */
static int load_windows(json_t *cp, bbvfl_cconfig *c, const char *path, bbvfl_err *err) {
  long long v = 0;
  CP("batches_per_epoch", batches_per_epoch, 1, UINT32_MAX);
  CP("window", window, 1, UINT32_MAX);
  CP("eval_rows", eval_rows, 0, UINT32_MAX);
  CP("eval_rows_per_round", eval_rows_per_round, 0, UINT32_MAX);
  CP("train_rows", train_rows, 1, UINT32_MAX);
  CP("test_rows", test_rows, 0, UINT32_MAX);
  CP("staleness", staleness, 0, 255);
  c->hashed = json_is_true(json_object_get(cp, "hashed"));
  c->wire = c->hashed ? BBVFL_WIRE_HASHED : BBVFL_WIRE_LANES;
  json_t *ag = json_object_get(cp, "aggregation");
  if (ag) {
    int mode = -1;
    if (!json_is_string(ag) || bbvfl_session_parse_aggregation(json_string_value(ag), &mode, err) < 0 ||
        mode < BBVFL_WIRE_PACKED || !c->hashed) {
      if (!err->code) bbvfl_fail(err, BBVFL_E_PARSE, "\"aggregation\" is packed or optimistic (with \"hashed\": true)");
      return bbvfl_wrap(err, "session file %s: \"contract_params\"", path);
    }
    c->wire = mode;
  }
  if (json_object_get(cp, "curv_every")) {
    CP("curv_every", curv_every, 1, 100000);
    CP("curv_rows", curv_rows, 1, UINT32_MAX);
  }
  return 0;
}

/* "contract_params": the contract's Config (derived fields recomputed), its rewards, lane width. */
static int load_contract_params(json_t *cp, bbvfl_session *s, const char *path, bbvfl_err *err) {
  bbvfl_cconfig *c = &s->cparams;
  long long v = 0;
  char buf[128];
  CP("clients", clients, 1, 64);
  CP("batch", batch, 1, 1 << 20);
  CP("dim", dim, 1, 4096);
  CP("levels", levels, 1, 255);
  CP("beta_micro", beta_micro, 0, 500000);
  CP("train_rounds", train_rounds, 1, UINT32_MAX);
  CP("eval_rounds", eval_rounds, 0, UINT32_MAX);
  CP("epochs", epochs, 1, 100000);
  CP("commit_blocks", commit_blocks, 1, UINT32_MAX);
  CP("reveal_blocks", reveal_blocks, 1, UINT32_MAX);
  CP("active_blocks", active_blocks, 1, UINT32_MAX);
  CP("round_timeout_blocks", round_timeout_blocks, 1, UINT32_MAX);
  /* else: a session file written before windows (K = 1, evaluation rounds of B rows) */
  if (json_object_get(cp, "window") && load_windows(cp, c, path, err) < 0) return -1;
  c->masked = json_is_true(json_object_get(cp, "masked"));
  if (bbvfl_cconfig_derive(c, err) < 0) return bbvfl_wrap(err, "session file %s: \"contract_params\"", path);
  if (get_str(cp, "reward_per_submission", buf, sizeof buf, path, err) < 0) return -1;
  if (bbvfl_u256_from_string(buf, &c->reward_per_submission, err) < 0)
    return bbvfl_wrap(err, "session file %s: \"contract_params\".\"reward_per_submission\"", path);
  if (get_str(cp, "reward_pool", buf, sizeof buf, path, err) < 0) return -1;
  if (bbvfl_u256_from_string(buf, &c->reward_pool, err) < 0)
    return bbvfl_wrap(err, "session file %s: \"contract_params\".\"reward_pool\"", path);
  if (get_int(cp, "lane_bits", 8, 16, &v, path, err) < 0) return -1;
  s->lane_bits = (unsigned)v;
  return 0;
}
#undef CP

/* "training"."row_privacy" (absent: the paper's mode): DP-SGD, or the DP-PCA encoder. */
static int load_row_privacy(json_t *tr, bbvfl_offchain_cfg *t, const char *path, bbvfl_err *err) {
  json_t *rp = json_object_get(tr, "row_privacy");
  memset(&t->rowdp, 0, sizeof t->rowdp);
  if (!rp) return 0;
  if (!json_is_object(rp))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"row_privacy\" must be an object", path);
  if (get_num(rp, "dpsgd_clip", &t->rowdp.clip, path, err) < 0 ||
      get_num(rp, "dpsgd_noise", &t->rowdp.noise, path, err) < 0 ||
      get_num(rp, "scale_epsilon", &t->rowdp.scale_eps, path, err) < 0)
    return -1;
  if (!(t->rowdp.clip > 0) || !(t->rowdp.noise > 0) || !(t->rowdp.scale_eps > 0) || !isfinite(t->rowdp.clip) ||
      !isfinite(t->rowdp.noise) || !isfinite(t->rowdp.scale_eps))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"row_privacy\" values must be > 0 and finite", path);
  t->rowdp.on = 1;
  json_t *enc = json_object_get(rp, "encoder"); /* absent: DP-SGD (every file written before the encoder) */
  if (!enc) return 0;
  if (!json_is_string(enc) || strcmp(json_string_value(enc), "pca") != 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"row_privacy\".\"encoder\" must be \"pca\"", path);
  if (get_num(rp, "pca_noise", &t->rowdp.pca_noise, path, err) < 0) return -1;
  if (!(t->rowdp.pca_noise > 0) || !isfinite(t->rowdp.pca_noise))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"row_privacy\".\"pca_noise\" must be > 0 and finite",
                      path);
  t->rowdp.encoder = 1;
  return 0;
}

/* "seed", "reproducible_noise" (absent: private noise), "test_frac", "label_epsilon" (absent:
 * true labels, as in every session file written before label DP). */
static int load_noise(json_t *tr, bbvfl_offchain_cfg *t, const char *path, bbvfl_err *err) {
  long long v = 0;
  if (get_int(tr, "seed", 0, INT64_MAX, &v, path, err) < 0) return -1;
  t->seed = (uint64_t)v;
  json_t *rn = json_object_get(tr, "reproducible_noise");
  if (rn && !json_is_boolean(rn))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"reproducible_noise\" must be true or false", path);
  t->seeded_noise = rn && json_is_true(rn);
  if (get_num(tr, "test_frac", &t->test_frac, path, err) < 0) return -1;
  return 0;
}

static int load_label_eps(json_t *tr, bbvfl_offchain_cfg *t, const char *path, bbvfl_err *err) {
  t->label_eps = 0;
  if (!json_object_get(tr, "label_epsilon")) return 0;
  if (get_num(tr, "label_epsilon", &t->label_eps, path, err) < 0) return -1;
  if (!(t->label_eps > 0) || !isfinite(t->label_eps))
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"label_epsilon\" must be > 0 and finite", path);
  return 0;
}

/* "label", "data", "n_rows", "classes" (absent: not recorded): the table the session trains on. */
static int load_table(json_t *tr, bbvfl_session *s, const char *path, bbvfl_err *err) {
  long long v = 0;
  if (get_str(tr, "label", s->label, sizeof s->label, path, err) < 0) return -1;
  if (get_str(tr, "data", s->data, sizeof s->data, path, err) < 0) return -1;
  if (get_int(tr, "n_rows", 1, INT64_MAX, &v, path, err) < 0) return -1;
  s->n_rows = (uint64_t)v;
  s->n_classes = 0;
  json_t *cls = json_object_get(tr, "classes");
  if (!cls) return 0;
  if (!json_is_array(cls) || json_array_size(cls) < 2 || json_array_size(cls) > BBVFL_SESSION_MAX_CLASSES)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"classes\" must be a list of 2 to %d label values", path,
                      BBVFL_SESSION_MAX_CLASSES);
  for (size_t i = 0; i < json_array_size(cls); i++) {
    const char *nm = json_string_value(json_array_get(cls, i));
    if (!nm || strlen(nm) >= sizeof s->classes[0])
      return bbvfl_fail(err, BBVFL_E_PARSE,
                        "session file %s: \"classes\"[%zu] must be a string of under %zu characters", path, i,
                        sizeof s->classes[0]);
    snprintf(s->classes[i], sizeof s->classes[i], "%s", nm);
  }
  s->n_classes = (int)json_array_size(cls);
  return 0;
}

/* "hidden", "optimizer", "lr", "lr_decay", "momentum": the clients' networks and their steps. */
static int load_network(json_t *tr, bbvfl_offchain_cfg *t, const char *path, bbvfl_err *err) {
  char buf[128];
  json_t *hid = json_object_get(tr, "hidden");
  if (!json_is_array(hid) || json_array_size(hid) > BBVFL_MAX_HIDDEN)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"hidden\" must be a list of at most %d widths", path,
                      BBVFL_MAX_HIDDEN);
  t->nhidden = (int)json_array_size(hid);
  for (int i = 0; i < t->nhidden; i++) {
    json_t *w = json_array_get(hid, (size_t)i);
    if (!json_is_integer(w) || json_integer_value(w) < 1 || json_integer_value(w) > 65536)
      return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: hidden width %d is not in 1..65536", path, i);
    t->hidden[i] = (int)json_integer_value(w);
  }
  if (get_str(tr, "optimizer", buf, sizeof buf, path, err) < 0) return -1;
  if (bbvfl_optim_parse_kind(buf, &t->opt.kind) != 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: optimizer '%s' is not adam or sgd", path, buf);
  if (get_num(tr, "lr", &t->opt.lr, path, err) < 0 || get_num(tr, "lr_decay", &t->opt.decay, path, err) < 0 ||
      get_num(tr, "momentum", &t->opt.momentum, path, err) < 0)
    return -1;
  return 0;
}

/* "mechanism" (pbm only), "b" (the contract's levels), "beta", "C". */
static int load_mechanism(json_t *tr, bbvfl_offchain_cfg *t, const bbvfl_cconfig *c, const char *path,
                          bbvfl_err *err) {
  char buf[128];
  long long v = 0;
  if (get_str(tr, "mechanism", buf, sizeof buf, path, err) < 0) return -1;
  if (bbvfl_mech_parse(buf, &t->mech.kind) != 0 || t->mech.kind != BBVFL_MECH_PBM)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: mechanism '%s': on chain only pbm is supported", path, buf);
  if (get_int(tr, "b", 1, 255, &v, path, err) < 0) return -1;
  t->mech.b = (int)v;
  if (get_num(tr, "beta", &t->mech.beta, path, err) < 0 || get_num(tr, "C", &t->mech.C, path, err) < 0) return -1;
  if (t->mech.b != c->levels)
    return bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: training b = %d but the contract's levels = %u", path,
                      t->mech.b, (unsigned)c->levels);
  if (bbvfl_mech_check(&t->mech, err) < 0) return bbvfl_wrap(err, "session file %s", path);
  return 0;
}

/* "training": the off-chain setup, whose round structure follows the contract's. */
static int load_training(json_t *tr, bbvfl_session *s, const char *path, bbvfl_err *err) {
  const bbvfl_cconfig *c = &s->cparams;
  bbvfl_offchain_cfg *t = &s->train;
  bbvfl_offchain_defaults(t);
  t->M = c->clients;
  t->B = c->batch;
  t->P = (int)c->dim;
  t->epochs = (int)c->epochs;
  t->window = c->window;
  t->staleness = c->staleness;
  t->eval_rows_per_round = c->eval_rows_per_round;
  if (load_noise(tr, t, path, err) < 0 || load_row_privacy(tr, t, path, err) < 0 ||
      load_lr_model(tr, t, path, err) < 0 || load_afe(tr, t, path, err) < 0 || load_label_eps(tr, t, path, err) < 0 ||
      load_table(tr, s, path, err) < 0 || load_network(tr, t, path, err) < 0 ||
      load_mechanism(tr, t, c, path, err) < 0)
    return -1;
  return 0;
}

int bbvfl_session_load(const char *path, bbvfl_session *s, bbvfl_err *err) {
  memset(s, 0, sizeof *s);
  json_t *o = load_object(path, "reading the session file", err);
  if (!o) return -1;
  int rc = -1;
  json_t *cp = json_object_get(o, "contract_params"), *tr = json_object_get(o, "training");
  if (!json_is_object(cp) || !json_is_object(tr))
    bbvfl_fail(err, BBVFL_E_PARSE, "session file %s: \"contract_params\" or \"training\" is missing", path);
  else if (load_where(o, s, path, err) == 0 && load_contract_params(cp, s, path, err) == 0 &&
           load_training(tr, s, path, err) == 0)
    rc = 0;
  json_decref(o);
  return rc;
}
