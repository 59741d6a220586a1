/* The benchmarks behind `bbvfl bench`, as library code outside the protocol core: what each mode
 * measures, computes and writes. The command (cli/cmd_bench.c) only parses flags and prints.
 *
 *   common.c     statistics, an embedded devnet, the floor measurement, progress, the benchmark
 *                environment (a node and funded client keys), output files, a `bbvfl demo` run in process
 *   chainbench.c the lean on-chain aggregation driver (chainbench.h)
 *   table1.c     the DP-BBVFL paper's Table I (off-chain vs on-chain aggregation, gas)
 *   scaling.c    one round's time and gas as M, P and B grow, against the naive contract
 *   blocks.c     what a block time does to a session, by window and staleness
 *   tables.c     windows sized for the chain by table size: blocks, gas, wall and ether per epoch (a model)
 *   lr.c         the model families off chain: LR with sgd, adam, sqn and the MLP, rounds to a target loss
 *   plot.c       figures (PNG through gnuplot) from the results and from a sweep.json
 *
 * Nothing here prints to the terminal: progress goes to the FILE* the caller gives (NULL: none),
 * reports to a FILE* (the *_print functions) or a JSON object the caller owns (new references,
 * json_decref). Errors are bbvfl_err (common/err.h): 0 on success, -1 with err filled. */
#ifndef BBVFL_BENCH_BENCH_H
#define BBVFL_BENCH_BENCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/chainbench.h"
#include "common/err.h"
#include "devnet/devnet.h"

/* ------------------------------------------------------------------ statistics */

typedef struct {
  double min, median, p90, mean, max;
} bbvfl_bench_stats;

/* v is sorted in place (the median is ml/metrics.h's bbvfl_median); nearest-rank p90; all zero
 * for n = 0. */
bbvfl_bench_stats bbvfl_bench_stats_of(double *v, size_t n);
/* {"min_ms", "median_ms", "p90_ms", "mean_ms", "max_ms"} (new reference). */
json_t *bbvfl_bench_stats_json(const bbvfl_bench_stats *s);
/* Sets key, key_min and key_max on o to s's median, min and max (a figure and its range). key
 * is at most 100 characters. */
void bbvfl_bench_set_range(json_t *o, const char *key, const bbvfl_bench_stats *s);
/* Sets a round time of M clients against the floor (one bare transfer to its receipt) on o:
 * floor_interleaved_ms = interleaved_ms (the floor timed between the configuration's rounds),
 * floor_ratio = round_ms / (M x interleaved_ms), floor_ratio_fresh = round_ms / (M x fresh_ms)
 * (the floor on the fresh chain); a ratio whose floor is not > 0 is 0. */
void bbvfl_bench_set_floor(json_t *o, double round_ms, int M, double interleaved_ms, double fresh_ms);

/* ------------------------------------------------------------------ an embedded devnet */

/* An anvil started for one benchmark in a temporary folder (TMPDIR), removed when stopped. While
 * it runs, SIGINT/SIGTERM/SIGHUP stop it before the process exits, so no node is left behind. */
typedef struct {
  char dir[256];
  int up;
  bbvfl_devnet d;
} bbvfl_bench_devnet;
/* block_time: mine a block every block_time seconds (0: on each transaction). */
int bbvfl_bench_devnet_start(bbvfl_bench_devnet *o, double block_time, bbvfl_err *err);
void bbvfl_bench_devnet_stop(bbvfl_bench_devnet *o);
/* A fresh folder $TMPDIR/<name>.XXXXXX (/tmp without TMPDIR) into buf. */
int bbvfl_bench_tmpdir(const char *name, char *buf, size_t n, bbvfl_err *err);
/* rm -rf of a folder a benchmark created. */
void bbvfl_bench_rmtree(const char *dir);

/* ------------------------------------------------------------------ the floor */

/* n signed 1-wei transfers (after warmup unmeasured ones) from a fresh key funded by anvil's dev
 * account 0 (eth/wallet.h), each timed from signing to receipt. */
