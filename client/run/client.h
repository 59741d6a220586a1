/* One client of an on-chain session from its files: what `bbvfl client` runs after its flags, and
 * what each process of a local session (run/local.h) runs.
 *
 * bbvfl_client_files_run loads the session file, the key (a hex key file or any
 * bbvfl_key_source) and the client's table, runs bbvfl_onchain_run (onchain/onchain.h) with the
 * tunables in c->cfg, and writes STATE/summary.json once (also after a refused gradient, whose
 * summary says where and why). Progress and the active client's privacy lines ("privacy: ...",
 * "privacy scope: ...") go to c->cfg.log (nullable); a summary that cannot be written is a warning
 * there, not an error.
 *
 * Ownership: c and its strings are borrowed for the call; the call sets c->cfg.sess, key, ds, seed
 * and seeded_noise itself (whatever the caller put there). *sm (nullable) receives the summary
 * as written (bbvfl_onchain_summary_free; zeroed when none was written). Returns 0, or -1 with err
 * (the key never appears in a message). */
#ifndef BBVFL_RUN_CLIENT_H
#define BBVFL_RUN_CLIENT_H

#include <stdint.h>

#include "common/err.h"
#include "eth/keystore.h"
#include "onchain/onchain.h"

typedef struct {
  const char *session;         /* session file written by the deploy (required) */
  const bbvfl_key_source *key; /* this organisation's key (required) */
  const char *data;            /* this client's table; NULL: the session's */
  const char *label;           /* its label column; NULL: the session's */
  int seed_given;              /* 1: seed below is the model init seed; 0: the session's */
  uint64_t seed;
  const char *contract;        /* nullable: check that the session's aggregator is this address */
  bbvfl_onchain_cfg cfg;       /* columns, state_dir and every tunable (onchain/onchain.h) */
} bbvfl_client_files;

int bbvfl_client_files_run(bbvfl_client_files *c, bbvfl_onchain_summary *sm, bbvfl_err *err);

#endif
