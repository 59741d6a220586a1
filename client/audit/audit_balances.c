/* The token's ledger: every Transfer of the reward token since its mint (any sender, any
 * receiver, not only the payouts) rebuilds every account's balance; after the last log each
 * account's balanceOf and the totalSupply, read at the last block of the audit, must equal it,
 * and no Transfer may move more than its sender holds by the earlier events.
 * A balance written into the token's storage (no Transfer behind it), a transfer the events do
 * not show, or a supply other than the pool fails the `balances` check naming the account, the
 * balance the events give and the one the token reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_int.h"
#include "eth/abi.h"

/* Index of a in the sorted ledger, or where it would go (*found 0). */
static size_t ledger_find(const st_t *S, const uint8_t a[20], int *found) {
  size_t lo = 0, hi = S->nhold;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = memcmp(S->hold[mid].addr, a, 20);
    if (c == 0) {
      *found = 1;
      return mid;
    }
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  *found = 0;
  return lo;
}

/* The ledger entry of a (created at balance 0); NULL when out of memory (then ledger_nomem). */
static holder_st *ledger_at(st_t *S, const uint8_t a[20]) {
  int found;
  size_t i = ledger_find(S, a, &found);
  if (found) return &S->hold[i];
  if (S->nhold == S->caphold) {
    size_t cap = S->caphold ? 2 * S->caphold : 16;
    holder_st *n = realloc(S->hold, cap * sizeof *n);
    if (!n) {
      S->ledger_nomem = 1;
      return NULL;
    }
    S->hold = n;
    S->caphold = cap;
  }
  memmove(&S->hold[i + 1], &S->hold[i], (S->nhold - i) * sizeof *S->hold);
  S->nhold++;
  memset(&S->hold[i], 0, sizeof S->hold[i]);
  memcpy(S->hold[i].addr, a, 20);
  return &S->hold[i];
}

/* "client 2", "the aggregator" or "an account outside the session" (for the failure's text). */
static void role_of(const st_t *S, const uint8_t a[20], char *out, size_t n) {
  int i = bbvfl_au_find_client(S, a);
  if (i >= 0) snprintf(out, n, "client %d", i);
  else if (!memcmp(a, S->r->contract, 20)) snprintf(out, n, "the aggregator");
  else snprintf(out, n, "an account outside the session");
}

void bbvfl_au_ledger_transfer(st_t *S, const bbvfl_cev *ev) {
  static const uint8_t zero[20];
  bbvfl_audit_result *r = S->r;
  if (!memcmp(ev->client, zero, 20)) {
    bbvfl_u256_add(&r->minted, &r->minted, &ev->amount);
  } else {
    holder_st *h = ledger_at(S, ev->client);
    if (!h) return;
    if (bbvfl_u256_sub(&h->bal, &h->bal, &ev->amount)) { /* an ERC-20 never lets a balance go negative */
      char a[80], b[80], who[48];
      bbvfl_u256_to_dec(&ev->amount, a);
      bbvfl_u256_add(&h->bal, &h->bal, &ev->amount); /* back to what the events gave it */
      bbvfl_u256_to_dec(&h->bal, b);
      role_of(S, ev->client, who, sizeof who);
      bbvfl_au_fail(S, BBVFL_AC_BALANCES, ev, 0, 0, -1, ev->client,
              "%s: a Transfer of %s out of it, its earlier Transfer events give it only %s", who, a, b);
      memset(&h->bal, 0, sizeof h->bal);
    }
  }
  if (!memcmp(ev->to, zero, 20)) {
    bbvfl_u256_add(&r->burned, &r->burned, &ev->amount);
  } else {
    holder_st *h = ledger_at(S, ev->to);
    if (h) bbvfl_u256_add(&h->bal, &h->bal, &ev->amount);
  }
}

/* A uint256 view of the token at block blk: 0, or -1 with the reason in e (revert: BBVFL_E_REVERT). */
static int token_word(st_t *S, const uint8_t *cd, size_t cdlen, const char *blk, bbvfl_u256 *out, bbvfl_err *e) {
  uint8_t *o = NULL;
  size_t olen = 0;
  if (bbvfl_rpc_eth_call(S->rpc, NULL, S->r->token, cd, cdlen, blk, &o, &olen, e) < 0) {
    free(o);
    return -1;
  }
  int rc = 0;
  if (olen != 32) rc = bbvfl_fail(e, BBVFL_E_PARSE, "the answer is %zu bytes, not one 32-byte word", olen);
  else bbvfl_u256_from_be(o, 32, out);
  free(o);
  return rc;
}

/* A view that could not be read: a revert fails the check (an ERC-20's views do not revert), a
 * node that cannot answer (pruned state ...) leaves it unchecked, saying so. Returns -1. */
