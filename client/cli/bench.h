/* Shared pieces of `bbvfl bench`: statistics, an embedded devnet, progress on stderr, the floor
 * measurement, the benchmark environment (node + funded client keys), output files, and the modes
 * (cmd_bench.c: dispatcher, floor; bench_table.c: table1; bench_scaling.c: scaling;
 * bench_plot.c: plots and all). */
#ifndef BBVFL_CLI_BENCH_H
#define BBVFL_CLI_BENCH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "devnet/devnet.h"
#include "vfl/chainbench.h"

/* anvil's publicly documented development account 0: funds the benchmark's fresh keys. Only
 * meaningful on an anvil started with its default accounts. */
#define BENCH_DEV0_KEY "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

typedef struct {
  double min, median, p90, mean, max;
} bench_stats;

/* v is sorted in place; nearest-rank quantiles; all zero for n = 0. */
bench_stats bench_stats_of(double *v, size_t n);
/* {"min_ms", "median_ms", "p90_ms", "mean_ms", "max_ms"} (new reference). */
json_t *bench_stats_json(const bench_stats *s);

/* An anvil started for one benchmark in a temporary folder, removed when stopped. */
typedef struct {
  char dir[256];
  int up;
  bbvfl_devnet d;
} bench_devnet;
int bench_devnet_start(bench_devnet *o, bbvfl_err *err);
/* The same with anvil mining a block every block_time seconds (0: on each transaction). */
int bench_devnet_start_bt(bench_devnet *o, double block_time, bbvfl_err *err);
/* rm -rf of a folder this benchmark created. */
void bench_rmtree(const char *dir);
void bench_devnet_stop(bench_devnet *o);

/* The floor: n signed 1-wei transfers (after warmup unmeasured ones) from a fresh key funded by
 * dev account 0, each timed from signing to receipt. */
typedef struct {
  bench_stats total, send, wait; /* send/wait only meaningful without sync */
  int n, sync;
  uint64_t chain_id;
} bench_floor_result;
int bench_floor_measure(const char *rpc_url, int n, int warmup, int sync, bench_floor_result *out,
                        bbvfl_err *err);

/* Progress on stderr: a bar with ETA on a terminal, a line every few seconds otherwise. */
typedef struct {
  int tty, quiet;
  uint64_t done, total;
  double t0, last;
} bench_progress;
void bench_progress_init(bench_progress *p, uint64_t total, int quiet);
void bench_progress_add_total(bench_progress *p, uint64_t more);
void bench_progress_step(bench_progress *p, uint64_t add, const char *what);
void bench_progress_note(bench_progress *p, const char *line);
void bench_progress_end(bench_progress *p);

/* A node (embedded unless rpc_url is given) with `clients` funded benchmark keys. */
typedef struct {
  const char *rpc_url;
  bench_devnet own;
  bbvfl_cbench_pool *pool;
  int clients;
} bench_env;
int bench_env_open(bench_env *e, const char *rpc_url, int clients, int quiet, bbvfl_err *err);
void bench_env_close(bench_env *e);

/* The output folder: `out`, or runs/bench-<UTC timestamp> when NULL; created. buf receives it. */
int bench_out_dir(const char *out, char *buf, size_t n, bbvfl_err *err);
/* Atomic writes of dir/name. */
int bench_write(const char *dir, const char *name, const char *text, size_t len, bbvfl_err *err);
int bench_write_json(const char *dir, const char *name, const json_t *o, bbvfl_err *err);
/* dir/<stem>.csv (to_csv(t), malloc'd and freed here), then dir/<stem>.json (t). */
int bench_write_table(const char *dir, const char *stem, const json_t *t, char *(*to_csv)(const json_t *),
                      bbvfl_err *err);
/* The end of `bench table1` and `bench scaling`: unless no_files, bench_write_table; then t on
 * stdout as JSON (as_json) or as the text table (print) followed by the names written. Takes the
 * reference t. Returns the command's exit status (errors reported through cli_report). */
