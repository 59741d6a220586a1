/* bbvfl bench table1: the DP-BBVFL paper's Table I on bbvfl's own stack.
 *
 * For every (M, b): the off-chain column comes from the off-chain trainer (offchain/offchain.h), which
 * times its in-process aggregator per epoch; the on-chain column from the lean driver
 * (bench/chainbench.h) running the same number of training and evaluation rounds per epoch against
 * a fresh BbvflAggregator. Plus, in the same run: the floor (a bare signed transfer to receipt),
 * masked mode (16-bit lanes) for the same configurations, and the naive one-word-per-value
 * contract at the first M and the last b. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "common/fsutil.h"
#include "dp/mech.h"
#include "ml/metrics.h"
#include "offchain/offchain.h"

/* Table I of the DP-BBVFL paper (Breast Cancer, beta = 0.05, first 10 epochs, PyEVM), seconds. */
static const struct {
  int M, b;
  double off, on;
} PAPER[] = {
    {5, 2, 0.00023, 12.090},  {5, 4, 0.00023, 12.389},  {5, 8, 0.00021, 12.432},  {5, 16, 0.00019, 12.521},
    {10, 2, 0.00024, 21.209}, {10, 4, 0.00022, 21.721}, {10, 8, 0.00021, 21.727}, {10, 16, 0.00021, 21.723},
};

void bbvfl_bench_table1_defaults(bbvfl_bench_table1_opts *o) {
  memset(o, 0, sizeof *o);
  o->Ms[0] = 5;
  o->Ms[1] = 10;
  o->nM = 2;
  o->bs[0] = 2;
  o->bs[1] = 4;
  o->bs[2] = 8;
  o->bs[3] = 16;
  o->nb = 4;
  o->beta = 0.05;
  o->epochs = 10;
  o->masked_epochs = 2;
  o->naive_rounds = 3;
  o->batch = 10;
  o->P = 16;
  o->floor_n = 200;
  o->seed = 1;
  o->reset = 1;
  o->demo = 1;
}

/* Steady-state gas per round: mean over the contract's rounds >= RING (4), or over all but round 0
 * when there are no such rounds. */
static double steady_gas(const bbvfl_cbench_result *r, int train_only) {
  uint64_t from = 4;
  int any = 0;
  for (size_t i = 0; i < r->nrounds; i++) any |= r->rounds[i].contract_round >= 4;
  if (!any) from = 1;
  double s = 0;
  size_t k = 0;
  for (size_t i = 0; i < r->nrounds; i++) {
    if (r->rounds[i].contract_round < from) continue;
    if (train_only && !r->rounds[i].train) continue;
    s += (double)r->rounds[i].gas;
    k++;
  }
  return k ? s / (double)k : 0;
}

/* One `bbvfl demo` run (in process: bench_demo) for one (M, b): its own devnet unless --rpc was
 * given, M client processes, the session's per-epoch on-chain aggregation as the active client
 * sees it. *out is the demo's JSON report (new reference). */
static int run_demo(const bbvfl_bench_table1_opts *o, int M, int b, const char *dir, json_t **out, bbvfl_err *err) {
  if (bbvfl_mkdirs(o->demo_dir, 0755, err) != 0) return bbvfl_wrap(err, "creating %s for the demo runs", o->demo_dir);
  /* the paper's round structure: one minibatch per round, evaluation rounds of B test rows */
  bbvfl_bench_demo_args a = {.M = M, .b = b, .beta = o->beta, .epochs = o->epochs, .batch = o->batch, .P = o->P,
                             .seed = o->seed, .window = 1, .eval_rows = o->batch, .data = o->data,
                             .rpc_url = o->rpc_given, .run_dir = dir};
  if (bbvfl_bench_demo(&a, out, err) == 0) return 0;
  return bbvfl_wrap(err, "the demo run M=%d b=%d", M, b);
}