typedef struct {
  bbvfl_bench_stats total, send, wait; /* send/wait only meaningful without sync */
  int n, sync;
  uint64_t chain_id;
} bbvfl_bench_floor_result;
int bbvfl_bench_floor_measure(const char *rpc_url, int n, int warmup, int sync, bbvfl_bench_floor_result *out,
                              bbvfl_err *err);

/* ------------------------------------------------------------------ progress */

/* Progress lines to `out` (NULL: quiet): with tty a bar with ETA redrawn in place, else a line
 * every few seconds. */
typedef struct {
  FILE *out;
  int tty;
  uint64_t done, total;
  double t0, last;
} bbvfl_bench_progress;
void bbvfl_bench_progress_init(bbvfl_bench_progress *p, uint64_t total, FILE *out, int tty);
void bbvfl_bench_progress_add_total(bbvfl_bench_progress *p, uint64_t more);
void bbvfl_bench_progress_step(bbvfl_bench_progress *p, uint64_t add, const char *what);
void bbvfl_bench_progress_note(bbvfl_bench_progress *p, const char *line);
void bbvfl_bench_progress_end(bbvfl_bench_progress *p);

/* A progress step per driver round (bbvfl_cbench_cfg.on_round with ctx a bbvfl_bench_round_ctx):
 * one step labelled `label`. */
typedef struct {
  bbvfl_bench_progress *pr;
  char label[96];
} bbvfl_bench_round_ctx;
void bbvfl_bench_on_round(void *ctx, uint64_t done, uint64_t total);

/* ------------------------------------------------------------------ the environment */

/* A node (an embedded anvil unless rpc_url is given) with `clients` funded benchmark keys. */
typedef struct {
  const char *rpc_url;
  bbvfl_bench_devnet own;
  bbvfl_cbench_pool *pool;
  int clients;
} bbvfl_bench_env;
/* log (nullable): one line when an anvil is started. */
int bbvfl_bench_env_open(bbvfl_bench_env *e, const char *rpc_url, int clients, FILE *log, bbvfl_err *err);
void bbvfl_bench_env_close(bbvfl_bench_env *e);

/* ------------------------------------------------------------------ output files */

/* The output folder: `out`, or runs/bench-<UTC timestamp> when NULL or empty; created. buf
 * receives it. */
int bbvfl_bench_out_dir(const char *out, char *buf, size_t n, bbvfl_err *err);
/* Atomic writes of dir/name. */
int bbvfl_bench_write(const char *dir, const char *name, const char *text, size_t len, bbvfl_err *err);
int bbvfl_bench_write_json(const char *dir, const char *name, const json_t *o, bbvfl_err *err);
/* dir/<stem>.csv (to_csv(t), malloc'd and freed here), then dir/<stem>.json (t). */
int bbvfl_bench_write_table(const char *dir, const char *stem, const json_t *t, char *(*to_csv)(const json_t *),
                            bbvfl_err *err);
/* CSV of rows (a JSON array of objects): a header line of cols (then suffix_header), then a line
 * per row: each column's value (integer %lld, real %.9g, boolean 0/1, string CSV-quoted, absent
 * empty), then suffix_row. malloc'd; NULL: out of memory. */
char *bbvfl_bench_csv(const json_t *rows, const char *const *cols, size_t nc, const char *suffix_header,
                      const char *suffix_row);
/* o as one compact JSON line (8 significant digits for reals) on f. */
int bbvfl_bench_print_json(const json_t *o, FILE *f, bbvfl_err *err);

/* One `bbvfl demo` run in this process (run/local.h: its own devnet unless rpc_url, M client
 * processes, the report): the demo's flags as fields (0 / NULL: the demo's default). *out: the
 * demo's JSON report (new reference; the same fields as `bbvfl demo --json`). */
typedef struct {
  int M, b;
  double beta;
  int epochs, batch, P;
  unsigned long long seed;  /* always given (--seed) */
  int window;               /* > 0: --window (refused above what fits, as the flag) */
  int staleness_given, staleness;
  int eval_rows;            /* > 0: --eval-rows-per-round */
  const char *aggregation;  /* NULL: lane */
  int compare;              /* --compare (reproducible noise) */
  double round_timeout_s;   /* 0: 60 */
  const char *data, *rpc_url, *run_dir;
} bbvfl_bench_demo_args;
int bbvfl_bench_demo(const bbvfl_bench_demo_args *a, json_t **out, bbvfl_err *err);

