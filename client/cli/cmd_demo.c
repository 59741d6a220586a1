/* bbvfl demo: the whole on-chain session on one machine, one process per organisation. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/onchain_common.h"
#include "common/fsutil.h"
#include "devnet/devnet.h"
#include "eth/hex.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "ml/metrics.h"
#include "vfl/cfgprivacy.h"
#include "vfl/contract.h"
#include "vfl/lr_train.h"
#include "vfl/offchain.h"
#include "vfl/session.h"

#define MAX_CLIENTS 64

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

typedef struct {
  pid_t pid;
  int done, status;
  char dir[1200];
  char key[1200];
  uint8_t addr[20];
} child;


/* Spawns `bbvfl client ...` with stdout/stderr into dir/client.log. Only paths are on argv. */
static pid_t spawn_client(char *const args[], const char *log_path) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  execv("/proc/self/exe", args);
  fprintf(stderr, "bbvfl demo: cannot start the client: %s\n", strerror(errno));
  _exit(127);
}

static void stop_children(child *ch, int n) {
  for (int i = 0; i < n; i++)
    if (ch[i].pid > 0 && !ch[i].done) kill(ch[i].pid, SIGTERM);
  double t0 = bbvfl_now();
  for (;;) {
    int left = 0;
    for (int i = 0; i < n; i++) {
      if (ch[i].pid <= 0 || ch[i].done) continue;
      int st;
      pid_t p = waitpid(ch[i].pid, &st, WNOHANG);
      if (p == ch[i].pid) {
        ch[i].done = 1;
        ch[i].status = -1;
      } else {
        left++;
      }
    }
    if (!left) return;
    if (bbvfl_now() - t0 > 5) {
      for (int i = 0; i < n; i++)
        if (ch[i].pid > 0 && !ch[i].done) kill(ch[i].pid, SIGKILL);
    }
    bbvfl_sleep(0.02);
  }
}

static json_t *load_json(const char *path) {
  char *text = NULL;
  size_t len = 0;
  if (bbvfl_read_file(path, 1 << 22, &text, &len, NULL) < 0) return NULL;
  json_t *o = json_loadb(text, len, 0, NULL);
  free(text);
  return o;
}

static double jnum(const json_t *o, const char *k) {
  const json_t *v = json_object_get(o, k);
  return json_is_number(v) ? json_number_value(v) : 0;
}

typedef struct {
  bbvfl_rpc *rpc;
  bbvfl_aggc agg;
  uint64_t next_block, gas;
  uint64_t metrics_from;
  double auroc, loss;
  int epochs_done;
} watcher;

/* Gas of the blocks mined since the last call (one batched request for at most 256 blocks). */
static void watch_gas(watcher *w) {
  uint64_t head;
  if (bbvfl_rpc_block_number(w->rpc, &head, NULL) < 0) return;
  while (w->next_block <= head) {
    size_t n = (size_t)(head - w->next_block + 1);
    if (n > 256) n = 256;
    bbvfl_rpc_req reqs[256];
    for (size_t i = 0; i < n; i++) {
      reqs[i].method = "eth_getBlockByNumber";
      reqs[i].params = json_pack("[o, b]", bbvfl_json_quantity(w->next_block + i), 0);
      reqs[i].result = NULL;
      memset(&reqs[i].err, 0, sizeof reqs[i].err);
    }
    if (bbvfl_rpc_batch(w->rpc, reqs, n, NULL) < 0) return;
    for (size_t i = 0; i < n; i++) {
      uint64_t g;
      if (reqs[i].result && bbvfl_rpc_parse_u64(json_object_get(reqs[i].result, "gasUsed"), &g, NULL) == 0)
        w->gas += g;
    }
    bbvfl_rpc_batch_clear(reqs, n);
    w->next_block += n;
  }
}

static void watch_metrics(watcher *w) {
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(&w->agg, BBVFL_EV_METRICS_POSTED, NULL, w->metrics_from, UINT64_MAX, &logs, NULL) < 0) return;
  size_t i;
  json_t *l;
  json_array_foreach(logs, i, l) {
    bbvfl_cev ev;
    if (bbvfl_cev_decode(l, &ev, NULL) == 1) {
      if ((int)ev.epoch + 1 > w->epochs_done) {
        w->epochs_done = (int)ev.epoch + 1;
        w->auroc = ev.auroc_micro / 1e6;
        w->loss = ev.loss_micro / 1e6;
      }
      if (ev.block_number + 1 > w->metrics_from) w->metrics_from = ev.block_number + 1;
      bbvfl_cev_clear(&ev);
    }
  }
  json_decref(logs);
}

/* The block of the first `kind` event (topic1: its first indexed argument, nullable) from block
   `from` on; 0 when there is none or the query fails (a report figure, not a check). */
static uint64_t first_event_block(bbvfl_aggc *a, bbvfl_cev_kind kind, const uint8_t *topic1, uint64_t from) {
  json_t *logs = NULL;
  bbvfl_err e = {0};
  uint64_t blk = 0;
  if (bbvfl_aggc_logs(a, kind, topic1, from, BBVFL_BLOCK_LATEST, &logs, &e) == 0 && json_array_size(logs) > 0) {
    bbvfl_cev ev;
    memset(&ev, 0, sizeof ev);
    if (bbvfl_cev_decode(json_array_get(logs, 0), &ev, &e) == 1) blk = ev.block_number;
    bbvfl_cev_clear(&ev);
  }
  json_decref(logs);
  return blk;
}

