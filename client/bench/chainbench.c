/* The lean on-chain aggregation driver (see chainbench.h for what is timed and how). */
#include "bench/chainbench.h"
#include "bench/chainbench_int.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "dp/mech.h"
#include "dp/rng.h"
#include "eth/abi.h"
#include "eth/deploy.h"
#include "eth/hex.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "binding/contract.h"

#define STALL_S 2

/* ------------------------------------------------------------------ one session */

typedef struct run run;

typedef struct {
  run *r;
  pool_client *c;
  uint8_t *data; /* this round's calldata, owned by the run */
  size_t len;
  double t_start, t_done;
  uint64_t gas;
  int completed; /* its receipt carries RoundCompleted */
  int rc;
  bbvfl_err err;
} worker;

/* main -> workers: a new generation starts a round (or stops them); workers -> main: a count of
 * finished submissions. A mutex and two condition variables, so a partly started set of threads
 * can still be stopped. */
struct run {
  pthread_mutex_t mu;
  pthread_cond_t go, fin;
  unsigned long gen;
  int ndone;
  int stop;
  uint8_t to[20];
  uint64_t gas_limit;
  char completed_topic[67];
  worker *w;
  int M;
};

static int has_topic(const json_t *logs, const char *topic) {
  size_t i;
  json_t *log;
  json_array_foreach(logs, i, log) {
    const char *t0 = json_string_value(json_array_get(json_object_get(log, "topics"), 0));
    if (t0 && strcasecmp(t0, topic) == 0) return 1;
  }
  return 0;
}

static void *worker_main(void *arg) {
  worker *w = arg;
  run *r = w->r;
  unsigned long seen = 0;
  for (;;) {
    pthread_mutex_lock(&r->mu);
    while (r->gen == seen && !r->stop) pthread_cond_wait(&r->go, &r->mu);
    seen = r->gen;
    int stop = r->stop;
    pthread_mutex_unlock(&r->mu);
    if (stop) break;
    bbvfl_receipt rc;
    memset(&rc, 0, sizeof rc);
    w->t_start = bbvfl_now();
    w->rc = bbvfl_sender_transact(w->c->s, r->to, NULL, w->data, w->len, r->gas_limit, TX_TIMEOUT_S, &rc, &w->err);
    w->t_done = bbvfl_now();
    w->gas = rc.gas_used;
    w->completed = w->rc == 0 && has_topic(rc.logs, r->completed_topic);
    bbvfl_receipt_clear(&rc);
    pthread_mutex_lock(&r->mu);
    r->ndone++;
    pthread_cond_signal(&r->fin);
    pthread_mutex_unlock(&r->mu);
  }
  return NULL;
}

/* One transaction from client c, waiting for its receipt (not timed). */
static int tx(pool_client *c, const uint8_t *to, const uint8_t *data, size_t len, uint64_t gas,
              bbvfl_receipt *out, bbvfl_err *err) {
  bbvfl_receipt tmp;
  bbvfl_receipt *r = out ? out : &tmp;
  memset(r, 0, sizeof *r);
  int rc = bbvfl_sender_transact(c->s, to, NULL, data, len, gas, TX_TIMEOUT_S, r, err);
  if (!out || rc != 0) bbvfl_receipt_clear(r);
  return rc;
}

/* calldata helpers: each takes ownership of *d on return */
static int tx_owned(pool_client *c, const uint8_t *to, uint8_t *d, size_t len, uint64_t gas,
                    bbvfl_receipt *out, bbvfl_err *err) {
  int rc = tx(c, to, d, len, gas, out, err);
  free(d);
  return rc;
}

/* Gas a call would use (eth_estimateGas from c); a failure to estimate usually means the call
 * needs more gas than the node allows in one transaction. */
static int estimate(pool_client *c, const uint8_t *to, const uint8_t *data, size_t len, const char *what,
                    uint64_t limit, uint64_t *gas, bbvfl_err *err) {
  if (bbvfl_rpc_estimate_gas(c->rpc, c->key.addr, to, NULL, data, len, gas, err) != 0) {
    if (err && err->code == BBVFL_E_REVERT) return bbvfl_wrap(err, "estimating the gas of %s", what);
    char said[256];
    snprintf(said, sizeof said, "%.200s", err ? err->msg : "");
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "%s cannot be estimated: it likely needs more gas than one transaction may use "
                      "(limit %llu; the node said: %s)",
                      what, (unsigned long long)limit, said);
  }
  if (*gas > limit)
    return bbvfl_fail(err, BBVFL_E_STATE, "%s needs %llu gas, above the %llu a transaction may use", what,
                      (unsigned long long)*gas, (unsigned long long)limit);
  return 0;
}

