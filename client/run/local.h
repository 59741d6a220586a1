/* A whole on-chain session on this machine (what `bbvfl demo` runs), as a library call.
 *
 * bbvfl_local_run: starts an embedded anvil in RUN/devnet (unless opts->rpc_url), deploys token and
 * aggregator for the setup in opts->s, writes RUN/session.json, creates M throwaway keys in
 * RUN/keys (0600; devnet only) and funds them, forks one process per client (each runs
 * bbvfl_client_files_run of run/client.h in the forked child: no exec, stdout and stderr into
 * RUN/clients/<m>/client.log), watches the chain (round, metrics, block gas, base fee) and reports
 * progress through opts->progress, collects the clients' summary.json files, reruns the session
 * off chain with the same seed and session seed (aggregation timing, --compare), and writes
 * RUN/metrics.csv and RUN/report.json (atomically). The report's JSON fields are those `bbvfl
 * demo --json` prints (an interface: tests and bench/ read them).
 *
 * Stopping: *opts->stop non-zero (a signal handler's flag) or the progress callback returning
 * non-zero stops every client (SIGTERM, SIGKILL after 5 s) and fails with BBVFL_E_STATE
 * "interrupted". A client exiting non-zero stops the others too (BBVFL_E_STATE naming the logs).
 * On every failure the clients are stopped and reaped and the embedded devnet is stopped (its chain
 * is kept in RUN/devnet for `bbvfl audit`).
 *
 * The library never prints: every line `bbvfl demo` shows comes from an event (bbvfl_local_event)
 * or the result. Ownership: opts and what it points at are borrowed for the call (opts->s is
 * filled in by the deploy); the result owns its report (bbvfl_local_result_free, also after a
 * failure). Processes: the caller must not reap children it did not start itself (the call waits
 * for its own by pid). */
#ifndef BBVFL_RUN_LOCAL_H
#define BBVFL_RUN_LOCAL_H

#include <signal.h>
#include <stdint.h>

#include <jansson.h>

#include "common/err.h"
#include "dp/privacy.h"
#include "eth/keystore.h"
#include "ml/data.h"
#include "binding/session.h"

#define BBVFL_LOCAL_MAX_CLIENTS 64

typedef enum {
  BBVFL_LOCAL_EV_NODE = 0,      /* the node is known: rpc_url, devnet_started, run_dir */
  BBVFL_LOCAL_EV_DEPLOYED,      /* the session is deployed: s (addresses, contract parameters) */
  BBVFL_LOCAL_EV_CLIENT_FAILED, /* client `client` exited with `status` (non-zero) */
  BBVFL_LOCAL_EV_STOPPING,      /* stopping the clients: interrupted (1) or a client failed (0) */
  BBVFL_LOCAL_EV_FEE,           /* the base fee crossed opts->max_fee_gwei: base_fee_gwei, fee_above */
  BBVFL_LOCAL_EV_TICK           /* every opts->progress_every_s while the clients run */
} bbvfl_local_ev_kind;

/* One progress event; valid during the callback only. Fields not named for a kind are zero. */
typedef struct {
  bbvfl_local_ev_kind kind;
  const char *run_dir;
  const char *rpc_url;
  int devnet_started;         /* NODE: 1 when the call started the node */
  const bbvfl_session *s;     /* DEPLOYED, TICK: the deployed session */
  int client, status;         /* CLIENT_FAILED */
  int interrupted;            /* STOPPING */
  double base_fee_gwei;       /* FEE, TICK (with a fee cap): the latest base fee */
  int fee_above;              /* FEE, TICK: the base fee is above the cap */
  uint64_t round, total;      /* TICK: the contract's current round, rounds of the session */
  uint64_t epoch;             /* TICK: the epoch of that round, 1-based */
  int epochs_done;            /* TICK: epochs whose metrics are posted (MetricsPosted) */
  double loss, auroc;         /* TICK: the latest posted epoch's test loss and AUROC */
  uint64_t gas;               /* TICK: gas of the blocks seen so far (kept current with live_gas) */
  double elapsed_s, eta_s;    /* TICK: since the clients started; ETA (< 0: unknown) */
} bbvfl_local_event;

/* Non-zero return: stop (as an interrupt). */
typedef int (*bbvfl_local_progress_fn)(void *ctx, const bbvfl_local_event *ev);