static void fmt_eta(double s, char *out, size_t n) {
  if (!(s >= 0) || s > 1e6)
    snprintf(out, n, "--");
  else if (s < 60)
    snprintf(out, n, "%.0fs", s);
  else
    snprintf(out, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
}

int cmd_demo(int argc, char **argv) {
  double t_start = bbvfl_now();
  session_flags f;
  session_flags_defaults(&f);
  const char *rpc_url = NULL, *funder = NULL, *out = NULL, *partition = NULL;
  int as_json = 0, compare = 0, full_history = 0, masked = 0;
  uint64_t timeout_blocks = 0;
  double round_timeout = 60, block_time = 0, active_timeout = 0, max_fee_gwei = 0;
  int confirmations = 0;
  cli_opt opts[TRAIN_COMMON_NOPTS + SESSION_FLAGS_NOPTS + KEYSTORE_NOPTS + 16];
  size_t no = session_flags_opts(&f, opts);
  opts[no++] = (cli_opt){"partition", OPT_STR, &partition, "SPEC", "columns per client, e.g. 0-5/6-11/... (default: even split)"};
  opts[no++] = (cli_opt){"rpc", OPT_STR, &rpc_url, "URL", "use this node instead of starting a devnet"};
  opts[no++] = (cli_opt){"funder-key", OPT_STR, &funder, "FILE", "key that deploys and funds the clients (default on a devnet: anvil's dev account 0)"};
  bbvfl_key_source ksrc = {0};
  no += keystore_opts(&ksrc, opts + no);
  opts[no++] = (cli_opt){"out", OPT_STR, &out, "DIR", "run folder (default runs/demo-<UTC time>)"};
  opts[no++] = (cli_opt){"compare", OPT_FLAG, &compare, NULL, "also report the off-chain AUROC with the same seed and session seed (implies --reproducible-noise: the "
                         "two runs are equal only when the noise comes from the seed, so no epsilon holds)"};
  opts[no++] = (cli_opt){"round-timeout", OPT_DBL, &round_timeout, "S", "a client gives up when a round takes longer (default 60)"};
  opts[no++] = (cli_opt){"block-time", OPT_DBL, &block_time, "S",
                         "embedded devnet: mine a block every S seconds, as a real chain does (default 0: a block per "
                         "transaction); then, unless given, --window is the largest that fits the chain (up to a whole epoch),\n"
                         "--aggregation hashed and --staleness 1: one block per window"};
  opts[no++] = (cli_opt){"full-history", OPT_FLAG, &full_history, NULL, "embedded devnet: keep every old state (slower; only eth_call on old blocks needs it)"};
  opts[no++] = (cli_opt){"masked", OPT_FLAG, &masked, NULL, "masked mode: pairwise masks hide each client's submission (docs/MASKED.md)"};
  opts[no++] = (cli_opt){"round-timeout-blocks", OPT_U64, &timeout_blocks, "N",
                         "blocks after which a stalled round may be expired (default 64 + 4M)"};
  opts[no++] = (cli_opt){"active-timeout", OPT_DBL, &active_timeout, "SECONDS",
                         "seconds the active client has before anyone may call reelect(), turned into blocks from "
                         "the chain's block time (default 600; blocks made per transaction: 100000 blocks)"};
  opts[no++] = (cli_opt){"max-fee-gwei", OPT_DBL, &max_fee_gwei, "X",
                         "clients sign a max fee per gas of at most X gwei; while the base fee is above it they send "
                         "nothing and wait (the progress line shows the base fee) (default: no cap)"};
  opts[no++] = (cli_opt){"confirmations", OPT_INT, &confirmations, "N",
                         "payouts (payRewards) wait N blocks on top of their receipt's block, re-checked (default 0)"};
  opts[no++] = (cli_opt){"json", OPT_FLAG, &as_json, NULL, "print one JSON object as the last line"};
  cli_spec spec = {"bbvfl demo", "on-chain DP-BBVFL end to end on this machine", "[OPTIONS]",
                   "Starts a devnet (unless --rpc), deploys token and aggregator, creates and funds M\n"
                   "throwaway keys, spawns M `bbvfl client` processes on the bundled Breast Cancer data\n"
                   "split by columns, shows progress, and writes a run folder: session.json, report.json,\n"
                   "metrics.csv, keys/ (devnet-only throwaway keys, 0600), clients/<m>/client.log.\n"
                   "Ctrl-C stops every process it started.",
                   opts, no};
  int cli_st;
  if (cli_start(&spec, argc, argv, &cli_st)) return cli_st;
  session_flags_given(&f, argc, argv);
  bbvfl_err err = {0};
  if (!(round_timeout > 0)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--round-timeout must be > 0");
    return cli_report(&err);
  }
  if (!(active_timeout >= 0 && active_timeout <= 1e8)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--active-timeout must be in 0..1e8 seconds");
    return cli_report(&err);
  }
  if (!(max_fee_gwei >= 0 && max_fee_gwei <= 1e9)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--max-fee-gwei must be a fee in gwei, 0 (no cap) up to 1e9, got %g", max_fee_gwei);
    return cli_report(&err);
  }
  if (confirmations < 0 || confirmations > 1000) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--confirmations must be 0..1000 blocks, got %d", confirmations);
    return cli_report(&err);
  }
  if (!(block_time >= 0 && block_time <= 3600)) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--block-time must be in 0..3600 seconds, got %g", block_time);
    return cli_report(&err);
  }
  /* On a chain with a block time the round structure is what costs: unless told otherwise, the
     largest window that fits the chain (up to a whole epoch: vfl/fit.h), hashed aggregation and
     staleness 1 (window w+1's submissions ride in the block that aggregates window w and posts its
     gradient; evaluation rides along): one block per window (docs/ONCHAIN.md; AUROC within 0.005
     of staleness 0 over 5 seeds, README "A chain with a block time"). */
  if (block_time > 0) {
    int given_window = 0, given_agg = 0, given_stale = 0;
    for (int i = 0; i < argc; i++) {
      given_window |= !strcmp(argv[i], "--window") || !strncmp(argv[i], "--window=", 9);
      given_agg |= !strcmp(argv[i], "--aggregation") || !strncmp(argv[i], "--aggregation=", 14);
      given_stale |= !strcmp(argv[i], "--staleness") || !strncmp(argv[i], "--staleness=", 12);
    }
    if (!given_window) f.tc.window = INT_MAX; /* lowered to what fits, at most the batches of an epoch */
    /* (LR's sqn: lane mode, its curvature rounds are in the lane contract's layout only) */
    if (!given_agg && !(f.tc.optimizer && !strcmp(f.tc.optimizer, "sqn"))) f.aggregation = "hashed";
    /* pipelining needs hashed aggregation; LR trains with staleness 0 */
    if (!given_stale && !strcmp(f.aggregation, "hashed") && !(f.tc.model && !strcmp(f.tc.model, "lr"))) f.tc.staleness = 1;
  }
  if (block_time > 0 && rpc_url) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--block-time sets up the embedded devnet; with --rpc the node's own block time applies");
    return cli_report(&err);
  }
  int seeded = f.seed != NULL || compare;
  /* --seed fixes the split, schedule and initialisation only; the clients' noise is private (each
     one's own key) unless --reproducible-noise, which --compare needs for on-chain = off-chain */
  if (compare && !f.tc.reproducible_noise) {
    f.tc.reproducible_noise = 1;
    train_noise_warning(1, "--compare implies --reproducible-noise (the off-chain replay equals the on-chain run "
                           "only with the same noise)");
  } else {
    train_noise_warning(f.tc.reproducible_noise, "--reproducible-noise");
  }
  bbvfl_session s;
  memset(&s, 0, sizeof s);
  bbvfl_dataset ds;
  s.cparams.masked = masked;
  if (session_flags_apply(&f, &s, &ds, &err) < 0) return cli_report(&err);
  int M = s.train.M;
  /* small enough that the clients' expireRound() attempts (each mines a block on the automining
     devnet) reach it soon after a dropout; a healthy round takes about M + 3 blocks */
  s.cparams.round_timeout_blocks = timeout_blocks ? timeout_blocks : 64 + 4 * (uint64_t)M;
  s.active_timeout_s = active_timeout;
  bbvfl_partition part;
  if ((partition ? bbvfl_partition_parse(partition, ds.d, &part, &err) : bbvfl_partition_even(ds.d, M, &part, &err)) <
      0) {
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }
  if (part.M != M) {
    bbvfl_fail(&err, BBVFL_E_ARG, "--partition names %d clients but --clients is %d", part.M, M);
    bbvfl_partition_free(&part);
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }

  /* run folder */
  char run[1024];
  if (out) {
    snprintf(run, sizeof run, "%s", out);
  } else {
    char ts[32];
    bbvfl_utc_stamp(ts, sizeof ts);
    snprintf(run, sizeof run, "runs/demo-%s", ts);
  }
  char path[1300];
  snprintf(path, sizeof path, "%s/keys", run);
  /* created before anything touches the chain (an unwritable run folder must not cost a deploy),
     removed again when the demo fails before it deployed anything */
  cli_made_dirs made;
  if (cli_mkdirs_tracked(path, &made, &err) < 0) {
    bbvfl_partition_free(&part);
    bbvfl_dataset_free(&ds);
    return cli_report(&err);
  }

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);

  bbvfl_devnet dn;
  int devnet_started = 0, succeeded = 0;
  char devdir[1300];
  snprintf(devdir, sizeof devdir, "%s/devnet", run);
  child ch[MAX_CLIENTS];
  memset(ch, 0, sizeof ch);
  int nch = 0, failed = 0, deployed = 0;
  bbvfl_rpc *rpc = NULL;
  bbvfl_sender *snd = NULL;
  bbvfl_key fk;
  memset(&fk, 0, sizeof fk);
  json_t *report = NULL;
  int tty = cli_isatty_err() && !as_json;
  double t_train0 = 0, t_train1 = 0;
  uint8_t S[32];
  memset(S, 0, sizeof S);
  int quiet = as_json;

  if (!rpc_url) {
    /* The chain is kept in the run folder (written when the devnet stops), so
     * `bbvfl audit --session RUN/session.json` can verify the run afterwards. */
    bbvfl_devnet_opts dopt = {.dir = devdir, .lean_history = !full_history, .persist = 1,
                              .dump_at_exit_only = 1, .block_time = block_time};
    if (bbvfl_devnet_up(&dopt, &dn, &err) < 0) goto fail;
    devnet_started = 1;
    rpc_url = dn.rpc_url;
  }
  snprintf(s.rpc_url, sizeof s.rpc_url, "%s", rpc_url);
  if (!quiet) fprintf(stderr, "node %s%s; run folder %s\n", rpc_url, devnet_started ? " (started here)" : "", run);
  rpc = bbvfl_rpc_new(rpc_url, NULL, &err);
  if (!rpc) goto fail;
  ksrc.key_file = funder;
  if (onchain_funder_key(rpc, &ksrc, ksrc.keystore ? "--keystore" : "--funder-key", &fk, &err) < 0) goto fail;
  snd = bbvfl_sender_new(rpc, &fk, 0, &err);
  if (!snd) goto fail;
  bbvfl_sender_set_sync(snd, 1);
  if (max_fee_gwei > 0) { /* the deployment and the funding keep to the cap too */
    bbvfl_u256 cap = bbvfl_u256_from_u64((uint64_t)(max_fee_gwei * 1e9 + 0.5));
    bbvfl_sender_set_max_fee(snd, &cap);
  }
  if (bbvfl_session_deploy(rpc, snd, &ds, &s, &err) < 0) goto fail;
  deployed = 1;
  char session_path[1300];
  snprintf(session_path, sizeof session_path, "%s/session.json", run);
  if (bbvfl_session_save(&s, session_path, &err) < 0) goto fail;
  char caddr[43], taddr[43];
  bbvfl_addr_checksum(s.contract, caddr);
  bbvfl_addr_checksum(s.token, taddr);
  if (!quiet)
    fprintf(stderr,
            "aggregator %s, token %s; M=%d B=%u P=%u b=%u beta=%g, %u epochs of %u+%u rounds (window %u, staleness %u, "
            "%s aggregation)\n",
            caddr, taddr, M, s.cparams.batch, s.cparams.dim, s.cparams.levels, s.train.mech.beta, s.cparams.epochs,
            s.cparams.train_rounds, s.cparams.eval_rounds, s.cparams.window, s.cparams.staleness,
            bbvfl_session_aggregation_name(s.cparams.wire));
  if (!quiet && block_time > 0) fprintf(stderr, "devnet mines a block every %g s\n", block_time);

  /* keys (throwaway, devnet only) and funding: every transfer sent at once (one block on a chain
     with a block time), then the receipts */
  uint8_t addrs[MAX_CLIENTS][20];
  for (int m = 0; m < M; m++) {
    bbvfl_key k;
    snprintf(ch[m].key, sizeof ch[m].key, "%s/keys/client-%d.key", run, m);
    if (bbvfl_key_generate(&k, &err) < 0 || bbvfl_key_save_file(ch[m].key, &k, &err) < 0) {
      bbvfl_key_wipe(&k);
      goto fail;
    }
    memcpy(ch[m].addr, k.addr, 20);
    memcpy(addrs[m], k.addr, 20);
    bbvfl_key_wipe(&k);
  }
  {
    bbvfl_u256 value, eth = bbvfl_u256_from_u64(1000000000000000000ULL);
    bbvfl_u256_mul_u64(&value, &eth, 10);
    size_t bad;
    if (bbvfl_sender_fund(snd, (const uint8_t(*)[20])addrs, (size_t)M, &value, 60 + 4 * block_time, &bad, &err) < 0) {
      bbvfl_wrap(&err, "funding client %zu", bad);
      goto fail;
    }
  }

  /* the clients */
  char seedbuf[32];
  snprintf(seedbuf, sizeof seedbuf, "%" PRIu64, s.train.seed);
  char timeout_s[32], maxfee_s[32], confirm_s[16];
  snprintf(timeout_s, sizeof timeout_s, "%g", round_timeout);
  snprintf(maxfee_s, sizeof maxfee_s, "%.9g", max_fee_gwei);
  snprintf(confirm_s, sizeof confirm_s, "%d", confirmations);
  t_train0 = bbvfl_now();
  for (int m = 0; m < M; m++) {
    snprintf(ch[m].dir, sizeof ch[m].dir, "%s/clients/%d", run, m);
    if (bbvfl_mkdirs(ch[m].dir, 0700, &err) < 0) goto fail;
    char cols[4096] = "", logp[1300], party[16];
    size_t used = 0;
    for (size_t i = part.off[m]; i < part.off[m + 1] && used + 24 < sizeof cols; i++)
      used += (size_t)snprintf(cols + used, sizeof cols - used, "%s%zu", used ? "," : "", part.cols[i]);
    snprintf(logp, sizeof logp, "%s/client.log", ch[m].dir);
    snprintf(party, sizeof party, "%d", m);
    char *args[32];
    int a = 0;
    args[a++] = "bbvfl";
    args[a++] = "client";
    args[a++] = "--session";
    args[a++] = session_path;
    args[a++] = "--key-file";
    args[a++] = ch[m].key;
    args[a++] = "--data";
    args[a++] = s.data;
    args[a++] = "--columns";
    args[a++] = cols;
    args[a++] = "--labels";
    args[a++] = "--state-dir";
    args[a++] = ch[m].dir;
    args[a++] = "--round-timeout";
    args[a++] = timeout_s;
    args[a++] = "--expire"; /* a client that drops out must not stall the others */
    args[a++] = "--party";
    args[a++] = party;
    if (seeded) {
      args[a++] = "--seed";
      args[a++] = seedbuf;
    }
    if (f.tc.label) {
      args[a++] = "--label";
      args[a++] = (char *)f.tc.label;
    }
    if (max_fee_gwei > 0) {
      args[a++] = "--max-fee-gwei";
      args[a++] = maxfee_s;
    }
    if (confirmations > 0) {
      args[a++] = "--confirmations";
      args[a++] = confirm_s;
    }
    args[a] = NULL;
    ch[m].pid = spawn_client(args, logp);
    if (ch[m].pid < 0) {
      bbvfl_fail(&err, BBVFL_E_IO, "fork failed: %s", strerror(errno));
      goto fail;
    }
    nch = m + 1;
  }

  /* progress until every client is done */
  {
    watcher w;
    memset(&w, 0, sizeof w);
    w.rpc = rpc;
    bbvfl_aggc_init(&w.agg, rpc, s.contract);
    w.next_block = s.deploy_block;
    w.metrics_from = s.deploy_block;
    uint64_t total = bbvfl_cconfig_total(&s.cparams); /* curvature rounds (LR's sqn) included */
    double last_print = 0;
    int last_epoch_printed = 0;
    int fee_above = 0; /* --max-fee-gwei: the base fee was above it at the last look */
    double base_gwei = 0;
    for (;;) {
      int left = 0;
      for (int m = 0; m < nch; m++) {
        if (ch[m].done) continue;
        int st;
        pid_t p = waitpid(ch[m].pid, &st, WNOHANG);
        if (p == ch[m].pid) {
          ch[m].done = 1;
          ch[m].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
          if (ch[m].status != 0) {
            failed++;
            if (!quiet) fprintf(stderr, "\nclient %d failed (exit %d): see %s/client.log\n", m, ch[m].status, ch[m].dir);
          }
        } else {
          left++;
        }
      }
      if (!left) break;
      if (g_stop || failed) {
        if (!quiet) fprintf(stderr, "\n%s: stopping the clients\n", g_stop ? "interrupted" : "a client failed");
        stop_children(ch, nch);
        if (g_stop) bbvfl_fail(&err, BBVFL_E_STATE, "interrupted");
        else bbvfl_fail(&err, BBVFL_E_STATE, "%d client(s) failed; their logs are under %s/clients/", failed, run);
        goto fail;
      }
      double now = bbvfl_now();
      if (now - last_print >= (tty ? 0.25 : 1.0)) {
        last_print = now;
        uint64_t round = 0;
        bbvfl_aggc_current_round(&w.agg, &round, NULL);
        watch_metrics(&w);
        if (tty) watch_gas(&w);
        if (max_fee_gwei > 0) {
          bbvfl_u256 bf, tip;
          if (bbvfl_rpc_fee_history(rpc, 1, 50, &bf, &tip, NULL) == 0) {
            bbvfl_u256 q;
            uint64_t rem = bbvfl_u256_divmod_u64(&q, &bf, 1000000000ULL), whole = 0;
            bbvfl_u256_to_u64(&q, &whole);
            base_gwei = (double)whole + (double)rem / 1e9;
            int above = base_gwei > max_fee_gwei;
            if (above != fee_above) /* said even with --json: the clients are held up */
              fprintf(stderr, "%sbase fee %.3f gwei %s --max-fee-gwei %g%s\n", tty ? "\n" : "", base_gwei,
                      above ? "is above" : "is back within", max_fee_gwei,
                      above ? ": the clients wait for it to fall" : ": the clients go on");
            fee_above = above;
          }
        }
        double el = now - t_train0;
        char eta[32];
        fmt_eta(round ? el / (double)round * (double)(total - round) : -1, eta, sizeof eta);
        if (tty) {
          bbvfl_round_layout rl;
          uint64_t ep = bbvfl_cconfig_round(&s.cparams, round < total ? round : total - 1, &rl, NULL) == 0 ? rl.epoch : 0;
          fprintf(stderr, "\rround %" PRIu64 "/%" PRIu64 "  epoch %" PRIu64 "/%u  loss %.4f  AUROC %.4f  gas %.1fM  ETA %s   ",
                  round, total, ep + 1, s.cparams.epochs, w.loss, w.auroc, w.gas / 1e6, eta);
          if (max_fee_gwei > 0) fprintf(stderr, "base fee %.3f gwei%s   ", base_gwei, fee_above ? " (above the cap: waiting)" : "");
          fflush(stderr);
        } else if (!quiet && w.epochs_done > last_epoch_printed) {
          last_epoch_printed = w.epochs_done;
          fprintf(stderr, "epoch %d/%u  test loss %.4f  AUROC %.4f  round %" PRIu64 "/%" PRIu64 "  %.1fs  ETA %s\n",
                  w.epochs_done, s.cparams.epochs, w.loss, w.auroc, round, total, el, eta);
        }
      }
      bbvfl_sleep(0.02);
    }
    t_train1 = bbvfl_now();
    if (tty) fprintf(stderr, "\r%*s\r", 100, "");
    watch_gas(&w);
    /* the report */
    json_t *sums[MAX_CLIENTS];
    const json_t *act = NULL;
    uint64_t gas_submit = 0, gas_other = 0, gas_aggregate = 0, gas_gradient = 0, fee_gas = 0;
    bbvfl_u256 fee_wei = bbvfl_u256_from_u64(0);
    json_t *clients = json_array();
    for (int m = 0; m < M; m++) {
      snprintf(path, sizeof path, "%s/summary.json", ch[m].dir);
      sums[m] = load_json(path);
      if (!sums[m]) {
        for (int j = 0; j < m; j++) json_decref(sums[j]);
        json_decref(clients);
        bbvfl_fail(&err, BBVFL_E_IO, "client %d left no summary (%s)", m, path);
        goto fail;
      }
      if (json_is_true(json_object_get(sums[m], "active"))) act = sums[m];
      gas_submit += (uint64_t)jnum(sums[m], "gas_submit");
      gas_other += (uint64_t)jnum(sums[m], "gas_other");
      gas_aggregate += (uint64_t)jnum(sums[m], "gas_aggregate");
      gas_gradient += (uint64_t)jnum(sums[m], "gas_gradient");
      {
        const json_t *fe = json_object_get(sums[m], "fees");
        bbvfl_u256 x;
        fee_gas += (uint64_t)json_integer_value(json_object_get(fe, "gas_used"));
        const char *ws = json_string_value(json_object_get(fe, "eth_paid_wei"));
        if (ws && bbvfl_u256_from_string(ws, &x, NULL) == 0) bbvfl_u256_add(&fee_wei, &fee_wei, &x);
      }
      char a[43];
      bbvfl_addr_checksum(ch[m].addr, a);
      json_t *c = json_deep_copy(sums[m]);
      json_object_del(c, "epochs");
      json_object_set_new(c, "address", json_string(a));
      json_array_append_new(clients, c);
    }
    const json_t *eps = act ? json_object_get(act, "epochs") : NULL;
    if (!json_is_array(eps) || json_array_size(eps) == 0) {
      for (int m = 0; m < M; m++) json_decref(sums[m]);
      json_decref(clients);
      bbvfl_fail(&err, BBVFL_E_STATE, "no client reported per-epoch metrics as active client");
      goto fail;
    }
    int participants = json_is_integer(json_object_get(act, "participants")) ? (int)jnum(act, "participants") : M;
    const char *shex = json_string_value(json_object_get(act, "session_seed"));
    if (shex) bbvfl_hex_decode_fixed(shex, S, 32, NULL);
    size_t ne = json_array_size(eps);
    double *agg = calloc(ne, sizeof *agg);
    FILE *csv = NULL;
    snprintf(path, sizeof path, "%s/metrics.csv.tmp", run);
    csv = fopen(path, "w");
    if (csv) fprintf(csv, "epoch,train_loss,test_loss,auroc,accuracy,f1,onchain_agg_s\n");
    for (size_t e = 0; e < ne; e++) {
      const json_t *em = json_array_get(eps, e);
      if (agg) agg[e] = jnum(em, "onchain_agg_s");
      if (csv)
        fprintf(csv, "%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f\n", (int)jnum(em, "epoch"), jnum(em, "train_loss"),
                jnum(em, "test_loss"), jnum(em, "auroc"), jnum(em, "accuracy"), jnum(em, "f1"),
                jnum(em, "onchain_agg_s"));
    }
    if (csv) {
      fflush(csv);
      fsync(fileno(csv));
      fclose(csv);
      char final[1300];
      snprintf(final, sizeof final, "%s/metrics.csv", run);
      rename(path, final);
    }
    const json_t *last = json_array_get(eps, ne - 1);
    double auroc = jnum(last, "auroc"), accuracy = jnum(last, "accuracy"), test_loss = jnum(last, "test_loss");
    double onchain_agg = agg ? bbvfl_median(agg, ne) : 0;
    free(agg);
    uint64_t total_rounds = bbvfl_cconfig_total(&s.cparams);
    /* LR's sqn: the epochs with curvature rounds, each releasing curv_rows rows once more */
    uint64_t curv_epochs = bbvfl_cconfig_curv_epochs(s.cparams.epochs, s.cparams.curv_every);
    uint64_t curv_total = curv_epochs * s.cparams.curv_rounds;
    double curv_coords_rows = (double)curv_epochs * s.cparams.curv_rows;
    /* blocks per epoch: from the first submission to round 0 to SessionEnded */
    uint8_t t0[32];
    bbvfl_cenc_word_u64(0, t0);
    uint64_t b_first = first_event_block(&w.agg, bbvfl_cev_submission(s.cparams.hashed), t0, s.deploy_block);
    uint64_t b_end = first_event_block(&w.agg, BBVFL_EV_SESSION_ENDED, NULL, s.deploy_block);
    double blocks_per_epoch = b_first && b_end >= b_first ? (double)(b_end - b_first + 1) / s.cparams.epochs : 0;
    /* what the sums cost (every submission, and in hashed mode every aggregate() that re-supplies
       them), per value summed: M x P values per row, every training row of every window and every
       evaluation row, each epoch */
    double gas_sums = (double)gas_submit + (double)gas_aggregate;
    double gas_per_round = total_rounds ? gas_sums / (double)total_rounds : 0;
    double coords_total = (double)M * s.cparams.dim *
                          ((double)s.cparams.epochs * ((double)s.cparams.batches_per_epoch * s.cparams.batch +
                                                       s.cparams.eval_rows) +
                           curv_coords_rows);
    double gas_per_coord = coords_total > 0 ? gas_sums / coords_total : 0;
    /* the rounds that take a gradient: the windows and (LR's sqn) the curvature rounds */
    double windows_total = (double)s.cparams.train_rounds * s.cparams.epochs + (double)curv_total;
    /* such a round's whole cost: its M submissions, the aggregate() (hashed), the gradient post */
    double gas_per_window = 0;
    {
      double tr_coords = (double)M * s.cparams.dim *
                         ((double)s.cparams.batches_per_epoch * s.cparams.batch * s.cparams.epochs +
                          curv_coords_rows);
      double share = coords_total > 0 ? tr_coords / coords_total : 0;
      gas_per_window = windows_total > 0 ? (gas_sums * share + (double)gas_gradient) / windows_total : 0;
    }

    /* rewards */
    json_t *rewards = json_object();
    for (int m = 0; m < M; m++) {
      bbvfl_u256 bal;
      char a[43], dec[80];
      bbvfl_addr_checksum(ch[m].addr, a);
      if (bbvfl_token_balance(rpc, s.token, ch[m].addr, &bal, &err) < 0) {
        for (int j = 0; j < M; j++) json_decref(sums[j]);
        json_decref(clients);
        json_decref(rewards);
        goto fail;
      }
      bbvfl_u256_to_dec(&bal, dec);
      json_object_set_new(rewards, a, json_string(dec));
    }
    for (int m = 0; m < M; m++) json_decref(sums[m]);

    /* off-chain run with the same seed and session seed: aggregation timing and --compare */
    bbvfl_offchain_cfg oc = s.train; /* reproducible noise as the session's (else private: timing only) */
    oc.session_seed = S;
    oc.partition = partition;
    bbvfl_offchain_result ores;
    memset(&ores, 0, sizeof ores);
    if (bbvfl_offchain_train(&ds, &oc, &ores, &err) < 0) {
      json_decref(clients);
      json_decref(rewards);
      bbvfl_wrap(&err, "off-chain comparison run");
      goto fail;
    }
    /* the privacy of the session, from the one accountant: the masked bound for the clients actually
       present at the end (against one of them) */
    bbvfl_privacy pv;
    bbvfl_err aerr = {0};
    const int have_priv = bbvfl_cfg_privacy(&s.train, ores.n_train, masked, participants, f.tc.delta, &pv, &aerr) == 0;
    if (!have_priv) pv.finite = 0;
    const int finite = pv.finite, mfinite = masked && pv.finite;

    report = json_object();
    json_object_set_new(report, "auroc", json_real(auroc));
    json_object_set_new(report, "accuracy", json_real(accuracy));
    json_object_set_new(report, "test_loss", json_real(test_loss));
    if (compare) {
      json_object_set_new(report, "auroc_offchain_same_seed", json_real(ores.per_epoch[ores.epochs - 1].auroc));
      json_object_set_new(report, "auroc_gap", json_real(fabs(auroc - ores.per_epoch[ores.epochs - 1].auroc)));
      json_object_set_new(report, "test_loss_offchain_same_seed", json_real(ores.per_epoch[ores.epochs - 1].test_loss));
    }
    /* RDP figures, per person first (names kept for scripts); "privacy": every level with its method */
    train_json_eps(report, &pv, finite ? pv.rdp.epsilon_sample : NAN, finite ? pv.rdp.epsilon_feature : NAN);
    json_object_set_new(report, "reproducible_noise", json_boolean(s.train.seeded_noise));
    json_object_set_new(report, "masked", json_boolean(masked));
    json_object_set_new(report, "participants", json_integer(participants));
    json_object_set_new(report, "epsilon_feature_masked",
                        mfinite ? train_json_num(bbvfl_privacy_shown(&pv, &pv.masked_row_feature)) : json_null());
    json_object_set_new(report, "epsilon_feature_masked_level", json_string("per_party_masked"));
    json_object_set_new(report, "privacy", bbvfl_privacy_json(&pv));
    json_object_set_new(report, "delta", json_real(f.tc.delta));
    json_object_set_new(report, "onchain_agg_s_per_epoch", json_real(onchain_agg));
    json_object_set_new(report, "offchain_agg_s_per_epoch", json_real(ores.agg_train_s_per_epoch));
    json_object_set_new(report, "gas_per_round", json_real(gas_per_round));
    json_object_set_new(report, "gas_per_coordinate", json_real(gas_per_coord));
    json_object_set_new(report, "gas_per_window", json_real(gas_per_window));
    json_object_set_new(report, "blocks_per_epoch", json_real(blocks_per_epoch));
    json_object_set_new(report, "curvature_rounds", json_integer((json_int_t)curv_total));
    json_object_set_new(report, "model", json_string(bbvfl_model_name(s.train.model)));
    json_object_set_new(report, "gas_submit_total", json_integer((json_int_t)gas_submit));
    json_object_set_new(report, "gas_aggregate_total", json_integer((json_int_t)gas_aggregate));
    json_object_set_new(report, "gas_gradient_total", json_integer((json_int_t)gas_gradient));
    json_object_set_new(report, "window", json_integer(s.cparams.window));
    json_object_set_new(report, "staleness", json_integer(s.cparams.staleness));
    json_object_set_new(report, "aggregation", json_string(bbvfl_session_aggregation_name(s.cparams.wire)));
    json_object_set_new(report, "train_rounds_per_epoch", json_integer(s.cparams.train_rounds));
    json_object_set_new(report, "eval_rounds_per_epoch", json_integer(s.cparams.eval_rounds));
    json_object_set_new(report, "block_time", json_real(block_time));
    json_object_set_new(report, "gas_other_total", json_integer((json_int_t)gas_other));
    json_object_set_new(report, "gas_chain_total", json_integer((json_int_t)w.gas));
    json_object_set_new(report, "training_wall_s", json_real(t_train1 - t_train0));
    json_object_set_new(report, "wall_s", json_real(bbvfl_now() - t_start));
    json_object_set_new(report, "rpc_url", json_string(rpc_url));
    json_object_set_new(report, "chain_id", json_integer((json_int_t)s.chain_id));
    json_object_set_new(report, "contract", json_string(caddr));
    json_object_set_new(report, "token", json_string(taddr));
    json_object_set_new(report, "rewards", rewards);
    json_object_set_new(report, "clients", json_integer(M));
    json_object_set_new(report, "epochs", json_integer(s.cparams.epochs));
    json_object_set_new(report, "rounds", json_integer((json_int_t)total_rounds));
    json_object_set_new(report, "b", json_integer(s.cparams.levels));
    json_object_set_new(report, "beta", json_real(s.train.mech.beta));
    json_object_set_new(report, "B", json_integer(s.cparams.batch));
    json_object_set_new(report, "P", json_integer(s.cparams.dim));
    json_object_set_new(report, "seed", json_integer((json_int_t)s.train.seed));
    char Shex[70];
    bbvfl_hex_encode(S, 32, Shex);
    json_object_set_new(report, "session_seed", json_string(Shex));
    json_object_set_new(report, "client_summaries", clients);
    char fee_dec[80];
    bbvfl_u256_to_dec(&fee_wei, fee_dec);
    /* what the clients' mined transactions paid, summed (each client's own: client_summaries[].fees) */
    json_object_set_new(report, "fees", json_pack("{s:I, s:s, s:f}", "gas_used", (json_int_t)fee_gas, "eth_paid_wei", fee_dec,
                                                  "eth_paid", strtod(fee_dec, NULL) / 1e18));
    json_object_set_new(report, "max_fee_gwei", max_fee_gwei > 0 ? json_real(max_fee_gwei) : json_null());
    json_object_set_new(report, "confirmations", json_integer(confirmations));
    json_object_set_new(report, "run_dir", json_string(run));
    double offchain_agg = ores.agg_train_s_per_epoch;
    bbvfl_offchain_result_free(&ores);

    char *text = json_dumps(report, JSON_INDENT(2));
    snprintf(path, sizeof path, "%s/report.json", run);
    if (!text || bbvfl_write_file_atomic(path, text, strlen(text), 0644, &err) < 0) {
      free(text);
      goto fail;
    }
    free(text);
    if (!quiet) {
      printf("\nsummary (%s)\n", run);
      printf("  test AUROC            %.4f", auroc);
      if (compare) printf("   (off-chain, same seed: %.4f)", jnum(report, "auroc_offchain_same_seed"));
      char pline[1024];
      bbvfl_privacy_line(&pv, pline, sizeof pline);
      printf("\n  privacy               %s%s\n", have_priv ? pline : "not computed: ", have_priv ? "" : aerr.msg);
      if (finite && !pv.reproducible) printf("  privacy scope         %s\n", bbvfl_privacy_scope(&pv));
      printf("  aggregation / epoch   on-chain %.4f s (median of %zu epochs), off-chain %.2e s\n", onchain_agg, ne,
             offchain_agg);
      printf("  gas                   %.1f per coordinate summed (%s aggregation); %.0f per training window "
             "(window %u, gradient post included)\n",
             gas_per_coord, bbvfl_session_aggregation_name(s.cparams.wire), gas_per_window, s.cparams.window);
      printf("  rounds                %" PRIu64 " (%" PRIu64 " curvature), %.0f gas per round (submissions%s), %.1f "
             "blocks per epoch\n",
             total_rounds, curv_total, gas_per_round, s.cparams.hashed ? " and aggregate()" : "", blocks_per_epoch);
      printf("  wall                  %.1f s (training %.1f s)\n", bbvfl_now() - t_start, t_train1 - t_train0);
      {
        const json_t *fe = json_object_get(report, "fees");
        printf("  fees                  %.6g ETH for %" PRIu64 " gas (the clients' receipts; per client in report.json)\n",
               jnum(fe, "eth_paid"), (uint64_t)jnum(fe, "gas_used"));
      }
      printf("  rewards (tokens)\n");
      const char *k;
      json_t *v;
      json_object_foreach(json_object_get(report, "rewards"), k, v) {
        bbvfl_u256 x, q;
        bbvfl_u256_from_string(json_string_value(v), &x, NULL);
        bbvfl_u256_divmod_u64(&q, &x, 1000000000000000000ULL);
        uint64_t tok = 0;
        bbvfl_u256_to_u64(&q, &tok);
        printf("    %s  %" PRIu64 "\n", k, tok);
      }
    }
  }
  if (as_json) cli_print_json(json_incref(report), 0);
  succeeded = 1;
  goto release;

fail:
  stop_children(ch, nch);
release:
  json_decref(report);
  bbvfl_sender_free(snd);
  bbvfl_key_wipe(&fk);
  bbvfl_rpc_free(rpc);
  if (devnet_started) bbvfl_devnet_down(devdir, 10, NULL);
  if (!succeeded && !deployed && !devnet_started) cli_undo_dirs(&made);
  bbvfl_partition_free(&part);
  bbvfl_dataset_free(&ds);
  if (succeeded) return 0;
  if (!err.code) bbvfl_fail(&err, BBVFL_E_STATE, "demo failed");
  return cli_report(&err);
}
