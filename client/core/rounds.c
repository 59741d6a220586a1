#include "core/rounds.h"

int bbvfl_rounds_is_train(const bbvfl_rounds_sched *s, uint64_t r) {
  return r % ((uint64_t)s->T + s->V) < s->T;
}

uint64_t bbvfl_rounds_finish_until(const bbvfl_rounds_sched *s, uint64_t from, uint64_t r) {
  if (s->one_open) return r;
  uint64_t per = (uint64_t)s->T + s->V;
  int last_epoch = s->epochs && per && r / per + 1 >= (uint64_t)s->epochs;
  /* a training window keeps the latest s windows open; so does an evaluation round (pipelined
     too), except in the last epoch: the final evaluation sees every gradient */
  unsigned skip = bbvfl_rounds_is_train(s, r) || !last_epoch ? s->staleness : 0, seen = 0;
  uint64_t until = from;
  for (uint64_t p = r; p > from; p--) {
    if (!bbvfl_rounds_is_train(s, p - 1)) continue;
    if (seen++ < skip) continue;
    until = p;
    break;
  }
  if (s->slots && r + 1 > s->slots && until < r + 1 - s->slots) until = r + 1 - s->slots; /* the open rounds */
  return until;
}

int bbvfl_rounds_run(const bbvfl_rounds_sched *s, uint64_t start, uint64_t first_open, uint64_t total,
                     const bbvfl_rounds_ops *ops, void *ctx, bbvfl_err *err) {
  uint64_t next = first_open; /* the oldest round not finished */
  for (uint64_t r = start; r <= total; r++) {
    uint64_t until = r == total ? total : bbvfl_rounds_finish_until(s, next, r);
    for (; next < until; next++)
      if (ops->finish(ctx, next, err) != 0) return -1;
    if (r == total) break;
    if (ops->checkpoint && ops->checkpoint(ctx, r, next, err) != 0) return -1;
    if (ops->start(ctx, r, err) != 0) return -1;
  }
  return 0;
}
