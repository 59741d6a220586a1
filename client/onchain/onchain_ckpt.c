#include "onchain/onchain_int.h"
#include "onchain/statedir.h"

/* ------------------------------------------------------------------ checkpoints */

int bbvfl_oc_save_progress(cl *c, uint64_t next_round, uint64_t first_open, bbvfl_err *err) {
  if (c->lr) return 0; /* LR keeps no checkpoints (docs/LR.md "On chain": no restart) */
  double t0 = bbvfl_now();
  char p[1100], name[32];
  int slot = c->ck.slot ^ 1;
  snprintf(name, sizeof name, "party-%d.ckpt", slot);
  bbvfl_oc_path_in(c, p, sizeof p, name);
  if (bbvfl_party_save(&c->party, p, err) < 0) return -1;
  if (c->have_head) {
    snprintf(name, sizeof name, "head-%d.ckpt", slot);
    bbvfl_oc_path_in(c, p, sizeof p, name);
    if (bbvfl_vhead_save(&c->head, p, err) < 0) return -1;
  }
  bbvfl_ckpt k = {0};
  bbvfl_ckpt_put_bytes(&k, c->agg.address, 20); /* first: statedir.c reads it before any transaction */
  bbvfl_ckpt_put_bytes(&k, c->res->S, 32);
  bbvfl_ckpt_put_u64(&k, next_round);
  bbvfl_ckpt_put_u64(&k, first_open);
  bbvfl_ckpt_put_u64(&k, (uint64_t)slot);
  bbvfl_ckpt_put_u64(&k, (uint64_t)c->have_head);
  bbvfl_ckpt_put_f64(&k, c->act.loss_sum);
  bbvfl_ckpt_put_f64(&k, c->act.agg_sum);
  bbvfl_ckpt_put_floats(&k, c->probs, c->neval * (size_t)c->K);
  bbvfl_oc_path_in(c, p, sizeof p, "progress.ckpt");
  int rc = bbvfl_ckpt_save(&k, p, BBVFL_STATEDIR_PROGRESS_KIND, err);
  bbvfl_ckpt_free(&k);
  if (rc == 0) c->ck.slot = slot;
  c->res->ckpt_s += bbvfl_now() - t0;
  return rc;
}

/* 1 resumed (next round in *next, the oldest unfinished in *first_open), 0 nothing to resume. */
int bbvfl_oc_load_progress(cl *c, uint64_t *next, uint64_t *first_open, bbvfl_err *err) {
  char p[1100], name[32];
  bbvfl_oc_path_in(c, p, sizeof p, "progress.ckpt");
  if (access(p, F_OK) != 0) return 0;
  if (c->lr)
    return bbvfl_fail(err, BBVFL_E_STATE, "%s: a restarted --model lr client cannot resume (LR keeps no checkpoints)", p);
  bbvfl_ckpt k = {0};
  if (bbvfl_ckpt_open(&k, p, BBVFL_STATEDIR_PROGRESS_KIND, err) < 0) return -1;
  uint8_t addr[20], S[32];
  uint64_t slot, hh;
  int rc = -1;
  if (bbvfl_ckpt_get_bytes(&k, addr, 20, err) || bbvfl_ckpt_get_bytes(&k, S, 32, err) ||
      bbvfl_ckpt_get_u64(&k, next, err) || bbvfl_ckpt_get_u64(&k, first_open, err) ||
      bbvfl_ckpt_get_u64(&k, &slot, err) || bbvfl_ckpt_get_u64(&k, &hh, err) ||
      bbvfl_ckpt_get_f64(&k, &c->act.loss_sum, err) || bbvfl_ckpt_get_f64(&k, &c->act.agg_sum, err) ||
      bbvfl_ckpt_get_floats(&k, c->probs, c->neval * (size_t)c->K, err)) {
    bbvfl_wrap(err, "%s", p);
    goto out;
  }
  /* the aggregator was checked before any transaction (statedir.c); the seed S only now */
  if (memcmp(addr, c->agg.address, 20) || memcmp(S, c->res->S, 32)) {
    bbvfl_fail(err, BBVFL_E_STATE, "%s belongs to another session: use a fresh --state-dir, or delete %s", p, c->dir);
    goto out;
  }
  c->ck.slot = (int)(slot & 1);
  snprintf(name, sizeof name, "party-%d.ckpt", c->ck.slot);
  bbvfl_oc_path_in(c, p, sizeof p, name);
  if (bbvfl_party_load(&c->party, p, err) < 0) goto out;
  if (hh && c->have_head) {
    snprintf(name, sizeof name, "head-%d.ckpt", c->ck.slot);
    bbvfl_oc_path_in(c, p, sizeof p, name);
    if (bbvfl_vhead_load(&c->head, p, err) < 0) goto out;
  }
  rc = 1;
out:
  bbvfl_ckpt_free(&k);
  return rc;
}
