/* bbvfl bench scaling: time and gas of one aggregation round as the number of clients M, the
 * embedding size P and the batch size B grow, for BbvflAggregator and for the naive
 * one-word-per-value contract, against the limits of the chain: the EIP-7825 per-transaction gas
 * cap (2^24) and the node's block gas limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "common/fsutil.h"
#include "dp/mech.h"

void bbvfl_bench_scaling_defaults(bbvfl_bench_scaling_opts *o) {
  memset(o, 0, sizeof *o);
  static const int M[] = {2, 4, 8, 16, 32, 64}, P[] = {16, 32, 64}, B[] = {10, 50, 100};
  memcpy(o->Ms, M, sizeof M);
  o->nM = 6;
  memcpy(o->Ps, P, sizeof P);
  o->nP = 3;
  memcpy(o->Bs, B, sizeof B);
  o->nB = 3;
  o->b = 16;
  o->rounds = 6;
  o->naive_rounds = 2;
  o->naive = 1;
  o->floor_n = 100;
  o->seed = 1;
  o->reset = 1;
}

/* Steady rounds: >= 4 (the contract's ring of round slots has been written once) when there are
 * more than 4, else all but the first. */
static size_t steady_from(size_t n) { return n > 4 ? 4 : (n > 1 ? 1 : 0); }

typedef struct {
  int M, B, P;
} sc_cfg;