static uint64_t gas_with_margin(uint64_t est, uint64_t extra, uint64_t limit) {
  uint64_t g = est + est / 2 + extra;
  return g > limit ? limit : g;
}

/* anvil's evm_snapshot / evm_revert; id is the snapshot's id as the node returned it. */
static int snapshot(pool_client *c, char *id, size_t n, bbvfl_err *err) {
  json_t *res = NULL;
  if (bbvfl_rpc_call(c->rpc, "evm_snapshot", json_array(), &res, err) != 0)
    return bbvfl_wrap(err, "evm_snapshot (resetting the chain needs an anvil; use --no-reset on other nodes)");
  int ok = json_is_string(res) && strlen(json_string_value(res)) < n;
  if (ok) snprintf(id, n, "%s", json_string_value(res));
  json_decref(res);
  return ok ? 0 : bbvfl_fail(err, BBVFL_E_PARSE, "evm_snapshot: unexpected answer");
}

static int revert_to(bbvfl_cbench_pool *p, int M, const char *id, bbvfl_err *err) {
  (void)M;
  json_t *res = NULL;
  if (bbvfl_rpc_call(p->c[0].rpc, "evm_revert", json_pack("[s]", id), &res, err) != 0)
    return bbvfl_wrap(err, "evm_revert");
  int ok = json_is_true(res);
  json_decref(res);
  if (!ok) return bbvfl_fail(err, BBVFL_E_STATE, "evm_revert to snapshot %s was refused", id);
  /* the nonces went back with the chain */
  for (int i = 0; i <= p->n; i++) bbvfl_sender_resync(p->c[i].s);
  return 0;
}

/* A gas limit of base plus a random 0..65535. anvil's evm_revert forgets mined transactions, but
 * a transaction that is byte-for-byte one sent before the revert (same sender, nonce, calldata,
 * fees and gas) has the same hash, and the node then answers with the forgotten receipt instead
 * of mining it. Setup transactions (registration, election) repeat across configurations, so
 * they carry a random gas limit; submissions and gradients carry fresh random values anyway. */
static uint64_t jitter_gas(uint64_t base) {
  static bbvfl_rng rng;
  static int seeded;
  if (!seeded) {
    bbvfl_err e = {0};
    if (bbvfl_rng_init_os(&rng, &e) != 0) bbvfl_rng_init_seeded(&rng, (uint64_t)(bbvfl_now() * 1e9), 0x6a6974);
    seeded = 1;
  }
  return base + (bbvfl_rng_u32(&rng) & 0xFFFF);
}

static uint64_t tx_limit(const bbvfl_cbench_pool *p) {
  return p->block_gas_limit < BBVFL_TX_GAS_CAP ? p->block_gas_limit : BBVFL_TX_GAS_CAP;
}

