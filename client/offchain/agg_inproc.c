/* The in-process aggregator: the off-chain stand-in for the contract, with the same checks
 * (registered client, one submission per round, length, range) and the same integer sum. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dp/mech.h"
#include "core/aggregator.h"

typedef struct {
  int M, b;
  size_t n;             /* the longest submission (buffers) */
  size_t rn;            /* the open round's length: its first submission's */
  uint64_t round;       /* the open round */
  int open;
  unsigned char *got;   /* M flags */
  int ngot;
  int is_float;
  uint8_t *q;           /* M x n */
  const uint8_t **qp;   /* M row pointers */
  float *f;             /* M x n */
  uint64_t grad_round;
  int have_grad;
  size_t gn;            /* the posted gradient's length */
  float *grad;          /* n */
  bbvfl_agg_inproc_stats st;
} inproc;

static double mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int check_submit(inproc *a, uint64_t round, int client, size_t n, int is_float, bbvfl_err *err) {
  if (client < 0 || client >= a->M)
    return bbvfl_fail(err, BBVFL_E_STATE, "client %d is not registered (clients 0..%d)", client, a->M - 1);
  if (n < 1 || n > a->n)
    return bbvfl_fail(err, BBVFL_E_ARG, "round %llu: client %d submitted %zu values, at most %zu", (unsigned long long)round,
                      client, n, a->n);
  if (a->open && round == a->round && n != a->rn)
    return bbvfl_fail(err, BBVFL_E_ARG, "round %llu: client %d submitted %zu values, the round carries %zu",
                      (unsigned long long)round, client, n, a->rn);
  if (!a->open) {
    a->open = 1;
    a->rn = n;
    a->round = round;
    a->ngot = 0;
    a->is_float = is_float;
    memset(a->got, 0, (size_t)a->M);
  } else if (round != a->round) {
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu is still open (%d of %d submissions): cannot submit to round %llu",
                      (unsigned long long)a->round, a->ngot, a->M, (unsigned long long)round);
  }
  if (a->is_float != is_float)
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu mixes integer and float submissions", (unsigned long long)round);
  if (a->got[client])
    return bbvfl_fail(err, BBVFL_E_STATE, "client %d already submitted in round %llu", client, (unsigned long long)round);
  return 0;
}

static int submit_q(void *self, uint64_t round, int client, const uint8_t *q, size_t n, bbvfl_err *err) {
  inproc *a = self;
  if (check_submit(a, round, client, n, 0, err) != 0) return -1;
  for (size_t i = 0; i < n; i++)
    if (q[i] > a->b)
      return bbvfl_fail(err, BBVFL_E_ARG, "client %d: value %u at %zu exceeds b = %d", client, q[i], i, a->b);
  memcpy(a->q + (size_t)client * a->n, q, n);
  a->got[client] = 1;
  a->ngot++;
  return 0;
}

static int submit_f(void *self, uint64_t round, int client, const float *h, size_t n, bbvfl_err *err) {
  inproc *a = self;
  if (check_submit(a, round, client, n, 1, err) != 0) return -1;
  memcpy(a->f + (size_t)client * a->n, h, n * sizeof(float));
  a->got[client] = 1;
  a->ngot++;
  return 0;
}

static int check_complete(inproc *a, uint64_t round, size_t n, int is_float, bbvfl_err *err) {
  if (!a->open || a->round != round)
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu has no submissions", (unsigned long long)round);
  if (a->ngot < a->M)
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu is incomplete: %d of %d submissions", (unsigned long long)round,
                      a->ngot, a->M);
  if (n != a->rn)
    return bbvfl_fail(err, BBVFL_E_ARG, "sum of %zu values, round %llu carries %zu", n, (unsigned long long)round, a->rn);
  if (a->is_float != is_float)
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu carries %s submissions", (unsigned long long)round,
                      a->is_float ? "float" : "integer");
  return 0;
}

/* Books dt seconds of summing to the round's kind (evaluation or training) and closes it. */
static void close_round(inproc *a, uint64_t round, double dt) {
  if (round >= BBVFL_EVAL_ROUND_BASE) {
    a->st.eval_sum_s += dt;
    a->st.eval_rounds++;
  } else {
    a->st.train_sum_s += dt;
    a->st.train_rounds++;
  }
  a->open = 0;
}

