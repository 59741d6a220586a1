/* bbvfl bench tables: what the table's size does to a session on a chain, with windows sized for
 * the chain (binding/fit.h) and staleness 1 (one block per window).
 *
 * For tables of 569 (Breast Cancer), 1,797 (Digits), 20,000 (Letter) and 100,000 rows (a synthetic
 * table), M clients, B = 10, P = 16, b = 16, hashed aggregation, an 80/20 split, and each chain
 * (the devnet's block gas limit, Ethereum mainnet's): the window K and evaluation split E that fit
 * (binding/fit.h, the same function `bbvfl deploy` uses), the training and evaluation rounds per
 * epoch, the gas an epoch uses (the fit's upper estimate of used gas: M submissions, the
 * aggregate() and the gradient post per window, M submissions and the aggregate() per evaluation
 * round, the metrics and payout), the blocks per epoch in steady state (one block per window, and
 * more only where an epoch's gas needs more blocks: max(T, ceil(gas / (margin x block gas)))),
 * the wall time per epoch at each block time (blocks x block time) and, at a stated gas price,
 * the ether an epoch costs. A model from the gas functions, not a measurement: the measured
 * figures (bbvfl demo, bbvfl bench blocks) are in the README beside it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "binding/fit.h"

typedef struct {
  const char *name;
  size_t rows, features;
  int classes;
} tshape;

static const tshape SHAPES[] = {{"breast_cancer", 569, 30, 2},
                                {"digits", 1797, 64, 10},
                                {"letter", 20000, 16, 26},
                                {"synthetic", 100000, 16, 2}};

void bbvfl_bench_tables_defaults(bbvfl_bench_tables_opts *o) {
  memset(o, 0, sizeof *o);
  o->Ms[0] = 5;
  o->Ms[1] = 10;
  o->nM = 2;
  o->devnet_block_gas = 30000000;
  o->mainnet_block_gas = 36000000;
  o->gas_price_gwei = 1.0;
  o->block_times[0] = 1;
  o->block_times[1] = 12;
  o->nbt = 2;
}

int bbvfl_bench_tables_check(const bbvfl_bench_tables_opts *o, bbvfl_err *err) {
  if (o->nM < 1) return bbvfl_fail(err, BBVFL_E_ARG, "--clients: at least one M");
  for (int i = 0; i < o->nM; i++)
    if (o->Ms[i] < 2 || o->Ms[i] > 64) return bbvfl_fail(err, BBVFL_E_ARG, "--clients: M in 2..64, got %d", o->Ms[i]);
  if (o->devnet_block_gas < 1000000 || o->mainnet_block_gas < 1000000)
    return bbvfl_fail(err, BBVFL_E_ARG, "block gas limits must be at least 1,000,000");
  if (!(o->gas_price_gwei >= 0 && o->gas_price_gwei <= 1e6))
    return bbvfl_fail(err, BBVFL_E_ARG, "--gas-price-gwei must be in 0..1e6, got %g", o->gas_price_gwei);
  return 0;
}

/* One (table, M, chain) row. */
static int one_row(const bbvfl_bench_tables_opts *o, const tshape *t, int M, const char *chain, uint64_t block_gas,
                   json_t *rows, bbvfl_err *err) {
  const size_t B = 10, P = 16;
  size_t n_test = (size_t)((double)t->rows * 0.2 + 0.5), n_train = t->rows - n_test, R = n_train / B;
  size_t nout = t->classes == 2 ? 1 : (size_t)t->classes;
  bbvfl_fit_setup fs = {.hashed = 1, .M = (unsigned)M, .levels = 16, .head_len = 4 * (P * nout + nout)};
  bbvfl_fit_chain ch = {.tx_cap = BBVFL_FIT_TX_CAP, .block_gas = block_gas, .margin = BBVFL_BLOCK_GAS_MARGIN};
  size_t K = R, E = 0;
  if (bbvfl_fit_window(&fs, &ch, R, B, n_test, P, &K, 0, &E, 0, err) < 0)
    return bbvfl_wrap(err, "%s, M %d, %s", t->name, M, chain);
  size_t T = (R + K - 1) / K, V = (n_test + E - 1) / E;
  double gas = 0;
  for (size_t w = 0; w < T; w++) {
    size_t nb = (w + 1) * K <= R ? K : R - w * K;
    gas += (double)bbvfl_fit_round_used_gas(&fs, (uint64_t)nb * B * P, 1);
  }
  for (size_t v = 0; v < V; v++) {
    size_t ne = (v + 1) * E <= n_test ? E : n_test - v * E;
    gas += (double)bbvfl_fit_round_used_gas(&fs, (uint64_t)ne * P, 0);
  }
  gas += 60000.0 + 30000.0 * M; /* postMetrics and payRewards */
  double per_block = BBVFL_BLOCK_GAS_MARGIN * (double)block_gas;
  double blocks = ceil(gas / per_block);
  if (blocks < (double)T) blocks = (double)T;
  json_t *wall = json_object();
  for (int i = 0; i < o->nbt; i++) {
    char k[32];
    snprintf(k, sizeof k, "%g", o->block_times[i]);
    json_object_set_new(wall, k, json_real(blocks * o->block_times[i]));
  }
  double values = (double)M * P * ((double)R * B + (double)n_test);
  json_t *r = json_pack("{s:s, s:I, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:f, s:o, s:f}", "table", t->name,
                        "rows", (json_int_t)t->rows, "M", M, "chain", chain, "block_gas", (json_int_t)block_gas,
                        "window", (json_int_t)K, "train_rounds", (json_int_t)T, "eval_rows_per_round", (json_int_t)E,
                        "eval_rounds", (json_int_t)V, "gas_per_epoch", gas, "gas_per_value", gas / values,
                        "blocks_per_epoch", blocks, "wall_s_per_epoch", wall, "eth_per_epoch",
                        gas * o->gas_price_gwei * 1e-9);
  if (!r) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  json_object_set_new(r, "synthetic", json_boolean(!strcmp(t->name, "synthetic")));
  json_array_append_new(rows, r);
  return 0;
}

