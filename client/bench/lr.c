/* bbvfl bench lr (bench/bench.h): the model families side by side off chain. For each table and method (LR+SGD,
 * LR+Adam, LR+SQN, the MLP) one seeded NPQ run: test loss and AUROC after every epoch, the
 * aggregation rounds (training rounds plus, for SQN, curvature rounds; evaluation rounds left out,
 * they are the same for every method) to reach a target test loss, the final AUROC. Writes
 * lr.csv, lr.json and one figure per table (test loss against rounds). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "ml/data.h"
#include "ml/lr.h"
#include "offchain/lr_train.h"
#include "offchain/offchain.h"
#include "core/setup.h"

typedef struct {
  const char *name;
  int model;
  bbvfl_opt_kind opt;
  double lr;
  int full_batch;
} method;

/* Step sizes: LR+SGD at 1, LR+SQN at its default 2/(M+1) = 1/3 (local pairs: no curvature
   round), LR+Adam at 0.1 (its best of 0.1, 0.5, 1 on Breast Cancer), the MLP at the paper's
   setup. Against each method at its tuned step: tools/sqn_rounds.py (docs/LR.md). */
static const method METHODS[] = {
    {"lr+sgd", BBVFL_MODEL_LR, BBVFL_OPT_SGD, 1.0, 1},
    {"lr+adam", BBVFL_MODEL_LR, BBVFL_OPT_ADAM, 0.1, 1},
    {"lr+sqn", BBVFL_MODEL_LR, BBVFL_OPT_SQN, 2.0 / 6, 1}, /* bbvfl_lr_sqn_default_lr, M = 5 */
    {"mlp", BBVFL_MODEL_MLP, BBVFL_OPT_ADAM, 0.001, 0},
};
#define NMETHODS (sizeof METHODS / sizeof METHODS[0])

/* training + curvature rounds after epoch e (1-based) */
static uint64_t agg_rounds(const bbvfl_offchain_cfg *c, const bbvfl_offchain_result *r, int e) {
  uint64_t tr = (uint64_t)e * r->T, curv = 0;
  if (c->model == BBVFL_MODEL_LR && c->opt.kind == BBVFL_OPT_SQN && c->sqn_pairs != BBVFL_SQN_PAIRS_LOCAL) {
    uint64_t avgs = tr / (uint64_t)c->sqn_interval;
    curv = avgs > 1 ? avgs - 1 : 0;
  }
  return tr + curv;
}

char *bbvfl_bench_lr_csv(const json_t *t) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  fprintf(f, "data,method,model,optimizer,lr,batch,target_loss,rounds_to_target,train_rounds_to_target,"
             "curvature_rounds_to_target,final_auroc,best_test_loss,final_test_loss\n");
  size_t i;
  const json_t *r;
  json_array_foreach(json_object_get(t, "rows"), i, r) {
    const json_t *rt = json_object_get(r, "rounds_to_target");
    fprintf(f, "%s,%s,%s,%s,%g,%d,%.6f,", json_string_value(json_object_get(r, "data")),
            json_string_value(json_object_get(r, "method")), json_string_value(json_object_get(r, "model")),
            json_string_value(json_object_get(r, "optimizer")), json_number_value(json_object_get(r, "lr")),
            (int)json_integer_value(json_object_get(r, "batch")), json_number_value(json_object_get(r, "target_loss")));
    if (json_is_integer(rt))
      fprintf(f, "%lld,%lld,%lld,", (long long)json_integer_value(rt),
              (long long)json_integer_value(json_object_get(r, "train_rounds_to_target")),
              (long long)json_integer_value(json_object_get(r, "curvature_rounds_to_target")));
    else
      fprintf(f, ",,,");
    fprintf(f, "%.6f,%.6f,%.6f\n", json_number_value(json_object_get(r, "final_auroc")),
            json_number_value(json_object_get(r, "best_test_loss")),
            json_number_value(json_object_get(r, "final_test_loss")));
  }
  fclose(f);
  return buf;
}

