/* include/bbvfl/session.h over run/local.h (a local session), run/deploy.h (a deployment),
 * run/client.h (one client), devnet/devnet.h (a local chain) and audit/audit.h (the audit):
 * argument checks and type translation only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "api/api_int.h"
#include "audit/audit.h"
#include "devnet/devnet.h"
#include "eth/wallet.h"
#include "run/client.h"
#include "run/deploy.h"
#include "run/local.h"

bbvfl_status bbvfl_devchain_start(const char *dir, double block_time, bbvfl_devchain *out, bbvfl_error *err) {
  if (!dir || !out) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_devchain_start: dir and out are required");
  if (!(block_time >= 0 && block_time <= 3600))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "block_time must be in 0..3600 seconds, got %g", block_time);
  bbvfl_devnet_opts o = {.dir = dir, .persist = 1, .block_time = block_time};
  bbvfl_devnet dn;
  bbvfl_err e = {0};
  if (bbvfl_devnet_up(&o, &dn, &e) < 0) return bbvfl_api_from(&e, err);
  memset(out, 0, sizeof *out);
  snprintf(out->rpc_url, sizeof out->rpc_url, "%s", dn.rpc_url);
  out->chain_id = dn.chain_id;
  out->pid = (int)dn.pid;
  return BBVFL_STATUS_OK;
}

bbvfl_status bbvfl_devchain_stop(const char *dir, bbvfl_error *err) {
  if (!dir) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_devchain_stop: dir is NULL");
  bbvfl_err e = {0};
  return bbvfl_devnet_down(dir, 10, &e) < 0 ? bbvfl_api_from(&e, err) : BBVFL_STATUS_OK;
}

typedef struct {
  const bbvfl_local_session_opts *o;
  char contract[43];
} progress_ctx;

static int on_event(void *ctx, const bbvfl_local_event *ev) {
  progress_ctx *pc = ctx;
  if (!pc->o->progress) return 0;
  bbvfl_progress p;
  memset(&p, 0, sizeof p);
  p.kind = (bbvfl_progress_kind)ev->kind; /* the same order: checked below */
  p.rpc_url = ev->rpc_url;
  if (ev->s && !pc->contract[0]) bbvfl_addr_checksum(ev->s->contract, pc->contract);
  p.contract = pc->contract;
  p.client = ev->client;
  p.status = ev->status;
  p.round = ev->round;
  p.rounds = ev->total;
  p.epoch = ev->epoch;
  p.epochs = ev->s ? (int)ev->s->cparams.epochs : 0;
  p.epochs_done = ev->epochs_done;
  p.test_loss = ev->loss;
  p.auroc = ev->auroc;
  p.elapsed_s = ev->elapsed_s;
  p.eta_s = ev->eta_s;
  p.base_fee_gwei = ev->base_fee_gwei;
  return pc->o->progress(pc->o->progress_ctx, &p);
}
_Static_assert((int)BBVFL_PROGRESS_TICK == (int)BBVFL_LOCAL_EV_TICK && (int)BBVFL_PROGRESS_FEE == (int)BBVFL_LOCAL_EV_FEE &&
                   (int)BBVFL_PROGRESS_NODE == (int)BBVFL_LOCAL_EV_NODE,
               "bbvfl_progress_kind follows bbvfl_local_ev_kind");

static void fill_result(const bbvfl_local_result *r, const char *run_dir, const char *contract,
                        bbvfl_local_session_result *res) {
  res->auroc = r->auroc;
  res->accuracy = r->accuracy;
  res->test_loss = r->test_loss;
  res->auroc_offchain = r->auroc_offchain;
  res->epochs = (int)r->epochs_measured;
  res->rounds = r->rounds;
  res->gas_per_coordinate = r->gas_per_coordinate;
  res->gas_per_window = r->gas_per_window;
  res->blocks_per_epoch = r->blocks_per_epoch;
  res->epsilon = r->have_privacy && r->privacy.finite && !r->privacy.reproducible
                     ? bbvfl_privacy_shown(&r->privacy, &r->privacy.row_feature)
                     : INFINITY;
  res->training_s = r->training_s;
  res->wall_s = r->wall_s;
  snprintf(res->contract, sizeof res->contract, "%s", contract);
  snprintf(res->session_file, sizeof res->session_file, "%s/session.json", run_dir);
  res->report_json = json_dumps(r->report, JSON_INDENT(2));
}