/* One on-chain row's figures from a driver result. */
static json_t *onchain_row(const bbvfl_cbench_result *r, int M, uint32_t B, uint32_t P, int epochs, double floor_ms,
                           double offchain_s) {
  double *tr = calloc((size_t)epochs, sizeof *tr), *ev = calloc((size_t)epochs, sizeof *ev);
  double *rm = calloc(r->nrounds + 1, sizeof *rm), *em = calloc(r->nrounds + 1, sizeof *em);
  double *pm = calloc(r->nrounds + 1, sizeof *pm), *fm = calloc(r->nrounds + 1, sizeof *fm);
  json_t *o = NULL;
  if (!tr || !ev || !rm || !em || !pm || !fm) goto out;
  size_t nr = 0, ne = 0, np = 0, nf = 0;
  uint64_t post_gas = 0;
  for (size_t i = 0; i < r->nrounds; i++) {
    const bbvfl_cbench_round *x = &r->rounds[i];
    if (x->epoch >= (uint32_t)epochs) continue;
    if (x->floor_ms > 0) fm[nf++] = x->floor_ms;
    if (x->train) {
      tr[x->epoch] += x->agg_ms / 1e3;
      rm[nr++] = x->agg_ms;
      pm[np++] = x->post_ms;
      post_gas = x->post_gas;
    } else {
      ev[x->epoch] += x->agg_ms / 1e3;
      em[ne++] = x->agg_ms;
    }
  }
  double coords = (double)M * B * P;
  bbvfl_bench_stats st = bbvfl_bench_stats_of(tr, (size_t)epochs), se = bbvfl_bench_stats_of(ev, (size_t)epochs);
  bbvfl_bench_stats sr = bbvfl_bench_stats_of(rm, nr);
  double gas_round = steady_gas(r, 1);
  o = json_object();
  bbvfl_bench_set_range(o, "onchain_s", &st);
  bbvfl_bench_set_range(o, "onchain_eval_s", &se);
  json_object_set_new(o, "onchain_round_ms", json_real(sr.median));
  json_object_set_new(o, "onchain_round_p90_ms", json_real(sr.p90));
  json_object_set_new(o, "onchain_eval_round_ms", json_real(bbvfl_median(em, ne)));
  /* the floor measured between this configuration's rounds, on the chain as it was then */
  bbvfl_bench_set_floor(o, sr.median, M, bbvfl_median(fm, nf), floor_ms);
  json_object_set_new(o, "gas_per_round", json_real(gas_round));
  json_object_set_new(o, "gas_per_coordinate", json_real(gas_round / coords));
  json_object_set_new(o, "gas_per_coordinate_round0", json_real(r->nrounds ? (double)r->rounds[0].gas / coords : 0));
  json_object_set_new(o, "gas_per_submission", json_real(gas_round / M));
  json_object_set_new(o, "gradient_post_ms", json_real(bbvfl_median(pm, np)));
  json_object_set_new(o, "gradient_post_gas", json_integer((json_int_t)post_gas));
  json_object_set_new(o, "lane_bits", json_integer(r->lane_bits));
  json_object_set_new(o, "ratio", json_real(offchain_s > 0 ? st.median / offchain_s : 0));
  json_object_set_new(o, "epochs", json_integer(epochs));
  json_object_set_new(o, "setup_s", json_real(r->setup_s));
  json_object_set_new(o, "node_stalls", json_integer(r->stalls));
out:
  free(tr);
  free(ev);
  free(rm);
  free(em);
  free(pm);
  free(fm);
  return o;
}

/* 1. off-chain: the trainer's own aggregation timer per epoch, for every (M, b); *T, *V: the
 * rounds per epoch of the paper's round structure. */