/* Deploy + register + election for BbvflAggregator; *active receives the active client's index. */
static int setup_bbvfl(bbvfl_cbench_pool *p, const bbvfl_cbench_cfg *cfg, uint8_t addr[20], int *active,
                       bbvfl_cbench_result *res, bbvfl_err *err) {
  const int M = cfg->M;
  uint64_t total = (uint64_t)cfg->epochs * (cfg->T + cfg->V);
  bbvfl_cconfig cc;
  memset(&cc, 0, sizeof cc);
  cc.clients = (uint8_t)M;
  cc.batch = cfg->B;
  cc.dim = cfg->P;
  cc.levels = (uint8_t)cfg->b;
  cc.beta_micro = (uint32_t)(cfg->beta * 1e6 + 0.5);
  cc.masked = cfg->kind == BBVFL_CBENCH_MASKED;
  cc.train_rounds = cfg->T;
  cc.eval_rounds = cfg->V;
  cc.epochs = cfg->epochs;
  cc.reward_per_submission = bbvfl_u256_from_u64(1);
  /* a random surplus in the pool makes every deployment's bytes unique (see jitter_gas) */
  cc.reward_pool = bbvfl_u256_from_u64(total * (uint64_t)M + jitter_gas(0));
  cc.commit_blocks = (uint64_t)M + 2;
  cc.reveal_blocks = (uint64_t)M + 2;
  cc.active_blocks = 1000000;
  cc.round_timeout_blocks = 1000000;
  uint8_t *args = NULL, *d = NULL;
  size_t alen = 0, len = 0;
  bbvfl_receipt rc;
  memset(&rc, 0, sizeof rc);
  /* open registration: the bench's own throwaway keys register */
  if (bbvfl_cenc_ctor(&cc, NULL, 0, &args, &alen, err) != 0) return -1;
  int r = bbvfl_deploy(p->c[0].s, "BbvflAggregator", args, alen, TX_TIMEOUT_S, addr, &rc, err);
  free(args);
  res->deploy_gas = rc.gas_used;
  bbvfl_receipt_clear(&rc);
  if (r != 0) return bbvfl_wrap(err, "deploying BbvflAggregator (M=%d B=%u P=%u b=%d)", M, cfg->B, cfg->P, cfg->b);
  uint64_t close_block = 0;
  for (int i = 0; i < M; i++) {
    if (bbvfl_cenc_register(p->c[i].key.pub, &d, &len, err) != 0 ||
        tx_owned(&p->c[i], addr, d, len, jitter_gas(400000), &rc, err) != 0)
      return bbvfl_wrap(err, "registering benchmark client %d", i);
    close_block = rc.block_number;
    bbvfl_receipt_clear(&rc);
  }
  uint8_t(*secret)[32] = calloc((size_t)M, 32);
  if (!secret) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  bbvfl_rng rng;
  if (bbvfl_rng_init_os(&rng, err) != 0) goto fail;
  for (int i = 0; i < M; i++) {
    uint8_t cm[32];
    bbvfl_rng_bytes(&rng, secret[i], 32);
    bbvfl_election_commitment(secret[i], p->c[i].key.addr, addr, p->chain_id, cm);
    if (bbvfl_cenc_commit(cm, &d, &len, err) != 0 ||
        tx_owned(&p->c[i], addr, d, len, jitter_gas(400000), NULL, err) != 0) {
      bbvfl_wrap(err, "election commit of benchmark client %d", i);
      goto fail;
    }
  }
  uint64_t last = 0;
  for (int i = 0; i < M; i++) {
    if (bbvfl_cenc_reveal(secret[i], &d, &len, err) != 0 ||
        tx_owned(&p->c[i], addr, d, len, jitter_gas(1000000 + 60000 * (uint64_t)M), &rc, err) != 0) {
      bbvfl_wrap(err, "election reveal of benchmark client %d", i);
      goto fail;
    }
    last = rc.block_number;
    bbvfl_receipt_clear(&rc);
  }
  free(secret);
  secret = NULL;
  (void)close_block;
  (void)last; /* the last reveal elects the active client when every client revealed */
  bbvfl_aggc a;
  bbvfl_aggc_init(&a, p->c[0].rpc, addr);
  bbvfl_phase ph;
  if (bbvfl_aggc_phase(&a, &ph, err) != 0) return bbvfl_wrap(err, "reading the session phase");
  if (ph != BBVFL_PHASE_TRAINING)
    return bbvfl_fail(err, BBVFL_E_STATE, "the election did not start training after every client revealed (phase %d)",
                      (int)ph);
  uint8_t act[20];
  bbvfl_cparams prm;
  if (bbvfl_aggc_active(&a, act, err) != 0 || bbvfl_aggc_params(&a, &prm, err) != 0)
    return bbvfl_wrap(err, "reading the elected session");
  res->lane_bits = prm.lane_bits;
  *active = -1;
  for (int i = 0; i < M; i++)
    if (memcmp(act, p->c[i].key.addr, 20) == 0) *active = i;
  if (*active < 0) return bbvfl_fail(err, BBVFL_E_STATE, "the elected active client is none of the benchmark's");
  return 0;
fail:
  free(secret);
  return -1;
}

