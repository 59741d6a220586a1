/* bbvfl bench blocks: what a block time does to a session, by window K and staleness s.
 *
 * For each row (K, s, and one full-batch row) on the bundled Breast Cancer data, M = 5:
 *  - test AUROC after E epochs, median over seeds 1..N, from the off-chain trainer (the on-chain
 *    run trains bit-identically: its seed-1 AUROC is reported beside the off-chain replay of that
 *    very session, same seed and the chain's session seed, as the check);
 *  - an on-chain session (`bbvfl demo`, M client processes) on an anvil that mines a block every
 *    --block-time seconds, a few epochs long: blocks per epoch (steady state: the first to the last
 *    but one epoch's end, the last epoch's extra blocks apart; evaluation and the
 *    epoch's metrics and rewards included), blocks of the training windows and of the evaluation
 *    round(s) of an epoch, wall time per epoch (block timestamps), gas per coordinate;
 *  - the same session on an automining anvil for E epochs (wall time per epoch without a block
 *    time, and the on-chain AUROC);
 *  - blocks to reach the K=1, s=0 row's final AUROC within 0.005 (its epoch x blocks per epoch),
 *    and the projected wall time of an E-epoch session at 2 s and 12 s blocks (blocks x block
 *    time: a projection, not a measurement).
 * Every figure comes from the chain (event logs, receipts, block timestamps) or from the demo's
 * report; nothing is typed in. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "common/fsutil.h"
#include "ml/metrics.h"
#include "core/cfgprivacy.h"
#include "binding/contract.h"
#include "offchain/offchain.h"
#include "binding/session.h"

#define MAX_ROWS 16
#define MAX_SEEDS 16

typedef struct {
  int K, s, full_batch;
  char label[48];
} brow;

/* the options and what the run derives from the data */
typedef struct {
  const bbvfl_bench_blocks_opts *o;
  int n_train; /* training rows of the split (the full batch) */
} bctx;

static double median_d(double *v, size_t n) { return n ? bbvfl_median(v, n) : NAN; }

/* Off-chain runs of one row over the seeds: the final AUROCs and the per-epoch median curve. */
static int offchain_row(const bctx *x, const brow *row, const bbvfl_dataset *ds, json_t *out, bbvfl_err *err) {
  const bbvfl_bench_blocks_opts *o = x->o;
  double *curve = calloc((size_t)o->epochs * MAX_SEEDS, sizeof *curve);
  double fin[MAX_SEEDS];
  if (!curve) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  size_t T = 0, V = 0;
  for (int k = 0; k < o->seeds; k++) {
    bbvfl_offchain_cfg cfg;
    bbvfl_offchain_defaults(&cfg);
    cfg.M = o->M;
    cfg.epochs = o->epochs;
    cfg.seed = (uint64_t)k + 1;
    cfg.B = row->full_batch ? (size_t)x->n_train : (size_t)o->B;
    cfg.window = (size_t)row->K;
    cfg.staleness = row->s;
    bbvfl_offchain_result res;
    if (bbvfl_offchain_train(ds, &cfg, &res, err) != 0) {
      free(curve);
      return bbvfl_wrap(err, "off-chain run %s, seed %d", row->label, k + 1);
    }
    for (int e = 0; e < o->epochs; e++) curve[(size_t)e * MAX_SEEDS + (size_t)k] = res.per_epoch[e].auroc;
    fin[k] = res.per_epoch[o->epochs - 1].auroc;
    T = res.T;
    V = res.V;
    bbvfl_offchain_result_free(&res);
  }
  json_t *seeds = json_array(), *med = json_array();
  for (int k = 0; k < o->seeds; k++) json_array_append_new(seeds, json_real(fin[k]));
  for (int e = 0; e < o->epochs; e++)
    json_array_append_new(med, json_real(median_d(curve + (size_t)e * MAX_SEEDS, (size_t)o->seeds)));
  json_object_set_new(out, "auroc_median", json_real(median_d(fin, (size_t)o->seeds)));
  json_object_set_new(out, "auroc_seeds", seeds);
  json_object_set_new(out, "auroc_by_epoch_median", med);
  json_object_set_new(out, "train_rounds_per_epoch", json_integer((json_int_t)T));
  json_object_set_new(out, "eval_rounds_per_epoch", json_integer((json_int_t)V));
  free(curve);
  return 0;
}