void bbvfl_bench_lr_print(const json_t *t, FILE *f) {
  fprintf(f, "%-20s %-8s %10s %10s %8s %8s %10s\n", "data", "method", "target", "rounds", "train", "curv", "AUROC");
  size_t i;
  const json_t *r;
  json_array_foreach(json_object_get(t, "rows"), i, r) {
    const char *d = json_string_value(json_object_get(r, "data")), *slash = strrchr(d, '/');
    const json_t *rt = json_object_get(r, "rounds_to_target");
    char a[24] = "never", b[24] = "-", c[24] = "-";
    if (json_is_integer(rt)) {
      snprintf(a, sizeof a, "%lld", (long long)json_integer_value(rt));
      snprintf(b, sizeof b, "%lld", (long long)json_integer_value(json_object_get(r, "train_rounds_to_target")));
      snprintf(c, sizeof c, "%lld", (long long)json_integer_value(json_object_get(r, "curvature_rounds_to_target")));
    }
    fprintf(f, "%-20s %-8s %10.4f %10s %8s %8s %10.4f\n", slash ? slash + 1 : d,
            json_string_value(json_object_get(r, "method")), json_number_value(json_object_get(r, "target_loss")), a, b,
            c, json_number_value(json_object_get(r, "final_auroc")));
  }
}

/* The default target: this factor times the largest of the methods' best test losses on the
   table (a loss every method reaches, and not only at its last round). */
#define LR_TARGET_FACTOR 1.1

/* One table: every method's run appended to rows, then the table's target (given, else
   LR_TARGET_FACTOR times the largest of the methods' best test losses) and the rounds to it. */
static int run_table(const char *path, const bbvfl_bench_lr_opts *o, bbvfl_bench_progress *pr, json_t *rows,
                     bbvfl_err *err) {
  bbvfl_csv_opts copts = {0};
  bbvfl_dataset ds;
  if (bbvfl_csv_load(path, &copts, &ds, err) != 0) return -1;
  int rc = -1;
  json_t *mine = json_array();
  double target = o->target;
  for (size_t k = 0; k < NMETHODS; k++) {
    const method *m = &METHODS[k];
    bbvfl_offchain_cfg c;
    bbvfl_offchain_defaults(&c);
    c.M = o->M;
    c.seed = o->seed;
    c.seeded_noise = 1;
    c.mech.kind = BBVFL_MECH_NPQ;
    c.model = m->model;
    c.opt.kind = m->opt;
    c.opt.lr = m->lr;
    if (m->model == BBVFL_MODEL_LR) {
      bbvfl_vfl_data v;
      if (bbvfl_vfl_data_prepare(&ds, c.seed, c.test_frac, c.M, NULL, &v, err) != 0) goto out;
      c.l2 = 1.0 / (double)v.n_train; /* sklearn's LogisticRegression() default, C = 1 */
      bbvfl_vfl_data_free(&v);
      c.P = ds.nclasses > 2 ? ds.nclasses : 1;
    }
    c.B = m->full_batch ? 0 : c.B;
    c.epochs = m->full_batch ? o->rounds : o->mlp_epochs;
    bbvfl_offchain_result r;
    if (bbvfl_offchain_train(&ds, &c, &r, err) != 0) {
      bbvfl_wrap(err, "%s on %s", m->name, path);
      goto out;
    }
    json_t *curve = json_array();
    double best = INFINITY;
    for (int e = 0; e < r.epochs; e++) {
      double l = r.per_epoch[e].test_loss;
      best = l < best ? l : best;
      json_array_append_new(curve, json_pack("[I, f, f]", (json_int_t)agg_rounds(&c, &r, e + 1), l, r.per_epoch[e].auroc));
    }
    json_t *row = json_pack("{s:s, s:s, s:s, s:s, s:f, s:I, s:i, s:I, s:f, s:f, s:f, s:o}", "data", path, "method",
                            m->name, "model", bbvfl_model_name(c.model), "optimizer",
                            m->opt == BBVFL_OPT_SQN ? "sqn" : m->opt == BBVFL_OPT_SGD ? "sgd" : "adam", "lr", m->lr,
                            "batch", (json_int_t)(c.B ? c.B : r.n_train), "epochs", c.epochs, "train_rounds_per_epoch",
                            (json_int_t)r.T, "final_auroc", r.per_epoch[r.epochs - 1].auroc, "best_test_loss", best,
                            "final_test_loss", r.per_epoch[r.epochs - 1].test_loss, "curve", curve);
    if (c.model == BBVFL_MODEL_LR && c.opt.kind == BBVFL_OPT_SQN) {
      json_object_set_new(row, "sqn_memory", json_integer(c.sqn_memory));
      json_object_set_new(row, "sqn_interval", json_integer(c.sqn_interval));
    }
    json_array_append_new(mine, row);
    if (!(o->target > 0) && (k == 0 || LR_TARGET_FACTOR * best > target)) target = LR_TARGET_FACTOR * best;
    bbvfl_offchain_result_free(&r);
    char what[128];
    snprintf(what, sizeof what, "%s done", m->name);
    bbvfl_bench_progress_step(pr, 1, what);
  }
  size_t i;
  json_t *row;
  json_array_foreach(mine, i, row) {
    json_object_set_new(row, "target_loss", json_real(target));
    json_t *curve = json_object_get(row, "curve");
    size_t e;
    json_t *pt;
    int found = 0;
    json_array_foreach(curve, e, pt) {
      if (json_real_value(json_array_get(pt, 1)) > target) continue;
      json_int_t rounds = json_integer_value(json_array_get(pt, 0));
      json_int_t T = json_integer_value(json_object_get(row, "train_rounds_per_epoch")) * (json_int_t)(e + 1);
      json_object_set_new(row, "rounds_to_target", json_integer(rounds));
      json_object_set_new(row, "train_rounds_to_target", json_integer(T));
      json_object_set_new(row, "curvature_rounds_to_target", json_integer(rounds - T));
      found = 1;
      break;
    }
    if (!found) json_object_set_new(row, "rounds_to_target", json_null());
    json_array_append(rows, row);
  }
  rc = 0;
out:
  json_decref(mine);
  bbvfl_dataset_free(&ds);
  return rc;
}

