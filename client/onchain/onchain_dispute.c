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
 * claim (ours then reverts NoClaim) is the same outcome. One honest client suffices. The active
 * client's side: when a dispute lands after it posted the disputed round's gradient (another
 * participant front-ran its claim), it posts the same gradient again (bbvfl_oc_repost_rolled_back,
 * called from its waits), the one rule of what it does after a roll-back. */
#include "onchain/onchain_int.h"

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

/* What a claim of a round covers, as this client reads it from the chain: the SumClaimed event sc
   (its claimer and hash), the round's payloads pl/plen (n = c->lab.naddrs slots, owned), the same
   compacted in client index order list/plen[0..k) (dispute()'s argument) and their packed sum
   mine (slen bytes, owned). */
typedef struct {
  bbvfl_cev sc;
  size_t n, k, slen;
  uint8_t **pl, *mine;
  size_t *plen;
  const uint8_t **list;
} claim_read;

static void claim_read_free(claim_read *cr) {
  for (size_t i = 0; cr->pl && i < cr->n; i++) free(cr->pl[i]);
  free(cr->pl);
  free(cr->plen);
  free(cr->list);
  free(cr->mine);
  bbvfl_cev_clear(&cr->sc);
  memset(cr, 0, sizeof *cr);
}

/* Reads the claim of round rc->round (rc: its RoundCompleted, which carries no sum) into *cr, which
   the caller frees (claim_read_free) whatever the outcome. 0, or -1 with err (BBVFL_E_STATE: no
   SumClaimed beside the RoundCompleted). */
static int claim_read_run(cl *c, const bbvfl_cev *rc, size_t coords, claim_read *cr, bbvfl_err *err) {
  memset(cr, 0, sizeof *cr);
  uint64_t r = rc->round;
  size_t n = cr->n = c->lab.naddrs, got = 0, vlen = bbvfl_packed_len(coords, c->cp.value_bits);
  cr->slen = bbvfl_packed_len(coords, c->cp.sum_bits);
  cr->pl = calloc(n ? n : 1, sizeof *cr->pl);
  cr->mine = calloc(cr->slen ? cr->slen : 1, 1);
  cr->plen = calloc(n ? n : 1, sizeof *cr->plen);
  cr->list = calloc(n ? n : 1, sizeof *cr->list);
  if (!cr->pl || !cr->mine || !cr->plen || !cr->list) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  int f = event_from(c, BBVFL_EV_SUM_CLAIMED, r, rc->block_number, &cr->sc, err);
  if (f <= 0)
    return f == 0 ? bbvfl_fail(err, BBVFL_E_STATE, "round %llu: a RoundCompleted without SumClaimed", (unsigned long long)r)
                  : -1;
  /* the round's submissions precede its claim; a lower bound: the deploy block (rounds far back:
     the block where an earlier round became done) */
  uint64_t back = r >= OC_DONE_RING - 1 ? r - (OC_DONE_RING - 1) : UINT64_MAX;
  uint64_t pfrom = back != UINT64_MAX && c->conn.done_blk[back % OC_DONE_RING] ? c->conn.done_blk[back % OC_DONE_RING]
                                                                          : c->sess->deploy_block;
  if (claim_payloads(c, r, pfrom, vlen, rc->participants, cr->sc.client, cr->pl, cr->plen, &got, err) < 0) return -1;
  for (size_t i = 0; i < n; i++) {
    if (!cr->pl[i]) continue;
    if (bbvfl_packed_add(cr->mine, cr->slen, cr->pl[i], cr->plen[i], coords, c->cp.value_bits, c->cp.sum_bits, err) < 0)
      return -1;
    cr->list[cr->k] = cr->pl[i];
    cr->plen[cr->k] = cr->plen[i]; /* compacted in place: k <= i */
    cr->k++;
  }
  return 0;
}

int bbvfl_oc_claimed_sum(cl *c, const bbvfl_cev *rc, uint64_t coords, bbvfl_err *err) {
  claim_read cr;
  int ret = claim_read_run(c, rc, (size_t)coords, &cr, err);
  if (ret == 0) ret = bbvfl_cdec_round_sum(&c->cp, cr.mine, cr.slen, c->sum, coords, err);
  claim_read_free(&cr);
  return ret;
}

