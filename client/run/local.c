/* run/local.h: a local session's setup, node, deployment, keys and funding, and the run's order
 * (the clients: local_clients.c; the report: local_report.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "devnet/devnet.h"
#include "eth/wallet.h"
#include "run/deploy.h"
#include "run/local_int.h"
#include "offchain/offchain.h"
#include "onchain/statedir.h"

void bbvfl_local_setup_defaults(bbvfl_session *s) {
  memset(s, 0, sizeof *s);
  bbvfl_offchain_defaults(&s->train);
  s->train.M = 5;
  s->train.mech.kind = BBVFL_MECH_PBM;
  s->train.mech.b = 16;
  s->train.mech.beta = 0.2;
  s->staleness_auto = 1;
}

int bbvfl_local_setup(bbvfl_session *s, const char *data, const char *label, bbvfl_dataset *ds, bbvfl_err *err) {
  memset(ds, 0, sizeof *ds);
  if (bbvfl_session_check_setup(s, err) < 0) return -1;
  if (!data) data = bbvfl_default_data_path();
  if (strlen(data) >= sizeof s->data) return bbvfl_fail(err, BBVFL_E_ARG, "the data path is too long");
  strcpy(s->data, data);
  snprintf(s->label, sizeof s->label, "%s", label ? label : "");
  bbvfl_csv_opts co = {.label = label};
  if (bbvfl_csv_load(data, &co, ds, err) < 0) return -1;
  if (bbvfl_session_check_table(s, ds, err) < 0) {
    bbvfl_dataset_free(ds);
    return -1;
  }
  return 0;
}

int bbvfl_lrun_emit(bbvfl_lrun *x, bbvfl_local_event *ev) {
  ev->run_dir = x->run;
  ev->rpc_url = x->rpc_url;
  if (!ev->s && x->s->deploy_block) ev->s = x->s;
  return x->o->progress ? x->o->progress(x->o->progress_ctx, ev) : 0;
}

/* Node connection, the funder's sender, the deployment and the session file. */
static int deploy(bbvfl_lrun *x, const bbvfl_dataset *ds, bbvfl_local_result *res, bbvfl_err *err) {
  const bbvfl_local_opts *o = x->o;
  x->rpc = bbvfl_rpc_new(x->rpc_url, NULL, err);
  if (!x->rpc) return -1;
  if (bbvfl_deployer_key(x->rpc, o->funder, o->funder_flag ? o->funder_flag : "--funder-key", &x->fk, err) < 0) return -1;
  x->snd = bbvfl_sender_new(x->rpc, &x->fk, 0, err); /* borrows the key */
  if (!x->snd) return -1;
  bbvfl_sender_set_sync(x->snd, 1);
  if (o->max_fee_gwei > 0) { /* the deployment and the funding keep to the cap too */
    bbvfl_u256 cap = bbvfl_u256_from_u64((uint64_t)(o->max_fee_gwei * 1e9 + 0.5));
    bbvfl_sender_set_max_fee(x->snd, &cap);
  }
  /* the throwaway keys first: their addresses are the session's members */
  char keys[1100];
  snprintf(keys, sizeof keys, "%s/keys", x->run);
  for (int m = 0; m < x->M; m++)
    if (bbvfl_deploy_key_path(x->ch[m].key, sizeof x->ch[m].key, keys, m, err) < 0) return -1;
  if (bbvfl_deploy_make_keys(keys, x->M, x->s->members, err) < 0) return -1;
  x->s->nmembers = x->M;
  x->s->open_registration = 0;
  for (int m = 0; m < x->M; m++) memcpy(x->ch[m].addr, x->s->members[m], 20);
  if (bbvfl_session_deploy(x->rpc, x->snd, ds, x->s, err) < 0) return -1;
  res->deployed = 1;
  snprintf(x->session_path, sizeof x->session_path, "%s/session.json", x->run);
  if (bbvfl_session_save(x->s, x->session_path, err) < 0) return -1;
  bbvfl_local_event ev = {.kind = BBVFL_LOCAL_EV_DEPLOYED, .s = x->s};
  bbvfl_lrun_emit(x, &ev);
  return 0;
}

/* The funding of the throwaway keys (devnet only) made in deploy() (run/deploy.h). */
static int keys_and_funds(bbvfl_lrun *x, bbvfl_err *err) {
  return bbvfl_deploy_fund_addrs(x->snd, (const uint8_t(*)[20])x->s->members, x->M, x->o->block_time, err);
}

