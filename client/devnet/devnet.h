/* A local anvil devnet on loopback: start, find, check and stop it.
 *
 * A devnet lives in a run folder that holds devnet.json (pid, port, rpc_url, chain_id, log and
 * state paths), anvil.log and, with persistent state, state.json. `up` starts anvil on 127.0.0.1
 * (the given port, or a free one), waits until it answers eth_chainId and records it; `down`
 * stops it by the recorded pid (after checking the pid still is that anvil) and, with persistent
 * state, anvil writes its state on the way out so a later `up` on the same folder resumes the
 * chain with its history. All structs are caller-owned, fixed-size.
 */
#ifndef BBVFL_DEVNET_DEVNET_H
#define BBVFL_DEVNET_DEVNET_H

#include <sys/types.h>

#include "common/err.h"

typedef struct {
  const char *dir;       /* run folder (created if missing); required */
  int port;              /* 0: a free port chosen by anvil */
  int persist;           /* keep chain state in dir/state.json across down/up */
  const char *state;     /* explicit state file (implies persist); NULL: dir/state.json */
  double timeout_s;      /* how long to wait for the node to answer; 0: 30 s */
  double block_time;     /* 0: mine each transaction at once (automine) */
  int lean_history;      /* keep only the last 8 historical states in memory (anvil
                            --prune-history 8): with full history anvil's time per block grows
                            with the chain's length; blocks, transactions, receipts and logs stay
                            available (an audit works), eth_call on old blocks does not */
  int dump_at_exit_only; /* with persistent state: write it only when stopped, not every 2 s
                            (a long chain's periodic dump costs the node time during a run) */
  const char *hardfork;  /* NULL: "cancun" (see below); "default": anvil's own default */
  const char *anvil;     /* anvil binary; NULL: $BBVFL_ANVIL, the pinned toolchain, then PATH */
} bbvfl_devnet_opts;

typedef struct {
  char dir[1024];
  char rpc_url[64];
  int port;
  pid_t pid;
  unsigned long long chain_id;
  char log_path[1100];
  char state_path[1100]; /* empty: no persistent state */
} bbvfl_devnet;

/* Starts anvil; fails if a live devnet is already recorded in dir.
 *
 * The hard fork defaults to Cancun, not anvil 1.7.1's Osaka-era default: from Prague on, every
 * block writes a new storage slot of the EIP-2935 block-hash history contract (a ring of 8191),
 * and anvil recomputes the whole state root each block, so a transaction's round trip grows from
 * about 0.4 ms on a fresh chain to about 13 ms after 10,000 blocks (a 30-epoch session mines about
 * 10,000). Nothing bbvfl does depends on Prague: the contracts use no Prague opcode, and calldata
 * and storage cost the same for these transactions (EIP-7623's floor does not bind). */
int bbvfl_devnet_up(const bbvfl_devnet_opts *opts, bbvfl_devnet *out, bbvfl_err *err);

/* Reads dir/devnet.json. Fails with BBVFL_E_STATE when none is recorded. */
int bbvfl_devnet_load(const char *dir, bbvfl_devnet *out, bbvfl_err *err);

/* 1 when the recorded pid is alive and is an anvil process, else 0. */
int bbvfl_devnet_alive(const bbvfl_devnet *d);

/* Stops the devnet recorded in dir (SIGTERM, then SIGKILL after timeout_s) and removes
 * devnet.json. Stopping a devnet that is already gone succeeds. */
int bbvfl_devnet_down(const char *dir, double timeout_s, bbvfl_err *err);

/* Asks url for eth_chainId within timeout_s. */
int bbvfl_devnet_ping(const char *url, double timeout_s, unsigned long long *chain_id,
                      bbvfl_err *err);

/* Finds the pinned anvil (or forge/cast) binary: $BBVFL_<TOOL> upper-cased, then
 * <toolchain>/node_modules/@foundry-rs/<tool>-linux-<arch>/bin/<tool> (<toolchain>: common/rundirs.h,
 * $BBVFL_TOOLCHAIN_DIR or the source tree's devnet/; an installed bbvfl has none), then PATH.
 * Writes into buf (size n). */
int bbvfl_find_tool(const char *tool, char *buf, size_t n, bbvfl_err *err);

#endif
