/* The shared pieces of the benchmarks (bench.h): statistics, an embedded devnet, the floor,
 * progress, the environment, output files, a `bbvfl demo` run in process (run/local.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "common/fsutil.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "ml/metrics.h"
#include "run/local.h"

/* ------------------------------------------------------------------ statistics */

bbvfl_bench_stats bbvfl_bench_stats_of(double *v, size_t n) {
  bbvfl_bench_stats s = {0};
  if (!n) return s;
  s.median = bbvfl_median(v, n); /* sorts v */
  s.min = v[0];
  s.max = v[n - 1];
  size_t k = (size_t)(0.9 * (double)n + 0.999999);
  s.p90 = v[(k ? k : 1) - 1];
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  s.mean = sum / (double)n;
  return s;
}

json_t *bbvfl_bench_stats_json(const bbvfl_bench_stats *s) {
  return json_pack("{s:f, s:f, s:f, s:f, s:f}", "min_ms", s->min, "median_ms", s->median, "p90_ms",
                   s->p90, "mean_ms", s->mean, "max_ms", s->max);
}

void bbvfl_bench_set_range(json_t *o, const char *key, const bbvfl_bench_stats *s) {
  char k[128];
  json_object_set_new(o, key, json_real(s->median));
  snprintf(k, sizeof k, "%s_min", key);
  json_object_set_new(o, k, json_real(s->min));
  snprintf(k, sizeof k, "%s_max", key);
  json_object_set_new(o, k, json_real(s->max));
}

void bbvfl_bench_set_floor(json_t *o, double round_ms, int M, double interleaved_ms, double fresh_ms) {
  json_object_set_new(o, "floor_interleaved_ms", json_real(interleaved_ms));
  json_object_set_new(o, "floor_ratio", json_real(interleaved_ms > 0 ? round_ms / (M * interleaved_ms) : 0));
  json_object_set_new(o, "floor_ratio_fresh", json_real(fresh_ms > 0 ? round_ms / (M * fresh_ms) : 0));
}

/* ------------------------------------------------------------------ embedded devnet */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void bbvfl_bench_rmtree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* The embedded anvil runs in its own session (a Ctrl-C aimed at bbvfl does not reach it): on
 * SIGINT/SIGTERM/SIGHUP the benchmark stops it before exiting, so no node is left behind. */
static volatile sig_atomic_t g_anvil_pid;

static void on_signal(int sig) {
  if (g_anvil_pid > 0) kill((pid_t)g_anvil_pid, SIGTERM);
  _exit(128 + sig);
}