int bbvfl_bench_tables_run(const bbvfl_bench_tables_opts *o, json_t **out, bbvfl_err *err) {
  *out = NULL;
  if (bbvfl_bench_tables_check(o, err) < 0) return -1;
  json_t *rows = json_array(), *bts = json_array();
  for (int i = 0; i < o->nbt; i++) json_array_append_new(bts, json_real(o->block_times[i]));
  json_t *t = json_pack("{s:{s:I, s:I, s:I, s:f, s:f, s:o, s:s}, s:o}", "config", "tx_gas_cap",
                        (json_int_t)BBVFL_FIT_TX_CAP, "devnet_block_gas", (json_int_t)o->devnet_block_gas,
                        "mainnet_block_gas", (json_int_t)o->mainnet_block_gas, "gas_price_gwei", o->gas_price_gwei,
                        "margin", BBVFL_BLOCK_GAS_MARGIN, "block_times", bts, "setup",
                        "B 10, P 16, b 16, hashed aggregation, staleness 1, 80/20 split", "rows", rows);
  if (!t) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t s = 0; s < sizeof SHAPES / sizeof SHAPES[0]; s++)
    for (int m = 0; m < o->nM; m++)
      for (int c = 0; c < 2; c++)
        if (one_row(o, &SHAPES[s], o->Ms[m], c ? "mainnet" : "devnet", c ? o->mainnet_block_gas : o->devnet_block_gas,
                    rows, err) < 0) {
          json_decref(t);
          return -1;
        }
  *out = t;
  return 0;
}

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

void bbvfl_bench_tables_print(const json_t *t, FILE *f) {
  const json_t *cfg = json_object_get(t, "config"), *rows = json_object_get(t, "rows");
  fprintf(f, "Windows sized for the chain, by table size (a model from the client's gas functions; %s)\n",
          json_string_value(json_object_get(cfg, "setup")));
  fprintf(f, "tx cap 2^24; devnet block gas %.0f, mainnet %.0f (%.0f%% usable per window); gas price %g gwei\n",
          num(cfg, "devnet_block_gas"), num(cfg, "mainnet_block_gas"), 100 * num(cfg, "margin"),
          num(cfg, "gas_price_gwei"));
  fprintf(f, "%-14s %7s %3s %-8s %6s %3s %6s %3s %12s %8s %8s", "table", "rows", "M", "chain", "K", "T", "E", "V",
          "gas/epoch", "gas/val", "blk/ep");
  const json_t *bts = json_object_get(cfg, "block_times");
  size_t i;
  const json_t *b;
  json_array_foreach(bts, i, b) fprintf(f, " %6gs-blk", json_number_value(b));
  fprintf(f, " %12s\n", "ETH/epoch");
  const json_t *r;
  json_array_foreach(rows, i, r) {
    fprintf(f, "%-14s %7.0f %3.0f %-8s %6.0f %3.0f %6.0f %3.0f %12.0f %8.1f %8.0f", json_string_value(json_object_get(r, "table")),
            num(r, "rows"), num(r, "M"), json_string_value(json_object_get(r, "chain")), num(r, "window"),
            num(r, "train_rounds"), num(r, "eval_rows_per_round"), num(r, "eval_rounds"), num(r, "gas_per_epoch"),
            num(r, "gas_per_value"), num(r, "blocks_per_epoch"));
    size_t j;
    json_array_foreach(bts, j, b) {
      char k[32];
      snprintf(k, sizeof k, "%g", json_number_value(b));
      fprintf(f, " %8.0f s", num(json_object_get(r, "wall_s_per_epoch"), k));
    }
    if (!strcmp(json_string_value(json_object_get(r, "chain")), "mainnet")) fprintf(f, " %12.6f\n", num(r, "eth_per_epoch"));
    else fprintf(f, " %12s\n", "-");
  }
}

char *bbvfl_bench_tables_csv(const json_t *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  fprintf(f, "table,rows,M,chain,block_gas,window,train_rounds,eval_rows_per_round,eval_rounds,gas_per_epoch,"
             "gas_per_value,blocks_per_epoch,wall_s_per_epoch_1s,wall_s_per_epoch_12s,eth_per_epoch\n");
  size_t i;
  const json_t *r;
  json_array_foreach(json_object_get(t, "rows"), i, r) {
    const json_t *w = json_object_get(r, "wall_s_per_epoch");
    fprintf(f, "%s,%.0f,%.0f,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.2f,%.0f,%.0f,%.0f,%.9f\n",
            json_string_value(json_object_get(r, "table")), num(r, "rows"), num(r, "M"),
            json_string_value(json_object_get(r, "chain")), num(r, "block_gas"), num(r, "window"),
            num(r, "train_rounds"), num(r, "eval_rows_per_round"), num(r, "eval_rounds"), num(r, "gas_per_epoch"),
            num(r, "gas_per_value"), num(r, "blocks_per_epoch"), num(w, "1"), num(w, "12"), num(r, "eth_per_epoch"));
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}
