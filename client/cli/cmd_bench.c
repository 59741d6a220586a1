/* bbvfl bench MODE: benchmarks. Each mode is one function in the table below; `bbvfl bench`
 * alone lists them. This file holds the dispatcher, the shared helpers (statistics, an embedded
 * devnet, progress, the floor measurement) and the floor mode; table1, scaling, plots and all
 * live in bench_table.c, bench_scaling.c and bench_plot.c.
 *
 *   floor  the cost of one bare transaction on the chain: a signed 1-wei transfer, from signing
 *          through eth_sendRawTransaction to the receipt, N times on one kept-alive connection.
 *          It is the yardstick the on-chain aggregation budget is expressed in (DESIGN.md,
 *          "Budgets"); devnet/bench-cast-send.sh measures the same with `cast send`.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <sys/wait.h>
#include <signal.h>
#include <time.h>
#include <stdint.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/bench.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "devnet/devnet.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"

typedef struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} bench_mode;

/* ------------------------------------------------------------------ statistics */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* v is sorted in place; nearest-rank quantiles. */
bench_stats bench_stats_of(double *v, size_t n) {
  bench_stats s = {0};
  if (!n) return s;
  qsort(v, n, sizeof *v, cmp_double);
  s.min = v[0];
  s.max = v[n - 1];
  s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  size_t k = (size_t)(0.9 * (double)n + 0.999999);
  s.p90 = v[(k ? k : 1) - 1];
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  s.mean = sum / (double)n;
  return s;
}

json_t *bench_stats_json(const bench_stats *s) {
  return json_pack("{s:f, s:f, s:f, s:f, s:f}", "min_ms", s->min, "median_ms", s->median, "p90_ms",
                   s->p90, "mean_ms", s->mean, "max_ms", s->max);
}

/* ------------------------------------------------------------------ embedded devnet */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void bench_rmtree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

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

int bench_devnet_start(bench_devnet *o, bbvfl_err *err) { return bench_devnet_start_bt(o, 0, err); }