static int measure(bbvfl_bench_env *e, const bbvfl_bench_scaling_opts *o, const sc_cfg *c, double floor_ms, bbvfl_bench_round_ctx *pc,
                   json_t **row, bbvfl_err *err) {
  uint64_t limit_block = bbvfl_cbench_pool_block_gas_limit(e->pool);
  double coords = (double)c->M * c->B * c->P;
  json_t *r = json_object();
  json_object_set_new(r, "M", json_integer(c->M));
  json_object_set_new(r, "B", json_integer(c->B));
  json_object_set_new(r, "P", json_integer(c->P));
  json_object_set_new(r, "b", json_integer(o->b));
  json_object_set_new(r, "coords_per_submission", json_integer((json_int_t)c->B * c->P));
  bbvfl_cbench_cfg cfg = {.kind = BBVFL_CBENCH_PLAIN,
                          .M = c->M,
                          .B = (uint32_t)c->B,
                          .P = (uint32_t)c->P,
                          .b = o->b,
                          .beta = 0.2,
                          .T = (uint32_t)o->rounds,
                          .V = 0,
                          .epochs = 1,
                          .seed = o->seed,
                          .reset = o->reset,
                          .floor_each_round = 1,
                          .on_round = bbvfl_bench_on_round,
                          .ctx = pc};
  snprintf(pc->label, sizeof pc->label, "bbvfl M=%d B=%d P=%d", c->M, c->B, c->P);
  bbvfl_cbench_result res;
  bbvfl_err e1 = {0};
  if (bbvfl_cbench_run(e->pool, &cfg, &res, &e1) != 0) {
    if (e1.code != BBVFL_E_STATE) {
      json_decref(r);
      if (err) *err = e1;
      return bbvfl_wrap(err, "scaling run M=%d B=%d P=%d", c->M, c->B, c->P);
    }
    json_object_set_new(r, "status", json_string(e1.msg));
    bbvfl_bench_progress_step(pc->pr, (uint64_t)o->rounds, pc->label);
  } else {
    size_t from = steady_from(res.nrounds), k = 0;
    double gas = 0, *ms = calloc(res.nrounds, sizeof *ms), *fm = calloc(res.nrounds, sizeof *fm);
    uint64_t maxtx = 0;
    for (size_t i = from; i < res.nrounds; i++) {
      gas += (double)res.rounds[i].gas;
      if (ms) ms[k] = res.rounds[i].agg_ms;
      if (fm) fm[k] = res.rounds[i].floor_ms;
      k++;
      if (res.rounds[i].max_tx_gas > maxtx) maxtx = res.rounds[i].max_tx_gas;
    }
    gas /= (double)(k ? k : 1);
    bbvfl_bench_stats st = bbvfl_bench_stats_of(ms, ms ? k : 0);
    double fl_in = bbvfl_bench_stats_of(fm, fm ? k : 0).median;
    free(ms);
    free(fm);
    double per_sub = gas / c->M;
    /* per-transaction cost model from this row: 21000 base + the rest per coordinate */
    double per_coord_tx = (per_sub - 21000.0) / ((double)c->B * c->P);
    json_object_set_new(r, "status", json_string("ok"));
    json_object_set_new(r, "lane_bits", json_integer(res.lane_bits));
    bbvfl_bench_set_range(r, "round_ms", &st);
    bbvfl_bench_set_floor(r, st.median, c->M, fl_in, floor_ms);
    json_object_set_new(r, "gas_per_round", json_real(gas));
    json_object_set_new(r, "gas_per_submission", json_real(per_sub));
    json_object_set_new(r, "max_tx_gas", json_integer((json_int_t)maxtx));
    json_object_set_new(r, "gas_per_coordinate", json_real(gas / coords));
    json_object_set_new(r, "gas_per_coordinate_round0", json_real((double)res.rounds[0].gas / coords));
    json_object_set_new(r, "rounds", json_integer((json_int_t)res.nrounds));
    json_object_set_new(r, "steady_rounds", json_integer((json_int_t)k));
    json_object_set_new(r, "node_stalls", json_integer(res.stalls));
    json_object_set_new(r, "submission_under_tx_cap", json_boolean(maxtx <= BBVFL_TX_GAS_CAP));
    json_object_set_new(r, "round_fits_one_block", json_boolean(gas <= (double)limit_block));
    json_object_set_new(r, "coords_at_tx_cap",
                        json_integer(per_coord_tx > 0 ? (json_int_t)((double)(BBVFL_TX_GAS_CAP - 21000) / per_coord_tx) : 0));
    json_object_set_new(r, "clients_per_block", json_integer((json_int_t)((double)limit_block / per_sub)));
    bbvfl_cbench_result_free(&res);
  }
  if (o->naive) {
    cfg.kind = BBVFL_CBENCH_NAIVE;
    cfg.T = (uint32_t)o->naive_rounds;
    snprintf(pc->label, sizeof pc->label, "naive M=%d B=%d P=%d", c->M, c->B, c->P);
    bbvfl_err e2 = {0};
    if (bbvfl_cbench_run(e->pool, &cfg, &res, &e2) != 0) {
      if (e2.code != BBVFL_E_STATE) {
        json_decref(r);
        if (err) *err = e2;
        return bbvfl_wrap(err, "naive scaling run M=%d B=%d P=%d", c->M, c->B, c->P);
      }
      json_object_set_new(r, "naive_status", json_string(e2.msg));
      json_object_set_new(r, "naive_gas_per_coordinate", json_null());
      json_object_set_new(r, "naive_round_ms", json_null());
      bbvfl_bench_progress_step(pc->pr, (uint64_t)o->naive_rounds, pc->label);
    } else {
      double gas = 0, *ms = calloc(res.nrounds, sizeof *ms);
      uint64_t maxtx = 0;
      for (size_t i = 0; i < res.nrounds; i++) {
        gas += (double)res.rounds[i].gas;
        if (ms) ms[i] = res.rounds[i].agg_ms;
        if (res.rounds[i].max_tx_gas > maxtx) maxtx = res.rounds[i].max_tx_gas;
      }
      gas /= (double)res.nrounds;
      bbvfl_bench_stats st = bbvfl_bench_stats_of(ms, ms ? res.nrounds : 0);
      free(ms);
      json_object_set_new(r, "naive_status", json_string("ok"));
      json_object_set_new(r, "naive_gas_per_round", json_real(gas));
      json_object_set_new(r, "naive_gas_per_coordinate", json_real(gas / coords));
      json_object_set_new(r, "naive_round_ms", json_real(st.median));
      json_object_set_new(r, "naive_max_tx_gas", json_integer((json_int_t)maxtx));
      bbvfl_cbench_result_free(&res);
    }
  }
  *row = r;
  return 0;
}

