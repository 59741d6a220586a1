/* bbvfl bench MODE: benchmarks. Each mode is one function in the table below; `bbvfl bench`
 * alone lists them. The benchmarks themselves are library code (bench/bench.h: what is measured,
 * computed and written); this file only parses each mode's flags and prints.
 *
 *   floor    the cost of one bare transaction on the chain: a signed 1-wei transfer, from signing
 *            through eth_sendRawTransaction to the receipt, N times on one kept-alive connection.
 *            It is the yardstick the on-chain aggregation budget is expressed in (DESIGN.md,
 *            "Budgets"); devnet/bench-cast-send.sh measures the same with `cast send`.
 *   table1, scaling, blocks, tables, plots, all: see their --help.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "common/fsutil.h"

typedef struct {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
} bench_mode;

/* Progress of a mode on stderr (a bar on a terminal); none when quiet. */
static void progress_init(bbvfl_bench_progress *p, int quiet) {
  bbvfl_bench_progress_init(p, 0, quiet ? NULL : stderr, cli_isatty_err());
}

/* Progress on stderr and the benchmark's node (embedded unless rpc_url) with funded keys for the
 * largest of Ms[0..nM) clients, at least `least`. */
static int open_env(bbvfl_bench_env *env, bbvfl_bench_progress *pr, const char *rpc_url, const int *Ms, int nM,
                    int least, bbvfl_err *err) {
  for (int i = 0; i < nM; i++)
    if (Ms[i] > least) least = Ms[i];
  progress_init(pr, 0);
  return bbvfl_bench_env_open(env, rpc_url, least, stderr, err);
}

static int parse_ints(const char *flag, const char *s, int *v, int max, int *n, int lo, int hi, bbvfl_err *err) {
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

/* The end of table1, scaling and blocks: unless no_files, dir/<stem>.csv and .json; then t on stdout
 * as JSON (as_json) or as the text table followed by the names written. Takes the reference t;
 * returns the exit status. */
static int finish_table(const char *dir, const char *stem, json_t *t, char *(*to_csv)(const json_t *),
                       void (*print)(const json_t *, FILE *), int no_files, int as_json, bbvfl_err *err) {
  if (!no_files) {
    bbvfl_bench_write_table(dir, stem, t, to_csv, err);
    if (err->code) {
      json_decref(t);
      return cli_report(err);
    }
  }
  if (as_json) bbvfl_bench_print_json(t, stdout, err);
  else {
    print(t, stdout);
    if (!no_files) printf("wrote %s/%s.csv and %s/%s.json\n", dir, stem, dir, stem);
  }
  json_decref(t);
  return err->code ? cli_report(err) : 0;
}

static int mode_floor(int argc, char **argv) {
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
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (n < 1 || n > 1000000) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--n must be between 1 and 1000000 (got %d)", n);
    return cli_report(&err);
  }
  if (warmup < 0) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--warmup must be >= 0 (got %d)", warmup);
    return cli_report(&err);
  }

  bbvfl_bench_devnet own = {0};
  bbvfl_bench_floor_result fr;
  int rc = -1;
  if (!rpc_url) {
    if (!as_json && cli_isatty_err()) fprintf(stderr, "starting anvil ...\n");
    if (bbvfl_bench_devnet_start(&own, 0, &err) != 0) goto out;
    rpc_url = own.d.rpc_url;
  }
  if (bbvfl_bench_floor_measure(rpc_url, n, warmup, sync, &fr, &err) != 0) goto out;
  if (as_json) {
    json_t *o = json_pack("{s:s, s:f, s:i, s:s, s:I, s:s, s:o}", "mode", "floor", "floor_ms",
                          fr.total.median, "n", n, "rpc", rpc_url, "chain_id", (json_int_t)fr.chain_id,
                          "method", sync ? "eth_sendRawTransactionSync" : "eth_sendRawTransaction",
                          "total", bbvfl_bench_stats_json(&fr.total));
    if (o && !sync) {
      json_object_set_new(o, "send", bbvfl_bench_stats_json(&fr.send));
      json_object_set_new(o, "receipt", bbvfl_bench_stats_json(&fr.wait));
    }
    if (cli_print_json(o, 0) != 0) {
      bbvfl_fail(&err, BBVFL_E_NOMEM, "out of memory");
      goto out;
    }
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
  bbvfl_bench_devnet_stop(&own);
  return rc == 0 ? 0 : cli_report(&err);
}

/* ------------------------------------------------------------------ the mode */

