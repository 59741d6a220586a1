/* Event replay of the epochs' ends: metrics, payouts (RewardsPaid) and the token transfers that
 * carry them. */
#include <stdlib.h>
#include <string.h>

#include "audit/audit_int.h"

void bbvfl_au_on_metrics(st_t *S, const bbvfl_cev *ev) {
  int ai = bbvfl_au_find_client(S, ev->client);
  int bad = 0;
  if (ai < 0 || ai != S->active) {
    bbvfl_au_fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metrics posted by a client that is not active");
    bad = 1;
  }
  if (ev->epoch >= S->p.cfg.epochs || !bbvfl_au_epoch_complete(S, ev->epoch)) {
    bbvfl_au_fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metrics for an epoch that is not complete");
    return;
  }
  bbvfl_audit_epoch_fig *f = bbvfl_au_epoch_fig(S, ev->epoch, 1);
  if (!f) return;
  if (f->has_metrics) {
    bbvfl_au_fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metrics posted twice");
    return;
  }
  if (ev->auroc_micro > 1000000 || ev->accuracy_micro > 1000000) {
    bbvfl_au_fail(S, BBVFL_AC_METRICS, ev, 0, 0, ev->epoch, ev->client, "metric above 1");
    bad = 1;
  }
  f->has_metrics = 1;
  f->auroc_micro = ev->auroc_micro;
  f->accuracy_micro = ev->accuracy_micro;
  f->loss_micro = ev->loss_micro;
  if (!bad) bbvfl_au_ok(S, BBVFL_AC_METRICS);
}

void bbvfl_au_settle(st_t *S) {
  while (S->unsettled < S->p.cfg.epochs) {
    bbvfl_audit_epoch_fig *f = bbvfl_au_epoch_fig(S, S->unsettled, 0);
    if (!f || !f->has_metrics || !f->rewards_paid) break;
    S->unsettled++;
  }
}

static void check_pending_transfer(st_t *S) {
  if (!S->pend) return;
  bbvfl_cev fake;
  memset(&fake, 0, sizeof fake);
  memcpy(fake.tx_hash, S->pend_tx, 32);
  fake.block_number = S->pend_block;
  char dec[80];
  bbvfl_u256_to_dec(&S->pend_amt, dec);
  bbvfl_au_fail(S, BBVFL_AC_REWARDS, &fake, 0, 0, S->rp_epoch, S->pend_to, "RewardsPaid of %s without its token transfer", dec);
  S->pend = 0;
}

/* What payRewards(epoch) owes client c: its accepted submissions to the rounds up to the epoch's
   last (a later round's are paid with their own epoch), less what it was already paid; never
   negative (the contract skips a client already paid as much). */
static uint64_t due_of(const st_t *S, const client_st *c, uint32_t epoch) {
  uint64_t cap = bbvfl_cconfig_epoch_start(&S->p.cfg, (uint64_t)epoch + 1);
  uint64_t acc = c->accepted < cap ? c->accepted : cap;
  return acc > c->rewarded ? acc - c->rewarded : 0;
}

/* End of one payRewards call: nobody due may be left out. */
void bbvfl_au_close_rewards_group(st_t *S) {
  if (!S->rp_open) return;
  check_pending_transfer(S);
  S->rp_open = 0;
  bbvfl_cev fake;
  memset(&fake, 0, sizeof fake);
  memcpy(fake.tx_hash, S->rp_tx, 32);
  fake.block_number = S->rp_block;
  for (size_t i = 0; i < S->ncl; i++)
    if (due_of(S, &S->cl[i], S->rp_epoch) > 0)
      bbvfl_au_fail(S, BBVFL_AC_REWARDS, &fake, 0, 0, S->rp_epoch, S->cl[i].addr,
           "left out of the payout: %llu accepted submissions up to the epoch's last round, %llu rewarded",
           (unsigned long long)(S->cl[i].rewarded + due_of(S, &S->cl[i], S->rp_epoch)),
           (unsigned long long)S->cl[i].rewarded);
  bbvfl_au_settle(S);
}