static int sum_q(void *self, uint64_t round, uint32_t *sum, size_t n, bbvfl_err *err) {
  inproc *a = self;
  if (check_complete(a, round, n, 0, err) != 0) return -1;
  double t0 = mono();
  bbvfl_sum_u8(a->qp, (size_t)a->M, n, sum);
  close_round(a, round, mono() - t0);
  return 0;
}

#if defined(__GNUC__)
typedef float v4f __attribute__((vector_size(16)));
#endif

/* sum[i] = sum over m of x[m*stride + i], i < n, four lanes at a time where the compiler offers vectors */
static void sum_floats(const float *x, size_t M, size_t stride, size_t n, float *sum) {
  size_t i = 0;
#if defined(__GNUC__)
  for (; i + 4 <= n; i += 4) {
    v4f acc = {0, 0, 0, 0};
    for (size_t m = 0; m < M; m++) {
      v4f v;
      memcpy(&v, x + m * stride + i, sizeof v);
      acc += v;
    }
    memcpy(sum + i, &acc, sizeof acc);
  }
#endif
  for (; i < n; i++) {
    float acc = 0;
    for (size_t m = 0; m < M; m++) acc += x[m * stride + i];
    sum[i] = acc;
  }
}

static int sum_f(void *self, uint64_t round, float *sum, size_t n, bbvfl_err *err) {
  inproc *a = self;
  if (check_complete(a, round, n, 1, err) != 0) return -1;
  double t0 = mono();
  sum_floats(a->f, (size_t)a->M, a->n, n, sum);
  close_round(a, round, mono() - t0);
  return 0;
}

static int post_gradient(void *self, uint64_t round, const float *grad, size_t n, const uint8_t *head, size_t hl,
                         bbvfl_err *err) {
  (void)head;
  (void)hl;
  inproc *a = self;
  if (round >= BBVFL_EVAL_ROUND_BASE)
    return bbvfl_fail(err, BBVFL_E_STATE, "evaluation rounds carry no gradient");
  if (n < 1 || n > a->n) return bbvfl_fail(err, BBVFL_E_ARG, "gradient of %zu values, at most %zu", n, a->n);
  memcpy(a->grad, grad, n * sizeof(float));
  a->gn = n;
  a->grad_round = round;
  a->have_grad = 1;
  return 0;
}

static int read_gradient(void *self, uint64_t round, float *grad, size_t n, bbvfl_err *err) {
  inproc *a = self;
  if (!a->have_grad || a->grad_round != round)
    return bbvfl_fail(err, BBVFL_E_STATE, "no gradient posted for round %llu", (unsigned long long)round);
  if (n != a->gn)
    return bbvfl_fail(err, BBVFL_E_ARG, "gradient buffer of %zu values, round %llu's gradient has %zu", n,
                      (unsigned long long)round, a->gn);
  memcpy(grad, a->grad, n * sizeof(float));
  return 0;
}

static void destroy(void *self) {
  inproc *a = self;
  if (!a) return;
  free(a->got);
  free(a->q);
  free(a->qp);
  free(a->f);
  free(a->grad);
  free(a);
}

static const bbvfl_agg_ops INPROC_OPS = {submit_q, submit_f, sum_q, sum_f, post_gradient, read_gradient, destroy};

int bbvfl_agg_inproc_new(bbvfl_agg *out, int M, size_t n, int b, bbvfl_err *err) {
  out->ops = NULL;
  out->self = NULL;
  if (M < 1 || n < 1) return bbvfl_fail(err, BBVFL_E_ARG, "aggregator needs M >= 1 and n >= 1");
  inproc *a = calloc(1, sizeof *a);
  if (!a) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  a->M = M;
  a->n = n;
  a->b = b;
  a->got = calloc((size_t)M, 1);
  a->q = malloc((size_t)M * n);
  a->qp = malloc((size_t)M * sizeof *a->qp);
  a->f = malloc((size_t)M * n * sizeof(float));
  a->grad = malloc(n * sizeof(float));
  if (!a->got || !a->q || !a->qp || !a->f || !a->grad) {
    destroy(a);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (int m = 0; m < M; m++) a->qp[m] = a->q + (size_t)m * n;
  out->ops = &INPROC_OPS;
  out->self = a;
  return 0;
}

void bbvfl_agg_inproc_stats_get(bbvfl_agg *agg, bbvfl_agg_inproc_stats *st, int reset) {
  inproc *a = agg->self;
  *st = a->st;
  if (reset) memset(&a->st, 0, sizeof a->st);
}