bbvfl_status bbvfl_local_session_run(const bbvfl_local_session_opts *o, bbvfl_local_session_result *res,
                                     bbvfl_error *err) {
  if (!o || !res) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_local_session_run: opts and res are required");
  memset(res, 0, sizeof *res);
  if (!o->config || !o->run_dir)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_local_session_run: config and run_dir are required");
  bbvfl_session s;
  bbvfl_local_setup_defaults(&s);
  s.train = o->config->off;
  s.train.partition = NULL;
  s.train.seeded_noise = o->compare;
  if (!o->config->seeded && getrandom(&s.train.seed, sizeof s.train.seed, 0) != (ssize_t)sizeof s.train.seed)
    return bbvfl_api_fail(err, BBVFL_STATUS_CRYPTO, "the OS random source failed");
  s.train.seed &= INT64_MAX;
  s.cparams.hashed = o->hashed != 0;
  s.cparams.masked = o->masked != 0;
  bbvfl_dataset ds;
  bbvfl_err e = {0};
  if (bbvfl_local_setup(&s, o->data, o->label, &ds, &e) < 0) return bbvfl_api_from(&e, err);
  progress_ctx pc = {.o = o};
  bbvfl_local_opts lo = {.s = &s, .ds = &ds, .partition = o->config->partition, .run_dir = o->run_dir,
                         .rpc_url = o->rpc_url, .block_time = o->block_time, .round_timeout_s = o->round_timeout_s,
                         .seeded = 1, .compare = o->compare, .delta = o->config->delta,
                         .progress_every_s = o->progress_every_s, .progress = on_event, .progress_ctx = &pc};
  bbvfl_local_result r;
  int rc = bbvfl_local_run(&lo, &r, &e);
  if (rc == 0) fill_result(&r, o->run_dir, pc.contract, res);
  bbvfl_local_result_free(&r);
  bbvfl_dataset_free(&ds);
  if (rc < 0) return bbvfl_api_from(&e, err);
  if (!res->report_json) return bbvfl_api_fail(err, BBVFL_STATUS_NOMEM, "out of memory");
  return BBVFL_STATUS_OK;
}

void bbvfl_local_session_result_free(bbvfl_local_session_result *res) {
  if (!res) return;
  free(res->report_json);
  memset(res, 0, sizeof *res);
}

/* Client m's columns of the partition as a comma list (owned; NULL when out of memory). */
static char *columns_of(const bbvfl_partition *p, int m) {
  size_t n = p->off[m + 1] - p->off[m], cap = 24 * n + 1, used = 0;
  char *s = malloc(cap);
  if (!s) return NULL;
  s[0] = 0;
  for (size_t i = p->off[m]; i < p->off[m + 1]; i++)
    used += (size_t)snprintf(s + used, cap - used, "%s%zu", used ? "," : "", p->cols[i]);
  return s;
}

/* The session's setup from the public options (as bbvfl_local_session_run builds it, private
   noise), its table into *ds and the partition into *part, all checked; nothing sent. */
static int deploy_setup(const bbvfl_deploy_opts *o, bbvfl_session *s, bbvfl_dataset *ds, bbvfl_partition *part,
                        bbvfl_err *e) {
  bbvfl_local_setup_defaults(s);
  s->train = o->config->off;
  s->train.partition = NULL;
  s->train.seeded_noise = 0;
  if (!o->config->seeded && getrandom(&s->train.seed, sizeof s->train.seed, 0) != (ssize_t)sizeof s->train.seed)
    return bbvfl_fail(e, BBVFL_E_CRYPTO, "the OS random source failed");
  s->train.seed &= INT64_MAX;
  s->cparams.hashed = o->hashed != 0;
  s->cparams.masked = o->masked != 0;
  s->cparams.round_timeout_blocks = o->round_timeout_blocks; /* as `bbvfl deploy`: 0 is measured at deploy */
  if (bbvfl_local_setup(s, o->data, o->label, ds, e) < 0) return -1;
  int M = s->train.M;
  if ((o->config->partition ? bbvfl_partition_parse(o->config->partition, ds->d, part, e)
                            : bbvfl_partition_even(ds->d, M, part, e)) < 0)
    return -1;
  if (part->M != M)
    return bbvfl_fail(e, BBVFL_E_ARG, "the partition names %d clients but the config has %d", part->M, M);
  return 0;
}