static int setup_naive(bbvfl_cbench_pool *p, const bbvfl_cbench_cfg *cfg, uint8_t addr[20], bbvfl_cbench_result *res,
                       bbvfl_err *err) {
  /* a third, random word after the two constructor arguments: the ABI decoder ignores it, and it
   * makes every deployment's bytes unique (see jitter_gas) */
  uint8_t args[BBVFL_CENC_NAIVE_ARGS_LEN];
  bbvfl_cenc_naive_args((uint64_t)cfg->M, (uint64_t)cfg->B * cfg->P, jitter_gas(0) << 16 | jitter_gas(0), args);
  bbvfl_receipt rc;
  memset(&rc, 0, sizeof rc);
  int r = bbvfl_deploy(p->c[0].s, "NaiveAggregator", args, sizeof args, TX_TIMEOUT_S, addr, &rc, err);
  res->deploy_gas = rc.gas_used;
  bbvfl_receipt_clear(&rc);
  if (r != 0) return bbvfl_wrap(err, "deploying NaiveAggregator");
  res->lane_bits = 256;
  for (int i = 0; i < cfg->M; i++) {
    uint8_t *d = NULL;
    size_t len;
    if (bbvfl_cenc_naive_register(&d, &len, err) != 0 ||
        tx_owned(&p->c[i], addr, d, len, jitter_gas(200000), NULL, err) != 0)
      return bbvfl_wrap(err, "registering benchmark client %d with the naive contract", i);
  }
  return 0;
}

static int check_cfg(const bbvfl_cbench_pool *p, const bbvfl_cbench_cfg *c, bbvfl_err *err) {
  if (c->M < 1 || c->M > 64 || c->M > p->n)
    return bbvfl_fail(err, BBVFL_E_ARG, "clients must be 1..%d (got %d)", p->n < 64 ? p->n : 64, c->M);
  if (c->B < 1 || c->P < 1 || (uint64_t)c->B * c->P > (1u << 20))
    return bbvfl_fail(err, BBVFL_E_ARG, "B and P must be >= 1 with B*P <= 2^20 (got %u x %u)", c->B, c->P);
  if (c->b < 1 || c->b > 255) return bbvfl_fail(err, BBVFL_E_ARG, "b must be 1..255 (got %d)", c->b);
  if (c->kind == BBVFL_CBENCH_PLAIN && (uint64_t)c->M * (uint64_t)c->b >= 65536)
    return bbvfl_fail(err, BBVFL_E_ARG, "M*b must be below 65536 (got %d)", c->M * c->b);
  if (!(c->beta > 0 && c->beta < 0.5)) return bbvfl_fail(err, BBVFL_E_ARG, "beta must be in (0, 0.5)");
  if (c->T < 1 || c->epochs < 1) return bbvfl_fail(err, BBVFL_E_ARG, "need at least one round and one epoch");
  return 0;
}

/* One benchmark session's working state (bbvfl_cbench_run and its steps; main thread). */
typedef struct {
  bbvfl_cbench_pool *p;
  const bbvfl_cbench_cfg *cfg;
  bbvfl_cbench_result *res;
  run r;
  worker *w;
  pthread_t *th;
  int nth, barriers, active, naive, masked;
  uint32_t per_epoch;
  uint64_t total, limit, post_limit;
  size_t n, qlen;
  uint8_t *q, *grad, *fparams;
  float *h;
  pool_client *drv; /* the driver's own key and connection (main thread only) */
  bbvfl_rng rng;
  bbvfl_mech mech;
} bench;

/* Fresh random gradient bytes: finite, small floats. */
static void random_grad(bench *x) {
  for (size_t j = 0; j < 4 * x->n; j++) x->grad[j] = (uint8_t)bbvfl_rng_u32(&x->rng);
  for (size_t j = 0; j < 4 * x->n; j += 4) x->grad[j] = (uint8_t)(x->grad[j] & 0x3c);
}

/* The lock, the signals and the M client threads. */
static int start_workers(bench *x, bbvfl_err *err) {
  run *r = &x->r;
  if (pthread_mutex_init(&r->mu, NULL) != 0) return bbvfl_fail(err, BBVFL_E_STATE, "cannot create the benchmark's thread lock");
  if (pthread_cond_init(&r->go, NULL) != 0 || pthread_cond_init(&r->fin, NULL) != 0) {
    pthread_mutex_destroy(&r->mu);
    return bbvfl_fail(err, BBVFL_E_STATE, "cannot create the benchmark's thread signals");
  }
  x->barriers = 1;
  for (int i = 0; i < r->M; i++) {
    x->w[i].r = r;
    x->w[i].c = &x->p->c[i];
  }
  for (; x->nth < r->M; x->nth++)
    if (pthread_create(&x->th[x->nth], NULL, worker_main, &x->w[x->nth]) != 0)
      return bbvfl_fail(err, BBVFL_E_STATE, "cannot start benchmark client thread %d", x->nth);
  return 0;
}