static int offchain_rows(const bbvfl_bench_table1_opts *o, const bbvfl_dataset *ds, bbvfl_bench_stats *off,
                         double *off_eval, size_t *T, size_t *V, bbvfl_err *err) {
  for (int i = 0; i < o->nM; i++)
    for (int j = 0; j < o->nb; j++) {
      bbvfl_offchain_cfg cfg;
      bbvfl_offchain_defaults(&cfg);
      cfg.epochs = o->epochs;
      cfg.B = (size_t)o->batch;
      cfg.P = o->P;
      cfg.M = o->Ms[i];
      cfg.mech.kind = BBVFL_MECH_PBM;
      cfg.mech.b = o->bs[j];
      cfg.mech.beta = o->beta;
      cfg.seed = o->seed;
      /* the paper's round structure: one minibatch per round, evaluation in rounds of B test rows */
      cfg.window = 1;
      cfg.eval_rows_per_round = cfg.B;
      bbvfl_offchain_result res;
      memset(&res, 0, sizeof res);
      if (bbvfl_offchain_train(ds, &cfg, &res, err) != 0)
        return bbvfl_wrap(err, "off-chain run M=%d b=%d", o->Ms[i], o->bs[j]);
      double tr[1024], ev[1024];
      int ne = res.epochs < 1024 ? res.epochs : 1024;
      for (int k = 0; k < ne; k++) {
        tr[k] = res.per_epoch[k].agg_train_s;
        ev[k] = res.per_epoch[k].agg_eval_s;
      }
      int idx = i * o->nb + j;
      off[idx] = bbvfl_bench_stats_of(tr, (size_t)ne);
      off_eval[idx] = bbvfl_median(ev, (size_t)ne);
      *T = res.T;
      *V = res.V;
      bbvfl_offchain_result_free(&res);
    }
  if (*T < 1) return bbvfl_fail(err, BBVFL_E_ARG, "the data set gives no training round at batch size %d", o->batch);
  return 0;
}

/* The demo's columns of a plain row (--demo): `bbvfl demo` at the same M and b. */
static int demo_columns(const bbvfl_bench_table1_opts *o, bbvfl_bench_progress *pr, bbvfl_bench_round_ctx *pc,
                        const bbvfl_cbench_cfg *c, size_t T, size_t V, json_t *row, bbvfl_err *err) {
  char dd[4096];
  snprintf(dd, sizeof dd, "%s/demo-M%d-b%d", o->demo_dir, c->M, c->b);
  snprintf(pc->label, sizeof pc->label, "bbvfl demo M=%d b=%d (%d client processes)", c->M, c->b, c->M);
  bbvfl_bench_progress_step(pr, 0, pc->label);
  json_t *rep = NULL;
  if (run_demo(o, c->M, c->b, dd, &rep, err) != 0) return -1;
  json_object_set(row, "demo_onchain_s", json_object_get(rep, "onchain_agg_s_per_epoch"));
  json_object_set(row, "demo_gas_per_coordinate", json_object_get(rep, "gas_per_coordinate"));
  json_object_set(row, "demo_wall_s", json_object_get(rep, "wall_s"));
  json_object_set(row, "demo_auroc", json_object_get(rep, "auroc"));
  json_decref(rep);
  bbvfl_bench_progress_step(pr, (uint64_t)o->epochs * (T + V), pc->label);
  return 0;
}

/* One on-chain row: configuration (M = Ms[i], b = bs[j], plain or masked) run by the lean driver,
 * with its off-chain figures, the demo's and the paper's beside it. *row: new reference. */