/* The block numbers of one kind of event of the session, by round (or epoch): min or max. */
typedef struct {
  uint64_t *lo, *hi;
  size_t n;
} spans;

static int spans_new(spans *s, size_t n, bbvfl_err *err) {
  s->n = n;
  s->lo = malloc(n * sizeof *s->lo);
  s->hi = calloc(n, sizeof *s->hi);
  if (!s->lo || !s->hi) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) s->lo[i] = UINT64_MAX;
  return 0;
}

static void spans_free(spans *s) {
  free(s->lo);
  free(s->hi);
}

static int collect(bbvfl_aggc *a, bbvfl_cev_kind kind, uint64_t from, int by_epoch, spans *s, bbvfl_err *err) {
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(a, kind, NULL, from, UINT64_MAX, &logs, err) < 0) return -1;
  size_t i;
  json_t *l;
  int rc = 0;
  json_array_foreach(logs, i, l) {
    bbvfl_cev ev;
    int k = bbvfl_cev_decode(l, &ev, err);
    if (k < 0) {
      rc = -1;
      break;
    }
    uint64_t key = by_epoch ? ev.epoch : ev.round;
    if (k == 1 && ev.kind == kind && key < s->n) {
      if (ev.block_number < s->lo[key]) s->lo[key] = ev.block_number;
      if (ev.block_number > s->hi[key]) s->hi[key] = ev.block_number;
    }
    bbvfl_cev_clear(&ev);
  }
  json_decref(logs);
  return rc;
}

static int block_time_of(bbvfl_rpc *rpc, uint64_t blk, double *ts, bbvfl_err *err) {
  char q[32];
  snprintf(q, sizeof q, "0x%llx", (unsigned long long)blk);
  json_t *b = NULL;
  if (bbvfl_rpc_get_block(rpc, q, 0, &b, err) < 0) return -1;
  const char *t = json_string_value(json_object_get(b, "timestamp"));
  *ts = t ? (double)strtoull(t, NULL, 16) : NAN;
  json_decref(b);
  return 0;
}