/* ------------------------------------------------------------------ table1 */

typedef struct {
  int Ms[8], nM, bs[8], nb;
  double beta;
  int epochs, masked_epochs, naive_rounds, batch, P, floor_n;
  int reset;      /* bbvfl_cbench_cfg.reset: 0 none, 1 per configuration (default), 2 also per epoch */
  int demo;       /* 1: also run `bbvfl demo` (M client processes) per plain (M, b) row */
  const char *rpc_given; /* --rpc as given (the demo then uses it too), NULL: embedded */
  const char *demo_dir;  /* folder for the demos' run folders (with demo) */
  unsigned long long seed;
  const char *data;
} bbvfl_bench_table1_opts;
void bbvfl_bench_table1_defaults(bbvfl_bench_table1_opts *o);
/* The options a user can get wrong, each refused with the flag named. */
int bbvfl_bench_table1_check(const bbvfl_bench_table1_opts *o, bbvfl_err *err);
/* *out: {mode, floor_ms, floor, naive, naive_gas_per_coordinate, naive_round_ms, rpc, embedded_anvil,
 * block_gas_limit, config, table1: [rows]}. */
int bbvfl_bench_table1_run(bbvfl_bench_env *e, const bbvfl_bench_table1_opts *o, bbvfl_bench_progress *pr,
                           json_t **out, bbvfl_err *err);
void bbvfl_bench_table1_print(const json_t *t, FILE *f);
char *bbvfl_bench_table1_csv(const json_t *t); /* malloc'd; NULL: out of memory */

/* ------------------------------------------------------------------ scaling */

typedef struct {
  int Ms[8], nM, Ps[8], nP, Bs[8], nB;
  int b, rounds, naive_rounds, naive, floor_n;
  int reset;      /* 0: leave every configuration's blocks on the chain; 1: evm_revert after each (default) */
  double floor_ms; /* > 0: the fresh-chain floor already measured in this run (bench all): not again */
  unsigned long long seed;
} bbvfl_bench_scaling_opts;
void bbvfl_bench_scaling_defaults(bbvfl_bench_scaling_opts *o);
int bbvfl_bench_scaling_check(const bbvfl_bench_scaling_opts *o, bbvfl_err *err);
/* *out: {mode, floor_ms, floor, tx_gas_cap, block_gas_limit, rounds, naive_rounds, b, rpc, chain, rows}. */
int bbvfl_bench_scaling_run(bbvfl_bench_env *e, const bbvfl_bench_scaling_opts *o, bbvfl_bench_progress *pr,
                            json_t **out, bbvfl_err *err);
void bbvfl_bench_scaling_print(const json_t *t, FILE *f);
char *bbvfl_bench_scaling_csv(const json_t *t); /* malloc'd; NULL: out of memory */

/* ------------------------------------------------------------------ blocks */

typedef struct {
  int Ks[8], nK, Ss[8], nS; /* windows and staleness values: a row per pair */
  int full_batch;           /* also one full-batch row (B = the training rows, K = 1) */
  int epochs, bt_epochs, seeds, M, B;
  double block_time;
  const char *aggregation, *data;
  int no_chain;             /* off-chain figures only (no anvil, no block counts) */
} bbvfl_bench_blocks_opts;
void bbvfl_bench_blocks_defaults(bbvfl_bench_blocks_opts *o);
int bbvfl_bench_blocks_check(const bbvfl_bench_blocks_opts *o, bbvfl_err *err);
/* The demo runs go under dir/runs. *out: {config, rows, target_auroc}. */
int bbvfl_bench_blocks_run(const bbvfl_bench_blocks_opts *o, const char *dir, bbvfl_bench_progress *pr, json_t **out,
                           bbvfl_err *err);