static int onchain_config(bbvfl_bench_env *e, const bbvfl_bench_table1_opts *o, bbvfl_bench_progress *pr,
                          bbvfl_bench_round_ctx *pc, const bbvfl_bench_stats *off, const double *off_eval, size_t T,
                          size_t V, double floor_ms, int i, int j, int masked, json_t **rowp, bbvfl_err *err) {
  int idx = i * o->nb + j, ep = masked ? o->masked_epochs : o->epochs;
  bbvfl_cbench_cfg c = {.kind = masked ? BBVFL_CBENCH_MASKED : BBVFL_CBENCH_PLAIN,
                        .M = o->Ms[i],
                        .B = (uint32_t)o->batch,
                        .P = (uint32_t)o->P,
                        .b = o->bs[j],
                        .beta = o->beta,
                        .T = (uint32_t)T,
                        .V = (uint32_t)V,
                        .epochs = (uint32_t)ep,
                        .seed = o->seed,
                        .reset = o->reset,
                        .floor_each_round = 1,
                        .on_round = bbvfl_bench_on_round,
                        .ctx = pc};
  snprintf(pc->label, sizeof pc->label, "on-chain M=%d b=%d %s", c.M, c.b, masked ? "masked" : "plain");
  bbvfl_cbench_result r;
  if (bbvfl_cbench_run(e->pool, &c, &r, err) != 0)
    return bbvfl_wrap(err, "on-chain run M=%d b=%d (%s)", c.M, c.b, masked ? "masked" : "plain");
  json_t *row = onchain_row(&r, c.M, c.B, c.P, ep, floor_ms, off[idx].median);
  bbvfl_cbench_result_free(&r);
  if (!row) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  json_object_set_new(row, "M", json_integer(c.M));
  json_object_set_new(row, "b", json_integer(c.b));
  json_object_set_new(row, "masked", json_boolean(masked));
  if (o->demo && !masked && demo_columns(o, pr, pc, &c, T, V, row, err) != 0) {
    json_decref(row);
    return -1;
  }
  bbvfl_bench_set_range(row, "offchain_s", &off[idx]);
  json_object_set_new(row, "offchain_eval_s", json_real(off_eval[idx]));
  for (size_t k = 0; k < sizeof PAPER / sizeof PAPER[0]; k++)
    if (PAPER[k].M == c.M && PAPER[k].b == c.b) {
      json_object_set_new(row, "paper_offchain_s", json_real(PAPER[k].off));
      json_object_set_new(row, "paper_onchain_s", json_real(PAPER[k].on));
    }
  *rowp = row;
  return 0;
}

/* 4. the naive baseline at the first M and the last b: top's "naive", *gpc and *ms. */
static int naive_baseline(bbvfl_bench_env *e, const bbvfl_bench_table1_opts *o, bbvfl_bench_round_ctx *pc, json_t *top,
                          double *gpc, double *round_ms, bbvfl_err *err) {
  bbvfl_cbench_cfg c = {.kind = BBVFL_CBENCH_NAIVE,
                        .M = o->Ms[0],
                        .B = (uint32_t)o->batch,
                        .P = (uint32_t)o->P,
                        .b = o->bs[o->nb - 1],
                        .beta = o->beta,
                        .T = (uint32_t)o->naive_rounds,
                        .V = 0,
                        .epochs = 1,
                        .seed = o->seed,
                        .reset = o->reset,
                        .on_round = bbvfl_bench_on_round,
                        .ctx = pc};
  snprintf(pc->label, sizeof pc->label, "naive contract M=%d b=%d", c.M, c.b);
  bbvfl_cbench_result r;
  if (bbvfl_cbench_run(e->pool, &c, &r, err) != 0) return bbvfl_wrap(err, "naive baseline run");
  double g = 0, *ms = calloc(r.nrounds, sizeof *ms);
  if (!ms) {
    bbvfl_cbench_result_free(&r);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t k = 0; k < r.nrounds; k++) {
    g += (double)r.rounds[k].gas;
    ms[k] = r.rounds[k].agg_ms;
  }
  *gpc = g / (double)r.nrounds / ((double)c.M * c.B * c.P);
  *round_ms = bbvfl_median(ms, r.nrounds);
  free(ms);
  bbvfl_cbench_result_free(&r);
  json_object_set_new(top, "naive", json_pack("{s:i, s:i, s:i, s:i, s:i, s:f, s:f}", "M", c.M, "B", (int)c.B, "P",
                                               (int)c.P, "b", c.b, "rounds", o->naive_rounds, "gas_per_coordinate",
                                               *gpc, "round_ms", *round_ms));
  return 0;
}