/* Every client's submission of contract round rd, encoded; the first round sets the gas limit. */
static int encode_submissions(bench *x, uint64_t k, uint64_t rd, bbvfl_err *err) {
  for (int i = 0; i < x->r.M; i++) {
    if (x->masked) {
      bbvfl_rng_bytes(&x->rng, x->q, x->qlen);
    } else {
      for (size_t j = 0; j < x->n; j++) x->h[j] = (float)(2.0 * bbvfl_rng_uniform(&x->rng) - 1.0);
      bbvfl_pbm_quantize(&x->mech, x->h, x->n, &x->rng, x->q);
    }
    free(x->w[i].data);
    x->w[i].data = NULL;
    if ((x->naive ? bbvfl_cenc_naive_submit(rd, x->q, x->n, &x->w[i].data, &x->w[i].len, err)
                  : bbvfl_cenc_submit(rd, x->q, x->qlen, &x->w[i].data, &x->w[i].len, err)) != 0)
      return -1;
  }
  if (k == 0) {
    uint64_t est;
    if (estimate(&x->p->c[0], x->r.to, x->w[0].data, x->w[0].len, "one submission", x->limit, &est, err) != 0) return -1;
    x->r.gas_limit = gas_with_margin(est, 30000 + 8 * x->qlen, x->limit);
    x->res->submit_gas_limit = x->r.gas_limit;
  }
  return 0;
}

/* Starts the round's submissions in every thread and waits for them all. */
static void submit_all(bench *x) {
  run *r = &x->r;
  pthread_mutex_lock(&r->mu);
  r->ndone = 0;
  r->gen++;
  pthread_cond_broadcast(&r->go);
  while (r->ndone < r->M) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += STALL_S;
    if (pthread_cond_timedwait(&r->fin, &r->mu, &dl) == ETIMEDOUT && r->ndone < r->M) {
      /* a submission has sat unmined for STALL_S seconds while the others are done: anvil's
       * automine can leave a transaction that arrived during a block's mining in the pool until
       * the next transaction comes; mine a block for it (counted, and the round's time shows it) */
      pthread_mutex_unlock(&r->mu);
      json_t *ign = NULL;
      bbvfl_err e2 = {0};
      if (bbvfl_rpc_call(x->drv->rpc, "evm_mine", json_array(), &ign, &e2) == 0) x->res->stalls++;
      json_decref(ign);
      pthread_mutex_lock(&r->mu);
    }
  }
  pthread_mutex_unlock(&r->mu);
}

/* The naive contract's aggregate() call of round rd (its time ends the round: *t1). */
static int naive_aggregate(bench *x, uint64_t k, uint64_t rd, bbvfl_cbench_round *out_r, double *t1, bbvfl_err *err) {
  uint8_t *d = NULL;
  size_t len;
  bbvfl_receipt rcpt;
  if (bbvfl_cenc_naive_aggregate(rd, &d, &len, err) != 0) return -1;
  uint64_t g = 0;
  if (k == 0 && estimate(&x->p->c[0], x->r.to, d, len, "the naive aggregate() call", x->limit, &g, err) != 0) {
    free(d);
    return -1;
  }
  if (k == 0) x->post_limit = gas_with_margin(g, 20000, x->limit);
  if (tx_owned(&x->p->c[0], x->r.to, d, len, x->post_limit, &rcpt, err) != 0)
    return bbvfl_wrap(err, "naive aggregate() of round %llu", (unsigned long long)rd);
  *t1 = bbvfl_now();
  out_r->gas += rcpt.gas_used;
  if (rcpt.gas_used > out_r->max_tx_gas) out_r->max_tx_gas = rcpt.gas_used;
  bbvfl_receipt_clear(&rcpt);
  return 0;
}

