/* One session's deployment on a running node, and its session file: what `bbvfl deploy` runs
 * after its flags, what the public bbvfl_deploy_session runs, and the keys and funding of a local
 * session (run/local.h).
 *
 * bbvfl_deploy_run: refuses an output file that cannot be written (before any transaction: the
 * session file is the only record of the contracts), connects to the node, loads the deployer's
 * key (bbvfl_deployer_key), deploys token and aggregator for the setup in *s
 * (bbvfl_session_deploy of binding/session.h, which checks the setup first and fills the rest of *s),
 * writes the session file, and, when asked, creates the clients' throwaway keys and funds them
 * from the deployer (bbvfl_deploy_make_keys, bbvfl_deploy_fund_addrs). Sends nothing when an argument, the output file or
 * the key is wrong.
 *
 * Ownership: every pointer is borrowed for the call; *s is the caller's (filled by the deploy).
 * Each call returns 0, or -1 with err (a key never appears in a message). */
#ifndef BBVFL_RUN_DEPLOY_H
#define BBVFL_RUN_DEPLOY_H

#include <stdint.h>

#include "common/err.h"
#include "eth/keystore.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "ml/data.h"
#include "binding/session.h"

typedef struct {
  const char *rpc_url;            /* required: the node (several, comma-separated: fail-over) */
  const bbvfl_key_source *key;    /* the deployer (nullable: anvil's development account 0, on a devnet only) */
  const char *key_flag;           /* names the key in messages (NULL: "--deployer-key") */
  const bbvfl_dataset *ds;        /* required: the session's table, loaded from s->data */
  const char *out;                /* required: the session file to write */
  const char *out_flag;           /* names it in messages (NULL: "--out") */
  double max_fee_gwei;            /* the deployer's fee cap (0: none) */
  const char *client_keys_dir;    /* nullable: also create nkeys throwaway keys there (before the
                                     deployment: they are the session's members) and fund them */
  int nkeys;                      /* 1..64 with client_keys_dir */
  const char *members;            /* nullable: the members' addresses, comma-separated (one per client) */
  int open_registration;          /* 1: a session anyone may join (no member list); asked for explicitly */
} bbvfl_deploy_req;

int bbvfl_deploy_run(const bbvfl_deploy_req *r, bbvfl_session *s, bbvfl_err *err);

/* BBVFL_E_ARG (naming flag and the folder) unless out can be created or replaced: its folder exists
 * and is writable, and out is not a folder. */
int bbvfl_deploy_check_out(const char *out, const char *flag, bbvfl_err *err);

/* The deployer's (or a funder's) key: from src when it names one, else anvil's development account
 * on a devnet (bbvfl_session_devnet_key; elsewhere BBVFL_E_ARG asking for `flag FILE`). */
int bbvfl_deployer_key(bbvfl_rpc *rpc, const bbvfl_key_source *src, const char *flag, bbvfl_key *k, bbvfl_err *err);

/* DIR/client-<m>.key into buf (BBVFL_E_ARG when it does not fit). */
int bbvfl_deploy_key_path(char *buf, size_t n, const char *dir, int m, bbvfl_err *err);

/* Creates n throwaway keys DIR/client-<m>.key (mode 0600; dir must exist); addrs (n rows)
 * receives their addresses. Sends nothing. */
int bbvfl_deploy_make_keys(const char *dir, int n, uint8_t (*addrs)[20], bbvfl_err *err);

/* Sends each of the n addresses 10 ETH from snd's account, every transfer at once, then waits for
 * the receipts (60 s + 4 block times). */
int bbvfl_deploy_fund_addrs(bbvfl_sender *snd, const uint8_t (*addrs)[20], int n, double block_time, bbvfl_err *err);

#endif