/* The chain's figures of a finished demo run (its session file): blocks per epoch and the rest. */
static int chain_figures(const char *run, int timestamps, json_t *out, bbvfl_err *err) {
  char path[1500];
  snprintf(path, sizeof path, "%s/session.json", run);
  bbvfl_session s;
  if (bbvfl_session_load(path, &s, err) < 0) return -1;
  bbvfl_rpc *rpc = bbvfl_rpc_new(s.rpc_url, NULL, err);
  if (!rpc) return -1;
  bbvfl_aggc a;
  bbvfl_aggc_init(&a, rpc, s.contract);
  const bbvfl_cconfig *c = &s.cparams;
  uint64_t per = (uint64_t)c->train_rounds + c->eval_rounds, E = c->epochs, total = per * E;
  spans sub = {0}, grad = {0}, done = {0}, met = {0}, pay = {0};
  int rc = -1;
  if (spans_new(&sub, total, err) < 0 || spans_new(&grad, total, err) < 0 || spans_new(&done, total, err) < 0 ||
      spans_new(&met, E, err) < 0 || spans_new(&pay, E, err) < 0)
    goto out;
  if (collect(&a, bbvfl_cev_submission(c->hashed), s.deploy_block, 0, &sub, err) < 0 ||
      collect(&a, BBVFL_EV_GRADIENT_POSTED, s.deploy_block, 0, &grad, err) < 0 ||
      collect(&a, BBVFL_EV_ROUND_COMPLETED, s.deploy_block, 0, &done, err) < 0 ||
      collect(&a, BBVFL_EV_METRICS_POSTED, s.deploy_block, 1, &met, err) < 0 ||
      collect(&a, BBVFL_EV_REWARDS_PAID, s.deploy_block, 1, &pay, err) < 0)
    goto out;
  double tr[4096], ev[4096];
  uint64_t end[4096];
  if (E > 4096) {
    bbvfl_fail(err, BBVFL_E_ARG, "at most 4096 epochs");
    goto out;
  }
  size_t ntr = 0, nev = 0;
  for (uint64_t e = 0; e < E; e++) {
    uint64_t r0 = e * per, lo = UINT64_MAX, hi = 0;
    for (uint64_t r = r0; r < r0 + c->train_rounds; r++) {
      if (sub.lo[r] < lo) lo = sub.lo[r];
      if (grad.hi[r] > hi) hi = grad.hi[r];
    }
    if (lo != UINT64_MAX && hi >= lo) tr[ntr++] = (double)(hi - lo + 1);
    uint64_t elo = UINT64_MAX, ehi = 0;
    for (uint64_t r = r0 + c->train_rounds; r < r0 + per; r++) {
      if (sub.lo[r] < elo) elo = sub.lo[r];
      if (done.hi[r] > ehi) ehi = done.hi[r];
    }
    if (elo != UINT64_MAX && ehi >= elo) ev[nev++] = (double)(ehi - elo + 1);
    uint64_t x = done.hi[r0 + per - 1];
    if (met.hi[e] > x) x = met.hi[e];
    if (pay.hi[e] > x) x = pay.hi[e];
    end[e] = x;
  }
  uint64_t first = sub.lo[0];
  /* steady state: from the end of the first epoch to the end of the last but one (with staleness
     the last epoch drains the pipeline: its evaluation waits for every gradient; its extra blocks
     are reported apart and added to the projections) */
  double bpe = E > 2   ? (double)(end[E - 2] - end[0]) / (double)(E - 2)
               : E > 1 ? (double)(end[E - 1] - end[0]) / (double)(E - 1)
                       : (double)(end[0] - first + 1);
  double drain = E > 2 ? (double)(end[E - 1] - end[E - 2]) - bpe : 0;
  json_object_set_new(out, "blocks_per_epoch", json_real(bpe));
  json_object_set_new(out, "last_epoch_extra_blocks", json_real(drain));
  json_object_set_new(out, "train_blocks_per_epoch", bbvfl_json_num_or_null(median_d(tr, ntr)));
  json_object_set_new(out, "eval_blocks_per_epoch", bbvfl_json_num_or_null(median_d(ev, nev)));
  json_object_set_new(out, "first_epoch_blocks", json_integer((json_int_t)(end[0] - first + 1)));
  json_object_set_new(out, "setup_blocks", json_integer((json_int_t)(first - s.deploy_block)));
  json_object_set_new(out, "session_blocks", json_integer((json_int_t)(end[E - 1] - s.deploy_block + 1)));
  if (timestamps && E > 1) {
    double t0, t1;
    if (block_time_of(rpc, end[0], &t0, err) < 0 || block_time_of(rpc, end[E - 1], &t1, err) < 0) goto out;
    json_object_set_new(out, "wall_per_epoch_s", bbvfl_json_num_or_null((t1 - t0) / (double)(E - 1)));
  }
  rc = 0;
out:
  spans_free(&sub);
  spans_free(&grad);
  spans_free(&done);
  spans_free(&met);
  spans_free(&pay);
  bbvfl_rpc_free(rpc);
  return rc;
}

/* One demo run (in process: bench_demo) of a row against rpc_url (epochs E, seed 1) into
   dir/<tag>; *rep: its report. */
static int demo_row(const bctx *x, const brow *row, const char *rpc_url, int epochs, const char *dir,
                    const char *tag, json_t **rep, char *run, size_t runcap, bbvfl_err *err) {
  const bbvfl_bench_blocks_opts *o = x->o;
  snprintf(run, runcap, "%s/%s-%s", dir, tag, row->label);
  for (char *p = run + strlen(dir); *p; p++)
    if (*p == ' ' || *p == '=' || *p == ',') *p = '_';
  bbvfl_bench_demo_args a = {.M = o->M, .epochs = epochs, .batch = row->full_batch ? x->n_train : o->B, .seed = 1,
                             .window = row->K, .staleness_given = 1, .staleness = row->s,
                             .aggregation = row->s > 0 ? "hashed" : o->aggregation, .compare = 1,
                             .round_timeout_s = 300, .data = o->data, .rpc_url = rpc_url, .run_dir = run};
  if (bbvfl_bench_demo(&a, rep, err) == 0) return 0;
  return bbvfl_wrap(err, "the %s demo of row %s", tag, row->label);
}

static double jnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