int bbvfl_oc_check_claim(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->wire != BBVFL_WIRE_OPTIMISTIC || c->is_active) return 0;
  uint64_t r = sl->r;
  /* the claim: the round's first RoundCompleted from where this client's events are */
  bbvfl_cev rc;
  c->blk = c->conn.ev_blk;
  int w = bbvfl_oc_wait_event(c, BBVFL_EV_ROUND_COMPLETED, r, &rc, err);
  if (w != 0) return w;
  claim_read cr;
  int ret = -1;
  if (claim_read_run(c, &rc, sl->L.coords, &cr, err) < 0) goto out;
  bbvfl_oc_set_done_blk(c, r, rc.block_number);
  uint8_t h[32];
  bbvfl_keccak256(cr.mine, cr.slen, h);
  if (!memcmp(h, cr.sc.word, 32)) {
    ret = 0; /* the claimed hash is the payloads' sum's */
    goto out;
  }
  char who[43];
  bbvfl_addr_checksum(cr.sc.client, who);
  bbvfl_oc_log(c, "round %llu: the sum %s posted (block %llu) is not the sum of the %zu payloads: disputing it",
         (unsigned long long)r, who, (unsigned long long)rc.block_number, cr.k);
  uint8_t *cd = NULL;
  size_t len = 0;
  if (bbvfl_cenc_dispute(r, cr.sc.client, cr.sc.word, cr.list, cr.plen, cr.k, &cd, &len, err) < 0) goto out;
  /* the estimate the window sizing kept under the cap and the block (binding/fit.h) */
  bbvfl_fit_setup fs = {.hashed = c->hashed, .masked = c->masked, .M = c->cp.cfg.clients, .levels = c->cp.cfg.levels,
                        .wire = c->wire};
  uint64_t gas = bbvfl_fit_dispute_call_gas(&fs, len, cr.k, sl->L.coords);
  bbvfl_err de = {0};
  int sent = bbvfl_oc_tx(c, cd, len, gas, 0, NULL, "dispute()", &de);
  free(cd);
  if (sent < 0 && de.code != BBVFL_E_REVERT) {
    *err = de;
    bbvfl_wrap(err, "round %llu: dispute()", (unsigned long long)r);
    goto out;
  }
  /* ours, or another client's dispute of this claim: ours then reverts NoClaim, or, mined in the
     same block after the other one, with whatever reason its replay finds; the chain decides
     (a SumDisputed of the round after the claim), not the revert's reason */
  bbvfl_cev sd;
  int f = event_from(c, BBVFL_EV_SUM_DISPUTED, r, rc.block_number, &sd, err);
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
  claim_read_free(&cr);
  bbvfl_cev_clear(&rc);
  return ret;
}

/* ------------------------------------------------------------------ the active client's side */

void bbvfl_oc_note_claim(cl *c, uint64_t r) {
  if (c->wire == BBVFL_WIRE_OPTIMISTIC) c->disp.claimed = r;
}

int bbvfl_oc_note_post(cl *c, uint64_t r, const uint8_t *cd, size_t len, uint64_t gas, bbvfl_err *err) {
  if (c->wire != BBVFL_WIRE_OPTIMISTIC) return 0;
  uint8_t *p = realloc(c->disp.post_cd, len ? len : 1);
  if (!p) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memcpy(p, cd, len);
  c->disp.post_cd = p;
  c->disp.post_len = len;
  c->disp.post_gas = gas;
  c->disp.post_blk = c->blk;
  c->disp.posted = r;
  return 0;
}

/* The one rule of the active client after a roll-back: the chain's head (currentRound()) at or
   before the round it posted the gradient of last means a dispute took the session back there
   (the contract only goes back on a dispute). The round is then done again (the dispute's
   RoundCompleted, with the sum of the same payloads this client summed itself in hashed_sum) and
   waits for its gradient: the same postGradient() bytes. Anything this client claimed after that
   round was erased with the roll-back and would be summed anew without the excluded claimer's
   payload: not built, a clear stop instead of a wait nobody ends. */
int bbvfl_oc_repost_rolled_back(cl *c, bbvfl_err *err) {
  if (c->wire != BBVFL_WIRE_OPTIMISTIC || !c->is_active || c->disp.posted == UINT64_MAX) return 0;
  double now = bbvfl_now();
  if (now - c->disp.checked_at < 0.2) return 0;
  c->disp.checked_at = now;
  uint64_t cur = 0, p = c->disp.posted;
  if (bbvfl_aggc_current_round(&c->agg, &cur, err) < 0) return bbvfl_wrap(err, "currentRound()");
  if (cur > p) return 0;
  if (cur < p || (c->disp.claimed != UINT64_MAX && c->disp.claimed > p))
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "a dispute rolled the session back to round %llu after this active client had claimed or "
                      "posted rounds up to %llu: redoing rounds after the disputed one is not built (docs/ONCHAIN.md)",
                      (unsigned long long)cur,
                      (unsigned long long)(c->disp.claimed != UINT64_MAX && c->disp.claimed > p ? c->disp.claimed : p));
  bbvfl_cev sd;
  int f = event_from(c, BBVFL_EV_SUM_DISPUTED, p, c->disp.post_blk, &sd, err);
  if (f < 0) return -1;
  if (f == 1) {
    char who[43];
    bbvfl_addr_checksum(sd.client, who);
    bbvfl_oc_log(c, "round %llu: the claim of %s was disputed (block %llu) after this client posted the round's gradient: "
                 "the round is redone; posting the same gradient again",
                 (unsigned long long)p, who, (unsigned long long)sd.block_number);
    bbvfl_cev_clear(&sd);
  } else {
    bbvfl_oc_log(c, "round %llu: the chain went back to this round after this client posted its gradient: posting it again",
                 (unsigned long long)p);
  }
  if (bbvfl_oc_out_send(c, c->disp.post_cd, c->disp.post_len, c->disp.post_gas, "postGradient() again", OC_GAS_GRADIENT,
                        err) < 0 ||
      bbvfl_oc_out_wait(c, err) < 0)
    return bbvfl_wrap(err, "round %llu", (unsigned long long)p);
  c->disp.post_blk = c->blk;
  bbvfl_oc_set_done_blk(c, p, c->blk);
  return 1;
}

void bbvfl_oc_dispute_free(cl *c) {
  free(c->disp.post_cd);
  c->disp.post_cd = NULL;
  c->disp.post_len = 0;
}