bbvfl_status bbvfl_deploy_session(const bbvfl_deploy_opts *o, bbvfl_deploy_result *res, bbvfl_error *err) {
  if (!o || !res) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_deploy_session: opts and res are required");
  memset(res, 0, sizeof *res);
  if (!o->config || !o->rpc_url || !o->session_file)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_deploy_session: config, rpc_url and session_file are required");
  if (strlen(o->session_file) >= sizeof res->session_file)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_deploy_session: session_file is too long");
  bbvfl_session *s = malloc(sizeof *s);
  if (!s) return bbvfl_api_fail(err, BBVFL_STATUS_NOMEM, "out of memory");
  bbvfl_dataset ds;
  bbvfl_partition part;
  memset(&ds, 0, sizeof ds);
  memset(&part, 0, sizeof part);
  bbvfl_err e = {0};
  bbvfl_key_source ks = {.key_file = o->key_file};
  int rc = deploy_setup(o, s, &ds, &part, &e);
  if (rc == 0) {
    bbvfl_deploy_req req = {.rpc_url = o->rpc_url, .key = o->key_file ? &ks : NULL, .key_flag = "key_file",
                            .ds = &ds, .out = o->session_file, .out_flag = "session_file",
                            .client_keys_dir = o->client_keys_dir, .nkeys = part.M, .members = o->members,
                            .open_registration = o->open_registration};
    rc = bbvfl_deploy_run(&req, s, &e);
  }
  if (rc == 0) {
    bbvfl_addr_checksum(s->contract, res->contract);
    bbvfl_addr_checksum(s->token, res->token);
    res->chain_id = s->chain_id;
    res->deploy_block = s->deploy_block;
    res->rounds = bbvfl_cconfig_total(&s->cparams);
    snprintf(res->session_file, sizeof res->session_file, "%s", o->session_file);
    res->columns = calloc((size_t)part.M, sizeof *res->columns);
    res->clients = res->columns ? part.M : 0;
    for (int m = 0; m < res->clients; m++)
      if (!(res->columns[m] = columns_of(&part, m))) rc = bbvfl_fail(&e, BBVFL_E_NOMEM, "out of memory");
    if (!res->columns) rc = bbvfl_fail(&e, BBVFL_E_NOMEM, "out of memory");
  }
  bbvfl_partition_free(&part);
  bbvfl_dataset_free(&ds);
  free(s);
  if (rc < 0) {
    bbvfl_deploy_result_free(res);
    return bbvfl_api_from(&e, err);
  }
  return BBVFL_STATUS_OK;
}

void bbvfl_deploy_result_free(bbvfl_deploy_result *res) {
  if (!res) return;
  for (int m = 0; res->columns && m < res->clients; m++) free(res->columns[m]);
  free(res->columns);
  memset(res, 0, sizeof *res);
}

bbvfl_status bbvfl_client_run(const bbvfl_client_opts *o, bbvfl_client_result *res, bbvfl_error *err) {
  if (!o || !res) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_client_run: opts and res are required");
  memset(res, 0, sizeof *res);
  if (!o->session_file || !o->key_file || !o->columns || !o->state_dir)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_client_run: session_file, key_file, columns and state_dir are required");
  if (o->party < -1 || o->party >= 64)
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_client_run: party must be -1 (the registration index) or 0..63, got %d", o->party);
  if (!(o->round_timeout_s >= 0 && o->round_timeout_s <= 1e6))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_client_run: round_timeout_s must be in 0..1e6 seconds (0: 120), got %g",
                          o->round_timeout_s);
  if ((o->has_labels != 0 && o->has_labels != 1) || (o->expire != 0 && o->expire != 1))
    return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_client_run: has_labels and expire are 0 or 1");
  bbvfl_key_source ks = {.key_file = o->key_file};
  bbvfl_client_files c;
  memset(&c, 0, sizeof c);
  c.session = o->session_file;
  c.key = &ks;
  c.data = o->data;
  c.cfg.columns = o->columns;
  c.cfg.state_dir = o->state_dir;
  c.cfg.has_labels = o->has_labels;
  c.cfg.party = o->party;
  c.cfg.round_timeout_s = o->round_timeout_s > 0 ? o->round_timeout_s : 120;
  c.cfg.expire = o->expire;
  c.cfg.takeover_after_s = 30;
  c.cfg.node_down_timeout_s = 120;
  c.cfg.rate_limit_wait_s = 60;
  c.cfg.reprice_blocks = 3;
  bbvfl_onchain_summary sm;
  bbvfl_err e = {0};
  if (bbvfl_client_files_run(&c, &sm, &e) < 0) {
    bbvfl_onchain_summary_free(&sm);
    return bbvfl_api_from(&e, err);
  }
  const json_t *j = sm.json;
  res->index = (int)json_integer_value(json_object_get(j, "index"));
  res->was_active = json_is_true(json_object_get(j, "active"));
  res->rounds = (uint64_t)json_integer_value(json_object_get(j, "rounds"));
  res->submissions = (uint64_t)json_integer_value(json_object_get(j, "submissions"));
  res->gas_used = (uint64_t)json_integer_value(json_object_get(json_object_get(j, "fees"), "gas_used"));
  bbvfl_onchain_summary_free(&sm);
  return BBVFL_STATUS_OK;
}