void bbvfl_bench_blocks_print(const json_t *t, FILE *f) {
  const json_t *cfg = json_object_get(t, "config");
  fprintf(f, "bench blocks: M=%d, %d epochs (AUROC: median of %d seeds, off-chain = on-chain), block time %g s "
             "(%d-epoch runs), %s aggregation unless staleness > 0\n",
          (int)jnum(cfg, "M"), (int)jnum(cfg, "epochs"), (int)jnum(cfg, "seeds"), jnum(cfg, "block_time"),
          (int)jnum(cfg, "block_time_epochs"), json_string_value(json_object_get(cfg, "aggregation")));
  fprintf(f, "%-16s %6s %6s %6s %8s %8s %8s %9s %9s %8s %8s %8s %10s %10s\n", "row", "T+V", "blk/ep", "train", "eval",
          "wall/ep", "auto/ep", "gas/coord", "AUROC", "chain#1", "replay#1", "blk->tgt", "30ep@2s", "30ep@12s");
  size_t i;
  const json_t *r;
  json_array_foreach(json_object_get(t, "rows"), i, r) {
    fprintf(f, "%-16s %3d+%-2d %6.1f %6.1f %8.1f %7.1fs %7.2fs %9.1f %9.4f %8.4f %8.4f %8.0f %9.0fs %9.0fs\n",
            json_string_value(json_object_get(r, "row")), (int)jnum(r, "train_rounds_per_epoch"),
            (int)jnum(r, "eval_rounds_per_epoch"), jnum(r, "blocks_per_epoch"), jnum(r, "train_blocks_per_epoch"),
            jnum(r, "eval_blocks_per_epoch"), jnum(r, "wall_per_epoch_s"), jnum(r, "wall_per_epoch_automine_s"),
            jnum(r, "gas_per_coordinate"), jnum(r, "auroc_median"), jnum(r, "auroc_onchain_seed1"),
            jnum(r, "auroc_offchain_replay"), jnum(r, "blocks_to_target"), jnum(r, "projected_session_s_2s"), jnum(r, "projected_session_s_12s"));
  }
  fprintf(f, "blk/ep: blocks per epoch in steady state (epoch 1 to the last but one; evaluation, metrics and rewards included); train/eval: blocks "
             "spanned by an epoch's training windows / evaluation; wall/ep: per epoch at the block time; auto/ep: per "
             "epoch on an automining devnet; chain#1/replay#1: the on-chain seed-1 run's AUROC and the off-chain trainer "
             "replaying that session (same seed and session seed); blk->tgt: blocks until the median AUROC is within 0.005 of the K=1 s=0 "
             "row's final one; 30ep@Xs: projected session (setup + epochs x blocks per epoch + the last epoch's extra blocks) x X s.\n");
}

char *bbvfl_bench_blocks_csv(const json_t *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  static const char *const cols[] = {"window", "staleness", "full_batch", "train_rounds_per_epoch",
                                     "eval_rounds_per_epoch", "blocks_per_epoch", "train_blocks_per_epoch",
                                     "eval_blocks_per_epoch", "first_epoch_blocks", "setup_blocks",
                                     "wall_per_epoch_s", "wall_per_epoch_automine_s", "gas_per_coordinate",
                                     "gas_per_window", "auroc_median", "auroc_onchain_seed1", "auroc_offchain_replay",
                                     "blocks_to_target", "projected_session_s_2s", "projected_session_s_12s"};
  fprintf(f, "row,aggregation");
  for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) fprintf(f, ",%s", cols[k]);
  fprintf(f, "\n");
  size_t i;
  const json_t *r;
  json_array_foreach(json_object_get(t, "rows"), i, r) {
    fprintf(f, "%s,%s", json_string_value(json_object_get(r, "row")),
            json_string_value(json_object_get(r, "aggregation")));
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++) {
      double v = jnum(r, cols[k]);
      if (isfinite(v)) fprintf(f, ",%.6g", v);
      else fprintf(f, ",");
    }
    fprintf(f, "\n");
  }
  fclose(f);
  return buf;
}

void bbvfl_bench_blocks_defaults(bbvfl_bench_blocks_opts *o) {
  memset(o, 0, sizeof *o);
  static const int K[] = {1, 5, 45}, S[] = {0, 1};
  memcpy(o->Ks, K, sizeof K);
  o->nK = 3;
  memcpy(o->Ss, S, sizeof S);
  o->nS = 2;
  o->full_batch = 1;
  o->epochs = 30;
  o->bt_epochs = 3;
  o->seeds = 5;
  o->M = 5;
  o->B = 10;
  o->block_time = 1;
  o->aggregation = "hashed";
}

