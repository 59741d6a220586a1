/* TEST ONLY (see tamper.h): five ways for an active client to deviate, for the tests of the
   passive clients' head check and the audit's check `head`, and (sum) of the optimistic dispute. */
#include "tamper.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ml/head.h"

enum { T_LABEL, T_SCALE, T_SKIP, T_STALE, T_SUM };

typedef struct {
  int kind;
  uint64_t round;
  FILE *log;
  size_t n;          /* head parameters */
  float *cur_start;  /* the head's parameters before the current round's steps */
  float *prev_start; /* before the previous training round's steps (NULL until there was one) */
  int have_cur, have_prev;
} tamper_state;

static tamper_state T;

static int ensure(tamper_state *s, size_t n, bbvfl_err *err) {
  if (s->n == n) return 0;
  free(s->cur_start);
  free(s->prev_start);
  s->cur_start = calloc(n, sizeof(float));
  s->prev_start = calloc(n, sizeof(float));
  s->have_cur = s->have_prev = 0;
  s->n = n;
  if (!s->cur_start || !s->prev_start) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

/* The window's gradients recomputed with params (the head's own parameters put back after). */
static int grad_with(struct bbvfl_onchain_tamper *t, const float *params, bbvfl_err *err) {
  bbvfl_vhead *h = t->head;
  size_t n = h->fh.nparams, BP = t->B * t->P;
  float *keep = malloc(n * sizeof *keep), *hhat = malloc(BP * sizeof *hhat);
  int rc = -1;
  if (!keep || !hhat) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  memcpy(keep, h->fh.params, n * sizeof *keep);
  memcpy(h->fh.params, params, n * sizeof *keep);
  rc = 0;
  for (size_t k = 0; k < t->nb && rc == 0; k++) {
    double loss = 0;
    rc = bbvfl_vhead_estimate(h, t->sum + k * BP, NULL, t->B, hhat, err);
    if (rc == 0) rc = bbvfl_fhead_train_batch(&h->fh, hhat, t->y + k * t->B, t->B, &loss, t->grad + k * BP, NULL, err);
  }
  memcpy(h->fh.params, keep, n * sizeof *keep);
out:
  free(keep);
  free(hhat);
  return rc;
}

static int hook(void *ctx, struct bbvfl_onchain_tamper *t, bbvfl_err *err) {
  tamper_state *s = ctx;
  if (t->stage == BBVFL_TAMPER_SUM) { /* optimistic mode: the packed sum about to be posted */
    if (s->kind != T_SUM || t->round != s->round || !t->psum_len) return 0;
    t->psum[0] ^= 0x80; /* the lowest bit of the round's first value */
    if (s->log) fprintf(s->log, "TAMPER (test only): round %" PRIu64 ": posting a wrong sum\n", t->round);
    return 0;
  }
  if (s->kind == T_SUM) return 0;
  if (ensure(s, t->head->fh.nparams, err) < 0) return -1;
  if (t->stage == BBVFL_TAMPER_TRAIN) {
    if (s->have_cur) {
      memcpy(s->prev_start, s->cur_start, s->n * sizeof(float));
      s->have_prev = 1;
    }
    memcpy(s->cur_start, t->head->fh.params, s->n * sizeof(float));
    s->have_cur = 1;
    if (t->round == s->round && s->kind == T_LABEL) {
      int classes = t->head->fh.nclasses;
      t->y[0] = (t->y[0] + 1) % classes;
      if (s->log) fprintf(s->log, "TAMPER (test only): round %" PRIu64 ": label of its first row flipped\n", t->round);
    }
    return 0;
  }
  if (t->round != s->round) return 0;
  size_t coords = t->nb * t->B * t->P;
  switch (s->kind) {
  case T_SCALE:
    for (size_t i = 0; i < coords; i++) t->grad[i] *= 1.01f;
    break;
  case T_SKIP:
    bbvfl_f32_to_be(s->cur_start, s->n, t->head_be);
    break;
  case T_STALE:
    if (!s->have_prev) return bbvfl_fail(err, BBVFL_E_ARG, "tamper stale: round %" PRIu64 " has no round before it", t->round);
    if (grad_with(t, s->prev_start, err) < 0) return -1;
    break;
  default: return 0;
  }
  if (s->log) fprintf(s->log, "TAMPER (test only): round %" PRIu64 ": posting a deviating %s\n", t->round,
                      s->kind == T_SKIP ? "head" : "gradient");
  return 0;
}

int bbvfl_test_tamper_from_env(bbvfl_onchain_cfg *cfg, FILE *log, bbvfl_err *err) {
  const char *v = getenv("BBVFL_TAMPER");
  if (!v || !*v) return 0;
  static const char *names[] = {"label", "scale", "skip", "stale", "sum"};
  const char *colon = strchr(v, ':');
  int kind = -1;
  for (int i = 0; i < 5 && colon; i++)
    if ((size_t)(colon - v) == strlen(names[i]) && !strncmp(v, names[i], strlen(names[i]))) kind = i;
  char *end = NULL;
  unsigned long long r = colon ? strtoull(colon + 1, &end, 10) : 0;
  if (kind < 0 || !end || end == colon + 1 || *end)
    return bbvfl_fail(err, BBVFL_E_ARG, "BBVFL_TAMPER=%s: expected label|scale|skip|stale|sum:ROUND", v);
  memset(&T, 0, sizeof T);
  T.kind = kind;
  T.round = r;
  T.log = log;
  cfg->tamper = hook;
  cfg->tamper_ctx = &T;
  if (log) fprintf(log, "TAMPER (test only): this client deviates at training round %llu if it is active (%s)\n", r, names[kind]);
  return 0;
}