static int mode_table1(int argc, char **argv) {
  bbvfl_bench_table1_opts o;
  bbvfl_bench_table1_defaults(&o);
  const char *rpc_url = NULL, *clients_s = "5,10", *b_s = "2,4,8,16", *out_s = NULL;
  int as_json = 0, no_files = 0, reset_epochs = 0, no_reset = 0, no_demo = 0;
  const cli_opt opts[] = {
      {"rpc", OPT_STR, &rpc_url, "URL", "an anvil with its default dev accounts (default: start an embedded one)"},
      {"clients", OPT_STR, &clients_s, "LIST", "numbers of clients M (default 5,10; 1..64)"},
      {"b", OPT_STR, &b_s, "LIST", "PBM trials b (default 2,4,8,16)"},
      {"beta", OPT_DBL, &o.beta, "X", "PBM beta (default 0.05, as in the paper's Table I)"},
      {"epochs", OPT_INT, &o.epochs, "N", "epochs per configuration, on- and off-chain (default 10)"},
      {"masked-epochs", OPT_INT, &o.masked_epochs, "N", "epochs of masked mode per configuration (default 2; 0: skip)"},
      {"naive-rounds", OPT_INT, &o.naive_rounds, "N", "rounds of the naive baseline contract (default 3; 0: skip)"},
      {"batch", OPT_INT, &o.batch, "B", "batch size (default 10)"},
      {"P", OPT_INT, &o.P, "N", "embedding size (default 16)"},
      {"floor-n", OPT_INT, &o.floor_n, "N", "transfers timed for the floor (default 200)"},
      {"seed", OPT_U64, &o.seed, "N", "seed of the off-chain runs and the random embeddings (default 1)"},
      {"data", OPT_STR, &o.data, "FILE", "CSV table (default: the bundled Breast Cancer data)"},
      {"out", OPT_STR, &out_s, "DIR", "folder for table1.csv and table1.json (default runs/bench-<UTC time>)"},
      {"reset-epochs", OPT_FLAG, &reset_epochs, NULL,
       "evm_revert to the post-setup state after every epoch (for an anvil with full history, whose blocks get "
       "slower the longer its chain)"},
      {"no-reset", OPT_FLAG, &no_reset, NULL,
       "no evm_snapshot/evm_revert at all (nodes other than anvil); configurations follow each other on one chain"},
      {"no-demo", OPT_FLAG, &no_demo, NULL,
       "skip the cross-check with `bbvfl demo` (M client processes, the real protocol) per plain (M, b)"},
      {"no-files", OPT_FLAG, &no_files, NULL, "write no files (print only)"},
      {"json", OPT_FLAG, &as_json, NULL, "print the JSON object (floor_ms, naive_gas_per_coordinate, table1) on stdout"},
  };
  cli_spec spec = {
      "bbvfl bench table1",
      "the paper's Table I: off-chain vs on-chain aggregation time per epoch, gas per round and per coordinate",
      "[OPTIONS]",
      "For each M x b: the off-chain trainer's aggregation time per epoch (in-process sums), and the\n"
      "same rounds on chain: a fresh BbvflAggregator, M client threads (own key, connection, nonce)\n"
      "submitting PBM-quantized random embeddings in parallel with eth_sendRawTransactionSync, the\n"
      "active client posting a gradient after each training round. On-chain time of a round: from\n"
      "the first client starting to sign to the receipt of the submission that completed the round\n"
      "(RoundCompleted: the sum is readable). Per epoch: the sum over its training rounds (evaluation\n"
      "rounds apart). Also measured in the same run: the floor (a bare signed transfer to receipt),\n"
      "masked mode (16-bit lanes), and the naive one-word-per-value contract. Gas per coordinate =\n"
      "gas of a round's M submissions / (M*B*P), steady state (rounds >= 4).\n"
      "Each configuration is one continuous session; afterwards the chain is put back (evm_revert),\n"
      "so every configuration starts on the same chain. The embedded anvil runs with pruned history\n"
      "(--prune-history 8): with full history anvil's time per block grows with the chain's length\n"
      "(docs/ONCHAIN.md); against such a node (--rpc) use --reset-epochs.",
      opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (parse_ints("clients", clients_s, o.Ms, 8, &o.nM, 1, 64, &err) != 0 ||
      parse_ints("b", b_s, o.bs, 8, &o.nb, 1, 255, &err) != 0)
    return cli_report(&err);
  if (reset_epochs && no_reset) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--reset-epochs and --no-reset exclude each other");
    return cli_report(&err);
  }
  o.reset = no_reset ? 0 : reset_epochs ? 2 : 1;
  o.demo = !no_demo;
  o.rpc_given = rpc_url;
  if (bbvfl_bench_table1_check(&o, &err) != 0) return cli_report(&err);
  char dir[2048] = "", demo_dir[2100] = "", tmp_demo[256] = "";
  if (!no_files && bbvfl_bench_out_dir(out_s, dir, sizeof dir, &err) != 0) return cli_report(&err);
  if (o.demo) {
    if (no_files) {
      if (bbvfl_bench_tmpdir("bbvfl-bench-demo", tmp_demo, sizeof tmp_demo, &err) != 0) {
        bbvfl_wrap(&err, "the demo runs");
        return cli_report(&err);
      }
      snprintf(demo_dir, sizeof demo_dir, "%s", tmp_demo);
    } else {
      snprintf(demo_dir, sizeof demo_dir, "%s/demos", dir);
    }
    o.demo_dir = demo_dir;
  }
  bbvfl_bench_env env;
  bbvfl_bench_progress pr;
  if (open_env(&env, &pr, rpc_url, o.Ms, o.nM, 1, &err) != 0) return cli_report(&err);
  json_t *t = NULL;
  int rc = bbvfl_bench_table1_run(&env, &o, &pr, &t, &err);
  bbvfl_bench_env_close(&env);
  if (tmp_demo[0]) bbvfl_bench_rmtree(tmp_demo);
  if (rc != 0) return cli_report(&err);
  return finish_table(dir, "table1", t, bbvfl_bench_table1_csv, bbvfl_bench_table1_print, no_files, as_json, &err);
}
static int mode_scaling(int argc, char **argv) {
  bbvfl_bench_scaling_opts o;
  bbvfl_bench_scaling_defaults(&o);
  const char *rpc_url = NULL, *m_s = "2,4,8,16,32,64", *p_s = "16,32,64", *b_s = "10,50,100", *out_s = NULL;
  int as_json = 0, no_files = 0, no_naive = 0, no_reset = 0;
  const cli_opt opts[] = {
      {"rpc", OPT_STR, &rpc_url, "URL", "an anvil with its default dev accounts (default: start an embedded one)"},
      {"clients", OPT_STR, &m_s, "LIST", "M values at B=10 P=16 (default 2,4,8,16,32,64; 1..64)"},
      {"dims", OPT_STR, &p_s, "LIST", "P values at M=5 B=10 (default 16,32,64)"},
      {"batches", OPT_STR, &b_s, "LIST", "B values at M=5 P=16 (default 10,50,100)"},
      {"b", OPT_INT, &o.b, "N", "PBM trials (default 16; lanes are 16 bits once M*b >= 256)"},
      {"rounds", OPT_INT, &o.rounds, "N", "rounds per configuration (default 6; rounds >= 4 are steady state)"},
      {"naive-rounds", OPT_INT, &o.naive_rounds, "N", "rounds of the naive contract per configuration (default 2)"},
      {"no-naive", OPT_FLAG, &no_naive, NULL, "skip the naive baseline contract"},
      {"floor-n", OPT_INT, &o.floor_n, "N", "transfers timed for the floor (default 100)"},
      {"out", OPT_STR, &out_s, "DIR", "folder for scaling.csv and scaling.json (default runs/bench-<UTC time>)"},
      {"no-reset", OPT_FLAG, &no_reset, NULL,
       "no evm_snapshot/evm_revert (nodes other than anvil): configurations follow each other on one chain"},
      {"no-files", OPT_FLAG, &no_files, NULL, "write no files (print only)"},
      {"json", OPT_FLAG, &as_json, NULL, "print the JSON object on stdout"},
  };
  cli_spec spec = {"bbvfl bench scaling",
                   "time and gas of one aggregation round as M, P and B grow; BbvflAggregator against the naive contract",
                   "[OPTIONS]",
                   "Three sweeps: M at B=10 P=16, P at M=5 B=10, B at M=5 P=16. For each configuration a fresh\n"
                   "BbvflAggregator runs --rounds rounds with M parallel client threads (time per round from the first\n"
                   "client signing to the receipt with RoundCompleted, median of the steady rounds), and the naive\n"
                   "one-word-per-value contract runs --naive-rounds rounds (submissions + aggregate()). A configuration\n"
                   "whose transactions would need more gas than one transaction may carry (EIP-7825: 2^24; or the\n"
                   "node's block gas limit) is reported as not runnable, with the gas it asked for.",
                   opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  o.naive = !no_naive;
  o.reset = !no_reset;
  if (parse_ints("clients", m_s, o.Ms, 8, &o.nM, 1, 64, &err) != 0 ||
      parse_ints("dims", p_s, o.Ps, 8, &o.nP, 1, 4096, &err) != 0 ||
      parse_ints("batches", b_s, o.Bs, 8, &o.nB, 1, 4096, &err) != 0)
    return cli_report(&err);
  if (bbvfl_bench_scaling_check(&o, &err) != 0) return cli_report(&err);
  char dir[2048] = "";
  if (!no_files && bbvfl_bench_out_dir(out_s, dir, sizeof dir, &err) != 0) return cli_report(&err);
  bbvfl_bench_env env;
  bbvfl_bench_progress pr;
  if (open_env(&env, &pr, rpc_url, o.Ms, o.nM, 5, &err) != 0) return cli_report(&err);
  json_t *t = NULL;
  int rc = bbvfl_bench_scaling_run(&env, &o, &pr, &t, &err);
  bbvfl_bench_env_close(&env);
  if (rc != 0) return cli_report(&err);
  return finish_table(dir, "scaling", t, bbvfl_bench_scaling_csv, bbvfl_bench_scaling_print, no_files, as_json, &err);
}


static json_t *load_json(const char *path, bbvfl_err *err) {
  json_error_t je;
  json_t *o = json_load_file(path, 0, &je);
  if (!o) bbvfl_fail(err, BBVFL_E_PARSE, "%s: %s (line %d)", path, je.text, je.line);
  return o;
}

static void dirname_of(const char *path, char *out, size_t n) {
  snprintf(out, n, "%s", path);
  char *s = strrchr(out, '/');
  if (s) *s = 0;
  else snprintf(out, n, ".");
}

static int mode_plots(int argc, char **argv) {
  const char *t1 = NULL, *sc = NULL, *sw = NULL, *out_s = NULL;
  int M = 0, as_json = 0;
  const cli_opt opts[] = {
      {"table1", OPT_STR, &t1, "FILE", "table1.json of `bbvfl bench table1`: Table I as bars"},
      {"scaling", OPT_STR, &sc, "FILE", "scaling.json of `bbvfl bench scaling`: scaling curves and limits"},
      {"sweep", OPT_STR, &sw, "FILE", "sweep.json of `bbvfl sweep`: AUROC by epoch per (b, beta), AUROC vs epsilon"},
      {"clients", OPT_INT, &M, "M", "which clients' cells of the sweep to draw (default: the first in the file)"},
      {"out", OPT_STR, &out_s, "DIR", "folder for the PNGs (default: the folder of --table1/--scaling, else runs/bench-<UTC time>)"},
      {"json", OPT_FLAG, &as_json, NULL, "print {\"figures\": [...]} on stdout"},
  };
  cli_spec spec = {"bbvfl bench plots", "figures (PNG, gnuplot) from benchmark and sweep JSON files", "[OPTIONS]",
                   "Draws what it is given: --table1, --scaling and/or --sweep. Needs gnuplot (Debian: gnuplot-nox).\n"
                   "The data and gnuplot scripts of every figure stay in DIR/plotdata/.",
                   opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (!t1 && !sc && !sw) {
    bbvfl_fail(&err, BBVFL_E_ARG, "nothing to draw: give --table1, --scaling and/or --sweep");
    return cli_report(&err);
  }
  if (M < 0 || M > 64) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--clients must be in 1..64 (got %d)", M);
    return cli_report(&err);
  }
  json_t *jt = NULL, *js = NULL, *jw = NULL;
  if ((t1 && !(jt = load_json(t1, &err))) || (sc && !(js = load_json(sc, &err))) || (sw && !(jw = load_json(sw, &err)))) {
    json_decref(jt);
    json_decref(js);
    return cli_report(&err);
  }
  char dir[2048];
  if (!out_s && (t1 || sc)) {
    dirname_of(t1 ? t1 : sc, dir, sizeof dir);
    out_s = dir;
  }
  char odir[2048];
  json_t *made = json_array();
  int rc = bbvfl_bench_out_dir(out_s, odir, sizeof odir, &err);
  if (rc == 0 && jt) rc = bbvfl_bench_plot_table1(odir, jt, made, &err) < 0 ? -1 : 0;
  if (rc == 0 && js) rc = bbvfl_bench_plot_scaling(odir, js, made, &err) < 0 ? -1 : 0;
  if (rc == 0 && jw) rc = bbvfl_bench_plot_sweep(odir, jw, M, made, &err) < 0 ? -1 : 0;
  json_decref(jt);
  json_decref(js);
  json_decref(jw);
  if (rc != 0) {
    json_decref(made);
    return cli_report(&err);
  }
  if (as_json) {
    json_t *o = json_pack("{s:s, s:o}", "dir", odir, "figures", made);
    bbvfl_bench_print_json(o, stdout, &err);
    json_decref(o);
  } else {
    size_t i;
    json_t *f;
    json_array_foreach(made, i, f) printf("wrote %s/%s\n", odir, json_string_value(f));
    json_decref(made);
  }
  return 0;
}

static int mode_all(int argc, char **argv) {
  const char *rpc_url = NULL, *out_s = NULL, *sw = NULL;
  int as_json = 0, quick = 0, no_plots = 0, no_demo = 0;
  const cli_opt opts[] = {
      {"rpc", OPT_STR, &rpc_url, "URL", "an anvil with its default dev accounts (default: start an embedded one)"},
      {"out", OPT_STR, &out_s, "DIR", "output folder (default runs/bench-<UTC time>)"},
      {"sweep", OPT_STR, &sw, "FILE", "sweep.json for the AUROC figures (default runs/sweep/sweep.json when present)"},
      {"quick", OPT_FLAG, &quick, NULL, "a small version: M=5, b=16, 1 epoch; scaling M 2,8 P 16 B 10"},
      {"no-plots", OPT_FLAG, &no_plots, NULL, "write the tables only"},
      {"no-demo", OPT_FLAG, &no_demo, NULL, "skip the `bbvfl demo` cross-check of Table I"},
      {"json", OPT_FLAG, &as_json, NULL, "print {floor_ms, naive_gas_per_coordinate, table1, scaling, figures} on stdout"},
  };
  cli_spec spec = {"bbvfl bench all", "floor + Table I + scaling + figures, one devnet, one folder", "[OPTIONS]",
                   "Runs `bench table1` and `bench scaling` with their defaults on one node (the floor is measured\n"
                   "by both, in the same run), writes table1.{csv,json}, scaling.{csv,json} and the figures\n"
                   "table1.png, scaling.png and, from a sweep.json, fig2_auroc_by_epoch.png and auroc_vs_epsilon.png.",
                   opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  json_t *jw = NULL;
  if (sw) {
    if (!(jw = load_json(sw, &err))) return cli_report(&err);
  } else if (access("runs/sweep/sweep.json", R_OK) == 0) {
    sw = "runs/sweep/sweep.json";
    if (!(jw = load_json(sw, &err))) return cli_report(&err);
  }
  char dir[2048];
  if (bbvfl_bench_out_dir(out_s, dir, sizeof dir, &err) != 0) {
    json_decref(jw);
    return cli_report(&err);
  }
  bbvfl_bench_table1_opts to;
  bbvfl_bench_table1_defaults(&to);
  bbvfl_bench_scaling_opts so;
  bbvfl_bench_scaling_defaults(&so);
  char demo_dir[2100];
  snprintf(demo_dir, sizeof demo_dir, "%s/demos", dir);
  to.demo = !no_demo;
  to.demo_dir = demo_dir;
  to.rpc_given = rpc_url;
  if (quick) {
    to.nM = 1;
    to.bs[0] = 16;
    to.nb = 1;
    to.epochs = 1;
    to.masked_epochs = 1;
    to.naive_rounds = 1;
    to.floor_n = 50;
    so.Ms[0] = 2;
    so.Ms[1] = 8;
    so.nM = 2;
    so.nP = 1;
    so.nB = 1;
    so.rounds = 5;
    so.naive_rounds = 1;
    so.floor_n = 50;
  }
  bbvfl_bench_env env;
  bbvfl_bench_progress pr;
  if (open_env(&env, &pr, rpc_url, so.Ms, so.nM, 10, &err) != 0) {
    json_decref(jw);
    return cli_report(&err);
  }
  json_t *t1 = NULL, *sc = NULL, *made = json_array();
  int rc = bbvfl_bench_table1_run(&env, &to, &pr, &t1, &err);
  if (rc == 0) {
    so.floor_ms = json_number_value(json_object_get(t1, "floor_ms")); /* measured once */
    rc = bbvfl_bench_scaling_run(&env, &so, &pr, &sc, &err);
  }
  bbvfl_bench_env_close(&env);
  if (rc == 0) rc = bbvfl_bench_write_table(dir, "table1", t1, bbvfl_bench_table1_csv, &err);
  if (rc == 0) rc = bbvfl_bench_write_table(dir, "scaling", sc, bbvfl_bench_scaling_csv, &err);
  if (rc == 0 && !no_plots) {
    if (bbvfl_bench_plot_table1(dir, t1, made, &err) < 0 || bbvfl_bench_plot_scaling(dir, sc, made, &err) < 0 ||
        (jw && bbvfl_bench_plot_sweep(dir, jw, 0, made, &err) < 0))
      rc = -1;
  }
  if (rc == 0) {
    if (as_json) {
      json_t *o = json_object();
      json_object_set(o, "floor_ms", json_object_get(t1, "floor_ms"));
      json_object_set(o, "naive_gas_per_coordinate", json_object_get(t1, "naive_gas_per_coordinate"));
      json_object_set(o, "table1", json_object_get(t1, "table1"));
      json_object_set_new(o, "table1_run", json_incref(t1));
      json_object_set_new(o, "scaling", json_incref(sc));
      json_object_set_new(o, "figures", json_incref(made));
      json_object_set_new(o, "dir", json_string(dir));
      rc = bbvfl_bench_print_json(o, stdout, &err);
      json_decref(o);
    } else {
      bbvfl_bench_table1_print(t1, stdout);
      printf("\n");
      bbvfl_bench_scaling_print(sc, stdout);
      printf("\nwrote %s/{table1,scaling}.{csv,json}", dir);
      size_t i;
      json_t *f;
      json_array_foreach(made, i, f) printf(", %s", json_string_value(f));
      printf("\n");
      if (!jw && !no_plots)
        printf("no sweep.json given (and no runs/sweep/sweep.json): run `bbvfl sweep` first for the AUROC figures\n");
    }
  }
  json_decref(t1);
  json_decref(sc);
  json_decref(made);
  json_decref(jw);
  return rc == 0 ? 0 : cli_report(&err);
}

static int mode_tables(int argc, char **argv) {
  bbvfl_bench_tables_opts o;
  bbvfl_bench_tables_defaults(&o);
  const char *Ms_s = "5,10", *out_s = NULL;
  unsigned long long devnet_gas = o.devnet_block_gas, mainnet_gas = o.mainnet_block_gas;
  int as_json = 0, no_files = 0, no_plot = 0;
  const cli_opt opts[] = {
      {"clients", OPT_STR, &Ms_s, "LIST", "client counts M (default 5,10)"},
      {"block-gas", OPT_U64, &devnet_gas, "GAS", "the devnet's block gas limit (default 30000000, anvil's)"},
      {"mainnet-block-gas", OPT_U64, &mainnet_gas, "GAS", "Ethereum mainnet's block gas limit (default 36000000)"},
      {"gas-price-gwei", OPT_DBL, &o.gas_price_gwei, "X", "gas price for the ether per epoch on mainnet (default 1)"},
      {"out", OPT_STR, &out_s, "DIR", "folder for tables.csv, tables.json and tables.png (default runs/bench-<UTC time>)"},
      {"no-plot", OPT_FLAG, &no_plot, NULL, "no figure"},
      {"no-files", OPT_FLAG, &no_files, NULL, "write no files (print only)"},
      {"json", OPT_FLAG, &as_json, NULL, "print the JSON object on stdout"},
  };
  cli_spec spec = {
      "bbvfl bench tables", "windows sized for the chain by table size: blocks, gas, wall time and ether per epoch",
      "[OPTIONS]",
      "Tables of 569 (Breast Cancer), 1,797 (Digits), 20,000 (Letter) and 100,000 rows (synthetic), M\n"
      "clients, B 10, P 16, b 16, hashed aggregation, staleness 1, on the devnet's and on Ethereum\n"
      "mainnet's block gas limit (2^24 gas per transaction, EIP-7825): the window and evaluation split\n"
      "that fit (what `bbvfl deploy` picks), rounds, gas, blocks per epoch (one block per window in\n"
      "steady state), wall time per epoch at 1 s and 12 s blocks, ether per epoch at --gas-price-gwei.\n"
      "A model from the client's gas functions (binding/fit.h), no chain: measured figures come from\n"
      "`bbvfl demo` and `bbvfl bench blocks`.",
      opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (parse_ints("clients", Ms_s, o.Ms, 8, &o.nM, 2, 64, &err) != 0) return cli_report(&err);
  o.devnet_block_gas = devnet_gas;
  o.mainnet_block_gas = mainnet_gas;
  json_t *t = NULL;
  if (bbvfl_bench_tables_run(&o, &t, &err) != 0) return cli_report(&err);
  char dir[4096] = "";
  if (!no_files) {
    if (bbvfl_bench_out_dir(out_s, dir, sizeof dir, &err) != 0) {
      json_decref(t);
      return cli_report(&err);
    }
    if (!no_plot && bbvfl_bench_plot_tables(dir, t, NULL, &err) < 0) {
      json_decref(t);
      return cli_report(&err);
    }
  }
  return finish_table(dir, "tables", t, bbvfl_bench_tables_csv, bbvfl_bench_tables_print, no_files, as_json, &err);
}

static int mode_blocks(int argc, char **argv) {
  bbvfl_bench_blocks_opts o;
  bbvfl_bench_blocks_defaults(&o);
  const char *windows_s = "1,5,45", *stale_s = "0,1", *out_s = NULL;
  int as_json = 0, no_files = 0, no_full = 0, no_plot = 0;
  const cli_opt opts[] = {
      {"epochs", OPT_INT, &o.epochs, "N", "epochs for the AUROC (off-chain, and the automining on-chain run) (default 30)"},
      {"seeds", OPT_INT, &o.seeds, "N", "seeds 1..N per row for the median AUROC (default 5, at most 16)"},
      {"block-time", OPT_DBL, &o.block_time, "S", "the block time of the measured chain (default 1)"},
      {"block-time-epochs", OPT_INT, &o.bt_epochs, "N", "epochs of each on-chain run at the block time (default 3, >= 2)"},
      {"windows", OPT_STR, &windows_s, "LIST", "windows K (default 1,5,45)"},
      {"staleness", OPT_STR, &stale_s, "LIST", "staleness s (default 0,1; rows with s > 0 run hashed)"},
      {"aggregation", OPT_STR, &o.aggregation, "MODE", "hashed (default) or lane for the s = 0 rows"},
      {"clients", OPT_INT, &o.M, "M", "clients (default 5)"},
      {"batch", OPT_INT, &o.B, "B", "batch size (default 10)"},
      {"no-full-batch", OPT_FLAG, &no_full, NULL, "leave out the full-batch row"},
      {"no-chain", OPT_FLAG, &o.no_chain, NULL, "off-chain figures only (no anvil, no block counts)"},
      {"data", OPT_STR, &o.data, "FILE", "CSV table (default: the bundled Breast Cancer data)"},
      {"out", OPT_STR, &out_s, "DIR", "folder for blocks.csv, blocks.json, the figure and the runs (default "
                                      "runs/bench-<UTC time>)"},
      {"no-plot", OPT_FLAG, &no_plot, NULL, "no figure"},
      {"no-files", OPT_FLAG, &no_files, NULL, "write no files (print only; the runs go to a temporary folder)"},
      {"json", OPT_FLAG, &as_json, NULL, "print the JSON object on stdout"},
  };
  cli_spec spec = {
      "bbvfl bench blocks", "what a block time does to a session: blocks, wall time, gas and AUROC by window and staleness",
      "[OPTIONS]",
      "Rows: every window K x staleness s, and one full-batch row (B = the training rows, K = 1).\n"
      "Per row: the median test AUROC after --epochs over --seeds seeds (off-chain; the on-chain\n"
      "seed-1 run is reported beside it), a --block-time-epochs session of M client processes on an\n"
      "anvil mining a block every --block-time s (blocks per epoch, training and evaluation blocks,\n"
      "wall time per epoch, gas per coordinate), the same session for --epochs on an automining\n"
      "anvil (wall time per epoch, on-chain AUROC), blocks to the K=1 s=0 row's final AUROC within\n"
      "0.005, and the projected wall time of an --epochs session at 2 s and 12 s blocks.",
      opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (parse_ints("windows", windows_s, o.Ks, 8, &o.nK, 1, 100000, &err) != 0 ||
      parse_ints("staleness", stale_s, o.Ss, 8, &o.nS, 0, 8, &err) != 0)
    return cli_report(&err);
  o.full_batch = !no_full;
  if (bbvfl_bench_blocks_check(&o, &err) != 0) return cli_report(&err);
  char dir[1024];
  char tmpdir[256] = "";
  if (no_files) {
    if (bbvfl_bench_tmpdir("bbvfl-blocks", tmpdir, sizeof tmpdir, &err) != 0) return cli_report(&err);
    snprintf(dir, sizeof dir, "%s", tmpdir);
  } else if (bbvfl_bench_out_dir(out_s, dir, sizeof dir, &err) != 0) {
    return cli_report(&err);
  }
  bbvfl_bench_progress pr;
  progress_init(&pr, as_json);
  json_t *t = NULL;
  int rc = bbvfl_bench_blocks_run(&o, dir, &pr, &t, &err);
  if (rc == 0 && !no_files && !no_plot && !o.no_chain && bbvfl_bench_plot_blocks(dir, t, NULL, &err) < 0) rc = -1;
  if (rc == 0) rc = finish_table(dir, "blocks", t, bbvfl_bench_blocks_csv, bbvfl_bench_blocks_print, no_files, as_json, &err);
  else {
    json_decref(t);
    rc = cli_report(&err);
  }
  if (*tmpdir) bbvfl_bench_rmtree(tmpdir);
  return rc;
}

static int mode_lr(int argc, char **argv) {
  bbvfl_bench_lr_opts o;
  bbvfl_bench_lr_defaults(&o);
  const char *out_s = NULL;
  int as_json = 0, no_files = 0, no_plot = 0;
  const cli_opt opts[] = {
      {"data", OPT_STR, &o.data, "LIST", "comma-separated CSV tables (default: the bundled breast_cancer.csv and wine.csv)"},
      {"rounds", OPT_INT, &o.rounds, "N", "full-batch rounds of each LR run (default 100)"},
      {"mlp-epochs", OPT_INT, &o.mlp_epochs, "N", "epochs of the MLP (B = 10, Adam 0.001: the paper's) (default 30)"},
      {"clients", OPT_INT, &o.M, "M", "clients (default 5)"},
      {"target-loss", OPT_DBL, &o.target, "X",
       "the test loss to reach (default 0: per table, 1.1 x the largest of the methods' best test losses)"},
      {"seed", OPT_U64, &o.seed, "N", "seed of every run (default 1)"},
      {"out", OPT_STR, &out_s, "DIR", "folder for lr.csv, lr.json and the figures (default runs/bench-<UTC time>)"},
      {"no-plot", OPT_FLAG, &no_plot, NULL, "no figures"},
      {"no-files", OPT_FLAG, &no_files, NULL, "write no files (print only)"},
      {"json", OPT_FLAG, &as_json, NULL, "print the JSON object on stdout"},
  };
  cli_spec spec = {
      "bbvfl bench lr", "the model families compared off chain: rounds to a target test loss and final AUROC", "[OPTIONS]",
      "Per table, NPQ, M clients, seed N: vertical logistic regression (full batch, --l2 1/n_train as\n"
      "sklearn's default C = 1) with sgd (lr 1), adam (lr 0.1) and sqn (lr 1/3, M = 5 pairs, local:\n"
      "no curvature round; tools/sqn_rounds.py compares tuned steps), and the MLP (the paper's: B = 10, Adam 0.001). Rounds are aggregation\n"
      "rounds: training rounds plus sqn's curvature rounds (evaluation rounds, the same for all, are\n"
      "left out); the MLP's count in whole epochs (its metrics are per epoch).",
      opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};
  if (bbvfl_bench_lr_check(&o, &err) != 0) return cli_report(&err);
  char dir[1024] = "";
  if (!no_files && bbvfl_bench_out_dir(out_s, dir, sizeof dir, &err) != 0) return cli_report(&err);
  bbvfl_bench_progress pr;
  progress_init(&pr, as_json);
  json_t *t = NULL;
  int rc = bbvfl_bench_lr_run(&o, &pr, &t, &err);
  if (rc == 0 && !no_files && !no_plot) {
    json_t *made = json_array();
    if (bbvfl_bench_plot_lr(dir, t, made, &err) < 0) {
      json_decref(made);
      rc = -1;
    } else {
      json_object_set_new(t, "figures", made);
    }
  }
  if (rc != 0) {
    json_decref(t);
    return cli_report(&err);
  }
  return finish_table(dir, "lr", t, bbvfl_bench_lr_csv, bbvfl_bench_lr_print, no_files, as_json, &err);
}

/* ------------------------------------------------------------------ dispatcher */

static const bench_mode MODES[] = {
    {"floor", mode_floor, "round trip of a bare signed transaction: sign + send + receipt"},
    {"table1", mode_table1, "the paper's Table I: off-chain vs on-chain aggregation per epoch, gas"},
    {"scaling", mode_scaling, "time and gas per round as M, P and B grow, against the naive contract"},
    {"plots", mode_plots, "figures (PNG) from table1/scaling/sweep JSON files"},
    {"blocks", mode_blocks, "blocks per epoch, wall time and gas on a chain with a block time, by window and staleness"},
    {"tables", mode_tables, "windows sized for the chain by table size: blocks, gas, wall and ether per epoch (a model)"},
    {"lr", mode_lr, "the model families: LR with sgd, adam, sqn and the MLP, rounds to a target test loss, AUROC"},
    {"attacks", cmd_bench_attacks, "the attack table: label, inversion, membership against epsilon (mean over seeds, 95% intervals)"},
    {"afe", cmd_bench_afe, "the VFL-AFE ablation: vanilla, +rescaling, +adjusting, both (median over seeds)"},
    {"all", mode_all, "floor + table1 + scaling + plots into one folder"},
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