/* The table's top-level figures and configuration. */
static void table1_top(json_t *top, const bbvfl_bench_env *e, const bbvfl_bench_table1_opts *o,
                       const bbvfl_bench_floor_result *flr, size_t T, size_t V, double naive_gpc, double naive_ms) {
  const bbvfl_bench_floor_result fl = *flr;
  json_object_set_new(top, "mode", json_string("table1"));
  json_object_set_new(top, "floor_ms", json_real(fl.total.median));
  json_object_set_new(top, "floor", bbvfl_bench_stats_json(&fl.total));
  json_object_set_new(top, "naive_gas_per_coordinate", o->naive_rounds > 0 ? json_real(naive_gpc) : json_null());
  json_object_set_new(top, "naive_round_ms", o->naive_rounds > 0 ? json_real(naive_ms) : json_null());
  json_object_set_new(top, "rpc", json_string(e->rpc_url));
  json_object_set_new(top, "embedded_anvil", json_boolean(e->own.up));
  json_object_set_new(top, "block_gas_limit", json_integer((json_int_t)bbvfl_cbench_pool_block_gas_limit(e->pool)));
  json_object_set_new(
      top, "config",
      json_pack("{s:i, s:i, s:f, s:i, s:i, s:i, s:i, s:I, s:s, s:s, s:s}", "B", o->batch, "P", o->P, "beta", o->beta,
                "epochs", o->epochs, "masked_epochs", o->masked_epochs, "train_rounds_per_epoch", (int)T,
                "eval_rounds_per_epoch", (int)V, "seed", (json_int_t)o->seed, "driver",
                "lean: one thread per client, eth_sendRawTransactionSync, bench/chainbench.h", "round_time",
                "first client starts signing -> receipt of the submission that completed the round (RoundCompleted)",
                "offchain", "offchain/offchain.h in-process aggregator timer (training rounds of an epoch)"));
  json_object_set_new(json_object_get(top, "config"), "chain",
                      json_string(o->reset == 0   ? "continuous: every configuration's session stays on the chain"
                                  : o->reset == 1 ? "one continuous session per configuration, each started on the "
                                                    "same chain (evm_revert after it)"
                                                  : "every epoch from the post-setup snapshot (evm_revert), replaying "
                                                    "the session's first epoch on a chain of the same length"));
}

int bbvfl_bench_table1_run(bbvfl_bench_env *e, const bbvfl_bench_table1_opts *o, bbvfl_bench_progress *pr, json_t **out, bbvfl_err *err) {
  *out = NULL;
  json_t *top = json_object(), *rows = json_array();
  bbvfl_dataset ds;
  memset(&ds, 0, sizeof ds);
  int loaded = 0, rc = -1;
  const int nrow = o->nM * o->nb;
  bbvfl_bench_stats *off = calloc((size_t)nrow, sizeof *off); /* the off-chain training aggregation, per epoch */
  double *off_eval = calloc((size_t)nrow, sizeof *off_eval);
  size_t T = 0, V = 0;
  if (!top || !rows || !off || !off_eval) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  bbvfl_csv_opts co = {0};
  if (bbvfl_csv_load(o->data ? o->data : bbvfl_default_data_path(), &co, &ds, err) != 0) goto out;
  loaded = 1;
  bbvfl_bench_progress_note(pr, "bench table1: off-chain runs (the trainer's in-process aggregator) ...");
  if (offchain_rows(o, &ds, off, off_eval, &T, &V, err) != 0) goto out;
  /* 2. the floor, in the same run on the same node */
  bbvfl_bench_progress_note(pr, "bench table1: floor (signed 1-wei transfer to receipt, eth_sendRawTransactionSync) ...");
  bbvfl_bench_floor_result fl;
  if (bbvfl_bench_floor_measure(e->rpc_url, o->floor_n, 10, 1, &fl, err) != 0) goto out;
  /* 3. on-chain rows */
  uint64_t total = 0;
  for (int i = 0; i < o->nM; i++)
    total += (uint64_t)o->nb * ((uint64_t)o->epochs * (o->demo ? 2 : 1) + (uint64_t)o->masked_epochs) * (T + V);
  total += (uint64_t)o->naive_rounds;
  bbvfl_bench_progress_add_total(pr, total);
  bbvfl_bench_round_ctx pc = {.pr = pr};
  for (int i = 0; i < o->nM; i++)
    for (int j = 0; j < o->nb; j++)
      for (int masked = 0; masked <= (o->masked_epochs > 0); masked++) {
        json_t *row = NULL;
        if (onchain_config(e, o, pr, &pc, off, off_eval, T, V, fl.total.median, i, j, masked, &row, err) != 0)
          goto out;
        json_array_append_new(rows, row);
      }
  double naive_gpc = 0, naive_ms = 0;
  if (o->naive_rounds > 0 && naive_baseline(e, o, &pc, top, &naive_gpc, &naive_ms, err) != 0) goto out;
  bbvfl_bench_progress_end(pr);
  table1_top(top, e, o, &fl, T, V, naive_gpc, naive_ms);
  json_object_set_new(top, "table1", rows);
  rows = NULL;
  *out = top;
  top = NULL;
  rc = 0;
out:
  json_decref(top);
  json_decref(rows);
  if (loaded) bbvfl_dataset_free(&ds);
  free(off);
  free(off_eval);
  return rc;
}

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

