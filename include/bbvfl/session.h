/* bbvfl public API: on-chain sessions on a local chain.
 *
 * A session is one training run aggregated by the DP-BBVFL contract: a deployment (token and
 * aggregator) for a training configuration, one client process per organisation, the elected
 * active client training the fusion head; afterwards anyone can audit it from the chain alone.
 * These calls are what `bbvfl devnet`, `bbvfl demo`, `bbvfl deploy`, `bbvfl client` and `bbvfl
 * audit` run:
 *   bbvfl_devchain_start / _stop   a local anvil on 127.0.0.1 (the pinned toolchain, else PATH);
 *   bbvfl_local_session_run        a whole session on this machine (devnet, deploy, M client
 *                                  processes, metrics), progress through a callback;
 *   bbvfl_deploy_session           the contracts of one session on a running node, and the
 *                                  session file every client reads;
 *   bbvfl_client_run               one organisation's client of a deployed session;
 *   bbvfl_audit_session            the audit of a session from its session file and the chain.
 *
 * Processes: bbvfl_local_session_run forks one child process per client (no exec) and waits
 * for exactly those children by pid; it starts anvil as a child too and stops it before it
 * returns. Call it from one thread at a time; do not install a SIGCHLD handler that reaps every
 * child while it runs. The library never prints: a client's log is its run folder's
 * clients/<m>/client.log. Several clients in one program (bbvfl_deploy_session, then
 * bbvfl_client_run per organisation): one process each, as bbvfl_local_session_run does it (fork
 * after the deploy; examples/onchain_session.c in the source tree); concurrent bbvfl_client_run
 * calls in threads of one process are not supported.
 *
 * Ownership: option structs and the strings they point at are borrowed for the call only;
 * results are caller-owned structs (on the stack is fine) whose pointers the library allocates
 * and the matching _free call releases (also after a failure; a zeroed result is fine). */
#ifndef BBVFL_PUBLIC_SESSION_H
#define BBVFL_PUBLIC_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "bbvfl/common.h"
#include "bbvfl/error.h"
#include "bbvfl/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A local chain (anvil) recorded in a folder. */
typedef struct {
  char rpc_url[64];              /* http://127.0.0.1:<port> */
  unsigned long long chain_id;
  int pid;                       /* the anvil process */
} bbvfl_devchain;

/* Starts anvil on a free loopback port, recorded in dir (created when missing; it must not hold a
 * live chain already), mining a block every block_time seconds (0: one per transaction), its
 * state kept in dir so a later start resumes it. Returns OK; ARG (NULL argument, block_time
 * outside 0..3600); STATE (a live chain is recorded in dir); IO (anvil not found or not starting,
 * named). *out is written on success only. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_devchain_start(const char *dir, double block_time,
                                                                    bbvfl_devchain *out, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(3);
/* Stops the chain recorded in dir (by its recorded pid, after checking it is that anvil), writing
 * its state, and removes the record. A recorded chain whose process is already gone: OK. No
 * chain recorded in dir (never started, or stopped already): STATE. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_devchain_stop(const char *dir, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1);

/* One progress report of a local session; valid during the callback only. */
typedef enum {
  BBVFL_PROGRESS_NODE = 0,       /* the node is up (rpc_url) */
  BBVFL_PROGRESS_DEPLOYED = 1,   /* the contracts are deployed (contract) */
  BBVFL_PROGRESS_CLIENT_FAILED = 2, /* client `client` exited with `status` */
  BBVFL_PROGRESS_STOPPING = 3,   /* the clients are being stopped (a failure or a stop request) */
  BBVFL_PROGRESS_FEE = 4,        /* the base fee crossed the fee cap */
  BBVFL_PROGRESS_TICK = 5        /* periodic, while the clients run */
} bbvfl_progress_kind;

typedef struct {
  bbvfl_progress_kind kind;
  const char *rpc_url;           /* the node */
  const char *contract;          /* the aggregator's address (0x..., checksummed) once deployed, else "" */
  int client, status;            /* CLIENT_FAILED */
  uint64_t round, rounds;        /* TICK: the contract's current round, the session's rounds */
  uint64_t epoch;                /* TICK: the epoch of that round, 1-based */
  int epochs, epochs_done;       /* TICK: the session's epochs; epochs whose metrics are posted */
  double test_loss, auroc;       /* TICK: of the latest posted epoch */
  double elapsed_s, eta_s;       /* TICK: since the clients started; estimate (< 0: unknown) */
  double base_fee_gwei;          /* FEE, TICK with a fee cap */
} bbvfl_progress;

