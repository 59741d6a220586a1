/* bbvfl audit: verifies a session's whole on-chain history from the chain alone. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "audit/audit.h"
#include "audit/report.h"
#include "cli/args.h"
#include "cli/commands.h"
#include "vfl/session.h"
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
   checked once at the end) and written once when the audit ran */
static void on_labels(void *ctx, uint64_t round, uint64_t epoch, uint64_t batch, const int *labels,
                      const size_t *rows, size_t B) {
  bbvfl_buf *csv = ctx;
  for (size_t i = 0; i < B; i++) {
    char row[32] = "", line[160];
    if (rows) snprintf(row, sizeof row, "%zu", rows[i]);
    int n = snprintf(line, sizeof line, "%llu,%llu,%llu,%zu,%s,%d\n", (unsigned long long)round,
                     (unsigned long long)epoch, (unsigned long long)batch, i, row, labels[i]);
    bbvfl_buf_append(csv, line, (size_t)n);
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
  /* a full session file (bbvfl deploy's) may declare row mode: reported beside the chain's figures,
     labelled as declared (a file with only the location declares nothing) */
  static bbvfl_session declared;
  if (session && bbvfl_session_load(session, &declared, NULL) == 0) {
    if (declared.train.rowdp.on) o.declared_rowdp = &declared.train.rowdp;
    /* the check `head` replays the active client from the session's public training setup */
    o.head_train = &declared.train;
    o.head_nclasses = declared.n_classes;
  }
  bbvfl_buf csv;
  bbvfl_buf_init(&csv);
  if (labels_path) {
    o.on_labels = on_labels;
    o.labels_ctx = &csv;
  }
  progress_ctx pc = {cli_isatty_err(), 0};
  if (!quiet) {
    o.progress = progress;
    o.progress_ctx = &pc;
  }
  /* --session without --rpc: when the run's node is gone but the run folder kept its chain
     (RUN/devnet/state.json, a persistent devnet), resume it for the audit and stop it after */
  if (session && rpc == surl) {
    unsigned long long cid = 0;
    const char *slash = strrchr(session, '/');
    int dl = slash ? (int)(slash - session) : 1;
    char state[1200];
    snprintf(devdir, sizeof devdir, "%.*s/devnet", dl, slash ? session : ".");
    snprintf(state, sizeof state, "%s/state.json", devdir);
    if (bbvfl_devnet_ping(surl, 2, &cid, NULL) < 0 && access(state, R_OK) == 0) {
      bbvfl_devnet_opts dopt = {.dir = devdir, .persist = 1};
      if (!quiet) fprintf(stderr, "audit: %s does not answer; resuming the run's devnet from %s\n", surl, devdir);
      if (bbvfl_devnet_up(&dopt, &dn, &err) < 0) {
        bbvfl_wrap(&err, "resuming the run's devnet");
        return cli_report(&err);
      }
      o.rpc_url = dn.rpc_url;
    } else {
      devdir[0] = 0;
    }
  }
  bbvfl_audit_result res;
  static const char csv_head[] = "round,epoch,batch,position,train_row,label\n";
  if (labels_path) bbvfl_buf_append(&csv, csv_head, sizeof csv_head - 1); /* allocates: nothing returns before the run */
  int ran = bbvfl_audit_run(&o, &res, &err);
  if (devdir[0]) bbvfl_devnet_down(devdir, 10, NULL);
  if (ran < 0) {
    bbvfl_buf_free(&csv);
    return cli_report(&err);
  }
  int code = bbvfl_audit_exit_status(bbvfl_audit_verdict_of(&res));
  if (labels_path) {
    /* written whole (atomically) once the audit ran: never a half-written file */
    int wr = bbvfl_buf_check(&csv, &err) < 0 ? -1 : bbvfl_write_file_atomic(labels_path, csv.p, csv.len, 0644, &err);
    bbvfl_buf_free(&csv);
    if (wr < 0) {
      bbvfl_audit_result_free(&res);
      bbvfl_wrap(&err, "--recover-labels %s", labels_path);
      return cli_report(&err);
    }
    if (!as_json)
      printf("labels read back from the posted gradients: %llu rows (%llu unreadable) -> %s\n",
             (unsigned long long)res.labels_read, (unsigned long long)res.labels_unread, labels_path);
  }
  if (html && bbvfl_audit_write_html(&res, html, &err) < 0) {
    bbvfl_audit_result_free(&res);
    bbvfl_wrap(&err, "--html %s", html);
    return cli_report(&err);
  }
  /* the auditor's own peak memory (resident set, kB), so the figure is measured, not quoted */
  struct rusage ru;
  long peak_kb = getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
  if (as_json) {
    json_t *j = bbvfl_audit_json(&res);
    if (j && peak_kb >= 0) json_object_set_new(j, "peak_rss_kb", json_integer(peak_kb));
    char *s = j ? json_dumps(j, JSON_INDENT(1)) : NULL;
    if (s) printf("%s\n", s);
    free(s);
    json_decref(j);
  } else {
    bbvfl_audit_print_text(stdout, &res);
    if (html) printf("HTML report: %s\n", html);
    if (peak_kb >= 0) printf("auditor peak memory: %.1f MB (resident)\n", peak_kb / 1024.0);
  }
  bbvfl_audit_result_free(&res);
  return code;
}
