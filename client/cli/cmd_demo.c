/* bbvfl demo: the whole on-chain session on one machine, one process per organisation: the flags
 * and the printing over run/local.h (the library starts the devnet, deploys, runs the clients and
 * writes the report). */
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/onchain_common.h"
#include "common/fsutil.h"
#include "eth/u256.h"
#include "eth/wallet.h"
#include "run/local.h"
#include "audit/audit.h"
#include "audit/report.h"
#include "devnet/devnet.h"

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig > 0; }

static double jnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : 0;
}

static void fmt_eta(double s, char *out, size_t n) {
  if (!(s >= 0) || s > 1e6) snprintf(out, n, "--");
  else if (s < 60) snprintf(out, n, "%.0fs", s);
  else snprintf(out, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
}

typedef struct {
  int tty, quiet;
  double block_time, max_fee_gwei;
  int last_epoch_printed;
} view;

/* The progress lines on stderr: the node, the deployment, failures, the base fee, and each tick
   (a live line on a terminal, one line per epoch otherwise). */
static void on_tick(view *v, const bbvfl_local_event *ev) {
  char eta[32];
  fmt_eta(ev->eta_s, eta, sizeof eta);
  if (v->tty) {
    fprintf(stderr, "\rround %" PRIu64 "/%" PRIu64 "  epoch %" PRIu64 "/%u  loss %.4f  AUROC %.4f  gas %.1fM  ETA %s   ",
            ev->round, ev->total, ev->epoch, ev->s->cparams.epochs, ev->loss, ev->auroc, ev->gas / 1e6, eta);
    if (v->max_fee_gwei > 0)
      fprintf(stderr, "base fee %.3f gwei%s   ", ev->base_fee_gwei, ev->fee_above ? " (above the cap: waiting)" : "");
    fflush(stderr);
  } else if (!v->quiet && ev->epochs_done > v->last_epoch_printed) {
    v->last_epoch_printed = ev->epochs_done;
    fprintf(stderr, "epoch %d/%u  test loss %.4f  AUROC %.4f  round %" PRIu64 "/%" PRIu64 "  %.1fs  ETA %s\n",
            ev->epochs_done, ev->s->cparams.epochs, ev->loss, ev->auroc, ev->round, ev->total, ev->elapsed_s, eta);
  }
}

static int on_event(void *ctx, const bbvfl_local_event *ev) {
  view *v = ctx;
  const bbvfl_session *s = ev->s;
  switch (ev->kind) {
  case BBVFL_LOCAL_EV_NODE:
    if (!v->quiet) fprintf(stderr, "node %s%s; run folder %s\n", ev->rpc_url, ev->devnet_started ? " (started here)" : "", ev->run_dir);
    break;
  case BBVFL_LOCAL_EV_DEPLOYED: {
    char caddr[43], taddr[43];
    bbvfl_addr_checksum(s->contract, caddr);
    bbvfl_addr_checksum(s->token, taddr);
    if (!v->quiet)
      fprintf(stderr,
              "aggregator %s, token %s; M=%d B=%u P=%u b=%u beta=%g, %u epochs of %u+%u rounds (window %u, staleness "
              "%u, %s aggregation)\n",
              caddr, taddr, s->train.M, s->cparams.batch, s->cparams.dim, s->cparams.levels, s->train.mech.beta,
              s->cparams.epochs, s->cparams.train_rounds, s->cparams.eval_rounds, s->cparams.window,
              s->cparams.staleness, bbvfl_session_aggregation_name(s->cparams.wire));
    if (!v->quiet && v->block_time > 0) fprintf(stderr, "devnet mines a block every %g s\n", v->block_time);
    break;
  }
  case BBVFL_LOCAL_EV_CLIENT_FAILED:
    if (!v->quiet)
      fprintf(stderr, "\nclient %d failed (exit %d): see %s/clients/%d/client.log\n", ev->client, ev->status,
              ev->run_dir, ev->client);
    break;
  case BBVFL_LOCAL_EV_STOPPING:
    if (!v->quiet) fprintf(stderr, "\n%s: stopping the clients\n", ev->interrupted ? "interrupted" : "a client failed");
    break;
  case BBVFL_LOCAL_EV_FEE: /* said even with --json: the clients are held up */
    fprintf(stderr, "%sbase fee %.3f gwei %s --max-fee-gwei %g%s\n", v->tty ? "\n" : "", ev->base_fee_gwei,
            ev->fee_above ? "is above" : "is back within", v->max_fee_gwei,
            ev->fee_above ? ": the clients wait for it to fall" : ": the clients go on");
    break;
  case BBVFL_LOCAL_EV_TICK:
    on_tick(v, ev);
    break;
  }
  return 0;
}

/* The summary block on stdout. */
static void print_summary(const bbvfl_local_result *r, int compare) {
  const json_t *rep = r->report;
  const bbvfl_privacy *pv = &r->privacy;
  const char *aggname = json_string_value(json_object_get(rep, "aggregation"));
  int hashed = strcmp(aggname, "lane") != 0; /* hashed, packed, optimistic: an aggregate()/postSum() per round */
  printf("\nsummary (%s)\n", json_string_value(json_object_get(rep, "run_dir")));
  printf("  test AUROC            %.4f", r->auroc);
  if (compare) printf("   (off-chain, same seed: %.4f)", r->auroc_offchain);
  printf("\n");
  /* privacy: the per-person headline (one number, or unbounded), then features only and per party;
     every level, the scope and the methods are in report.json's "privacy" */
  if (!r->have_privacy) {
    printf("  privacy               not computed: %s\n", r->privacy_err.msg);
  } else if (pv->reproducible || !pv->finite) {
    char pline[1024];
    bbvfl_privacy_line(pv, pline, sizeof pline);
    printf("  privacy               %s\n", pline);
  } else {
    if (isfinite(pv->person.epsilon))
      printf("  privacy               per person %.4g (%s, delta %g: every party's columns and the label)", pv->person.epsilon,
             pv->person.method, pv->delta);
    else
      printf("  privacy               per person unbounded (labels unprotected: the posted gradients give them back; "
             "--label-epsilon E protects them)");
    printf("; features only %.4g (%s), per party %.4g (%s); %s (docs/PRIVACY.md; every level in report.json)\n",
           pv->row_sample.epsilon, pv->row_sample.method, pv->row_feature.epsilon, pv->row_feature.method,
           pv->end_to_end ? "end-to-end (row mode)" : "not end-to-end");
  }
  printf("  aggregation / epoch   on-chain %.4f s (median of %zu epochs), off-chain %.2e s", r->onchain_agg_s,
         r->epochs_measured, r->offchain_agg_s);
  if (r->offchain_agg_s > 0 && r->onchain_agg_s > 0) printf(": on chain %.3gx the off-chain time", r->onchain_agg_s / r->offchain_agg_s);
  printf("\n");
  printf("  gas                   %.1f per coordinate summed (%s aggregation); %.0f per training window "
         "(window %d, gradient post included)\n",
         r->gas_per_coordinate, aggname, r->gas_per_window, (int)jnum(rep, "window"));
  printf("  rounds                %" PRIu64 " (%" PRIu64 " curvature), %.0f gas per round (submissions%s), %.1f "
         "blocks per epoch\n",
         r->rounds, r->curvature_rounds, r->gas_per_round, hashed ? " and aggregate()" : "", r->blocks_per_epoch);
  printf("  wall                  %.1f s (training %.1f s)\n", r->wall_s, r->training_s);
  const json_t *fe = json_object_get(rep, "fees");
  printf("  fees                  %.6g ETH for %" PRIu64 " gas (the clients' receipts; per client in report.json)\n",
         jnum(fe, "eth_paid"), (uint64_t)jnum(fe, "gas_used"));
  printf("  rewards (tokens)      by client index; * marks the active client at the end\n");
  const json_t *cs = json_object_get(rep, "client_summaries"), *rw = json_object_get(rep, "rewards");
  for (size_t want = 0; want < json_array_size(cs); want++)
    for (size_t i = 0; i < json_array_size(cs); i++) {
      const json_t *c = json_array_get(cs, i);
      const char *addr = json_string_value(json_object_get(c, "address"));
      if ((size_t)json_integer_value(json_object_get(c, "index")) != want || !addr) continue;
      bbvfl_u256 x, q;
      uint64_t tok = 0;
      const char *bal = json_string_value(json_object_get(rw, addr));
      if (bal && bbvfl_u256_from_string(bal, &x, NULL) == 0) {
        bbvfl_u256_divmod_u64(&q, &x, 1000000000000000000ULL);
        bbvfl_u256_to_u64(&q, &tok);
      }
      printf("    client %zu  %s  %" PRIu64 "%s\n", want, addr, tok, json_is_true(json_object_get(c, "active")) ? " *" : "");
    }
}

typedef struct {
  session_flags f;
  const char *rpc_url, *funder, *out, *partition;
  int as_json, compare, full_history, masked, confirmations, no_audit, keep_chain;
  uint64_t timeout_blocks;
  double round_timeout, block_time, active_timeout, max_fee_gwei;
  bbvfl_key_source ksrc;
} demo_flags;

static size_t demo_opts(demo_flags *d, cli_opt *opts) {
  size_t no = session_flags_opts(&d->f, opts);
  opts[no++] = (cli_opt){"partition", OPT_STR, &d->partition, "SPEC", "columns per client, e.g. 0-5/6-11/... (default: even split)"};
  opts[no++] = (cli_opt){"rpc", OPT_STR, &d->rpc_url, "URL", "use this node instead of starting a devnet"};
  opts[no++] = (cli_opt){"funder-key", OPT_STR, &d->funder, "FILE", "key that deploys and funds the clients (default on a devnet: anvil's dev account 0)"};
  no += keystore_opts(&d->ksrc, opts + no);
  opts[no++] = (cli_opt){"out", OPT_STR, &d->out, "DIR", "run folder (default runs/demo-<UTC time>)"};
  opts[no++] = (cli_opt){"compare", OPT_FLAG, &d->compare, NULL, "also report the off-chain AUROC with the same seed and session seed (implies --reproducible-noise: the "
                         "two runs are equal only when the noise comes from the seed, so no epsilon holds)"};
  opts[no++] = (cli_opt){"round-timeout", OPT_DBL, &d->round_timeout, "S", "a client gives up when a round takes longer (default 60)"};
  opts[no++] = (cli_opt){"block-time", OPT_DBL, &d->block_time, "S",
                         "embedded devnet: mine a block every S seconds, as a real chain does (default 0: a block per "
                         "transaction); then, unless given, --window is the largest that fits the chain (up to a whole epoch),\n"
                         "--aggregation hashed and --staleness 1: one block per window"};
  opts[no++] = (cli_opt){"full-history", OPT_FLAG, &d->full_history, NULL, "embedded devnet: keep every old state (slower; only eth_call on old blocks needs it)"};
  opts[no++] = (cli_opt){"masked", OPT_FLAG, &d->masked, NULL, "masked mode: pairwise masks hide each client's submission (docs/MASKED.md)"};
  opts[no++] = (cli_opt){"round-timeout-blocks", OPT_U64, &d->timeout_blocks, "N",
                         "blocks after which a stalled round may be expired (default 64 + 4M)"};
  opts[no++] = (cli_opt){"active-timeout", OPT_DBL, &d->active_timeout, "SECONDS",
                         "seconds the active client has before anyone may call reelect(), turned into blocks from "
                         "the chain's block time (default 600; blocks made per transaction: 100000 blocks)"};
  opts[no++] = (cli_opt){"max-fee-gwei", OPT_DBL, &d->max_fee_gwei, "X",
                         "clients sign a max fee per gas of at most X gwei; while the base fee is above it they send "
                         "nothing and wait (the progress line shows the base fee) (default: no cap)"};
  opts[no++] = (cli_opt){"confirmations", OPT_INT, &d->confirmations, "N",
                         "payouts (payRewards) wait N blocks on top of their receipt's block, re-checked (default 0)"};
  opts[no++] = (cli_opt){"no-audit", OPT_FLAG, &d->no_audit, NULL,
                         "skip the audit of the run (default: audited before the chain stops, RUN/audit.json and "
                         "RUN/audit.html)"};
  opts[no++] = (cli_opt){"keep-chain", OPT_FLAG, &d->keep_chain, NULL,
                         "embedded devnet: leave it running after the run (the summary says how to stop it)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &d->as_json, NULL, "print one JSON object as the last line"};
  return no;
}

/* The flags' values checked; on a chain with a block time the defaults that suit it. */
static int demo_check(demo_flags *d, int argc, char **argv, bbvfl_err *err) {
  if (!(d->round_timeout > 0)) return bbvfl_fail(err, BBVFL_E_ARG, "--round-timeout must be > 0");
  if (!(d->active_timeout >= 0 && d->active_timeout <= 1e8))
    return bbvfl_fail(err, BBVFL_E_ARG, "--active-timeout must be in 0..1e8 seconds");
  if (!(d->max_fee_gwei >= 0 && d->max_fee_gwei <= 1e9))
    return bbvfl_fail(err, BBVFL_E_ARG, "--max-fee-gwei must be a fee in gwei, 0 (no cap) up to 1e9, got %g", d->max_fee_gwei);
  if (d->confirmations < 0 || d->confirmations > 1000)
    return bbvfl_fail(err, BBVFL_E_ARG, "--confirmations must be 0..1000 blocks, got %d", d->confirmations);
  if (!(d->block_time >= 0 && d->block_time <= 3600))
    return bbvfl_fail(err, BBVFL_E_ARG, "--block-time must be in 0..3600 seconds, got %g", d->block_time);
  /* On a chain with a block time the round structure is what costs: unless told otherwise, the
     largest window that fits the chain (up to a whole epoch: binding/fit.h), hashed aggregation and
     staleness 1 (window w+1's submissions ride in the block that aggregates window w and posts its
     gradient; evaluation rides along): one block per window (docs/ONCHAIN.md; AUROC within 0.005
     of staleness 0 over 5 seeds, README "A chain with a block time"). */
  session_flags *f = &d->f;
  if (d->block_time > 0) {
    int given_window = 0, given_agg = 0, given_stale = 0;
    for (int i = 0; i < argc; i++) {
      given_window |= !strcmp(argv[i], "--window") || !strncmp(argv[i], "--window=", 9);
      given_agg |= !strcmp(argv[i], "--aggregation") || !strncmp(argv[i], "--aggregation=", 14);
      given_stale |= !strcmp(argv[i], "--staleness") || !strncmp(argv[i], "--staleness=", 12);
    }
    if (!given_window) f->tc.window = INT_MAX; /* lowered to what fits, at most the batches of an epoch */
    /* (LR's sqn: lane mode, its curvature rounds are in the lane contract's layout only) */
    if (!given_agg && !(f->tc.optimizer && !strcmp(f->tc.optimizer, "sqn"))) f->aggregation = "hashed";
    /* pipelining needs hashed aggregation; LR trains with staleness 0 */
    if (!given_stale && !strcmp(f->aggregation, "hashed") && !(f->tc.model && !strcmp(f->tc.model, "lr"))) f->tc.staleness = 1;
  }
  if (d->block_time > 0 && d->rpc_url)
    return bbvfl_fail(err, BBVFL_E_ARG, "--block-time sets up the embedded devnet; with --rpc the node's own block time applies");
  /* --seed fixes the split, schedule and initialisation only; the clients' noise is private (each
     one's own key) unless --reproducible-noise, which --compare needs for on-chain = off-chain */
  if (d->compare && !f->tc.reproducible_noise) {
    f->tc.reproducible_noise = 1;
    train_noise_warning(1, "--compare implies --reproducible-noise (the off-chain replay equals the on-chain run "
                           "only with the same noise)");
  } else {
    train_noise_warning(f->tc.reproducible_noise, "--reproducible-noise");
  }
  return 0;
}

/* The run folder's name and the folder itself (tracked: removed again when nothing was deployed). */
static int demo_run_dir(const demo_flags *d, char *run, size_t n, cli_made_dirs *made, bbvfl_err *err) {
  char path[1300], ts[32];
  bbvfl_utc_stamp(ts, sizeof ts);
  snprintf(run, n, d->out ? "%s" : "runs/demo-%s", d->out ? d->out : ts);
  snprintf(path, sizeof path, "%s/keys", run);
  return cli_mkdirs_tracked(path, made, err);
}

/* The run's audit (audit/audit.h), on the chain it ran on, before that chain stops: RUN/audit.json
   and RUN/audit.html written whole, the verdict into report.json's "audit" (written again) and
   into *verdict. -1 only when the audit could not run or its files not be written. */
typedef struct {
  int ran;
  bbvfl_audit_verdict verdict;
  int checks, failed;
  char first[300];
  double seconds;
} demo_audit;

static int run_audit(const bbvfl_session *s, const char *run, bbvfl_local_result *res, demo_audit *da, bbvfl_err *err) {
  memset(da, 0, sizeof *da);
  double t0 = bbvfl_now();
  bbvfl_audit_opts o;
  bbvfl_audit_opts_for_session(s, res->rpc_url, &o);
  bbvfl_audit_result ar;
  if (bbvfl_audit_run(&o, &ar, err) < 0) return bbvfl_wrap(err, "auditing the run");
  da->ran = 1;
  da->verdict = bbvfl_audit_verdict_of(&ar);
  bbvfl_audit_count(&ar, &da->checks, &da->failed, da->first, sizeof da->first);
  char path[1300];
  json_t *j = bbvfl_audit_json(&ar);
  char *text = j ? json_dumps(j, JSON_INDENT(2)) : NULL;
  json_decref(j);
  snprintf(path, sizeof path, "%s/audit.json", run);
  int rc = text ? bbvfl_write_file_atomic(path, text, strlen(text), 0644, err) : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  free(text);
  snprintf(path, sizeof path, "%s/audit.html", run);
  if (rc == 0) rc = bbvfl_audit_write_html(&ar, path, err);
  bbvfl_audit_result_free(&ar);
  da->seconds = bbvfl_now() - t0;
  if (rc < 0) return bbvfl_wrap(err, "writing the audit");
  json_t *a = json_pack("{s:s, s:i, s:i, s:s, s:s, s:f}", "verdict", bbvfl_audit_verdict_name(da->verdict), "checks",
                        da->checks, "failed", da->failed, "json", "audit.json", "html", "audit.html", "seconds",
                        da->seconds);
  if (a && da->first[0]) json_object_set_new(a, "first_failure", json_string(da->first));
  if (a) json_object_set_new(res->report, "audit", a);
  char *rep = json_dumps(res->report, JSON_INDENT(2));
  snprintf(path, sizeof path, "%s/report.json", run);
  rc = rep ? bbvfl_write_file_atomic(path, rep, strlen(rep), 0644, err) : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  free(rep);
  return rc;
}

/* The summary's last lines: the audit's verdict and what to do next. */
static void print_next(const char *run, const demo_audit *da, const bbvfl_local_result *res) {
  if (da->ran)
    printf("  audit                 %s (%d checks, %.1f s): %s/audit.html, %s/audit.json%s%s\n",
           bbvfl_audit_verdict_name(da->verdict), da->checks, da->seconds, run, run, da->first[0] ? "; first failure: " : "",
           da->first);
  printf("\nnext\n");
  if (da->ran) printf("  open %s/audit.html    (the audit: every check with its figures)\n", run);
  printf("  bbvfl audit --session %s/session.json    (audit again%s)\n", run,
         res->devnet_kept ? "" : ", from the chain kept in the run folder");
  if (res->devnet_kept)
    printf("  bbvfl devnet down --dir %s/devnet    (the devnet is still running at %s: --keep-chain)\n", run,
           res->rpc_url);
  printf("  bbvfl demo --help    (other settings: --aggregation, --masked, --label-epsilon, ...)\n");
}

/* Sets the session up, runs it through the library and prints what it returns. */
static int demo_run(demo_flags *d, double t_start, bbvfl_err *err) {
  bbvfl_session s;
  bbvfl_local_setup_defaults(&s);
  bbvfl_dataset ds;
  s.cparams.masked = d->masked;
  if (session_flags_apply(&d->f, &s, &ds, err) < 0) return -1;
  s.cparams.round_timeout_blocks = d->timeout_blocks; /* 0: the library's 64 + 4M */
  s.active_timeout_s = d->active_timeout;
  /* created before anything touches the chain (an unwritable run folder must not cost a deploy) */
  char run[1024];
  cli_made_dirs made;
  if (demo_run_dir(d, run, sizeof run, &made, err) < 0) {
    bbvfl_dataset_free(&ds);
    return -1;
  }
  struct sigaction sa = {.sa_handler = on_signal};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  d->ksrc.key_file = d->funder;
  view v = {.tty = cli_isatty_err() && !d->as_json, .quiet = d->as_json, .block_time = d->block_time,
            .max_fee_gwei = d->max_fee_gwei};
  const char *dump = getenv("BBVFL_TEST_DUMP_Q"); /* test hook: the clients' plaintext q per round */
  bbvfl_local_opts lo = {.s = &s, .ds = &ds, .partition = d->partition, .run_dir = run, .rpc_url = d->rpc_url,
                         .funder = &d->ksrc, .funder_flag = d->ksrc.keystore ? "--keystore" : "--funder-key",
                         .block_time = d->block_time, .full_history = d->full_history,
                         .round_timeout_s = d->round_timeout, .max_fee_gwei = d->max_fee_gwei,
                         .confirmations = d->confirmations, .seeded = d->f.seed != NULL || d->compare,
                         .compare = d->compare, .delta = d->f.tc.delta, .dump_q_dir = dump && *dump ? dump : NULL,
                         .t_start = t_start, .progress_every_s = v.tty ? 0.25 : 1.0, .live_gas = v.tty,
                         .keep_chain = d->keep_chain || !d->no_audit, /* up for the audit, stopped after */
                         .stop = &g_stop, .progress = on_event, .progress_ctx = &v};
  bbvfl_local_result res = {0};
  int rc = lo.dump_q_dir ? bbvfl_mkdirs(lo.dump_q_dir, 0700, err) : 0;
  if (rc == 0) rc = bbvfl_local_run(&lo, &res, err);
  if (v.tty && rc == 0) fprintf(stderr, "\r%*s\r", 100, "");
  demo_audit da = {0};
  if (rc == 0 && !d->no_audit) rc = run_audit(&s, run, &res, &da, err);
  if (res.devnet_kept && !d->keep_chain) { /* kept for the audit only */
    char devdir[1100];
    snprintf(devdir, sizeof devdir, "%s/devnet", run);
    bbvfl_devnet_down(devdir, 10, NULL);
    res.devnet_kept = 0;
  }
  if (rc == 0 && !d->as_json) {
    print_summary(&res, d->compare);
    print_next(run, &da, &res);
  }
  if (rc == 0 && d->as_json) cli_print_json(json_incref(res.report), 0);
  if (rc == 0 && da.ran && da.verdict != BBVFL_AV_PASS)
    rc = bbvfl_fail(err, BBVFL_E_VERIFY, "the audit of this run says %s: %s (%s/audit.html)",
                    bbvfl_audit_verdict_name(da.verdict), da.first[0] ? da.first : "the session is not complete", run);
  if (rc < 0 && !res.deployed && !res.devnet_started) cli_undo_dirs(&made);
  bbvfl_local_result_free(&res);
  bbvfl_dataset_free(&ds);
  return rc;
}

int cmd_demo(int argc, char **argv) {
  double t_start = bbvfl_now();
  demo_flags d = {.round_timeout = 60};
  session_flags_defaults(&d.f);
  cli_opt opts[TRAIN_COMMON_NOPTS + SESSION_FLAGS_NOPTS + KEYSTORE_NOPTS + 16];
  size_t no = demo_opts(&d, opts);
  cli_spec spec = {"bbvfl demo", "on-chain DP-BBVFL end to end on this machine", "[OPTIONS]",
                   "Starts a devnet (unless --rpc), deploys token and aggregator, creates and funds M\n"
                   "throwaway keys, spawns M `bbvfl client` processes on the bundled Breast Cancer data\n"
                   "split by columns, shows progress, and writes a run folder: session.json, report.json,\n"
                   "metrics.csv, keys/ (devnet-only throwaway keys, 0600), clients/<m>/client.log, and the run's\n"
                   "audit, made before the chain stops: audit.json and audit.html (--no-audit skips it; a run that\n"
                   "does not audit PASS exits 3). --keep-chain leaves the devnet running. Ctrl-C stops every\n"
                   "process it started.",
                   opts, no};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  session_flags_given(&d.f, argc, argv);
  bbvfl_err err = {0};
  if (demo_check(&d, argc, argv, &err) < 0 || demo_run(&d, t_start, &err) < 0) {
    if (!err.code) bbvfl_fail(&err, BBVFL_E_STATE, "demo failed");
    return cli_report(&err);
  }
  return 0;
}