/* The audit options a session file gives (as `bbvfl audit --session`): node, contract, first
   block, and what the file declares (label DP, reproducible noise, the head's training setup). */

static void audit_summary(const bbvfl_audit_result *r, bbvfl_audit_summary *out) {
  memset(out, 0, sizeof *out);
  out->verdict = (bbvfl_audit_verdict_t)bbvfl_audit_verdict_of(r);
  out->rounds = r->rounds_completed;
  bbvfl_audit_count(r, &out->checks, &out->checks_failed, out->first_failure, sizeof out->first_failure);
}
_Static_assert((int)BBVFL_AUDIT_PASS == (int)BBVFL_AV_PASS && (int)BBVFL_AUDIT_FAIL == (int)BBVFL_AV_FAIL &&
                   (int)BBVFL_AUDIT_INCOMPLETE == (int)BBVFL_AV_INCOMPLETE,
               "bbvfl_audit_verdict_t follows bbvfl_audit_verdict");

bbvfl_status bbvfl_audit_session(const char *session_file, const char *rpc_url, bbvfl_audit_summary *out,
                                 bbvfl_error *err) {
  if (!session_file || !out) return bbvfl_api_fail(err, BBVFL_STATUS_ARG, "bbvfl_audit_session: session_file and out are required");
  bbvfl_session *s = malloc(sizeof *s);
  if (!s) return bbvfl_api_fail(err, BBVFL_STATUS_NOMEM, "out of memory");
  bbvfl_err e = {0};
  bbvfl_status st = BBVFL_STATUS_OK;
  if (bbvfl_session_load(session_file, s, &e) < 0) {
    free(s);
    return bbvfl_api_from(&e, err);
  }
  bbvfl_audit_opts o;
  bbvfl_audit_opts_for_session(s, rpc_url, &o);
  /* no node given and the session's gone: the run folder's kept chain (RUN/devnet), resumed for
     the audit and stopped after */
  char devdir[1200] = "", state[1300];
  const char *slash = strrchr(session_file, '/');
  snprintf(devdir, sizeof devdir, "%.*s/devnet", slash ? (int)(slash - session_file) : 1, slash ? session_file : ".");
  snprintf(state, sizeof state, "%s/state.json", devdir);
  unsigned long long cid = 0;
  bbvfl_devnet dn;
  if (!rpc_url && bbvfl_devnet_ping(o.rpc_url, 2, &cid, NULL) < 0 && access(state, R_OK) == 0) {
    bbvfl_devnet_opts dopt = {.dir = devdir, .persist = 1};
    if (bbvfl_devnet_up(&dopt, &dn, &e) < 0) {
      free(s);
      return bbvfl_api_from(&e, err);
    }
    o.rpc_url = dn.rpc_url;
  } else {
    devdir[0] = 0;
  }
  bbvfl_audit_result r;
  if (bbvfl_audit_run(&o, &r, &e) < 0) {
    st = bbvfl_api_from(&e, err);
  } else {
    audit_summary(&r, out);
    bbvfl_audit_result_free(&r);
  }
  if (devdir[0]) bbvfl_devnet_down(devdir, 10, NULL);
  free(s);
  return st;
}