static void guard_devnet(pid_t pid) {
  g_anvil_pid = pid;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = pid > 0 ? on_signal : SIG_DFL;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

int bbvfl_bench_tmpdir(const char *name, char *buf, size_t n, bbvfl_err *err) {
  const char *tmp = getenv("TMPDIR");
  if ((size_t)snprintf(buf, n, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name) >= n)
    return bbvfl_fail(err, BBVFL_E_ARG, "TMPDIR is too long");
  if (!mkdtemp(buf)) return bbvfl_fail(err, BBVFL_E_IO, "cannot create a temporary folder %s: %s", buf, strerror(errno));
  return 0;
}

int bbvfl_bench_devnet_start(bbvfl_bench_devnet *o, double block_time, bbvfl_err *err) {
  if (bbvfl_bench_tmpdir("bbvfl-bench", o->dir, sizeof o->dir, err) != 0) return bbvfl_wrap(err, "the devnet's folder");
  /* the devnet defaults (Cancun rules) and the last 8 states only: with anvil's defaults its time
   * per block grows with the chain (docs/ONCHAIN.md) */
  bbvfl_devnet_opts opts = {.dir = o->dir, .lean_history = 1, .block_time = block_time};
  if (bbvfl_devnet_up(&opts, &o->d, err) != 0) {
    nftw(o->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    return bbvfl_wrap(err, "starting the benchmark's devnet");
  }
  o->up = 1;
  guard_devnet(o->d.pid);
  return 0;
}

void bbvfl_bench_devnet_stop(bbvfl_bench_devnet *o) {
  if (!o->up) return;
  guard_devnet(0);
  bbvfl_devnet_down(o->dir, 10, NULL);
  nftw(o->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  o->up = 0;
}

/* ------------------------------------------------------------------ floor */

int bbvfl_bench_floor_measure(const char *rpc_url, int n, int warmup, int sync, bbvfl_bench_floor_result *out,
                        bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  bbvfl_rpc *rpc = NULL;
  bbvfl_sender *dev_s = NULL, *me_s = NULL;
  bbvfl_key dev, me;
  memset(&dev, 0, sizeof dev);
  memset(&me, 0, sizeof me);
  double *tot = calloc((size_t)n, sizeof *tot), *snd = calloc((size_t)n, sizeof *snd),
         *wt = calloc((size_t)n, sizeof *wt);
  int rc = -1;
  if (!tot || !snd || !wt) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  rpc = bbvfl_rpc_new(rpc_url, NULL, err);
  if (!rpc) goto out;
  if (bbvfl_rpc_chain_id(rpc, &out->chain_id, err) != 0) goto out;
  if (bbvfl_key_from_hex(BBVFL_ANVIL_DEV_KEY0, &dev, err) != 0 || bbvfl_key_generate(&me, err) != 0)
    goto out;
  dev_s = bbvfl_sender_new(rpc, &dev, out->chain_id, err);
  me_s = dev_s ? bbvfl_sender_new(rpc, &me, out->chain_id, err) : NULL;
  if (!me_s) goto out;
  bbvfl_sender_set_fee_ttl(me_s, 3600); /* fees once; the sender refetches if the node objects */
  bbvfl_sender_set_sync(me_s, sync);
  {
    bbvfl_u256 fund;
    if (bbvfl_u256_from_string("1000000000000000000", &fund, err) != 0) goto out;
    if (bbvfl_sender_fund(dev_s, (const uint8_t(*)[20])me.addr, 1, &fund, 30, NULL, err) != 0) {
      bbvfl_wrap(err, "funding the benchmark key from anvil's dev account 0 (is %s an anvil "
                      "with its default accounts?)", rpc_url);
      goto out;
    }
  }
  const bbvfl_u256 one = bbvfl_u256_from_u64(1);
  for (int i = -warmup; i < n; i++) {
    uint8_t h[32];
    bbvfl_receipt r;
    double t0 = bbvfl_now(), t1, t2;
    if (sync) {
      if (bbvfl_sender_transact(me_s, dev.addr, &one, NULL, 0, 21000, 30, &r, err) != 0) {
        bbvfl_receipt_clear(&r);
        goto out;
      }
      t1 = t2 = bbvfl_now();
    } else {
      if (bbvfl_sender_send(me_s, dev.addr, &one, NULL, 0, 21000, h, err) != 0) goto out;
      t1 = bbvfl_now();
      if (bbvfl_rpc_wait_receipt(rpc, h, 30, &r, err) != 0) goto out;
      t2 = bbvfl_now();
    }
    int ok = r.status == 1;
    bbvfl_receipt_clear(&r);
    if (!ok) {
      bbvfl_fail(err, BBVFL_E_STATE, "a 1-wei transfer failed on chain (status 0)");
      goto out;
    }
    if (i >= 0) {
      tot[i] = (t2 - t0) * 1e3;
      snd[i] = (t1 - t0) * 1e3;
      wt[i] = (t2 - t1) * 1e3;
    }
  }
  out->total = bbvfl_bench_stats_of(tot, (size_t)n);
  out->send = bbvfl_bench_stats_of(snd, (size_t)n);
  out->wait = bbvfl_bench_stats_of(wt, (size_t)n);
  out->n = n;
  out->sync = sync;
  rc = 0;
out:
  bbvfl_sender_free(me_s);
  bbvfl_sender_free(dev_s);
  bbvfl_rpc_free(rpc);
  bbvfl_key_wipe(&me);
  bbvfl_key_wipe(&dev);
  free(tot);
  free(snd);
  free(wt);
  return rc;
}

/* ------------------------------------------------------------------ progress */

void bbvfl_bench_progress_init(bbvfl_bench_progress *p, uint64_t total, FILE *out, int tty) {
  memset(p, 0, sizeof *p);
  p->total = total ? total : 1;
  p->out = out;
  p->tty = tty;
  p->t0 = p->last = bbvfl_now();
}

void bbvfl_bench_progress_add_total(bbvfl_bench_progress *p, uint64_t more) { p->total += more; }

void bbvfl_bench_progress_step(bbvfl_bench_progress *p, uint64_t add, const char *what) {
  p->done += add;
  if (p->done > p->total) p->total = p->done;
  if (!p->out) return;
  double now = bbvfl_now(), el = now - p->t0;
  double eta = p->done ? el / (double)p->done * (double)(p->total - p->done) : 0;
  int pct = (int)(100.0 * (double)p->done / (double)p->total);
  if (p->tty) {
    if (now - p->last < 0.1 && p->done < p->total) return;
    char bar[31];
    int fill = pct * 30 / 100;
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(p->out, "\r\033[K[%s] %3d%%  %5.0fs elapsed  ETA %4.0fs  %s", bar, pct, el, eta, what ? what : "");
    fflush(p->out);
  } else {
    if (now - p->last < 5.0 && p->done < p->total) return;
    fprintf(p->out, "bench: %3d%% after %.0fs (ETA %.0fs) %s\n", pct, el, eta, what ? what : "");
  }
  p->last = now;
}

void bbvfl_bench_progress_note(bbvfl_bench_progress *p, const char *line) {
  if (!p->out) return;
  if (p->tty) fprintf(p->out, "\r\033[K");
  fprintf(p->out, "%s\n", line);
}

void bbvfl_bench_progress_end(bbvfl_bench_progress *p) {
  if (p->out && p->tty) fprintf(p->out, "\r\033[K");
}

void bbvfl_bench_on_round(void *ctx, uint64_t done, uint64_t total) {
  (void)done;
  (void)total;
  bbvfl_bench_round_ctx *c = ctx;
  bbvfl_bench_progress_step(c->pr, 1, c->label);
}

/* ------------------------------------------------------------------ environment and files */

int bbvfl_bench_env_open(bbvfl_bench_env *e, const char *rpc_url, int clients, FILE *log, bbvfl_err *err) {
  memset(e, 0, sizeof *e);
  if (!rpc_url) {
    if (log) fprintf(log, "bench: starting anvil ...\n");
    if (bbvfl_bench_devnet_start(&e->own, 0, err) != 0) return -1;
    rpc_url = e->own.d.rpc_url;
  }
  e->rpc_url = rpc_url;
  e->clients = clients;
  bbvfl_key dev;
  if (bbvfl_key_from_hex(BBVFL_ANVIL_DEV_KEY0, &dev, err) != 0) goto fail;
  e->pool = bbvfl_cbench_pool_new(rpc_url, &dev, clients, 100, err);
  bbvfl_key_wipe(&dev);
  if (!e->pool) {
    bbvfl_wrap(err, "preparing %d funded benchmark clients on %s (is it an anvil with its default "
                    "accounts?)", clients, rpc_url);
    goto fail;
  }
  return 0;
fail:
  bbvfl_bench_devnet_stop(&e->own);
  return -1;
}

void bbvfl_bench_env_close(bbvfl_bench_env *e) {
  bbvfl_cbench_pool_free(e->pool);
  e->pool = NULL;
  bbvfl_bench_devnet_stop(&e->own);
}

int bbvfl_bench_out_dir(const char *out, char *buf, size_t n, bbvfl_err *err) {
  if (out && *out) {
    if (strlen(out) >= n) return bbvfl_fail(err, BBVFL_E_ARG, "--out: path too long");
    snprintf(buf, n, "%s", out);
  } else {
    char ts[32];
    bbvfl_utc_stamp(ts, sizeof ts);
    snprintf(buf, n, "runs/bench-%s", ts);
  }
  if (bbvfl_mkdirs(buf, 0755, err) != 0) return bbvfl_wrap(err, "creating the output folder %s", buf);
  return 0;
}

int bbvfl_bench_write(const char *dir, const char *name, const char *text, size_t len, bbvfl_err *err) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
    return bbvfl_fail(err, BBVFL_E_ARG, "output path too long: %s/%s", dir, name);
  if (bbvfl_write_file_atomic(path, text, len, 0644, err) != 0) return bbvfl_wrap(err, "writing %s", path);
  return 0;
}

int bbvfl_bench_write_json(const char *dir, const char *name, const json_t *o, bbvfl_err *err) {
  char *s = json_dumps(o, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
  if (!s) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  size_t l = strlen(s);
  char *t = realloc(s, l + 2);
  if (!t) {
    free(s);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  t[l] = '\n';
  t[l + 1] = 0;
  int rc = bbvfl_bench_write(dir, name, t, l + 1, err);
  free(t);
  return rc;
}

int bbvfl_bench_write_table(const char *dir, const char *stem, const json_t *t, char *(*to_csv)(const json_t *),
                      bbvfl_err *err) {
  char name[256];
  char *csv = to_csv(t);
  if (!csv) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  snprintf(name, sizeof name, "%s.csv", stem);
  int rc = bbvfl_bench_write(dir, name, csv, strlen(csv), err);
  free(csv);
  if (rc != 0) return rc;
  snprintf(name, sizeof name, "%s.json", stem);
  return bbvfl_bench_write_json(dir, name, t, err);
}

char *bbvfl_bench_csv(const json_t *rows, const char *const *cols, size_t nc, const char *suffix_header,
                      const char *suffix_row) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  for (size_t c = 0; c < nc; c++) fprintf(f, "%s%s", c ? "," : "", cols[c]);
  fprintf(f, "%s\n", suffix_header);
  size_t i;
  const json_t *r;
  json_array_foreach(rows, i, r) {
    for (size_t c = 0; c < nc; c++) {
      const json_t *v = json_object_get(r, cols[c]);
      if (c) fputc(',', f);
      if (json_is_integer(v)) fprintf(f, "%lld", (long long)json_integer_value(v));
      else if (json_is_real(v)) fprintf(f, "%.9g", json_real_value(v));
      else if (json_is_boolean(v)) fprintf(f, "%d", json_is_true(v));
      else if (json_is_string(v)) {
        /* CSV-quote: status messages contain commas */
        fputc('"', f);
        for (const char *s = json_string_value(v); *s; s++) {
          if (*s == '"') fputc('"', f);
          fputc(*s == '\n' ? ' ' : *s, f);
        }
        fputc('"', f);
      }
    }
    fprintf(f, "%s\n", suffix_row);
  }
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

int bbvfl_bench_print_json(const json_t *o, FILE *f, bbvfl_err *err) {
  char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(8));
  if (!s) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  fprintf(f, "%s\n", s);
  free(s);
  return 0;
}

/* ------------------------------------------------------------------ a demo run, in process */

int bbvfl_bench_demo(const bbvfl_bench_demo_args *a, json_t **out, bbvfl_err *err) {
  *out = NULL;
  bbvfl_session s;
  bbvfl_local_setup_defaults(&s);
  bbvfl_offchain_cfg *c = &s.train;
  if (a->M) c->M = a->M;
  if (a->b) c->mech.b = a->b;
  if (a->beta > 0) c->mech.beta = a->beta;
  if (a->epochs) c->epochs = a->epochs;
  if (a->batch) c->B = (size_t)a->batch;
  if (a->P) c->P = a->P;
  c->seed = (uint64_t)a->seed;
  c->seeded_noise = a->compare; /* --compare implies --reproducible-noise */
  if (a->window > 0) c->window = (size_t)a->window;
  s.window_insist = a->window > 0;
  if (a->eval_rows > 0) c->eval_rows_per_round = (size_t)a->eval_rows;
  s.eval_insist = a->eval_rows > 0;
  if (a->staleness_given) c->staleness = a->staleness;
  s.staleness_auto = !a->staleness_given;
  if (a->aggregation && bbvfl_session_set_aggregation(&s, a->aggregation, err) < 0) return -1;
  bbvfl_dataset ds;
  if (bbvfl_local_setup(&s, a->data, NULL, &ds, err) < 0) return -1;
  bbvfl_local_opts lo = {.s = &s, .ds = &ds, .run_dir = a->run_dir, .rpc_url = a->rpc_url,
                         .round_timeout_s = a->round_timeout_s, .seeded = 1, .compare = a->compare, .delta = 1e-5};
  bbvfl_local_result res;
  int rc = bbvfl_local_run(&lo, &res, err);
  if (rc == 0) *out = json_incref(res.report);
  bbvfl_local_result_free(&res);
  bbvfl_dataset_free(&ds);
  return rc;
}
