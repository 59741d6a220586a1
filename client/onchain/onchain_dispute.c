/* Optimistic mode (contract/src/BbvflPackedAggregator.sol, BbvflOptimisticAggregator): the claim
 * is keccak256 of the round's packed sum (SumClaimed's sumHash; its RoundCompleted has no sum), so
 * every reader sums the round's payloads itself (bbvfl_oc_claimed_sum), and a passive client
 * checks each claim and disputes a wrong one within the dispute window. The payloads come from the
 * round's SubmittedPayload logs (what the contract hashed at submit); their bit-sliced sum
 * (binding/packing.h, the contract's adder) is hashed and compared with the claimed hash. A wrong
 * claim is disputed with dispute(round, claimer, sumHash, payloads); the contract recomputes the
 * sum, excludes the claimer, elects a new active client if the claimer was active and rolls the
 * session back to the round
 * (SumDisputed, then RoundCompleted with the right sum). Another client's dispute of the same
 * claim (ours then reverts NoClaim) is the same outcome. One honest client suffices. */
#include "onchain/onchain_int.h"

#include "bbvfl_errors.h" /* generated from abi/: BBVFL_SEL_* */
#include "eth/keccak.h"
#include "binding/fit.h"

/* The first event of `kind` for round r at or after block from (1 found, 0 none, -1 error). */
static int event_from(cl *c, bbvfl_cev_kind kind, uint64_t r, uint64_t from, bbvfl_cev *ev, bbvfl_err *err) {
  uint64_t keep = c->blk;
  c->blk = from;
  int f = bbvfl_oc_query_event(c, kind, r, ev, err);
  c->blk = keep;
  return f;
}

/* The round's payloads the claim covers: every client's latest SubmittedPayload of round r when
   their number is the claim's count, else those of the current participants and the claimer. */
static int claim_payloads(cl *c, uint64_t r, uint64_t from, size_t want_len, unsigned count, const uint8_t claimer[20],
                          uint8_t **pl, size_t *plen, size_t *got, bbvfl_err *err) {
  size_t n = c->lab.naddrs;
  if (bbvfl_aggc_round_payloads(&c->agg, r, from, (const uint8_t(*)[20])c->lab.addrs, n, want_len, pl, plen, got, err) < 0)
    return -1;
  if (*got == count) return 0;
  uint8_t(*parts)[20] = NULL;
  size_t np = 0;
  if (bbvfl_aggc_participants(&c->agg, &parts, &np, err) < 0) return -1;
  for (size_t i = 0; i < n; i++) {
    int in = !memcmp(c->lab.addrs[i], claimer, 20);
    for (size_t k = 0; k < np && !in; k++) in = !memcmp(parts[k], c->lab.addrs[i], 20);
    if (!in && pl[i]) {
      free(pl[i]);
      pl[i] = NULL;
      (*got)--;
    }
  }
  free(parts);
  return 0;
}

/* The packed sum of the payloads the claim of round r (its RoundCompleted rc, made by claimer)
   covers, into mine (slen bytes, zeroed here); pl/plen (n = c->lab.naddrs slots, caller frees) hold the
   payloads, list/plen[0..*k) the same compacted in client index order (dispute()'s argument). */
static int claim_sum(cl *c, uint64_t r, const bbvfl_cev *rc, const uint8_t claimer[20], size_t coords, uint8_t *mine,
                     size_t slen, uint8_t **pl, size_t *plen, const uint8_t **list, size_t *k, bbvfl_err *err) {
  size_t n = c->lab.naddrs, got = 0, vlen = bbvfl_packed_len(coords, c->cp.value_bits);
  memset(mine, 0, slen);
  /* the round's submissions precede its claim; a lower bound: the deploy block (rounds far back:
     the block where an earlier round became done) */
  uint64_t back = r >= OC_DONE_RING - 1 ? r - (OC_DONE_RING - 1) : UINT64_MAX;
  uint64_t pfrom = back != UINT64_MAX && c->conn.done_blk[back % OC_DONE_RING] ? c->conn.done_blk[back % OC_DONE_RING]
                                                                          : c->sess->deploy_block;
  if (claim_payloads(c, r, pfrom, vlen, rc->participants, claimer, pl, plen, &got, err) < 0) return -1;
  *k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!pl[i]) continue;
    if (bbvfl_packed_add(mine, slen, pl[i], plen[i], coords, c->cp.value_bits, c->cp.sum_bits, err) < 0) return -1;
    list[*k] = pl[i];
    plen[*k] = plen[i]; /* compacted in place: k <= i */
    (*k)++;
  }
  return 0;
}

