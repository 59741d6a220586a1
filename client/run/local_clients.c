/* run/local.h: the client processes of a local session (forked, each running run/client.h) and
 * the watch over them: exits, stop requests, the chain's round, metrics, block gas and base fee. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "run/client.h"
#include "run/local_int.h"

/* The forked child of client m: stdout and stderr into its client.log, then the client; never
   returns (_exit: the parent's atexit handlers and buffers are not the child's). */
static void client_child(const bbvfl_lrun *x, int m, const char *cols, const char *log_path) {
  int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd >= 0) {
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  const bbvfl_local_opts *o = x->o;
  bbvfl_key_source ks = {.key_file = x->ch[m].key};
  bbvfl_client_files c;
  memset(&c, 0, sizeof c);
  c.session = x->session_path;
  c.key = &ks;
  c.data = x->s->data;
  c.seed_given = o->seeded;
  c.seed = x->s->train.seed;
  c.cfg.columns = cols;
  c.cfg.has_labels = 1;
  c.cfg.party = m;
  c.cfg.state_dir = x->ch[m].dir;
  c.cfg.round_timeout_s = o->round_timeout_s > 0 ? o->round_timeout_s : 60;
  c.cfg.expire = 1; /* a client that drops out must not stall the others */
  c.cfg.takeover_after_s = 30;
  c.cfg.node_down_timeout_s = 120;
  c.cfg.rate_limit_wait_s = 60;
  c.cfg.max_fee_gwei = o->max_fee_gwei;
  c.cfg.confirmations = (unsigned)o->confirmations;
  c.cfg.reprice_blocks = 3;
  c.cfg.dump_q_dir = o->dump_q_dir;
  c.cfg.log = stderr;
  bbvfl_err err = {0};
  int rc = bbvfl_client_files_run(&c, NULL, &err);
  if (rc < 0) fprintf(stderr, "bbvfl: error: %s\n", err.msg[0] ? err.msg : "unknown error");
  fflush(stderr);
  fflush(stdout);
  _exit(rc < 0 ? bbvfl_exit_code(err.code) : 0);
}

int bbvfl_lrun_clients_start(bbvfl_lrun *x, bbvfl_err *err) {
  x->t_train0 = bbvfl_now();
  for (int m = 0; m < x->M; m++) {
    snprintf(x->ch[m].dir, sizeof x->ch[m].dir, "%s/clients/%d", x->run, m);
    if (bbvfl_mkdirs(x->ch[m].dir, 0700, err) < 0) return -1;
    char cols[4096] = "", logp[1300];
    size_t used = 0;
    for (size_t i = x->part.off[m]; i < x->part.off[m + 1] && used + 24 < sizeof cols; i++)
      used += (size_t)snprintf(cols + used, sizeof cols - used, "%s%zu", used ? "," : "", x->part.cols[i]);
    snprintf(logp, sizeof logp, "%s/client.log", x->ch[m].dir);
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) client_child(x, m, cols, logp);
    if (pid < 0) return bbvfl_fail(err, BBVFL_E_IO, "fork failed: %s", strerror(errno));
    x->ch[m].pid = pid;
    x->nch = m + 1;
  }
  return 0;
}

void bbvfl_lrun_clients_stop(bbvfl_lrun *x) {
  bbvfl_lchild *ch = x->ch;
  for (int i = 0; i < x->nch; i++)
    if (ch[i].pid > 0 && !ch[i].done) kill(ch[i].pid, SIGTERM);
  double t0 = bbvfl_now();
  for (;;) {
    int left = 0;
    for (int i = 0; i < x->nch; i++) {
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
      for (int i = 0; i < x->nch; i++)
        if (ch[i].pid > 0 && !ch[i].done) kill(ch[i].pid, SIGKILL);
    }
    bbvfl_sleep(0.02);
  }
}