int bench_finish_table(const char *dir, const char *stem, json_t *t, char *(*to_csv)(const json_t *),
                       void (*print)(const json_t *, FILE *), int no_files, int as_json, bbvfl_err *err);
/* Prints o compactly on stdout. */
int bench_print_json(const json_t *o, bbvfl_err *err);

/* "5,10" -> ints within [lo, hi], at most max of them. */
int bench_parse_ints(const char *flag, const char *s, int *v, int max, int *n, int lo, int hi, bbvfl_err *err);

/* table1: options, the run (returns the JSON object printed by --json), the text table, CSV. */
typedef struct {
  int Ms[8], nM, bs[8], nb;
  double beta;
  int epochs, masked_epochs, naive_rounds, batch, P, floor_n;
  int reset;      /* bbvfl_cbench_cfg.reset: 0 none, 1 per configuration (default), 2 also per epoch */
  int demo;       /* 1: also run `bbvfl demo` (M client processes) per plain (M, b) row */
  const char *rpc_given; /* --rpc as given (the demo then uses it too), NULL: embedded */
  const char *demo_dir;  /* folder for the demos' run folders (NULL: a temporary one, removed) */
  unsigned long long seed;
  const char *data;
} bench_table1_opts;
void bench_table1_defaults(bench_table1_opts *o);
int bench_table1_run(bench_env *e, const bench_table1_opts *o, bench_progress *pr, json_t **out, bbvfl_err *err);
void bench_table1_print(const json_t *t, FILE *f);
char *bench_table1_csv(const json_t *t); /* malloc'd */

typedef struct {
  int Ms[8], nM, Ps[8], nP, Bs[8], nB;
  int b, rounds, naive_rounds, naive, floor_n;
  int reset;      /* 0: leave every configuration's blocks on the chain; 1: evm_revert after each (default) */
  double floor_ms; /* > 0: the fresh-chain floor already measured in this run (bench all): not again */
  unsigned long long seed;
} bench_scaling_opts;
void bench_scaling_defaults(bench_scaling_opts *o);
int bench_scaling_run(bench_env *e, const bench_scaling_opts *o, bench_progress *pr, json_t **out, bbvfl_err *err);
void bench_scaling_print(const json_t *t, FILE *f);
char *bench_scaling_csv(const json_t *t); /* malloc'd */

/* Figures (PNG through gnuplot) into dir; each returns the number of files drawn or -1. The
 * names written are appended to `made` (a JSON array) when non-NULL. */
int bench_plot_table1(const char *dir, const json_t *t1, json_t *made, bbvfl_err *err);
int bench_plot_scaling(const char *dir, const json_t *sc, json_t *made, bbvfl_err *err);
/* Figure 2 (AUROC by epoch per (b, beta), NPQ for reference) and AUROC against epsilon from a
 * sweep.json of `bbvfl sweep`, for the cells with M clients (0: the first M in the file). */
int bench_plot_sweep(const char *dir, const json_t *sweep, int M, json_t *made, bbvfl_err *err);

/* AUROC against blocks, one curve per row of a `bench blocks` result. */
int bench_plot_blocks(const char *dir, const json_t *t, json_t *made, bbvfl_err *err);
/* Runs this program with args (argv[0] is the program itself, set here; args NULL-terminated
 * without it), its stderr into log, and parses the last line of its stdout as a JSON object
 * (*out, new reference). what names the run in errors. */
int bench_run_self(const char *const *args, const char *log, const char *what, json_t **out, bbvfl_err *err);

int bench_table1(int argc, char **argv);
int bench_blocks(int argc, char **argv);
int bench_scaling(int argc, char **argv);
int bench_plots(int argc, char **argv);
int bench_all(int argc, char **argv);
int bench_lr(int argc, char **argv);
/* Test loss against aggregation rounds, one figure per table of a `bench lr` result (lr_<n>.png). */
int bench_plot_lr(const char *dir, const json_t *t, json_t *made, bbvfl_err *err);

#endif