/* The partition and the run folder, before anything touches the chain. */
static int prepare(bbvfl_lrun *x, const bbvfl_dataset *ds, bbvfl_err *err) {
  const bbvfl_local_opts *o = x->o;
  if (!o->s || !ds || !o->run_dir) return bbvfl_fail(err, BBVFL_E_ARG, "a local session needs a setup, a table and a run folder");
  x->M = o->s->train.M;
  if (x->M < 1 || x->M > BBVFL_LOCAL_MAX_CLIENTS)
    return bbvfl_fail(err, BBVFL_E_ARG, "a local session runs 1..%d clients, got %d", BBVFL_LOCAL_MAX_CLIENTS, x->M);
  if (bbvfl_partition_for(o->partition, ds->d, x->M, "--partition", "--clients is", &x->part, err) < 0) return -1;
  if (snprintf(x->run, sizeof x->run, "%s", o->run_dir) >= (int)sizeof x->run)
    return bbvfl_fail(err, BBVFL_E_ARG, "run folder path too long");
  /* a run folder of an earlier session: its clients' state dirs are bound to that session (their
     noise keys and election secrets must not serve another), so refuse before deploying */
  for (int m = 0; m < x->M; m++) {
    char b[1300];
    snprintf(b, sizeof b, "%s/clients/%d/%s", x->run, m, BBVFL_STATEDIR_BINDING);
    if (access(b, F_OK) == 0)
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "the run folder %s already holds client %d's state of an earlier session (%s): its noise key "
                        "and election secret must not serve another one; use a fresh --out (nothing was sent)",
                        x->run, m, b);
  }
  char keys[1100];
  snprintf(keys, sizeof keys, "%s/keys", x->run);
  if (bbvfl_mkdirs(keys, 0700, err) < 0) return -1;
  /* small enough that the clients' expireRound() attempts (each mines a block on the automining
     devnet) reach it soon after a dropout; a healthy round takes about M + 3 blocks */
  if (!o->s->cparams.round_timeout_blocks) o->s->cparams.round_timeout_blocks = 64 + 4 * (uint64_t)x->M;
  return 0;
}

int bbvfl_local_run(const bbvfl_local_opts *o, bbvfl_local_result *res, bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  bbvfl_lrun *x = calloc(1, sizeof *x);
  if (!x) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  x->o = o;
  x->s = o->s;
  x->t_start = o->t_start > 0 ? o->t_start : bbvfl_now();
  int rc = -1;
  char devdir[1100];
  if (prepare(x, o->ds, err) < 0) goto out;
  x->rpc_url = o->rpc_url;
  snprintf(devdir, sizeof devdir, "%s/devnet", x->run);
  if (!x->rpc_url) {
    /* the chain is kept in the run folder (written when the devnet stops), so `bbvfl audit
       --session RUN/session.json` can verify the run afterwards */
    bbvfl_devnet_opts dopt = {.dir = devdir, .lean_history = !o->full_history, .persist = 1, .dump_at_exit_only = 1,
                              .block_time = o->block_time};
    if (bbvfl_devnet_up(&dopt, &x->dn, err) < 0) goto out;
    res->devnet_started = 1;
    x->rpc_url = x->dn.rpc_url;
  }
  snprintf(x->s->rpc_url, sizeof x->s->rpc_url, "%s", x->rpc_url);
  snprintf(res->rpc_url, sizeof res->rpc_url, "%s", x->rpc_url);
  bbvfl_local_event ev = {.kind = BBVFL_LOCAL_EV_NODE, .devnet_started = res->devnet_started};
  bbvfl_lrun_emit(x, &ev);
  if (deploy(x, o->ds, res, err) < 0 || keys_and_funds(x, err) < 0) goto out;
  if (bbvfl_lrun_clients_start(x, err) < 0 || bbvfl_lrun_clients_wait(x, err) < 0) goto out;
  rc = bbvfl_lrun_report(x, res, err);
out:
  if (rc < 0) bbvfl_lrun_clients_stop(x);
  bbvfl_sender_free(x->snd);
  bbvfl_key_wipe(&x->fk);
  bbvfl_rpc_free(x->rpc);
  if (res->devnet_started && rc == 0 && o->keep_chain) res->devnet_kept = 1;
  else if (res->devnet_started) bbvfl_devnet_down(devdir, 10, NULL);
  bbvfl_partition_free(&x->part);
  free(x);
  return rc;
}

void bbvfl_local_result_free(bbvfl_local_result *res) {
  if (!res) return;
  json_decref(res->report);
  res->report = NULL;
}