int bbvfl_bench_scaling_run(bbvfl_bench_env *e, const bbvfl_bench_scaling_opts *o, bbvfl_bench_progress *pr, json_t **out, bbvfl_err *err) {
  *out = NULL;
  /* the three sweeps; the shared point (M=5 B=10 P=16 style) is measured once per sweep */
  sc_cfg cfgs[32];
  const char *sweep_of[32];
  int n = 0;
  for (int i = 0; i < o->nM; i++) {
    sweep_of[n] = "M";
    cfgs[n++] = (sc_cfg){o->Ms[i], 10, 16};
  }
  for (int i = 0; i < o->nP; i++) {
    sweep_of[n] = "P";
    cfgs[n++] = (sc_cfg){5, 10, o->Ps[i]};
  }
  for (int i = 0; i < o->nB; i++) {
    sweep_of[n] = "B";
    cfgs[n++] = (sc_cfg){5, o->Bs[i], 16};
  }
  bbvfl_bench_floor_result fl;
  memset(&fl, 0, sizeof fl);
  if (o->floor_ms > 0) {
    fl.total.min = fl.total.median = fl.total.p90 = fl.total.mean = fl.total.max = o->floor_ms;
  } else {
    bbvfl_bench_progress_note(pr, "bench scaling: floor (signed 1-wei transfer to receipt, eth_sendRawTransactionSync) ...");
    if (bbvfl_bench_floor_measure(e->rpc_url, o->floor_n, 10, 1, &fl, err) != 0) return -1;
  }
  bbvfl_bench_progress_add_total(pr, (uint64_t)n * (uint64_t)(o->rounds + (o->naive ? o->naive_rounds : 0)));
  bbvfl_bench_round_ctx pc = {.pr = pr};
  json_t *rows = json_array();
  for (int i = 0; i < n; i++) {
    json_t *row = NULL;
    /* a configuration that two sweeps share (M=5 B=10 P=16) is measured once */
    for (int j = 0; j < i && !row; j++)
      if (cfgs[j].M == cfgs[i].M && cfgs[j].B == cfgs[i].B && cfgs[j].P == cfgs[i].P)
        row = json_deep_copy(json_array_get(rows, (size_t)j));
    if (row) {
      bbvfl_bench_progress_step(pr, (uint64_t)(o->rounds + (o->naive ? o->naive_rounds : 0)), "");
    } else if (measure(e, o, &cfgs[i], fl.total.median, &pc, &row, err) != 0) {
      json_decref(rows);
      return -1;
    }
    json_object_set_new(row, "sweep", json_string(sweep_of[i]));
    json_array_append_new(rows, row);
  }
  bbvfl_bench_progress_end(pr);
  json_t *top = json_object();
  json_object_set_new(top, "mode", json_string("scaling"));
  json_object_set_new(top, "floor_ms", json_real(fl.total.median));
  json_object_set_new(top, "floor", bbvfl_bench_stats_json(&fl.total));
  json_object_set_new(top, "tx_gas_cap", json_integer((json_int_t)BBVFL_TX_GAS_CAP));
  json_object_set_new(top, "block_gas_limit", json_integer((json_int_t)bbvfl_cbench_pool_block_gas_limit(e->pool)));
  json_object_set_new(top, "rounds", json_integer(o->rounds));
  json_object_set_new(top, "naive_rounds", json_integer(o->naive ? o->naive_rounds : 0));
  json_object_set_new(top, "b", json_integer(o->b));
  json_object_set_new(top, "rpc", json_string(e->rpc_url));
  json_object_set_new(top, "chain", json_string(o->reset ? "each configuration from the same chain (evm_revert)"
                                                          : "configurations follow each other on one chain"));
  json_object_set_new(top, "rows", rows);
  *out = top;
  return 0;
}

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static int ival(const json_t *o, const char *k) { return (int)json_integer_value(json_object_get(o, k)); }