/* The active client's gradient post of TRAIN round rd. */
static int post_gradient(bench *x, uint64_t rd, bbvfl_cbench_round *out_r, bbvfl_err *err) {
  uint8_t *d = NULL;
  size_t len;
  bbvfl_receipt rcpt;
  random_grad(x);
  if (bbvfl_cenc_post_gradient(rd, x->grad, 4 * x->n, x->fparams, 4 * ((size_t)x->cfg->P + 1), &d, &len, err) != 0)
    return -1;
  if (!x->post_limit) {
    uint64_t g;
    if (estimate(&x->p->c[x->active], x->r.to, d, len, "the gradient post", x->limit, &g, err) != 0) {
      free(d);
      return -1;
    }
    x->post_limit = gas_with_margin(g, 20000, x->limit);
  }
  double tp = bbvfl_now();
  if (tx_owned(&x->p->c[x->active], x->r.to, d, len, x->post_limit, &rcpt, err) != 0)
    return bbvfl_wrap(err, "gradient post of round %llu", (unsigned long long)rd);
  out_r->post_ms = (bbvfl_now() - tp) * 1e3;
  out_r->post_gas = rcpt.gas_used;
  bbvfl_receipt_clear(&rcpt);
  return 0;
}

/* A bare signed 1-wei transfer to receipt, on the chain as it is now (not part of the round). */
static int floor_transfer(bench *x, uint64_t k, bbvfl_cbench_round *out_r, bbvfl_err *err) {
  const bbvfl_u256 one = bbvfl_u256_from_u64(1);
  bbvfl_receipt fr;
  double tf = bbvfl_now();
  if (bbvfl_sender_transact(x->drv->s, x->p->c[0].key.addr, &one, NULL, 0, 21000, TX_TIMEOUT_S, &fr, err) != 0) {
    bbvfl_receipt_clear(&fr);
    return bbvfl_wrap(err, "the interleaved floor transfer after round %llu", (unsigned long long)k);
  }
  out_r->floor_ms = (bbvfl_now() - tf) * 1e3;
  bbvfl_receipt_clear(&fr);
  return 0;
}

/* Round k of the run (contract round rd): the M submissions, the naive aggregate() or the check
 * that exactly one completed the round, the gradient post, the floor transfer. */
static int one_round(bench *x, uint64_t k, uint64_t rd, bbvfl_err *err) {
  const bbvfl_cbench_cfg *cfg = x->cfg;
  const int M = x->r.M;
  bbvfl_cbench_round *out_r = &x->res->rounds[k];
  out_r->round = k;
  out_r->contract_round = rd;
  out_r->epoch = (uint32_t)(k / x->per_epoch);
  out_r->train = x->naive || rd % x->per_epoch < cfg->T;
  if (encode_submissions(x, k, rd, err) != 0) return -1;
  submit_all(x);
  double t0 = x->w[0].t_start, t1 = 0;
  int ncompleted = 0;
  for (int i = 0; i < M; i++) {
    const worker *wi = &x->w[i];
    if (wi->rc != 0) {
      if (err) *err = wi->err;
      return bbvfl_wrap(err, "round %llu, submission of benchmark client %d", (unsigned long long)rd, i);
    }
    if (wi->t_start < t0) t0 = wi->t_start;
    out_r->gas += wi->gas;
    if (wi->gas > out_r->max_tx_gas) out_r->max_tx_gas = wi->gas;
    if (wi->completed) {
      ncompleted++;
      t1 = wi->t_done;
    }
  }
  if (x->naive) {
    if (naive_aggregate(x, k, rd, out_r, &t1, err) != 0) return -1;
  } else if (ncompleted != 1) {
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu: %d of the %d submissions reported RoundCompleted (expected 1)",
                      (unsigned long long)rd, ncompleted, M);
  }
  out_r->agg_ms = (t1 - t0) * 1e3;
  if (!x->naive && out_r->train && post_gradient(x, rd, out_r, err) != 0) return -1;
  if (cfg->floor_each_round && floor_transfer(x, k, out_r, err) != 0) return -1;
  return 0;
}

/* Stops the threads and frees what the run allocated (not the result). */
static void bench_end(bench *x) {
  run *r = &x->r;
  if (x->nth > 0) {
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->go);
    pthread_mutex_unlock(&r->mu);
    for (int i = 0; i < x->nth; i++) pthread_join(x->th[i], NULL);
  }
  if (x->barriers) {
    pthread_cond_destroy(&r->go);
    pthread_cond_destroy(&r->fin);
    pthread_mutex_destroy(&r->mu);
  }
  if (x->w)
    for (int i = 0; i < r->M; i++) free(x->w[i].data);
  free(x->w);
  free(x->q);
  free(x->h);
  free(x->grad);
  free(x->fparams);
  free(x->th);
}