void bbvfl_bench_blocks_print(const json_t *t, FILE *f);
char *bbvfl_bench_blocks_csv(const json_t *t); /* malloc'd; NULL: out of memory */

/* ------------------------------------------------------------------ tables */

/* Windows sized for the chain by table size (569, 1,797, 20,000 and a synthetic 100,000 rows), M
 * clients, the devnet's and Ethereum mainnet's block gas limits: window, rounds, gas, blocks and
 * wall time per epoch, ether per epoch at a gas price. A model from binding/fit.h (bench/tables.c). */
typedef struct {
  int Ms[8], nM;
  uint64_t devnet_block_gas, mainnet_block_gas;
  double gas_price_gwei;
  double block_times[4];
  int nbt;
} bbvfl_bench_tables_opts;
void bbvfl_bench_tables_defaults(bbvfl_bench_tables_opts *o);
int bbvfl_bench_tables_check(const bbvfl_bench_tables_opts *o, bbvfl_err *err);
/* *out: {config, rows}. */
int bbvfl_bench_tables_run(const bbvfl_bench_tables_opts *o, json_t **out, bbvfl_err *err);
void bbvfl_bench_tables_print(const json_t *t, FILE *f);
char *bbvfl_bench_tables_csv(const json_t *t); /* malloc'd; NULL: out of memory */

/* ------------------------------------------------------------------ lr */

/* For each table and method (LR+SGD, LR+Adam, LR+SQN, the MLP) one seeded NPQ run off chain: test
 * loss and AUROC after every epoch, the aggregation rounds (training rounds plus sqn's curvature
 * rounds; evaluation rounds, the same for every method, left out) to reach a target test loss, the
 * final AUROC. */
typedef struct {
  const char *data; /* comma-separated CSV tables (NULL: the bundled breast_cancer.csv and wine.csv) */
  int M, rounds, mlp_epochs;
  double target;    /* test loss to reach (0: per table, 1.1 x the largest of the methods' best) */
  uint64_t seed;
} bbvfl_bench_lr_opts;
void bbvfl_bench_lr_defaults(bbvfl_bench_lr_opts *o);
int bbvfl_bench_lr_check(const bbvfl_bench_lr_opts *o, bbvfl_err *err);
/* *out: {config, rows}; one progress step per run. */
int bbvfl_bench_lr_run(const bbvfl_bench_lr_opts *o, bbvfl_bench_progress *pr, json_t **out, bbvfl_err *err);
void bbvfl_bench_lr_print(const json_t *t, FILE *f);
char *bbvfl_bench_lr_csv(const json_t *t); /* malloc'd; NULL: out of memory */

/* ------------------------------------------------------------------ figures */

/* Figures (PNG through gnuplot) into dir, their data and scripts under dir/plotdata/; each returns
 * the number of files drawn or -1. The names written are appended to `made` (a JSON array) when
 * non-NULL. */
int bbvfl_bench_plot_table1(const char *dir, const json_t *t1, json_t *made, bbvfl_err *err);
int bbvfl_bench_plot_scaling(const char *dir, const json_t *sc, json_t *made, bbvfl_err *err);
/* Figure 2 (AUROC by epoch per (b, beta), NPQ for reference) and AUROC against epsilon from a
 * sweep.json of `bbvfl sweep`, for the cells with M clients (0: the first M in the file). */
int bbvfl_bench_plot_sweep(const char *dir, const json_t *sweep, int M, json_t *made, bbvfl_err *err);
/* AUROC against blocks, one curve per row of a `bench blocks` result. */
int bbvfl_bench_plot_blocks(const char *dir, const json_t *t, json_t *made, bbvfl_err *err);
/* Blocks per epoch against table rows, one curve per (M, chain) of a `bench tables` result. */
int bbvfl_bench_plot_tables(const char *dir, const json_t *t, json_t *made, bbvfl_err *err);
/* Test loss against aggregation rounds, one figure per table of a `bench lr` result (lr_<n>.png). */
int bbvfl_bench_plot_lr(const char *dir, const json_t *t, json_t *made, bbvfl_err *err);

#endif