int bbvfl_bench_blocks_check(const bbvfl_bench_blocks_opts *o, bbvfl_err *err) {
  if (o->epochs < 1 || o->seeds < 1 || o->seeds > MAX_SEEDS || o->bt_epochs < 2 || !(o->block_time > 0) || o->M < 1 ||
      o->B < 1)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "--epochs, --clients and --batch must be >= 1, --seeds in 1..%d, "
                      "--block-time-epochs >= 2 and --block-time > 0",
                      MAX_SEEDS);
  int mode;
  return bbvfl_session_parse_aggregation(o->aggregation, &mode, err);
}

int bbvfl_bench_blocks_run(const bbvfl_bench_blocks_opts *o, const char *dir, bbvfl_bench_progress *pr, json_t **out,
                           bbvfl_err *err) {
  *out = NULL;
  if (bbvfl_bench_blocks_check(o, err) < 0) return -1;
  brow rows[MAX_ROWS];
  int nrow = 0;
  for (int i = 0; i < o->nK; i++)
    for (int j = 0; j < o->nS && nrow < MAX_ROWS - 1; j++) {
      rows[nrow] = (brow){.K = o->Ks[i], .s = o->Ss[j]};
      snprintf(rows[nrow].label, sizeof rows[nrow].label, "K=%d s=%d", o->Ks[i], o->Ss[j]);
      nrow++;
    }
  if (o->full_batch) {
    rows[nrow] = (brow){.K = 1, .s = 0, .full_batch = 1};
    snprintf(rows[nrow].label, sizeof rows[nrow].label, "full batch");
    nrow++;
  }
  bctx x = {.o = o};
  bbvfl_dataset ds;
  bbvfl_csv_opts co = {0};
  const char *data = o->data ? o->data : bbvfl_default_data_path();
  if (bbvfl_csv_load(data, &co, &ds, err) != 0) return -1;
  {
    size_t *tr = NULL, *te = NULL, ntr = 0, nte = 0;
    if (bbvfl_split(ds.n, 0.2, 1, &tr, &ntr, &te, &nte, err) < 0) {
      bbvfl_dataset_free(&ds);
      return -1;
    }
    free(tr);
    free(te);
    x.n_train = (int)ntr;
  }
  char runs[1100];
  snprintf(runs, sizeof runs, "%s/runs", dir);
  json_t *t = json_object(), *jrows = json_array();
  json_object_set_new(t, "config", json_pack("{s:i, s:i, s:i, s:f, s:i, s:s, s:i, s:i, s:s}", "M", o->M, "epochs",
                                             o->epochs, "seeds", o->seeds, "block_time", o->block_time,
                                             "block_time_epochs", o->bt_epochs, "aggregation", o->aggregation, "B",
                                             o->B, "full_batch_B", x.n_train, "data", data));
  json_object_set(t, "rows", jrows);
  bbvfl_bench_devnet bt = {0}, am = {0};
  bbvfl_bench_progress_add_total(pr, (uint64_t)nrow * (o->no_chain ? 1 : 3));
  int rc = -1;
  /* 1. off-chain AUROC */
  for (int i = 0; i < nrow; i++) {
    json_t *r = json_pack("{s:s, s:i, s:i, s:b, s:s}", "row", rows[i].label, "window", rows[i].K, "staleness",
                          rows[i].s, "full_batch", rows[i].full_batch, "aggregation",
                          rows[i].s > 0 ? "hashed" : o->aggregation);
    json_array_append_new(jrows, r);
    char what[96];
    snprintf(what, sizeof what, "off-chain %s (%d seeds x %d epochs)", rows[i].label, o->seeds, o->epochs);
    bbvfl_bench_progress_step(pr, 0, what);
    if (offchain_row(&x, &rows[i], &ds, r, err) != 0) goto out;
    bbvfl_bench_progress_step(pr, 1, what);
  }
  if (!o->no_chain) {
    if (bbvfl_mkdirs(runs, 0755, err) != 0) goto out;
    /* 2. automining chain: wall time per epoch without a block time, the on-chain AUROC */
    if (bbvfl_bench_devnet_start(&am, 0, err) != 0) goto out;
    for (int i = 0; i < nrow; i++) {
      json_t *r = json_array_get(jrows, (size_t)i), *rep = NULL;
      char what[96], run[1400];
      snprintf(what, sizeof what, "automining chain %s (%d epochs)", rows[i].label, o->epochs);
      bbvfl_bench_progress_step(pr, 0, what);
      if (demo_row(&x, &rows[i], am.d.rpc_url, o->epochs, runs, "automine", &rep, run, sizeof run, err) != 0)
        goto out;
      json_object_set_new(r, "wall_per_epoch_automine_s", bbvfl_json_num_or_null(jnum(rep, "training_wall_s") / o->epochs));
      json_object_set_new(r, "auroc_onchain_seed1", bbvfl_json_num_or_null(jnum(rep, "auroc")));
      /* the off-chain trainer replaying that session (same seed, the chain's session seed S) */
      json_object_set_new(r, "auroc_offchain_replay", bbvfl_json_num_or_null(jnum(rep, "auroc_offchain_same_seed")));
      json_object_set_new(r, "gas_per_coordinate", bbvfl_json_num_or_null(jnum(rep, "gas_per_coordinate")));
      json_object_set_new(r, "gas_per_window", bbvfl_json_num_or_null(jnum(rep, "gas_per_window")));
      json_decref(rep);
      bbvfl_bench_progress_step(pr, 1, what);
    }
    bbvfl_bench_devnet_stop(&am);
    /* 3. the chain with a block time */
    if (bbvfl_bench_devnet_start(&bt, o->block_time, err) != 0) goto out;
    for (int i = 0; i < nrow; i++) {
      json_t *r = json_array_get(jrows, (size_t)i), *rep = NULL;
      char what[96], run[1400];
      snprintf(what, sizeof what, "%g s blocks %s (%d epochs)", o->block_time, rows[i].label, o->bt_epochs);
      bbvfl_bench_progress_step(pr, 0, what);
      if (demo_row(&x, &rows[i], bt.d.rpc_url, o->bt_epochs, runs, "blocktime", &rep, run, sizeof run, err) != 0)
        goto out;
      json_decref(rep);
      if (chain_figures(run, 1, r, err) != 0) goto out;
      bbvfl_bench_progress_step(pr, 1, what);
    }
    bbvfl_bench_devnet_stop(&bt);
  }
  bbvfl_bench_progress_end(pr);
  /* 4. blocks to the K=1 s=0 row's final AUROC within 0.005; projections */
  double target = NAN;
  for (int i = 0; i < nrow; i++)
    if (rows[i].K == 1 && rows[i].s == 0 && !rows[i].full_batch)
      target = jnum(json_array_get(jrows, (size_t)i), "auroc_median") - 0.005;
  json_object_set_new(t, "target_auroc", bbvfl_json_num_or_null(target));
  for (int i = 0; i < nrow; i++) {
    json_t *r = json_array_get(jrows, (size_t)i);
    double bpe = jnum(r, "blocks_per_epoch"), setup = jnum(r, "setup_blocks");
    const json_t *curve = json_object_get(r, "auroc_by_epoch_median");
    double reach = NAN;
    for (size_t e = 0; isfinite(target) && isfinite(bpe) && e < json_array_size(curve); e++)
      if (json_number_value(json_array_get(curve, e)) >= target) {
        reach = (double)(e + 1) * bpe;
        break;
      }
    json_object_set_new(r, "blocks_to_target", bbvfl_json_num_or_null(reach));
    double drain = jnum(r, "last_epoch_extra_blocks");
    double blocks = (isfinite(setup) ? setup : 0) + (double)o->epochs * bpe + (isfinite(drain) ? drain : 0);
    json_object_set_new(r, "projected_session_blocks", bbvfl_json_num_or_null(blocks));
    json_object_set_new(r, "projected_session_s_2s", bbvfl_json_num_or_null(2 * blocks));
    json_object_set_new(r, "projected_session_s_12s", bbvfl_json_num_or_null(12 * blocks));
  }
  *out = t;
  t = NULL;
  rc = 0;
out:
  if (rc != 0) bbvfl_bench_progress_end(pr);
  bbvfl_bench_devnet_stop(&am);
  bbvfl_bench_devnet_stop(&bt);
  json_decref(jrows);
  json_decref(t);
  bbvfl_dataset_free(&ds);
  return rc;
}