void bbvfl_bench_lr_defaults(bbvfl_bench_lr_opts *o) {
  *o = (bbvfl_bench_lr_opts){.data = NULL, .M = 5, .rounds = 100, .mlp_epochs = 30, .target = 0, .seed = 1};
}

int bbvfl_bench_lr_check(const bbvfl_bench_lr_opts *o, bbvfl_err *err) {
  if (o->rounds < 1 || o->rounds > 100000) return bbvfl_fail(err, BBVFL_E_ARG, "--rounds must be in 1..100000, got %d", o->rounds);
  if (o->mlp_epochs < 1 || o->mlp_epochs > 100000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--mlp-epochs must be in 1..100000, got %d", o->mlp_epochs);
  if (o->M < 1 || o->M > 1000) return bbvfl_fail(err, BBVFL_E_ARG, "--clients must be in 1..1000, got %d", o->M);
  if (!(o->target >= 0) || !isfinite(o->target))
    return bbvfl_fail(err, BBVFL_E_ARG, "--target-loss must be >= 0, got %g", o->target);
  if (o->data && !*o->data) return bbvfl_fail(err, BBVFL_E_ARG, "--data: an empty list of tables");
  return 0;
}

int bbvfl_bench_lr_run(const bbvfl_bench_lr_opts *o, bbvfl_bench_progress *pr, json_t **out, bbvfl_err *err) {
  *out = NULL;
  if (bbvfl_bench_lr_check(o, err) != 0) return -1;
  char defdata[8400];
  const char *data_s = o->data;
  if (!data_s) {
    const char *bc = bbvfl_default_data_path(), *slash = strrchr(bc, '/');
    snprintf(defdata, sizeof defdata, "%s,%.*s/wine.csv", bc, slash ? (int)(slash - bc) : 1, slash ? bc : ".");
    data_s = defdata;
  }
  json_t *t = json_object(), *rows = json_array();
  json_object_set_new(t, "config", json_pack("{s:s, s:i, s:i, s:i, s:I, s:s, s:f}", "mode", "lr", "M", o->M, "rounds",
                                             o->rounds, "mlp_epochs", o->mlp_epochs, "seed", (json_int_t)o->seed,
                                             "mechanism", "npq", "target_loss_given", o->target));
  json_object_set(t, "rows", rows);
  int ntab = 1;
  for (const char *p = data_s; *p; p++) ntab += *p == ',';
  bbvfl_bench_progress_add_total(pr, (uint64_t)ntab * NMETHODS);
  char *list = strdup(data_s);
  int rc = list ? 0 : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (char *save = NULL, *tok = list ? strtok_r(list, ",", &save) : NULL; rc == 0 && tok; tok = strtok_r(NULL, ",", &save))
    rc = run_table(tok, o, pr, rows, err);
  free(list);
  bbvfl_bench_progress_end(pr);
  json_decref(rows);
  if (rc != 0) {
    json_decref(t);
    return -1;
  }
  *out = t;
  return 0;
}