int bbvfl_oc_claimed_sum(cl *c, const bbvfl_cev *rc, uint64_t coords, bbvfl_err *err) {
  uint64_t r = rc->round;
  bbvfl_cev sc;
  memset(&sc, 0, sizeof sc);
  size_t n = c->lab.naddrs, k = 0, slen = bbvfl_packed_len(coords, c->cp.sum_bits);
  uint8_t **pl = calloc(n ? n : 1, sizeof *pl), *mine = calloc(slen ? slen : 1, 1);
  size_t *plen = calloc(n ? n : 1, sizeof *plen);
  const uint8_t **list = calloc(n ? n : 1, sizeof *list);
  int ret = -1;
  if (!pl || !mine || !plen || !list) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  int f = event_from(c, BBVFL_EV_SUM_CLAIMED, r, rc->block_number, &sc, err);
  if (f <= 0) {
    if (f == 0) bbvfl_fail(err, BBVFL_E_STATE, "round %llu: a RoundCompleted without SumClaimed", (unsigned long long)r);
    goto out;
  }
  if (claim_sum(c, r, rc, sc.client, (size_t)coords, mine, slen, pl, plen, list, &k, err) < 0) goto out;
  ret = bbvfl_cdec_round_sum(&c->cp, mine, slen, c->sum, coords, err);
out:
  for (size_t i = 0; pl && i < n; i++) free(pl[i]);
  free(pl);
  free(plen);
  free(list);
  free(mine);
  bbvfl_cev_clear(&sc);
  return ret;
}

int bbvfl_oc_check_claim(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->wire != BBVFL_WIRE_OPTIMISTIC || c->is_active) return 0;
  uint64_t r = sl->r;
  /* the claim: the round's first RoundCompleted from where this client's events are */
  bbvfl_cev rc, sc;
  memset(&sc, 0, sizeof sc);
  c->blk = c->conn.ev_blk;
  int w = bbvfl_oc_wait_event(c, BBVFL_EV_ROUND_COMPLETED, r, &rc, err);
  if (w != 0) return w;
  size_t n = c->lab.naddrs, k = 0, coords = sl->L.coords;
  size_t slen = bbvfl_packed_len(coords, c->cp.sum_bits);
  uint8_t **pl = calloc(n ? n : 1, sizeof *pl), *mine = calloc(slen ? slen : 1, 1);
  size_t *plen = calloc(n ? n : 1, sizeof *plen);
  const uint8_t **list = calloc(n ? n : 1, sizeof *list);
  int ret = -1;
  if (!pl || !mine || !plen || !list) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  int f = event_from(c, BBVFL_EV_SUM_CLAIMED, r, rc.block_number, &sc, err);
  if (f <= 0) {
    if (f == 0) bbvfl_fail(err, BBVFL_E_STATE, "round %llu: a RoundCompleted without SumClaimed", (unsigned long long)r);
    goto out;
  }
  if (claim_sum(c, r, &rc, sc.client, coords, mine, slen, pl, plen, list, &k, err) < 0) goto out;
  bbvfl_oc_set_done_blk(c, r, rc.block_number);
  uint8_t h[32];
  bbvfl_keccak256(mine, slen, h);
  if (!memcmp(h, sc.word, 32)) {
    ret = 0; /* the claimed hash is the payloads' sum's */
    goto out;
  }
  char who[43];
  bbvfl_addr_checksum(sc.client, who);
  bbvfl_oc_log(c, "round %llu: the sum %s posted (block %llu) is not the sum of the %zu payloads: disputing it",
         (unsigned long long)r, who, (unsigned long long)rc.block_number, k);
  uint8_t *cd = NULL;
  size_t len = 0;
  if (bbvfl_cenc_dispute(r, sc.client, sc.word, list, plen, k, &cd, &len, err) < 0) goto out;
  uint64_t gas = bbvfl_fit_aggregate_call_gas(len, k) + 150000 + 60000 * (uint64_t)c->cp.cfg.clients;
  bbvfl_err de = {0};
  int sent = bbvfl_oc_tx(c, cd, len, gas, 0, NULL, "dispute()", &de);
  free(cd);
  if (sent < 0 && !(de.code == BBVFL_E_REVERT && bbvfl_err_revert_sel_is(&de, BBVFL_SEL_NoClaim))) {
    *err = de;
    bbvfl_wrap(err, "round %llu: dispute()", (unsigned long long)r);
    goto out;
  }
  /* ours, or (NoClaim) another client's dispute of this claim */
  bbvfl_cev sd;
  f = event_from(c, BBVFL_EV_SUM_DISPUTED, r, rc.block_number, &sd, err);
  if (f <= 0) {
    if (f == 0) {
      *err = de;
      bbvfl_wrap(err, "round %llu: the claim is wrong, the dispute was refused and no SumDisputed follows the claim",
                 (unsigned long long)r);
    }
    goto out;
  }
  char by[43];
  bbvfl_addr_checksum(sd.to, by);
  bbvfl_oc_log(c, "round %llu: sum disputed by %s%s (block %llu): the claimer %s is excluded and the round is redone",
         (unsigned long long)r, by, memcmp(sd.to, c->me, 20) ? "" : " (this client)",
         (unsigned long long)sd.block_number, who);
  c->disp.round = r;
  c->disp.blk = sd.block_number;
  bbvfl_oc_raise_ev_blk(c, sd.block_number);
  bbvfl_cev_clear(&sd);
  uint8_t act[20];
  if (bbvfl_aggc_active(&c->agg, act, err) < 0) goto out;
  memcpy(c->active, act, 20);
  ret = memcmp(act, c->me, 20) ? 0 : 2;
  if (ret == 2) bbvfl_oc_log(c, "round %llu: this client was elected the new active client", (unsigned long long)r);
out:
  for (size_t i = 0; pl && i < n; i++) free(pl[i]);
  free(pl);
  free(plen);
  free(list);
  free(mine);
  bbvfl_cev_clear(&rc);
  bbvfl_cev_clear(&sc);
  return ret;
}
