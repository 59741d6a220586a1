/* bbvfl audit: verifies a session's whole on-chain history from the chain alone. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/leak.h"
#include "ml/data.h"
#include "audit/report.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "binding/session.h"
#include "common/fsutil.h"
#include "devnet/devnet.h"
#include "eth/buf.h"
#include "eth/wallet.h"

typedef struct {
  int tty;
  double last;
} progress_ctx;

static void progress(void *ctx, uint64_t block, uint64_t from, uint64_t to, uint64_t logs, uint64_t rounds) {
  progress_ctx *p = ctx;
  double frac = to > from ? (double)(block - from) / (double)(to - from) : 1.0;
  if (p->tty) {
    fprintf(stderr, "\r  reading blocks %llu..%llu: %5.1f%%, %llu logs, %llu rounds  ", (unsigned long long)from,
            (unsigned long long)to, 100 * frac, (unsigned long long)logs, (unsigned long long)rounds);
    if (block >= to) fputc('\n', stderr);
  } else if (frac - p->last >= 0.25 || block >= to) {
    fprintf(stderr, "audit: read up to block %llu of %llu (%llu logs, %llu rounds)\n", (unsigned long long)block,
            (unsigned long long)to, (unsigned long long)logs, (unsigned long long)rounds);
    p->last = frac;
  }
}

/* --recover-labels: the CSV, collected in memory (a bbvfl_buf: allocation failure is sticky and
   checked once at the end) and written once when the audit ran; with a session file, also the
   first label read back for each training position (read[], n_train entries, -1: none) */
typedef struct {
  bbvfl_buf csv;
  int *read;
  size_t n_train;
} labels_ctx;

static void on_labels(void *ctx, uint64_t round, uint64_t epoch, uint64_t batch, const int *labels,
                      const size_t *rows, size_t B) {
  labels_ctx *lc = ctx;
  bbvfl_buf *csv = &lc->csv;
  for (size_t i = 0; i < B; i++) {
    if (rows && lc->read && rows[i] < lc->n_train && lc->read[rows[i]] < 0) lc->read[rows[i]] = labels[i];
    char row[32] = "", line[160];
    if (rows) snprintf(row, sizeof row, "%zu", rows[i]);
    int n = snprintf(line, sizeof line, "%llu,%llu,%llu,%zu,%s,%d\n", (unsigned long long)round,
                     (unsigned long long)epoch, (unsigned long long)batch, i, row, labels[i]);
    bbvfl_buf_append(csv, line, (size_t)n);
  }
}

/* --recover-labels against what randomized response allows (audit/leak.h): the band for the label
   epsilon the session declares, over the distinct training rows read; and, when the session's table
   is readable here (the label holder's own check), the fraction that equals its true labels. Into
   *out (a new JSON object); printed unless quiet. */