typedef struct {
  /* the setup, filled as session_flags_apply / bbvfl_local_setup fill it (train, data, label,
     cparams.masked and hashed, round_timeout_blocks (0: 64 + 4M, so the clients' expireRound()
     attempts reach it soon after a dropout), active_timeout_s); deploy fills the rest */
  bbvfl_session *s;
  const bbvfl_dataset *ds;      /* the session's table (loaded from s->data) */
  const char *partition;        /* columns per client ("0-5/6-11/..."); NULL: even split */
  const char *run_dir;          /* required; created when missing */
  const char *rpc_url;          /* NULL: start an embedded devnet in run_dir/devnet */
  const bbvfl_key_source *funder; /* deployer and funder key (nullable): none named, anvil's dev
                                     account when the node is a devnet */
  const char *funder_flag;      /* names the funder in messages (NULL: "--funder-key") */
  double block_time;            /* embedded devnet: a block every S s (0: a block per transaction) */
  int full_history;             /* embedded devnet: keep every old state */
  double round_timeout_s;       /* the clients' round timeout (0: 60) */
  double max_fee_gwei;          /* fee cap of the deployer and the clients (0: none) */
  int confirmations;            /* payouts wait this many blocks (clients' --confirmations) */
  int seeded;                   /* 1: the clients take s->train.seed as their init seed (--seed) */
  int compare;                  /* report the off-chain AUROC with the same seeds */
  double delta;                 /* of the privacy figures (0: 1e-5) */
  const char *dump_q_dir;       /* TEST HOOK (NULL: off): each client's plaintext q (onchain.h) */
  double t_start;               /* start of the run for wall_s (bbvfl_now(); 0: the call's start) */
  double progress_every_s;      /* TICK cadence (0: 1 s) */
  int live_gas;                 /* 1: count block gas at every TICK, not only at the end */
  int keep_chain;               /* embedded devnet: left running after a run that succeeded (the caller
                                   stops it: bbvfl_devnet_down(RUN/devnet); res->devnet_kept says so) */
  const volatile sig_atomic_t *stop; /* nullable: non-zero stops the run */
  bbvfl_local_progress_fn progress;  /* nullable */
  void *progress_ctx;
} bbvfl_local_opts;

typedef struct {
  json_t *report;             /* RUN/report.json's object (owned; NULL until written) */
  int devnet_started;         /* the call started (and stopped, unless devnet_kept) an embedded devnet */
  int devnet_kept;            /* keep_chain: it is still running, at rpc_url, in RUN/devnet */
  char rpc_url[512];          /* the node the session ran on */
  int deployed;               /* something was deployed (the run folder then holds it) */
  /* the session's privacy (core/cfgprivacy.h) for the participants at the end */
  int have_privacy;
  bbvfl_privacy privacy;
  bbvfl_err privacy_err;      /* why have_privacy is 0 */
  double auroc, accuracy, test_loss; /* the last epoch's, as the active client measured */
  double auroc_offchain;      /* the off-chain run with the same seeds (NAN without compare) */
  size_t epochs_measured;     /* epochs in the active client's metrics */
  double onchain_agg_s;       /* median per epoch of the on-chain aggregation time */
  double offchain_agg_s;      /* the same off chain, per epoch */
  double gas_per_coordinate, gas_per_window, gas_per_round, blocks_per_epoch;
  uint64_t rounds, curvature_rounds;
  double wall_s, training_s;
} bbvfl_local_result;

int bbvfl_local_run(const bbvfl_local_opts *opts, bbvfl_local_result *res, bbvfl_err *err);
void bbvfl_local_result_free(bbvfl_local_result *res);

/* The setup of `bbvfl demo` with every flag at its default (5 clients, PBM b 16 beta 0.2, the
 * trainer's defaults of offchain/offchain.h, lane aggregation), for callers that set a few fields
 * (bench/, the public API) and then call bbvfl_local_setup. */
void bbvfl_local_setup_defaults(bbvfl_session *s);
/* Completes a setup: data (NULL: the bundled table) and label (NULL: the last column) recorded in
 * s, bbvfl_session_check_setup, the table loaded into *ds (caller frees) and checked against the
 * setup (bbvfl_session_check_table). Round timeout blocks: 64 + 4M when unset. */
int bbvfl_local_setup(bbvfl_session *s, const char *data, const char *label, bbvfl_dataset *ds, bbvfl_err *err);

#endif