void bbvfl_au_on_rewards_paid(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  if (S->rp_open && memcmp(S->rp_tx, ev->tx_hash, 32)) bbvfl_au_close_rewards_group(S);
  check_pending_transfer(S);
  if (!S->rp_open) { /* first event of a payRewards call */
    S->rp_open = 1;
    memcpy(S->rp_tx, ev->tx_hash, 32);
    S->rp_epoch = ev->epoch;
    S->rp_block = ev->block_number;
    if (fx->have_tx && (S->active < 0 || memcmp(fx->from, S->cl[S->active].addr, 20)))
      bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, fx->from, "payout triggered by a client that is not active");
    bbvfl_audit_epoch_fig *f = NULL;
    if (ev->epoch >= S->p.cfg.epochs || !bbvfl_au_epoch_complete(S, ev->epoch))
      bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, NULL, "payout for an epoch that is not complete");
    else if ((f = bbvfl_au_epoch_fig(S, ev->epoch, 1)) && f->rewards_paid)
      bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, NULL, "second payout for the epoch");
    if (f) f->rewards_paid = 1;
  } else if (ev->epoch != S->rp_epoch) {
    bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client, "one payout names two epochs");
  }
  static const uint8_t zero[20];
  if (!memcmp(ev->client, zero, 20)) { /* the "nobody was due" marker */
    bbvfl_u256 z = bbvfl_u256_from_u64(0);
    if (bbvfl_u256_cmp(&ev->amount, &z) || ev->submissions)
      bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, NULL, "payout to the zero address");
    return;
  }
  int i = bbvfl_au_find_client(S, ev->client);
  if (i < 0) {
    bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client, "payout to an unregistered address");
    return;
  }
  client_st *c = &S->cl[i];
  uint64_t due = due_of(S, c, S->rp_epoch);
  bbvfl_u256 want;
  int bad = 0;
  if (ev->submissions != due) {
    bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client,
         "paid for %u submissions, %llu accepted up to the epoch's last round and not yet rewarded", ev->submissions, (unsigned long long)due);
    bad = 1;
  }
  if (bbvfl_u256_mul_u64(&want, &S->p.cfg.reward_per_submission, due) || bbvfl_u256_cmp(&want, &ev->amount)) {
    char a[80], b[80];
    bbvfl_u256_to_dec(&ev->amount, a);
    bbvfl_u256_to_dec(&want, b);
    bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, ev->epoch, ev->client, "paid %s, rate x %llu new submissions = %s", a,
         (unsigned long long)due, b);
    bad = 1;
  }
  c->rewarded += ev->submissions;
  bbvfl_u256_add(&c->paid, &c->paid, &ev->amount);
  S->pend = 1;
  memcpy(S->pend_to, ev->client, 20);
  S->pend_amt = ev->amount;
  memcpy(S->pend_tx, ev->tx_hash, 32);
  S->pend_block = ev->block_number;
  if (!bad) bbvfl_au_ok(S, BBVFL_AC_REWARDS);
}

void bbvfl_au_on_transfer(st_t *S, const bbvfl_cev *ev) {
  static const uint8_t zero[20];
  bbvfl_au_ledger_transfer(S, ev); /* every Transfer, whoever moves tokens: the balances check's ledger */
  if (!memcmp(ev->client, zero, 20)) { /* mint */
    if (memcmp(ev->to, S->r->contract, 20) || bbvfl_u256_cmp(&ev->amount, &S->p.cfg.reward_pool))
      bbvfl_au_fail(S, BBVFL_AC_PARAMS, ev, 0, 0, -1, ev->to, "token mint is not the reward pool to the aggregator");
    else
      bbvfl_au_ok(S, BBVFL_AC_PARAMS);
    return;
  }
  if (memcmp(ev->client, S->r->contract, 20)) return; /* clients moving their own tokens */
  if (!S->pend || memcmp(S->pend_tx, ev->tx_hash, 32)) {
    bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, -1, ev->to, "token transfer from the aggregator without a RewardsPaid");
    return;
  }
  S->pend = 0;
  if (memcmp(S->pend_to, ev->to, 20) || bbvfl_u256_cmp(&S->pend_amt, &ev->amount)) {
    bbvfl_au_fail(S, BBVFL_AC_REWARDS, ev, 0, 0, S->rp_epoch, ev->to, "token transfer does not match its RewardsPaid");
    return;
  }
  int i = bbvfl_au_find_client(S, ev->to);
  if (i >= 0) bbvfl_u256_add(&S->cl[i].transferred, &S->cl[i].transferred, &ev->amount);
}