static int view_failed(st_t *S, const char *what, const uint8_t *who, const bbvfl_err *e) {
  bbvfl_audit_check *k = &S->r->checks[BBVFL_AC_BALANCES];
  if (e->code == BBVFL_E_REVERT || e->code == BBVFL_E_PARSE) {
    bbvfl_au_fail(S, BBVFL_AC_BALANCES, NULL, 0, 0, -1, who, "%s of the token: %s", what, e->msg);
  } else {
    if (k->status != BBVFL_AS_FAIL) k->status = BBVFL_AS_SKIP;
    snprintf(k->note, sizeof k->note, "%s not read at block %llu: %.180s", what,
             (unsigned long long)S->r->to_block, e->msg);
  }
  return -1;
}

/* totalSupply() against the ledger's minted - burned and the pool. */
static int check_supply(st_t *S, const char *blk) {
  bbvfl_audit_result *r = S->r;
  uint8_t cd[4];
  bbvfl_abi_selector("totalSupply()", cd);
  bbvfl_err e = {0};
  if (token_word(S, cd, sizeof cd, blk, &r->total_supply, &e) < 0) return view_failed(S, "totalSupply()", NULL, &e);
  r->has_supply = 1;
  bbvfl_u256 want;
  bbvfl_u256_sub(&want, &r->minted, &r->burned);
  char a[80], b[80], c[80];
  bbvfl_u256_to_dec(&r->total_supply, a);
  bbvfl_u256_to_dec(&want, b);
  bbvfl_u256_to_dec(&r->params.cfg.reward_pool, c);
  if (bbvfl_u256_cmp(&r->total_supply, &want))
    bbvfl_au_fail(S, BBVFL_AC_BALANCES, NULL, 0, 0, -1, NULL,
            "totalSupply() is %s at block %llu, the Transfer events mint minus burn %s", a,
            (unsigned long long)r->to_block, b);
  else if (bbvfl_u256_cmp(&want, &r->params.cfg.reward_pool))
    bbvfl_au_fail(S, BBVFL_AC_BALANCES, NULL, 0, 0, -1, NULL, "the token's supply is %s, the reward pool (params) %s", b, c);
  else
    bbvfl_au_ok(S, BBVFL_AC_BALANCES);
  return 0;
}

void bbvfl_au_check_balances(st_t *S) {
  bbvfl_audit_result *r = S->r;
  bbvfl_audit_check *k = &r->checks[BBVFL_AC_BALANCES];
  if (!r->has_deploy) {
    k->status = BBVFL_AS_SKIP;
    snprintf(k->note, sizeof k->note, "the token's mint is not in the blocks read: its ledger cannot be rebuilt");
    return;
  }
  /* every client and the aggregator are reconciled even when no Transfer named them */
  for (size_t i = 0; i < S->ncl; i++) ledger_at(S, S->cl[i].addr);
  ledger_at(S, r->contract);
  if (S->ledger_nomem) {
    if (k->status != BBVFL_AS_FAIL) k->status = BBVFL_AS_SKIP;
    snprintf(k->note, sizeof k->note, "out of memory for the token's ledger: balances not reconciled");
    return;
  }
  char blk[24];
  snprintf(blk, sizeof blk, "0x%llx", (unsigned long long)r->to_block);
  if (check_supply(S, blk) < 0) return;
  uint8_t cd[36];
  bbvfl_abi_selector("balanceOf(address)", cd);
  memset(cd + 4, 0, 12);
  for (size_t i = 0; i < S->nhold; i++) {
    const holder_st *h = &S->hold[i];
    memcpy(cd + 16, h->addr, 20);
    bbvfl_u256 got;
    bbvfl_err e = {0};
    if (token_word(S, cd, sizeof cd, blk, &got, &e) < 0) {
      view_failed(S, "balanceOf", h->addr, &e);
      return;
    }
    r->holders++;
    if (bbvfl_u256_cmp(&got, &h->bal)) {
      char a[80], b[80], who[48];
      bbvfl_u256_to_dec(&got, a);
      bbvfl_u256_to_dec(&h->bal, b);
      role_of(S, h->addr, who, sizeof who);
      bbvfl_au_fail(S, BBVFL_AC_BALANCES, NULL, 0, 0, -1, h->addr,
              "%s: balanceOf is %s at block %llu, its Transfer events give %s", who, a,
              (unsigned long long)r->to_block, b);
    } else {
      bbvfl_au_ok(S, BBVFL_AC_BALANCES);
    }
  }
  if (k->status == BBVFL_AS_PASS) {
    char c[80];
    bbvfl_u256_to_dec(&r->total_supply, c);
    snprintf(k->note, sizeof k->note,
             "balanceOf of %llu accounts (every Transfer party, client and the aggregator) at block %llu = the "
             "Transfer events; totalSupply %s = the pool",
             (unsigned long long)r->holders, (unsigned long long)r->to_block, c);
  }
}