void bbvfl_bench_table1_print(const json_t *t, FILE *f) {
  const json_t *cfg = json_object_get(t, "config");
  fprintf(f,
          "Table I on bbvfl's stack: Breast Cancer, B=%d P=%d beta=%g, %d training + %d evaluation rounds per "
          "epoch, median [min-max] over the first %d epochs\n",
          (int)json_integer_value(json_object_get(cfg, "B")), (int)json_integer_value(json_object_get(cfg, "P")),
          num(cfg, "beta"), (int)json_integer_value(json_object_get(cfg, "train_rounds_per_epoch")),
          (int)json_integer_value(json_object_get(cfg, "eval_rounds_per_epoch")),
          (int)json_integer_value(json_object_get(cfg, "epochs")));
  fprintf(f, "floor (signed 1-wei transfer to receipt): %.3f ms median on the fresh chain; 'floor' below: the same\n"
             "transfer timed after every round of that row, on the chain as it was then; /Mfloor = ms/round / (M x floor)\n",
          num(t, "floor_ms"));
  fprintf(f, "%3s %3s %-6s %11s %-21s %9s %8s %6s %7s %9s %8s %8s %9s\n", "M", "b", "mode", "off-chain s", "on-chain s [min-max]",
          "eval s", "ms/round", "floor", "/Mfloor", "gas/round", "gas/coord", "on/off", "paper s");
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(t, "table1"), i, r) {
    char range[40];
    snprintf(range, sizeof range, "%.3f [%.3f-%.3f]", num(r, "onchain_s"), num(r, "onchain_s_min"), num(r, "onchain_s_max"));
    const json_t *paper = json_object_get(r, "paper_onchain_s");
    char ps[16] = "-";
    if (paper) snprintf(ps, sizeof ps, "%.2f", json_number_value(paper));
    fprintf(f, "%3d %3d %-6s %11.7f %-21s %9.3f %8.2f %6.2f %7.2f %9.0f %8.1f %8.0f %9s%s\n",
            (int)json_integer_value(json_object_get(r, "M")), (int)json_integer_value(json_object_get(r, "b")),
            json_is_true(json_object_get(r, "masked")) ? "masked" : "plain", num(r, "offchain_s"), range,
            num(r, "onchain_eval_s"), num(r, "onchain_round_ms"), num(r, "floor_interleaved_ms"), num(r, "floor_ratio"),
            num(r, "gas_per_round"),
            num(r, "gas_per_coordinate"), num(r, "ratio"), ps,
            json_is_true(json_object_get(r, "masked")) ? " (masked: fewer epochs)" : "");
  }
  json_array_foreach(json_object_get(t, "table1"), i, r) {
    const json_t *d = json_object_get(r, "demo_onchain_s");
    if (!json_is_number(d)) continue;
    fprintf(f, "  bbvfl demo M=%d b=%d (M client processes, the active client's view): on-chain %.3f s/epoch, %.1f gas/coordinate\n",
            (int)json_integer_value(json_object_get(r, "M")), (int)json_integer_value(json_object_get(r, "b")),
            json_number_value(d), num(r, "demo_gas_per_coordinate"));
  }
  if (json_integer_value(json_object_get(cfg, "masked_epochs")) > 0)
    fprintf(f, "masked rows: the lean driver (bench/chainbench) submits uniform random 16-bit lanes, which is what masked\n"
             "submissions look like to the contract; the full masked client (ECDH pair keys, masking, re-runs after a\n"
             "dropout) is what `bbvfl demo --masked` runs\n");
  const json_t *nv = json_object_get(t, "naive");
  if (nv)
    fprintf(f, "naive contract (one word per value, M=%d b=%d): %.0f gas/coordinate, %.2f ms/round\n",
            (int)json_integer_value(json_object_get(nv, "M")), (int)json_integer_value(json_object_get(nv, "b")),
            num(nv, "gas_per_coordinate"), num(nv, "round_ms"));
}