static json_t *labels_vs_rr(const bbvfl_session *s, const labels_ctx *lc, int print) {
  size_t n = 0;
  for (size_t i = 0; i < lc->n_train; i++) n += lc->read[i] >= 0;
  const double eps = s->train.label_eps;
  const int K = s->n_classes >= 2 ? s->n_classes : 2;
  double p, lo, hi;
  bbvfl_leak_rr_band(s->train.seeded_noise ? 0 : eps, K, n, 1.96, &p, &lo, &hi);
  json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:s}", "rows", (json_int_t)n, "expected", p, "band95_lo", lo,
                        "band95_hi", hi, "label_dp",
                        s->train.seeded_noise ? "reproducible: regenerable from the session file"
                        : eps > 0               ? "rr"
                                                : "none");
  json_object_set_new(o, "label_epsilon", eps > 0 && !s->train.seeded_noise ? json_real(eps) : json_null());
  if (print) {
    if (s->train.seeded_noise && eps > 0)
      printf("labels vs randomized response: the session declares reproducible noise: its randomized response can be "
             "regenerated from the session file, so every label is recoverable (expected fraction 1)\n");
    else if (eps > 0)
      printf("labels vs randomized response: label epsilon %g (rr, %d classes, declared by the session): a label read "
             "back equals the true one with probability %.4f; over the %zu distinct training rows read, 95%% band "
             "[%.4f, %.4f]: what a chain reader learns, no more\n",
             eps, K, p, n, lo, hi);
    else
      printf("labels vs randomized response: no label DP declared: every label read back is the true one (expected "
             "fraction 1 over %zu rows)\n", n);
  }
  /* the owner's check: the session's table, when it is readable here */
  bbvfl_dataset ds;
  bbvfl_csv_opts co = {.label = s->label[0] ? s->label : NULL};
  bbvfl_err e = {0};
  size_t *tr = NULL, *te = NULL, ntr = 0, nte = 0;
  if (n && s->data[0] && access(s->data, R_OK) == 0 && bbvfl_csv_load(s->data, &co, &ds, &e) == 0) {
    if (ds.n == s->n_rows && bbvfl_split(ds.n, s->train.test_frac, s->train.seed, &tr, &ntr, &te, &nte, &e) == 0 &&
        ntr == lc->n_train) {
      size_t m, same;
      bbvfl_leak_agreement(lc->read, tr, ntr, ds.y, &m, &same);
      double f = m ? (double)same / (double)m : 0;
      const char *where = f > hi ? "above" : f < lo ? "below" : "within";
      json_object_set_new(o, "equal_true", json_integer((json_int_t)same));
      json_object_set_new(o, "fraction_true", json_real(f));
      json_object_set_new(o, "vs_band95", json_string(where));
      if (print)
        printf("labels vs the session's table %s (the label holder's check): %zu of %zu = %.4f equal the true "
               "labels: %s the band\n", s->data, same, m, f, where);
    }
    free(tr);
    free(te);
    bbvfl_dataset_free(&ds);
  }
  return o;
}

/* A full session file (bbvfl deploy's) may declare row mode: reported beside the chain's figures,
   labelled as declared (a file with only the location declares nothing). Returns 1 when *declared
   holds the file's session (then o borrows from it), else 0. */
static int use_declared(const char *session, bbvfl_session *declared, bbvfl_audit_opts *o) {
  const int have_declared = session && bbvfl_session_load(session, declared, NULL) == 0;
  if (have_declared && declared->train.rowdp.on) o->declared_rowdp = &declared->train.rowdp;
  if (have_declared) { /* label DP and reproducible noise, as the file declares them */
    o->declared_label_eps = declared->train.label_eps;
    o->declared_reproducible = declared->train.seeded_noise;
    /* the check `head` replays the active client from the session's public training setup */
    o->head_train = &declared->train;
    o->head_nclasses = declared->n_classes;
  }
  return have_declared;
}

/* --recover-labels: the callback, and (with the declared training row count) one label slot per
   training row, -1 until read. */
static int labels_setup(const bbvfl_session *declared, int have_declared, bbvfl_audit_opts *o, labels_ctx *lctx,
                        bbvfl_err *err) {
  o->on_labels = on_labels;
  o->labels_ctx = lctx;
  if (have_declared && declared->cparams.train_rows > 0) {
    lctx->n_train = declared->cparams.train_rows;
    lctx->read = malloc(lctx->n_train * sizeof *lctx->read);
    if (!lctx->read) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    for (size_t i = 0; i < lctx->n_train; i++) lctx->read[i] = -1;
  }
  return 0;
}

/* --session without --rpc: when the run's node is gone but the run folder kept its chain
   (RUN/devnet/state.json, a persistent devnet), resume it for the audit (o->rpc_url its URL) and
   leave its folder in devdir for the caller to stop after; devdir "" when nothing was resumed. */
static int resume_devnet(const char *session, const char *surl, int quiet, char *devdir, size_t cap,
                         bbvfl_devnet *dn, bbvfl_audit_opts *o, bbvfl_err *err) {
  unsigned long long cid = 0;
  const char *slash = strrchr(session, '/');
  int dl = slash ? (int)(slash - session) : 1;
  char state[1200];
  snprintf(devdir, cap, "%.*s/devnet", dl, slash ? session : ".");
  snprintf(state, sizeof state, "%s/state.json", devdir);
  if (bbvfl_devnet_ping(surl, 2, &cid, NULL) < 0 && access(state, R_OK) == 0) {
    bbvfl_devnet_opts dopt = {.dir = devdir, .persist = 1};
    if (!quiet) fprintf(stderr, "audit: %s does not answer; resuming the run's devnet from %s\n", surl, devdir);
    if (bbvfl_devnet_up(&dopt, dn, err) < 0) return bbvfl_wrap(err, "resuming the run's devnet");
    o->rpc_url = dn->rpc_url;
  } else {
    devdir[0] = 0;
  }
  return 0;
}