/* Called with each report and the ctx given in the options. Return 0 to go on, non-zero to stop
 * the session (every client is stopped; the call fails with BBVFL_STATUS_STATE). It must not call
 * back into the session. */
typedef int (*bbvfl_progress_fn)(void *ctx, const bbvfl_progress *p);

/* A whole session on this machine, as `bbvfl demo` runs it. Zero-initialise, then set what you
 * need: every 0 / NULL field takes the default named. */
typedef struct {
  const bbvfl_config *config;    /* required: clients, PBM b and beta, batch, P, epochs, hidden
                                    layers, optimizer, test fraction, partition, delta, seed (the
                                    contract sums PBM only; Gaussian and NPQ are refused) */
  const char *data;              /* CSV table with a label column (NULL: the bundled Breast Cancer) */
  const char *label;             /* its label column (NULL: the last column) */
  const char *run_dir;           /* required: the run folder (created): session.json, report.json,
                                    metrics.csv, keys/ (throwaway keys, 0600), clients/<m>/ */
  const char *rpc_url;           /* NULL: an embedded devnet in run_dir/devnet, stopped at the end
                                    (its chain kept there); else this node (a devnet: funded from
                                    anvil's dev account) */
  double block_time;             /* embedded devnet: a block every S s (0: one per transaction) */
  int hashed;                    /* 1: hashed aggregation (default: lane) */
  int masked;                    /* 1: masked mode (pairwise masks hide each submission) */
  double round_timeout_s;        /* a client gives up on a round after this (0: 60) */
  int compare;                   /* 1: also train off chain with the same seeds (reproducible noise:
                                    no epsilon holds) and report that AUROC */
  bbvfl_progress_fn progress;    /* nullable */
  void *progress_ctx;
  double progress_every_s;       /* TICK cadence (0: 1 s) */
} bbvfl_local_session_opts;

/* What a finished local session measured. */
typedef struct {
  double auroc, accuracy, test_loss; /* the last epoch's test metrics (the active client's) */
  double auroc_offchain;         /* with compare: the off-chain run's AUROC, else NAN */
  int epochs;
  uint64_t rounds;               /* rounds of the session */
  double gas_per_coordinate;     /* gas of the sums per value summed */
  double gas_per_window;         /* gas per training window, gradient post included */
  double blocks_per_epoch;
  double epsilon;                /* the headline epsilon (one party's features of one row); INFINITY
                                    with no guarantee (reproducible noise) */
  double training_s, wall_s;
  char contract[43];             /* the aggregator (checksummed) */
  char session_file[1100];       /* run_dir/session.json: what bbvfl_audit_session reads */
  char *report_json;             /* report.json's text (owned; the fields of `bbvfl demo --json`) */
} bbvfl_local_session_result;