void bbvfl_bench_scaling_print(const json_t *t, FILE *f) {
  fprintf(f, "Scaling of one aggregation round (b=%d, steady state); floor %.3f ms; per-transaction cap %d, block gas limit %lld\n",
          ival(t, "b"), num(t, "floor_ms"), ival(t, "tx_gas_cap"), (long long)json_integer_value(json_object_get(t, "block_gas_limit")));
  fprintf(f, "%5s %3s %4s %4s %5s %9s %7s %11s %10s %9s %10s %10s  %s\n", "sweep", "M", "B", "P", "lanes", "ms/round", "/Mfloor",
          "gas/round", "gas/submit", "gas/coord", "naive g/c", "naive ms", "limits");
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(t, "rows"), i, r) {
    const char *st = json_string_value(json_object_get(r, "status"));
    const char *nst = json_string_value(json_object_get(r, "naive_status"));
    char ng[24] = "-", nm[24] = "-";
    if (nst && strcmp(nst, "ok") == 0) {
      snprintf(ng, sizeof ng, "%.0f", num(r, "naive_gas_per_coordinate"));
      snprintf(nm, sizeof nm, "%.2f", num(r, "naive_round_ms"));
    } else if (nst) {
      snprintf(ng, sizeof ng, "over limit");
    }
    if (!st || strcmp(st, "ok") != 0) {
      fprintf(f, "%5s %3d %4d %4d  not runnable: %s\n", json_string_value(json_object_get(r, "sweep")), ival(r, "M"), ival(r, "B"),
              ival(r, "P"), st ? st : "?");
      continue;
    }
    char lim[96];
    snprintf(lim, sizeof lim, "%s%s", json_is_true(json_object_get(r, "submission_under_tx_cap")) ? "" : "submission over 2^24; ",
             json_is_true(json_object_get(r, "round_fits_one_block")) ? "round fits one block" : "round exceeds one block");
    fprintf(f, "%5s %3d %4d %4d %5d %9.2f %7.2f %11.0f %10.0f %9.1f %10s %10s  %s\n", json_string_value(json_object_get(r, "sweep")),
            ival(r, "M"), ival(r, "B"), ival(r, "P"), ival(r, "lane_bits"), num(r, "round_ms"), num(r, "floor_ratio"),
            num(r, "gas_per_round"), num(r, "gas_per_submission"), num(r, "gas_per_coordinate"), ng, nm, lim);
  }
}

char *bbvfl_bench_scaling_csv(const json_t *t) {
  static const char *cols[] = {"sweep", "M", "B", "P", "b", "coords_per_submission", "status", "lane_bits", "round_ms",
                               "round_ms_min", "round_ms_max", "floor_interleaved_ms", "floor_ratio", "floor_ratio_fresh", "gas_per_round", "gas_per_submission",
                               "max_tx_gas", "gas_per_coordinate", "gas_per_coordinate_round0", "submission_under_tx_cap",
                               "round_fits_one_block", "coords_at_tx_cap", "clients_per_block", "naive_status",
                               "naive_gas_per_round", "naive_gas_per_coordinate", "naive_round_ms", "naive_max_tx_gas"};
  return bbvfl_bench_csv(json_object_get(t, "rows"), cols, sizeof cols / sizeof cols[0], "", "");
}

int bbvfl_bench_scaling_check(const bbvfl_bench_scaling_opts *o, bbvfl_err *err) {
  if (o->b < 1 || o->b > 255) return bbvfl_fail(err, BBVFL_E_ARG, "--b must be in 1..255 (got %d)", o->b);
  if (o->rounds < 1 || o->rounds > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--rounds must be in 1..1000 (got %d)", o->rounds);
  if (o->naive_rounds < 1 || o->naive_rounds > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--naive-rounds must be in 1..1000 (got %d)", o->naive_rounds);
  if (o->floor_n < 1 || o->floor_n > 100000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--floor-n must be in 1..100000 (got %d)", o->floor_n);
  for (int i = 0; i < o->nM; i++)
    if (!bbvfl_pbm_lanes_fit(o->Ms[i], o->b))
      return bbvfl_fail(err, BBVFL_E_ARG, "M*b = %d*%d does not fit 16-bit lanes", o->Ms[i], o->b);
  return 0;
}