typedef struct {
  bbvfl_rpc *rpc;
  bbvfl_aggc agg;
  uint64_t next_block, gas;
  uint64_t metrics_from;
  double auroc, loss;
  int epochs_done;
  int fee_above;     /* the base fee was above the cap at the last look */
  double base_gwei;
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

/* With a fee cap: the base fee now; an event when it crosses the cap. */
static void watch_fee(bbvfl_lrun *x, watcher *w) {
  double cap = x->o->max_fee_gwei;
  bbvfl_u256 bf, tip;
  if (cap <= 0 || bbvfl_rpc_fee_history(x->rpc, 1, 50, &bf, &tip, NULL) != 0) return;
  bbvfl_u256 q;
  uint64_t rem = bbvfl_u256_divmod_u64(&q, &bf, 1000000000ULL), whole = 0;
  bbvfl_u256_to_u64(&q, &whole);
  w->base_gwei = (double)whole + (double)rem / 1e9;
  int above = w->base_gwei > cap;
  if (above != w->fee_above) {
    bbvfl_local_event ev = {.kind = BBVFL_LOCAL_EV_FEE, .base_fee_gwei = w->base_gwei, .fee_above = above};
    bbvfl_lrun_emit(x, &ev);
  }
  w->fee_above = above;
}

/* One look at the chain and a TICK event: the callback's verdict (non-zero: stop). */
static int tick(bbvfl_lrun *x, watcher *w, double now) {
  uint64_t round = 0, total = bbvfl_cconfig_total(&x->s->cparams); /* curvature rounds (LR's sqn) included */
  bbvfl_aggc_current_round(&w->agg, &round, NULL);
  watch_metrics(w);
  if (x->o->live_gas) watch_gas(w);
  watch_fee(x, w);
  double el = now - x->t_train0;
  bbvfl_round_layout rl;
  uint64_t ep = bbvfl_cconfig_round(&x->s->cparams, round < total ? round : total - 1, &rl, NULL) == 0 ? rl.epoch : 0;
  bbvfl_local_event ev = {.kind = BBVFL_LOCAL_EV_TICK, .round = round, .total = total, .epoch = ep + 1,
                          .epochs_done = w->epochs_done, .loss = w->loss, .auroc = w->auroc, .gas = w->gas,
                          .elapsed_s = el, .eta_s = round ? el / (double)round * (double)(total - round) : -1,
                          .base_fee_gwei = w->base_gwei, .fee_above = w->fee_above};
  return bbvfl_lrun_emit(x, &ev);
}

/* Reaps the clients that exited: how many still run; *failed counts the non-zero exits. */
static int reap(bbvfl_lrun *x, int *failed) {
  int left = 0;
  for (int m = 0; m < x->nch; m++) {
    bbvfl_lchild *c = &x->ch[m];
    if (c->done) continue;
    int st;
    pid_t p = waitpid(c->pid, &st, WNOHANG);
    if (p != c->pid) {
      left++;
      continue;
    }
    c->done = 1;
    c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    if (c->status != 0) {
      (*failed)++;
      bbvfl_local_event ev = {.kind = BBVFL_LOCAL_EV_CLIENT_FAILED, .client = m, .status = c->status};
      bbvfl_lrun_emit(x, &ev);
    }
  }
  return left;
}

int bbvfl_lrun_clients_wait(bbvfl_lrun *x, bbvfl_err *err) {
  watcher w;
  memset(&w, 0, sizeof w);
  w.rpc = x->rpc;
  bbvfl_aggc_init(&w.agg, x->rpc, x->s->contract);
  w.next_block = x->s->deploy_block;
  w.metrics_from = x->s->deploy_block;
  double every = x->o->progress_every_s > 0 ? x->o->progress_every_s : 1.0, last = 0;
  int failed = 0, stop = 0;
  while (reap(x, &failed) > 0) {
    stop |= x->o->stop && *x->o->stop;
    if (stop || failed) {
      bbvfl_local_event ev = {.kind = BBVFL_LOCAL_EV_STOPPING, .interrupted = stop};
      bbvfl_lrun_emit(x, &ev);
      bbvfl_lrun_clients_stop(x);
      if (stop) return bbvfl_fail(err, BBVFL_E_STATE, "interrupted");
      return bbvfl_fail(err, BBVFL_E_STATE, "%d client(s) failed; their logs are under %s/clients/", failed, x->run);
    }
    double now = bbvfl_now();
    if (now - last >= every) {
      last = now;
      stop |= tick(x, &w, now) != 0;
    }
    bbvfl_sleep(0.02);
  }
  x->t_train1 = bbvfl_now();
  watch_gas(&w);
  x->chain_gas = w.gas;
  return 0;
}