/* Runs the session. Returns OK (and *res); ARG (a NULL or bad option, a configuration the table or
 * the contract cannot serve, named); IO (the run folder, anvil); RPC, REVERT, TIMEOUT (the node
 * and the deployment); STATE (a client failed: its log is named; or stopped by the callback);
 * NOMEM. On failure every process the call started is stopped. */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_local_session_run(const bbvfl_local_session_opts *opts,
                                                                       bbvfl_local_session_result *res,
                                                                       bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(2);
/* Frees what res owns (report_json) and zeroes it. NULL: nothing happens. */
BBVFL_API void bbvfl_local_session_result_free(bbvfl_local_session_result *res);

/* The deployment of one session on a running node, as `bbvfl deploy` does it: the reward token
 * and the aggregator with the session's parameters, and the session file. Zero-initialise, then
 * set what you need: every 0 / NULL field takes the default named. */
typedef struct {
  const char *rpc_url;           /* required: the node */
  const char *key_file;          /* the deployer's key (hex, mode 0600); NULL: on a devnet (chain id
                                    31337) anvil's development account 0, on any other chain ARG */
  const bbvfl_config *config;    /* required: as in bbvfl_local_session_opts; its clients M is the
                                    number of participants the contract admits */
  const char *data;              /* CSV table with a label column (NULL: the bundled Breast Cancer) */
  const char *label;             /* its label column (NULL: the last column) */
  const char *session_file;      /* required: the file to write (its folder must exist) */
  int hashed;                    /* 1: hashed aggregation (default: lane) */
  int masked;                    /* 1: masked mode (pairwise masks hide each submission) */
  uint64_t round_timeout_blocks; /* blocks after which anyone may expire an open round (0: 600 s
                                    in blocks; a chain mining a block per transaction: 100000) */
  const char *client_keys_dir;   /* nullable: also create M throwaway client keys there
                                    (client-<m>.key, m = 0..M-1, mode 0600; the folder is created)
                                    and send each 10 ETH from the deployer: for test chains; they
                                    are the session's members */
  const char *members;           /* nullable: the M members' addresses, comma-separated (0x...): only
                                    they may register (the contract refuses anyone else, NotMember) */
  int open_registration;         /* 1: anyone may register (no member list), asked for on purpose;
                                    without it, members or client_keys_dir is required (ARG) */
} bbvfl_deploy_opts;

/* What a deployment wrote. */
typedef struct {
  char contract[43];             /* the aggregator (checksummed) */
  char token[43];                /* its reward token */
  unsigned long long chain_id;
  uint64_t deploy_block;
  uint64_t rounds;               /* rounds of the session */
  int clients;                   /* M */
  char **columns;                /* M strings (owned): client m's feature columns of the table,
                                    e.g. "0,1,2" (the config's partition, else an even split),
                                    as bbvfl_client_opts.columns takes them */
  char session_file[1100];       /* the session file written */
} bbvfl_deploy_result;

/* Deploys. Nothing is sent when an option is missing or bad, the configuration cannot be served
 * (the table, the partition, the contract's limits), the session file's folder does not exist or
 * is not writable, or the key cannot be loaded. Returns OK (and *res); ARG (named); IO (the table,
 * the session file, the key folder); CRYPTO (the key); RPC, REVERT, TIMEOUT (the node and the
 * transactions); NOMEM. On failure *res holds nothing (a session file exists only when the
 * contracts were deployed). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_deploy_session(const bbvfl_deploy_opts *opts,
                                                                    bbvfl_deploy_result *res, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(2);
/* Frees what res owns (columns) and zeroes it. NULL: nothing happens. */
BBVFL_API void bbvfl_deploy_result_free(bbvfl_deploy_result *res);

/* One organisation's client of a deployed session, as `bbvfl client` runs it: registers, takes
 * part in the election, runs every round (as the active client also the head), and returns when
 * the session ends. Restarted with the same key, session and state_dir it carries on. */
typedef struct {
  const char *session_file;      /* required: written by the deploy (run_dir/session.json) */
  const char *key_file;          /* required: this organisation's key (hex, mode 0600) */
  const char *columns;           /* required: its feature columns of the table, e.g. "0-5" */
  const char *state_dir;         /* required: checkpoints, the election secret, summary.json */
  const char *data;              /* its table (NULL: the session's) */
  int has_labels;                /* 1: holds the labels (may be elected active client) */
  int party;                     /* stream index of its initialisation (-1: the registration index) */
  double round_timeout_s;        /* give up on a round after this (0: 120) */
  int expire;                    /* on a round timeout, exclude the missing clients (expireRound) */
} bbvfl_client_opts;

typedef struct {
  int index;                     /* registration index */
  int was_active;                /* the active client at the end */
  uint64_t rounds, submissions;
  uint64_t gas_used;             /* gas of this client's mined transactions */
} bbvfl_client_result;

/* Returns OK (*res filled); ARG (a missing option or one out of range, named, before anything is
 * sent; a table that does not match the session);
 * IO; CRYPTO (the key); RPC, REVERT, TIMEOUT (the chain); VERIFY (the active client posted a
 * gradient that is not the session's head's: refused, nothing of it applied). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_client_run(const bbvfl_client_opts *opts,
                                                                bbvfl_client_result *res, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(2);

/* The audit's verdict of a session: every sum, minibatch, election and payment recomputed from the
 * chain's events and transactions. */
typedef enum { BBVFL_AUDIT_PASS = 0, BBVFL_AUDIT_FAIL = 1, BBVFL_AUDIT_INCOMPLETE = 2 } bbvfl_audit_verdict_t;

typedef struct {
  bbvfl_audit_verdict_t verdict;
  int checks, checks_failed;     /* checks run, and how many failed */
  uint64_t rounds;               /* rounds verified */
  char first_failure[256];       /* the first failure in words ("" when none) */
} bbvfl_audit_summary;

/* Audits the session of session_file against rpc_url (NULL: the session's node). A session that
 * does not verify is not an error of the call: OK with verdict FAIL. Returns OK; ARG; IO, PARSE
 * (the session file); RPC (the node). */
BBVFL_API BBVFL_WARN_UNUSED_RESULT bbvfl_status bbvfl_audit_session(const char *session_file, const char *rpc_url,
                                                                   bbvfl_audit_summary *out, bbvfl_error *err)
    BBVFL_ARG_NONNULL(1) BBVFL_ARG_NONNULL(3);

#ifdef __cplusplus
}
#endif

#endif