int bench_devnet_start_bt(bench_devnet *o, double block_time, bbvfl_err *err) {
  const char *tmp = getenv("TMPDIR");
  snprintf(o->dir, sizeof o->dir, "%s/bbvfl-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(o->dir)) return bbvfl_fail(err, BBVFL_E_IO, "cannot create a folder for the devnet in %s", o->dir);
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

void bench_devnet_stop(bench_devnet *o) {
  if (!o->up) return;
  guard_devnet(0);
  bbvfl_devnet_down(o->dir, 10, NULL);
  nftw(o->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  o->up = 0;
}

/* ------------------------------------------------------------------ floor */

int bench_floor_measure(const char *rpc_url, int n, int warmup, int sync, bench_floor_result *out,
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
  if (bbvfl_key_from_hex(BENCH_DEV0_KEY, &dev, err) != 0 || bbvfl_key_generate(&me, err) != 0)
    goto out;
  dev_s = bbvfl_sender_new(rpc, &dev, out->chain_id, err);
  me_s = dev_s ? bbvfl_sender_new(rpc, &me, out->chain_id, err) : NULL;
  if (!me_s) goto out;
  bbvfl_sender_set_fee_ttl(me_s, 3600); /* fees once; the sender refetches if the node objects */
  bbvfl_sender_set_sync(me_s, sync);
  {
    bbvfl_u256 fund;
    bbvfl_receipt r;
    if (bbvfl_u256_from_string("1000000000000000000", &fund, err) != 0) goto out;
    if (bbvfl_sender_transact(dev_s, me.addr, &fund, NULL, 0, 21000, 30, &r, err) != 0) {
      bbvfl_receipt_clear(&r);
      bbvfl_wrap(err, "funding the benchmark key from anvil's dev account 0 (is %s an anvil "
                      "with its default accounts?)", rpc_url);
      goto out;
    }
    bbvfl_receipt_clear(&r);
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
  out->total = bench_stats_of(tot, (size_t)n);
  out->send = bench_stats_of(snd, (size_t)n);
  out->wait = bench_stats_of(wt, (size_t)n);
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

static int bench_floor(int argc, char **argv) {
  const char *rpc_url = NULL;
  int n = 200, warmup = 10, as_json = 0, sync = 0;
  const cli_opt opts[] = {
      {"rpc", OPT_STR, &rpc_url, "URL",
       "an anvil with its default dev accounts (default: start an embedded one and stop it after)"},
      {"n", OPT_INT, &n, "N", "measured transactions (default 200)"},
      {"warmup", OPT_INT, &warmup, "W", "unmeasured transactions first (default 10)"},
      {"sync", OPT_FLAG, &sync, NULL,
       "send with eth_sendRawTransactionSync (receipt in the same round trip)"},
      {"json", OPT_FLAG, &as_json, NULL, "print one JSON object: {\"floor_ms\": median, ...}"},
  };
  cli_spec spec = {
      "bbvfl bench floor",
      "round trip of a bare signed 1-wei transfer: sign + eth_sendRawTransaction + receipt",
      "[OPTIONS]",
      "Funds a fresh key from anvil's dev account 0, then sends N minimal EIP-1559 transfers one\n"
      "after the other on one kept-alive connection and times each from signing to its receipt\n"
      "(\"total\", the floor), split into sign + send (until the node returns the hash) and the\n"
      "receipt wait. Reports min, median, p90 in milliseconds. With --sync each transfer is one\n"
      "eth_sendRawTransactionSync call, so there is no separate receipt wait. Compare with\n"
      "devnet/bench-cast-send.sh, which times `cast send` the same way.",
      opts, sizeof opts / sizeof opts[0]};
  size_t npos = 0;
  bbvfl_err err = {0};
  int prc = cli_parse(&spec, argc, argv, NULL, 0, &npos, &err);
  if (prc == 1) return 0;
  if (prc < 0) return cli_report(&err);
  if (n < 1 || n > 1000000) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--n must be between 1 and 1000000 (got %d)", n);
    return cli_report(&err);
  }
  if (warmup < 0) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--warmup must be >= 0 (got %d)", warmup);
    return cli_report(&err);
  }

  bench_devnet own = {0};
  bench_floor_result fr;
  int rc = -1;
  if (!rpc_url) {
    if (!as_json && cli_isatty_err()) fprintf(stderr, "starting anvil ...\n");
    if (bench_devnet_start(&own, &err) != 0) goto out;
    rpc_url = own.d.rpc_url;
  }
  if (bench_floor_measure(rpc_url, n, warmup, sync, &fr, &err) != 0) goto out;
  if (as_json) {
    json_t *o = json_pack("{s:s, s:f, s:i, s:s, s:I, s:s, s:o}", "mode", "floor", "floor_ms",
                          fr.total.median, "n", n, "rpc", rpc_url, "chain_id", (json_int_t)fr.chain_id,
                          "method", sync ? "eth_sendRawTransactionSync" : "eth_sendRawTransaction",
                          "total", bench_stats_json(&fr.total));
    if (o && !sync) {
      json_object_set_new(o, "send", bench_stats_json(&fr.send));
      json_object_set_new(o, "receipt", bench_stats_json(&fr.wait));
    }
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (!s) {
      json_decref(o);
      bbvfl_fail(&err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
    printf("%s\n", s);
    free(s);
    json_decref(o);
  } else {
    printf("floor: signed 1-wei EIP-1559 transfer to receipt, %d transactions (+%d warm-up) on %s%s%s\n",
           n, warmup, rpc_url, own.up ? " (embedded anvil)" : "",
           sync ? ", eth_sendRawTransactionSync" : "");
    printf("  %-22s %9s %9s %9s\n", "milliseconds", "min", "median", "p90");
    printf("  %-22s %9.3f %9.3f %9.3f\n", "total (the floor)", fr.total.min, fr.total.median, fr.total.p90);
    if (!sync) {
      printf("  %-22s %9.3f %9.3f %9.3f\n", "sign + send", fr.send.min, fr.send.median, fr.send.p90);
      printf("  %-22s %9.3f %9.3f %9.3f\n", "receipt wait", fr.wait.min, fr.wait.median, fr.wait.p90);
    }
  }
  rc = 0;
out:
  bench_devnet_stop(&own);
  return rc == 0 ? 0 : cli_report(&err);
}

/* ------------------------------------------------------------------ progress */

void bench_progress_init(bench_progress *p, uint64_t total, int quiet) {
  memset(p, 0, sizeof *p);
  p->total = total ? total : 1;
  p->tty = cli_isatty_err();
  p->quiet = quiet;
  p->t0 = p->last = bbvfl_now();
}

void bench_progress_add_total(bench_progress *p, uint64_t more) { p->total += more; }

void bench_progress_step(bench_progress *p, uint64_t add, const char *what) {
  p->done += add;
  if (p->done > p->total) p->total = p->done;
  if (p->quiet) return;
  double now = bbvfl_now(), el = now - p->t0;
  double eta = p->done ? el / (double)p->done * (double)(p->total - p->done) : 0;
  int pct = (int)(100.0 * (double)p->done / (double)p->total);
  if (p->tty) {
    if (now - p->last < 0.1 && p->done < p->total) return;
    char bar[31];
    int fill = pct * 30 / 100;
    for (int i = 0; i < 30; i++) bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\r\033[K[%s] %3d%%  %5.0fs elapsed  ETA %4.0fs  %s", bar, pct, el, eta, what ? what : "");
    fflush(stderr);
  } else {
    if (now - p->last < 5.0 && p->done < p->total) return;
    fprintf(stderr, "bench: %3d%% after %.0fs (ETA %.0fs) %s\n", pct, el, eta, what ? what : "");
  }
  p->last = now;
}

void bench_progress_note(bench_progress *p, const char *line) {
  if (p->quiet) return;
  if (p->tty) fprintf(stderr, "\r\033[K");
  fprintf(stderr, "%s\n", line);
}

void bench_progress_end(bench_progress *p) {
  if (!p->quiet && p->tty) fprintf(stderr, "\r\033[K");
}

/* ------------------------------------------------------------------ environment and files */

int bench_env_open(bench_env *e, const char *rpc_url, int clients, int quiet, bbvfl_err *err) {
  memset(e, 0, sizeof *e);
  if (!rpc_url) {
    if (!quiet) fprintf(stderr, "bench: starting anvil ...\n");
    if (bench_devnet_start(&e->own, err) != 0) return -1;
    rpc_url = e->own.d.rpc_url;
  }
  e->rpc_url = rpc_url;
  e->clients = clients;
  bbvfl_key dev;
  if (bbvfl_key_from_hex(BENCH_DEV0_KEY, &dev, err) != 0) goto fail;
  e->pool = bbvfl_cbench_pool_new(rpc_url, &dev, clients, 100, err);
  bbvfl_key_wipe(&dev);
  if (!e->pool) {
    bbvfl_wrap(err, "preparing %d funded benchmark clients on %s (is it an anvil with its default "
                    "accounts?)", clients, rpc_url);
    goto fail;
  }
  return 0;
fail:
  bench_devnet_stop(&e->own);
  return -1;
}

void bench_env_close(bench_env *e) {
  bbvfl_cbench_pool_free(e->pool);
  e->pool = NULL;
  bench_devnet_stop(&e->own);
}

int bench_out_dir(const char *out, char *buf, size_t n, bbvfl_err *err) {
  if (out && *out) {
    if (strlen(out) >= n) return bbvfl_fail(err, BBVFL_E_ARG, "--out: path too long");
    snprintf(buf, n, "%s", out);
  } else {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char ts[32];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf, n, "runs/bench-%s", ts);
  }
  if (bbvfl_mkdirs(buf, 0755, err) != 0) return bbvfl_wrap(err, "creating the output folder %s", buf);
  return 0;
}

int bench_write(const char *dir, const char *name, const char *text, size_t len, bbvfl_err *err) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
    return bbvfl_fail(err, BBVFL_E_ARG, "output path too long: %s/%s", dir, name);
  if (bbvfl_write_file_atomic(path, text, len, 0644, err) != 0) return bbvfl_wrap(err, "writing %s", path);
  return 0;
}

int bench_write_json(const char *dir, const char *name, const json_t *o, bbvfl_err *err) {
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
  int rc = bench_write(dir, name, t, l + 1, err);
  free(t);
  return rc;
}

int bench_write_table(const char *dir, const char *stem, const json_t *t, char *(*to_csv)(const json_t *),
                      bbvfl_err *err) {
  char name[256];
  char *csv = to_csv(t);
  if (!csv) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  snprintf(name, sizeof name, "%s.csv", stem);
  int rc = bench_write(dir, name, csv, strlen(csv), err);
  free(csv);
  if (rc != 0) return rc;
  snprintf(name, sizeof name, "%s.json", stem);
  return bench_write_json(dir, name, t, err);
}

int bench_finish_table(const char *dir, const char *stem, json_t *t, char *(*to_csv)(const json_t *),
                       void (*print)(const json_t *, FILE *), int no_files, int as_json, bbvfl_err *err) {
  if (!no_files) {
    bench_write_table(dir, stem, t, to_csv, err);
    if (err->code) {
      json_decref(t);
      return cli_report(err);
    }
  }
  if (as_json) bench_print_json(t, err);
  else {
    print(t, stdout);
    if (!no_files) printf("wrote %s/%s.csv and %s/%s.json\n", dir, stem, dir, stem);
  }
  json_decref(t);
  return err->code ? cli_report(err) : 0;
}

int bench_print_json(const json_t *o, bbvfl_err *err) {
  char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(8));
  if (!s) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  printf("%s\n", s);
  free(s);
  return 0;
}

int bench_parse_ints(const char *flag, const char *s, int *v, int max, int *n, int lo, int hi, bbvfl_err *err) {
  *n = 0;
  const char *p = s;
  for (;;) {
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || errno || x < lo || x > hi)
      return bbvfl_fail(err, BBVFL_E_ARG, "--%s '%s': expected a comma-separated list of integers in %d..%d",
                        flag, s, lo, hi);
    if (*n == max) return bbvfl_fail(err, BBVFL_E_ARG, "--%s: at most %d values", flag, max);
    v[(*n)++] = (int)x;
    p = end;
    if (!*p) return 0;
    if (*p != ',')
      return bbvfl_fail(err, BBVFL_E_ARG, "--%s '%s': expected a comma-separated list of integers", flag, s);
    p++;
  }
}

/* ------------------------------------------------------------------ dispatcher */

static const bench_mode MODES[] = {
    {"floor", bench_floor, "round trip of a bare signed transaction: sign + send + receipt"},
    {"table1", bench_table1, "the paper's Table I: off-chain vs on-chain aggregation per epoch, gas"},
    {"scaling", bench_scaling, "time and gas per round as M, P and B grow, against the naive contract"},
    {"plots", bench_plots, "figures (PNG) from table1/scaling/sweep JSON files"},
    {"blocks", bench_blocks, "blocks per epoch, wall time and gas on a chain with a block time, by window and staleness"},
    {"lr", bench_lr, "the model families: LR with sgd, adam, sqn and the MLP, rounds to a target test loss, AUROC"},
    {"all", bench_all, "floor + table1 + scaling + plots into one folder"},
};

static void list_modes(FILE *f) {
  fprintf(f, "Usage: bbvfl bench MODE [OPTIONS]   (bbvfl bench MODE --help for each)\n\nModes:\n");
  for (size_t i = 0; i < sizeof MODES / sizeof MODES[0]; i++)
    fprintf(f, "  %-10s %s\n", MODES[i].name, MODES[i].summary);
}

int cmd_bench(int argc, char **argv) {
  if (argc < 1) {
    list_modes(stderr);
    return 2;
  }
  if (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
    list_modes(stdout);
    return 0;
  }
  for (size_t i = 0; i < sizeof MODES / sizeof MODES[0]; i++)
    if (strcmp(argv[0], MODES[i].name) == 0) return MODES[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "bbvfl bench: unknown mode '%s' (see bbvfl bench --help)\n", argv[0]);
  return 2;
}

/* ------------------------------------------------------------------ running this program */

extern char **environ;

int bench_run_self(const char *const *args, const char *log, const char *what, json_t **out, bbvfl_err *err) {
  *out = NULL;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return bbvfl_fail(err, BBVFL_E_IO, "cannot find this program's path for %s", what);
  self[n] = 0;
  const char *argv[64];
  size_t a = 0;
  argv[a++] = self;
  for (size_t i = 0; args[i] && a < 63; i++) argv[a++] = args[i];
  argv[a] = NULL;
  int fd[2];
  if (pipe(fd) != 0) return bbvfl_fail(err, BBVFL_E_IO, "pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
  posix_spawn_file_actions_addclose(&fa, fd[0]);
  posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid;
  int rc = posix_spawn(&pid, self, &fa, NULL, (char *const *)argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fd[1]);
  if (rc != 0) {
    close(fd[0]);
    return bbvfl_fail(err, BBVFL_E_IO, "cannot start %s: %s", what, strerror(rc));
  }
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 > cap) {
      char *t = realloc(buf, cap = cap ? 2 * cap : 65536);
      if (!t) break;
      buf = t;
    }
    ssize_t k = read(fd[0], buf + len, cap - len - 1);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    len += (size_t)k;
  }
  close(fd[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (!buf || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    free(buf);
    return bbvfl_fail(err, BBVFL_E_STATE, "%s failed (its messages: %s)", what, log);
  }
  buf[len] = 0;
  /* the JSON object is the last line */
  while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) buf[--len] = 0;
  char *last = strrchr(buf, '\n');
  json_error_t je;
  *out = json_loads(last ? last + 1 : buf, 0, &je);
  free(buf);
  if (!json_is_object(*out)) {
    json_decref(*out);
    *out = NULL;
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s printed no JSON report (%s)", what, je.text);
  }
  return 0;
}
