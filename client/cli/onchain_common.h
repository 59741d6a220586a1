/* Helpers shared by `bbvfl deploy`, `bbvfl client` and `bbvfl demo`. */
#ifndef BBVFL_CLI_ONCHAIN_COMMON_H
#define BBVFL_CLI_ONCHAIN_COMMON_H

#include <stdint.h>

#include "cli/afe_flags.h"
#include "cli/args.h"
#include "cli/train_common.h"
#include "eth/keystore.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "binding/session.h"

/* The session's training flags (names shared with `bbvfl train`). */
typedef struct {
  train_common tc;
  int clients, b;
  double beta;
  const char *mechanism, *seed;
  const char *aggregation; /* "lane" or "hashed" (window, staleness: tc) */
  int round_rows;          /* lr --batch 0: training rows per round (0: as many as fit the chain) */
  /* 1: --window / --eval-rows-per-round given (a flag or a --config key): a value above what fits
     the chain is refused instead of lowered (bbvfl_session.window_insist, eval_insist) */
  int window_given, eval_given, staleness_given;
  afe_flags afe; /* --afe*: VFL-AFE's local steps before PBM (session file "training"."afe") */
} session_flags;

void session_flags_defaults(session_flags *f);
/* Appends the options (room for TRAIN_COMMON_NOPTS + SESSION_FLAGS_NOPTS), returns how many. */
#define SESSION_FLAGS_NOPTS (7 + AFE_FLAGS_NOPTS)
size_t session_flags_opts(session_flags *f, cli_opt *o);
/* Applies --config FILE.json (keys named like the flags: "clients", "b", "beta", "epochs", ...)
 * found in argv to f before the flags are parsed (flags given on the command line win). */
int session_flags_config(session_flags *f, int argc, char **argv, bbvfl_err *err);
/* Notes in f which of --window / --eval-rows-per-round argv names. */
void session_flags_given(session_flags *f, int argc, char **argv);
/* Fills s->train (and label/data, and the aggregation mode in s->cparams.hashed) from the flags,
 * checks the setup (bbvfl_session_check_setup: set s->cparams.masked before the call) and loads
 * the table into ds (caller frees; checked against the setup). */
int session_flags_apply(const session_flags *f, bbvfl_session *s, bbvfl_dataset *ds, bbvfl_err *err);

/* --rpc given several times: the URLs joined by commas into buf (n bytes) and *rpc pointed at it
 * (the JSON-RPC client fails over along the list); given once or not at all, *rpc is left alone. */
int rpc_flag_join(int argc, char **argv, char *buf, size_t n, const char **rpc, bbvfl_err *err);

/* Appends --keystore FILE, --password-file FILE, --password-env VAR (filling src), returns how many
 * (KEYSTORE_NOPTS). */
#define KEYSTORE_NOPTS 3
size_t keystore_opts(bbvfl_key_source *src, cli_opt *o);

#endif