/* The run's buffers, its result's rounds and the RoundCompleted topic. */
static int bench_init(bench *x, bbvfl_cbench_pool *p, const bbvfl_cbench_cfg *cfg, bbvfl_cbench_result *res,
                      bbvfl_err *err) {
  memset(x, 0, sizeof *x);
  x->p = p;
  x->cfg = cfg;
  x->res = res;
  x->naive = cfg->kind == BBVFL_CBENCH_NAIVE;
  x->masked = cfg->kind == BBVFL_CBENCH_MASKED;
  x->per_epoch = x->naive ? cfg->T : cfg->T + cfg->V;
  x->total = (uint64_t)cfg->epochs * x->per_epoch;
  x->n = (size_t)cfg->B * cfg->P;
  x->qlen = x->masked ? 2 * x->n : x->n;
  x->limit = tx_limit(p);
  x->r.M = cfg->M;
  x->drv = &p->c[p->n];
  x->w = calloc((size_t)cfg->M, sizeof *x->w);
  x->q = malloc(x->qlen ? x->qlen : 1);
  x->h = malloc(x->n * sizeof *x->h);
  x->grad = malloc(4 * x->n);
  x->fparams = calloc((size_t)cfg->P + 1, 4);
  x->th = calloc((size_t)cfg->M, sizeof *x->th);
  res->rounds = calloc(x->total, sizeof *res->rounds);
  if (!x->w || !x->q || !x->h || !x->grad || !x->fparams || !x->th || !res->rounds)
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  res->nrounds = x->total;
  uint8_t t[32];
  bbvfl_cev_topic(BBVFL_EV_ROUND_COMPLETED, t);
  x->r.completed_topic[0] = '0';
  x->r.completed_topic[1] = 'x';
  for (int i = 0; i < 32; i++) snprintf(x->r.completed_topic + 2 + 2 * i, 3, "%02x", t[i]);
  return 0;
}

int bbvfl_cbench_run(bbvfl_cbench_pool *p, const bbvfl_cbench_cfg *cfg, bbvfl_cbench_result *res, bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  if (check_cfg(p, cfg, err) != 0) return -1;
  const int M = cfg->M;
  bench x;
  int rc = -1;
  char snap0[80] = "", snap_e[80] = "";
  if (bench_init(&x, p, cfg, res, err) != 0) goto out;
  if (cfg->reset && snapshot(&p->c[0], snap0, sizeof snap0, err) != 0) goto out;
  double t_setup = bbvfl_now();
  if (x.naive ? setup_naive(p, cfg, x.r.to, res, err) : setup_bbvfl(p, cfg, x.r.to, &x.active, res, err)) goto out;
  res->setup_s = bbvfl_now() - t_setup;
  if (cfg->reset >= 2 && snapshot(&p->c[0], snap_e, sizeof snap_e, err) != 0) goto out;

  /* the seed mixed with a fresh random word: two runs never send byte-identical submissions (after
   * an evm_revert the node would answer an identical one with its forgotten receipt) */
  bbvfl_rng_init_seeded(&x.rng, cfg->seed ^ (jitter_gas(0) << 32 | jitter_gas(0)),
                        bbvfl_rng_stream(BBVFL_STREAM_TEST, 0x62656e63));
  x.mech = (bbvfl_mech){.kind = BBVFL_MECH_PBM, .b = cfg->b, .beta = cfg->beta, .C = 1.0};
  random_grad(&x);
  if (start_workers(&x, err) != 0) goto out;
  for (uint64_t k = 0; k < x.total; k++) {
    /* with reset every epoch replays the first epoch's rounds on the contract */
    const uint64_t rd = cfg->reset >= 2 ? k % x.per_epoch : k;
    if (cfg->reset >= 2 && k > 0 && rd == 0) {
      if (revert_to(p, M, snap_e, err) != 0 || snapshot(&p->c[0], snap_e, sizeof snap_e, err) != 0) goto out;
    }
    if (one_round(&x, k, rd, err) != 0) goto out;
    if (cfg->on_round) cfg->on_round(cfg->ctx, k + 1, x.total);
  }
  rc = 0;
out:
  bench_end(&x);
  if (snap0[0]) {
    bbvfl_err e2 = {0};
    if (revert_to(p, M, snap0, &e2) != 0 && rc == 0) {
      if (err) *err = e2;
      rc = -1;
    }
  }
  if (rc != 0) bbvfl_cbench_result_free(res);
  return rc;
}
