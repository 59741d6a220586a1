#include "core/schedule.h"

#include <stdlib.h>
#include <string.h>

#include "eth/keccak.h"

uint64_t bbvfl_schedule_draw(const uint8_t S[32], uint64_t epoch, uint64_t i, uint64_t m) {
  uint8_t msg[48], h[32];
  memcpy(msg, S, 32);
  for (int k = 0; k < 8; k++) {
    msg[32 + k] = (uint8_t)(epoch >> (56 - 8 * k));
    msg[40 + k] = (uint8_t)(i >> (56 - 8 * k));
  }
  bbvfl_keccak256(msg, sizeof msg, h);
  /* big-endian 256-bit value mod m, one byte at a time (Horner); r < m <= 2^56 keeps r*256 + 255
   * inside 64 bits */
  uint64_t r = 0;
  for (int k = 0; k < 32; k++) r = ((r << 8) | h[k]) % m;
  return r;
}

void bbvfl_schedule_perm(const uint8_t S[32], uint64_t epoch, size_t n, size_t *perm) {
  for (size_t i = 0; i < n; i++) perm[i] = i;
  for (size_t i = n - 1; i >= 1 && n > 1; i--) {
    size_t j = (size_t)bbvfl_schedule_draw(S, epoch, i, (uint64_t)i + 1);
    size_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

int bbvfl_schedule_init(bbvfl_schedule *s, const uint8_t S[32], size_t n_train, size_t B, bbvfl_err *err) {
  memset(s, 0, sizeof *s);
  if (B < 1) return bbvfl_fail(err, BBVFL_E_ARG, "batch size must be >= 1");
  if (n_train < B)
    return bbvfl_fail(err, BBVFL_E_ARG, "%zu training rows are fewer than one batch of %zu", n_train, B);
  if ((uint64_t)n_train > (UINT64_C(1) << 56))
    return bbvfl_fail(err, BBVFL_E_ARG, "%zu training rows: the schedule supports at most 2^56", n_train);
  s->perm[0] = malloc(n_train * sizeof *s->perm[0]);
  s->perm[1] = malloc(n_train * sizeof *s->perm[1]);
  if (!s->perm[0] || !s->perm[1]) {
    bbvfl_schedule_free(s);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  memcpy(s->S, S, 32);
  s->n = n_train;
  s->B = B;
  s->R = n_train / B;
  return 0;
}

void bbvfl_schedule_free(bbvfl_schedule *s) {
  if (!s) return;
  for (int i = 0; i < 2; i++) {
    free(s->perm[i]);
    s->perm[i] = NULL;
    s->have[i] = 0;
  }
}

const size_t *bbvfl_schedule_batch(bbvfl_schedule *s, uint64_t epoch, size_t k) {
  int i = -1;
  if (s->have[s->last] && s->epoch[s->last] == epoch) i = s->last;
  else if (s->have[!s->last] && s->epoch[!s->last] == epoch) i = !s->last;
  if (i < 0) { /* a third epoch: it replaces the one used less recently */
    i = !s->last;
    bbvfl_schedule_perm(s->S, epoch, s->n, s->perm[i]);
    s->epoch[i] = epoch;
    s->have[i] = 1;
  }
  s->last = i;
  return s->perm[i] + k * s->B;
}