char *bbvfl_bench_table1_csv(const json_t *t) {
  static const char *cols[] = {"M", "b", "masked", "offchain_s", "offchain_s_min", "offchain_s_max", "offchain_eval_s",
                               "onchain_s", "onchain_s_min", "onchain_s_max", "onchain_eval_s", "onchain_round_ms",
                               "onchain_round_p90_ms", "onchain_eval_round_ms", "floor_ratio", "gas_per_round",
                               "gas_per_coordinate", "gas_per_coordinate_round0", "gas_per_submission",
                               "floor_interleaved_ms", "floor_ratio_fresh", "node_stalls",
                               "gradient_post_ms", "gradient_post_gas", "lane_bits", "ratio", "epochs",
                               "paper_offchain_s", "paper_onchain_s", "demo_onchain_s", "demo_gas_per_coordinate"};
  char floor_col[64];
  snprintf(floor_col, sizeof floor_col, ",%.6g", num(t, "floor_ms"));
  return bbvfl_bench_csv(json_object_get(t, "table1"), cols, sizeof cols / sizeof cols[0], ",floor_ms", floor_col);
}

int bbvfl_bench_table1_check(const bbvfl_bench_table1_opts *o, bbvfl_err *err) {
  if (o->epochs < 1 || o->epochs > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--epochs must be in 1..1000 (got %d)", o->epochs);
  if (o->masked_epochs < 0 || o->masked_epochs > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--masked-epochs must be in 0..1000 (got %d)", o->masked_epochs);
  if (o->naive_rounds < 0 || o->naive_rounds > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--naive-rounds must be in 0..1000 (got %d)", o->naive_rounds);
  if (!(o->beta > 0 && o->beta < 0.5)) return bbvfl_fail(err, BBVFL_E_ARG, "--beta must be in (0, 0.5) (got %g)", o->beta);
  if (o->batch < 1 || o->P < 1 || (long)o->batch * o->P > 1 << 20)
    return bbvfl_fail(err, BBVFL_E_ARG, "--batch and --P must be >= 1 with B*P <= 1048576");
  if (o->P > 4096) return bbvfl_fail(err, BBVFL_E_ARG, "--P must be in 1..4096, got %d", o->P);
  if (o->floor_n < 1 || o->floor_n > 100000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--floor-n must be in 1..100000 (got %d)", o->floor_n);
  for (int i = 0; i < o->nM; i++)
    for (int j = 0; j < o->nb; j++)
      if (!bbvfl_pbm_lanes_fit(o->Ms[i], o->bs[j]))
        return bbvfl_fail(err, BBVFL_E_ARG, "M*b = %d*%d does not fit 16-bit lanes", o->Ms[i], o->bs[j]);
  return 0;
}