/* The report on stdout: the JSON object (with the recovered labels' check rr, nullable) or the
   text, with the auditor's own peak memory. */
static void print_report(const bbvfl_audit_result *res, int as_json, const char *html, json_t *rr) {
  /* the auditor's own peak memory (resident set, kB), so the figure is measured, not quoted */
  struct rusage ru;
  long peak_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
  if (as_json) {
    json_t *j = bbvfl_audit_json(res);
    if (j && peak_kb >= 0) json_object_set_new(j, "peak_rss_kb", json_integer(peak_kb));
    if (j && rr) json_object_set(j, "recovered_labels", rr);
    char *s = j ? json_dumps(j, JSON_INDENT(1)) : NULL;
    if (s) printf("%s\n", s);
    free(s);
    json_decref(j);
  } else {
    bbvfl_audit_print_text(stdout, res);
    if (html) printf("HTML report: %s\n", html);
    if (peak_kb >= 0) printf("auditor peak memory: %.1f MB (resident)\n", peak_kb / 1024.0);
  }
}

int cmd_audit(int argc, char **argv) {
  const char *rpc = NULL, *contract = NULL, *html = NULL, *session = NULL;
  unsigned long long from_block = 0, to_block = 0, train_rows = 0, window = 0;
  const char *labels_path = NULL;
  int as_json = 0, quiet = 0;
  double delta = 1e-5;
  const cli_opt opts[] = {
      {"rpc", OPT_STR, &rpc, "URL", "JSON-RPC endpoint of the chain"},
      {"contract", OPT_STR, &contract, "ADDR", "address of the BbvflAggregator to audit"},
      {"from-block", OPT_U64, &from_block, "N", "first block to read, at or before the deployment (default 0)"},
      {"to-block", OPT_U64, &to_block, "N", "last block to read (default: the latest)"},
      {"session", OPT_STR, &session, "FILE", "take rpc_url, contract and deploy block from a session file"},
      {"train-rows", OPT_U64, &train_rows, "N",
       "expected training row count: cross-checked against the one params() records (the schedule\n"
       "is always re-derived from the chain's)"},
      {"delta", OPT_DBL, &delta, "D", "delta of the reported (epsilon, delta) (default 1e-5)"},
      {"window", OPT_U64, &window, "N", "initial eth_getLogs window in blocks (default 500, adapts)"},
      {"json", OPT_FLAG, &as_json, NULL, "print the report as one JSON object"},
      {"html", OPT_STR, &html, "FILE", "also write a self-contained HTML report with charts"},
      {"quiet", OPT_FLAG, &quiet, NULL, "no progress on stderr"},
      {"recover-labels", OPT_STR, &labels_path, "FILE",
       "write the training labels read back from the posted gradients (CSV: round, epoch, batch,\n"
       "position, train_row, label): what any chain reader learns about the labels"},
  };
  cli_spec spec = {"bbvfl audit", "verify a session's whole on-chain history from the chain alone", "[OPTIONS]",
                   "Reads every event of the aggregator and its token, the signed transactions of the\n"
                   "submissions (signer recovered from the signature, bytes from calldata), receipts and\n"
                   "block headers, and checks registration, election and re-elections, every submission,\n"
                   "every sum (per round: windows of K minibatches, evaluation rounds, pipelined rounds\n"
                   "of the hashed mode), the minibatch schedule, gradients, metrics, rewards and token\n"
                   "transfers against the contract's rules, and rebuilds the token's ledger from every\n"
                   "Transfer: each account's balanceOf and the totalSupply must equal it (check `balances`).\n"
                   "Verdict (first line; JSON \"verdict\"): PASS the session finished and every check holds;\n"
                   "FAIL a check found a discrepancy (whether or not the session finished); INCOMPLETE no\n"
                   "check failed but the session has not finished (rounds not done, SessionEnded absent,\n"
                   "epochs without metrics or payout: JSON \"missing\" lists them).\n"
                   "Exit status: 0 PASS, 3 FAIL, 8 INCOMPLETE; other codes: the audit could not run (see\n"
                   "bbvfl --help).",
                   opts, sizeof opts / sizeof opts[0]};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  bbvfl_err err = {0};

  bbvfl_session_loc loc;
  char *surl = loc.rpc_url, devdir[1100] = "";
  bbvfl_devnet dn;
  if (session) {
    if (bbvfl_session_locate(session, &loc, &err) < 0)
      return cli_report(&err);
    if (!rpc) rpc = surl;
    if (!contract) contract = loc.contract;
    if (!from_block) from_block = loc.deploy_block;
  }
  if (!rpc || !contract) {
    bbvfl_fail(&err, BBVFL_E_ARG, "say --rpc URL and --contract ADDR (or --session FILE)");
    return cli_report(&err);
  }
  if (!(delta > 0 && delta < 1)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--delta %g: must be in (0, 1)", delta);
    return cli_report(&err);
  }
  if (to_block && to_block < from_block) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--to-block %llu is before --from-block %llu", to_block, from_block);
    return cli_report(&err);
  }
  bbvfl_audit_opts o = {0};
  o.rpc_url = rpc;
  if (bbvfl_addr_parse(contract, o.contract, &err) < 0) {
    bbvfl_wrap(&err, "--contract");
    return cli_report(&err);
  }
  o.from_block = from_block;
  o.to_block = to_block;
  o.window = window;
  o.train_rows = train_rows;
  o.delta = delta;
  static bbvfl_session declared;
  const int have_declared = use_declared(session, &declared, &o);
  labels_ctx lctx = {.read = NULL, .n_train = 0};
  bbvfl_buf_init(&lctx.csv);
  bbvfl_buf *csvp = &lctx.csv;
  if (labels_path && labels_setup(&declared, have_declared, &o, &lctx, &err) != 0) return cli_report(&err);
  progress_ctx pc = {cli_isatty_err(), 0};
  if (!quiet) {
    o.progress = progress;
    o.progress_ctx = &pc;
  }
  if (session && rpc == surl && resume_devnet(session, surl, quiet, devdir, sizeof devdir, &dn, &o, &err) != 0)
    return cli_report(&err);
  bbvfl_audit_result res;
  static const char csv_head[] = "round,epoch,batch,position,train_row,label\n";
  if (labels_path) bbvfl_buf_append(csvp, csv_head, sizeof csv_head - 1); /* allocates: nothing returns before the run */
  int ran = bbvfl_audit_run(&o, &res, &err);
  if (devdir[0]) bbvfl_devnet_down(devdir, 10, NULL);
  if (ran < 0) {
    bbvfl_buf_free(csvp);
    free(lctx.read);
    return cli_report(&err);
  }
  json_t *rr = NULL;
  int code = bbvfl_audit_exit_status(bbvfl_audit_verdict_of(&res));
  if (labels_path) {
    /* written whole (atomically) once the audit ran: never a half-written file */
    int wr = bbvfl_buf_check(csvp, &err) < 0 ? -1 : bbvfl_write_file_atomic(labels_path, csvp->p, csvp->len, 0644, &err);
    bbvfl_buf_free(csvp);
    if (wr < 0) {
      free(lctx.read);
      bbvfl_audit_result_free(&res);
      bbvfl_wrap(&err, "--recover-labels %s", labels_path);
      return cli_report(&err);
    }
    if (!as_json)
      printf("labels read back from the posted gradients: %llu rows (%llu unreadable) -> %s\n",
             (unsigned long long)res.labels_read, (unsigned long long)res.labels_unread, labels_path);
    if (lctx.read) rr = labels_vs_rr(&declared, &lctx, !as_json);
    free(lctx.read);
  }
  if (html && bbvfl_audit_write_html(&res, html, &err) < 0) {
    json_decref(rr);
    bbvfl_audit_result_free(&res);
    bbvfl_wrap(&err, "--html %s", html);
    return cli_report(&err);
  }
  print_report(&res, as_json, html, rr);
  json_decref(rr);
  bbvfl_audit_result_free(&res);
  return code;
}
