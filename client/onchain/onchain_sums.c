/* The on-chain client's round sums (role "sums", docs/ARCHITECTURE.md): the sum of a finished round
 * into c->sum and the count of submissions it covers into the head. Lane mode reads it from the
 * round's RoundCompleted; hashed mode sums the payloads read from the chain (checked against their
 * Submitted hashes by the contract when the active client's aggregate() lands). Called by the
 * round loop (onchain_rounds.c), the active client (onchain_active.c) and label holders
 * (onchain_labels.c); calls only the connection (onchain_wait.c), the model's count hook
 * (onchain_lr.c) and, optimistic mode, the claims' side (onchain_dispute.c: a claimed round's sum,
 * the active client's record of its claims and its re-post after a roll-back). */
#include "onchain/onchain_int.h"

#include "binding/fit.h"

/* The number of submissions round r's sum covers, as the round's RoundCompleted event states it
   (fewer than M after a dropout or an exclusion): the PBM estimate h_hat = C/(beta*b)*(sum - b*n/2)
   needs exactly that n. Never taken from a later read of the participant set, which may already
   reflect an exclusion after the round completed. Hashed mode: the number of payloads summed. */
int bbvfl_oc_take_contributors(cl *c, uint64_t r, unsigned n, bbvfl_err *err) {
  if (n == 0 || n > c->cp.cfg.clients)
    return bbvfl_fail(err, BBVFL_E_STATE, "round %llu: the sum covers %u submissions, outside 1..%u",
                      (unsigned long long)r, n, (unsigned)c->cp.cfg.clients);
  bbvfl_oc_lr_contributors(c, n);
  if (!c->have_head) return 0;
  if ((int)n != c->head.M)
    bbvfl_oc_log(c, "round %llu: the sum covers %u submissions (was %d)", (unsigned long long)r, n, c->head.M);
  c->head.M = (int)n;
  if (n < c->res->participants) c->res->participants = n;
  return 0;
}

/* A RoundCompleted event's sum into c->sum (coords values). Optimistic mode: a claim's
   RoundCompleted has no sum (the payloads' sum, bbvfl_oc_claimed_sum); a dispute's has it. */
int bbvfl_oc_sum_from_event(cl *c, const bbvfl_cev *ev, uint64_t coords, bbvfl_err *err) {
  if (bbvfl_oc_take_contributors(c, ev->round, ev->participants, err) < 0) return -1;
  if (c->wire == BBVFL_WIRE_OPTIMISTIC && ev->data_len == 0) return bbvfl_oc_claimed_sum(c, ev, coords, err);
  return bbvfl_cdec_round_sum(&c->cp, ev->data, ev->data_len, c->sum, coords, err);
}

/* Masked hashed mode: the block of the latest RoundReopened(r) at or after from (0: none). The
   submissions before it were masked for the old set and no longer count: only those from that
   block on may be summed. */
static int reopened_at(cl *c, uint64_t r, uint64_t from, uint64_t *blk, bbvfl_err *err) {
  *blk = 0;
  uint8_t t1[32];
  bbvfl_cenc_word_u64(r, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(&c->agg, BBVFL_EV_ROUND_REOPENED, t1, from, BBVFL_BLOCK_LATEST, &logs, err) < 0) return -1;
  int rc = 0;
  size_t n = json_array_size(logs);
  bbvfl_cev ev;
  memset(&ev, 0, sizeof ev);
  if (n) {
    int k = bbvfl_cev_decode(json_array_get(logs, n - 1), &ev, err);
    if (k == 1 && ev.kind == BBVFL_EV_ROUND_REOPENED) *blk = ev.block_number;
    else rc = k < 0 ? bbvfl_wrap(err, "a RoundReopened log")
                    : bbvfl_fail(err, BBVFL_E_PARSE, "eth_getLogs for RoundReopened returned another event");
  }
  bbvfl_cev_clear(&ev);
  json_decref(logs);
  return rc;
}

/* Hashed mode, a sum the chain already states: round sl's RoundCompleted at or after block from
   into c->sum. 1: found (and taken), 0: not there, -1: error. */
static int hashed_sum_from_chain(cl *c, bbvfl_oc_slot *sl, uint64_t from, bbvfl_err *err) {
  bbvfl_cev ev;
  uint64_t blk = c->blk;
  c->blk = from;
  int f = bbvfl_oc_query_event(c, BBVFL_EV_ROUND_COMPLETED, sl->r, &ev, err);
  c->blk = blk;
  if (f <= 0) return f;
  int ok = bbvfl_oc_sum_from_event(c, &ev, sl->L.coords, err);
  if (ok == 0 && !sl->L.train) bbvfl_oc_set_done_blk(c, sl->r, ev.block_number);
  bbvfl_cev_clear(&ev);
  return ok < 0 ? -1 : 1;
}

/* The payloads of one hashed round: pl[i] (plen[i] bytes) of client c->lab.addrs[i], NULL when not
   summed; got of them. */
typedef struct {
  size_t n, got;
  uint8_t **pl;
  size_t *plen;
} oc_payloads;

static void payloads_free(oc_payloads *P) {
  for (size_t i = 0; P->pl && i < P->n; i++) free(P->pl[i]);
  free(P->pl);
  free(P->plen);
}

/* Waits (within the round timeout, with the dropout and takeover steps of bbvfl_oc_wait_event)
   until every participant's payload of round sl is on chain, and keeps only the participants'
   ones in *P (an excluded client may have submitted ahead). */
static int wait_payloads(cl *c, bbvfl_oc_slot *sl, oc_payloads *P, bbvfl_err *err) {
  int packed = c->wire >= BBVFL_WIRE_PACKED;
  size_t n = P->n;
  uint8_t(*parts)[20] = NULL;
  size_t np = 0;
  int rc = -1;
  uint64_t back = sl->r >= OC_DONE_RING - 1 ? sl->r - (OC_DONE_RING - 1) : UINT64_MAX;
  uint64_t from = back != UINT64_MAX && c->conn.done_blk[back % OC_DONE_RING] ? c->conn.done_blk[back % OC_DONE_RING]
                                                                         : c->sess->deploy_block;
  double t0 = bbvfl_now(), delay = POLL_MIN_S, last_parts = -1, last_nudge = 0;
  for (;;) {
    if (bbvfl_now() - last_parts >= 1.0) {
      free(parts);
      parts = NULL;
      if (bbvfl_aggc_participants(&c->agg, &parts, &np, err) < 0) goto out;
      last_parts = bbvfl_now();
    }
    for (size_t i = 0; i < n; i++) free(P->pl[i]);
    if (c->masked) { /* after a re-open only the submissions masked for the new set count */
      uint64_t ro = 0;
      if (reopened_at(c, sl->r, from, &ro, err) < 0) goto out;
      if (ro > from) from = ro;
    }
    if (bbvfl_aggc_round_payloads(&c->agg, sl->r, from, (const uint8_t(*)[20])c->lab.addrs, n,
                                  packed ? bbvfl_packed_len(sl->L.coords, c->cp.value_bits)
                                         : (size_t)sl->L.coords * (c->masked ? 2 : 1),
                                  P->pl, P->plen, &P->got, err) < 0)
      goto out;
    size_t have = 0;
    for (size_t k = 0; k < np; k++)
      for (size_t i = 0; i < n; i++)
        if (!memcmp(parts[k], c->lab.addrs[i], 20) && P->pl[i]) have++;
    if (have == np && np > 0) {
      /* only the participants' payloads are summed (an excluded client may have submitted ahead) */
      for (size_t i = 0; i < n; i++) {
        int in = 0;
        for (size_t k = 0; k < np && !in; k++) in = !memcmp(parts[k], c->lab.addrs[i], 20);
        if (!in && P->pl[i]) {
          free(P->pl[i]);
          P->pl[i] = NULL;
          P->got--;
        }
      }
      break;
    }
    /* optimistic mode, the active client: the others may be waiting for a gradient this client
       posted before a dispute rolled the session back (bbvfl_oc_repost_rolled_back) */
    int rp = bbvfl_oc_repost_rolled_back(c, err);
    if (rp == 0) rp = bbvfl_oc_repair_lost(c, err); /* a reorg: onchain_repair.c */
    if (rp < 0) goto out;
    if (rp == 1) {
      t0 = bbvfl_now();
      last_parts = -1; /* the dispute excluded the claimer */
      continue;
    }
    /* as bbvfl_oc_wait_event: dropouts (masked re-open, --expire) and, for the active client, expireRound()
       for the clients that stopped submitting after --takeover-after */
    double now = bbvfl_now();
    if (c->masked || c->cfg->expire) {
      int k = bbvfl_oc_expire_wait_step(c, sl->r, now - t0, err);
      if (k < 0) goto out;
      if (k == 1) {
        t0 = bbvfl_now();
        last_parts = -1;
        continue;
      }
    }
    if (c->is_active && c->cfg->takeover_after_s > 0 && now - t0 > c->cfg->takeover_after_s && now - last_nudge >= 1.0) {
      last_nudge = now;
      int reset = 0;
      if (bbvfl_oc_nudge_active(c, sl->r, &reset, err) < 0) goto out;
      last_parts = -1; /* an exclusion shrinks the participants */
      continue;
    }
    if (!c->cfg->expire && bbvfl_now() - t0 > c->cfg->round_timeout_s) {
      bbvfl_fail(err, BBVFL_E_TIMEOUT,
                 "round %llu: %zu of %zu participants submitted within %.0f s; restart the missing clients",
                 (unsigned long long)sl->r, have, np, c->cfg->round_timeout_s);
      goto out;
    }
    bbvfl_sleep(delay);
    delay *= 1.5;
    if (delay > POLL_MAX_S) delay = POLL_MAX_S;
  }
  c->res->wait_s += bbvfl_now() - t0;
  rc = 0;
out:
  free(parts);
  return rc;
}

/* The sum of the payloads in *P into c->sum (sl->L.coords values; masked: mod 2^16), the payloads
   summed into list/lens (*k of them) and, packed, the contract's packed sum into psum (slen
   bytes, zeroed by the caller); tmp: coords scratch values (packed only). */
static int sum_payloads(cl *c, const bbvfl_oc_slot *sl, const oc_payloads *P, const uint8_t **list, size_t *lens,
                        size_t *k, uint32_t *tmp, uint8_t *psum, size_t slen, bbvfl_err *err) {
  int packed = c->wire >= BBVFL_WIRE_PACKED;
  uint64_t coords = sl->L.coords, lane = c->masked ? 2 : 1;
  memset(c->sum, 0, coords * sizeof *c->sum);
  *k = 0;
  for (size_t i = 0; i < P->n; i++) {
    const uint8_t *pl = P->pl[i];
    size_t plen = P->plen[i];
    if (!pl) continue;
    if (packed) { /* bit-packed at value_bits: the contract's sum of the packing, and the plain values */
      if (bbvfl_unpack(pl, plen, coords, c->cp.value_bits, tmp, err) < 0 ||
          bbvfl_packed_add(psum, slen, pl, plen, coords, c->cp.value_bits, c->cp.sum_bits, err) < 0)
        return bbvfl_wrap(err, "round %llu: client %zu's payload", (unsigned long long)sl->r, i);
      for (uint64_t j = 0; j < coords; j++) c->sum[j] += tmp[j];
    } else {
      if (plen != coords * lane)
        return bbvfl_fail(err, BBVFL_E_VERIFY, "round %llu: client %zu submitted %zu bytes, expected %llu",
                          (unsigned long long)sl->r, i, plen, (unsigned long long)(coords * lane));
      for (uint64_t j = 0; j < coords; j++)
        c->sum[j] += lane == 1 ? pl[j] : (uint32_t)((pl[2 * j] << 8) | pl[2 * j + 1]);
    }
    list[*k] = pl;
    lens[(*k)++] = plen;
  }
  if (lane == 2)
    for (uint64_t j = 0; j < coords; j++) c->sum[j] &= 0xFFFF; /* the masks cancel mod 2^16 */
  return 0;
}

/* The active client's call that makes the contract take round sl's sum: aggregate() with the
   payloads summed, or (optimistic) postSum() with the packed sum alone; sent without waiting. */
static int send_aggregate(cl *c, const bbvfl_oc_slot *sl, const uint8_t **list, const size_t *lens, size_t got,
                          uint8_t *psum, size_t slen, bbvfl_err *err) {
  uint8_t *cd = NULL;
  size_t len = 0;
  const char *what = "aggregate()";
  int ok = 0;
  if (c->wire == BBVFL_WIRE_OPTIMISTIC) { /* the sum alone; any participant may dispute it */
    what = "postSum()";
    if (c->cfg->tamper) { /* test-only (bbvfl-tamper): NULL in release builds */
      struct bbvfl_onchain_tamper t = {.stage = BBVFL_TAMPER_SUM, .round = sl->r, .epoch = sl->L.epoch,
                                       .psum = psum, .psum_len = slen};
      if (c->cfg->tamper(c->cfg->tamper_ctx, &t, err) != 0) ok = bbvfl_wrap(err, "test tamper hook");
    }
    if (ok == 0) ok = bbvfl_cenc_post_sum(sl->r, psum, slen, &cd, &len, err);
  } else {
    ok = bbvfl_cenc_aggregate(sl->r, list, lens, got, &cd, &len, err);
  }
  if (ok == 0) ok = bbvfl_oc_out_send(c, cd, len, bbvfl_fit_aggregate_call_gas(len, got), what, OC_GAS_AGGREGATE, err);
  if (ok == 0) {
    c->conn.out[c->conn.nout - 1].round = sl->r;
    bbvfl_oc_note_claim(c, sl->r);
  }
  free(cd);
  if (ok == 0 && !sl->L.train) bbvfl_oc_set_done_blk(c, sl->r, c->blk);
  return ok;
}

/* Hashed mode: the payloads of round sl from the chain, once every participant has submitted
   (waited for within the round timeout), summed into c->sum; the active client sends the
   aggregate() call that makes the contract do the same sum (packed mode: the payloads are
   bit-packed; optimistic mode: the packed sum alone, postSum(), and after a dispute of the round
   the sum the dispute re-aggregated). */
static int hashed_sum(cl *c, bbvfl_oc_slot *sl, bbvfl_err *err) {
  if (c->is_active && sl->submitted_before) {
    /* a restart: the round may have been aggregated before (aggregate() again reverts "round
       closed"); then its sum is in its RoundCompleted */
    int f = hashed_sum_from_chain(c, sl, c->sess->deploy_block, err);
    if (f != 0) return f < 0 ? -1 : 0;
  }
  if (c->wire == BBVFL_WIRE_OPTIMISTIC && sl->r == c->disp.round) {
    /* the dispute re-aggregated the round: its sum is the RoundCompleted in the SumDisputed block */
    int f = hashed_sum_from_chain(c, sl, c->disp.blk, err);
    if (f <= 0) return f < 0 ? -1 : bbvfl_fail(err, BBVFL_E_STATE, "round %llu: no RoundCompleted with the dispute",
                                               (unsigned long long)sl->r);
    return 0;
  }
  int packed = c->wire >= BBVFL_WIRE_PACKED;
  oc_payloads P = {.n = c->lab.naddrs};
  P.pl = calloc(P.n ? P.n : 1, sizeof *P.pl);
  P.plen = calloc(P.n ? P.n : 1, sizeof *P.plen);
  if (!P.pl || !P.plen) {
    payloads_free(&P);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  if (wait_payloads(c, sl, &P, err) < 0) {
    payloads_free(&P);
    return -1;
  }
  uint64_t coords = sl->L.coords;
  size_t got = P.got, k = 0, slen = packed ? bbvfl_packed_len(coords, c->cp.sum_bits) : 0;
  const uint8_t **list = calloc(got ? got : 1, sizeof *list);
  size_t *lens = calloc(got ? got : 1, sizeof *lens);
  uint32_t *tmp = packed ? malloc((coords ? coords : 1) * sizeof *tmp) : NULL;
  uint8_t *psum = packed ? calloc(slen ? slen : 1, 1) : NULL;
  int ok = !list || !lens || (packed && (!tmp || !psum)) ? bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory") : 0;
  if (ok == 0) ok = sum_payloads(c, sl, &P, list, lens, &k, tmp, psum, slen, err);
  if (ok == 0) ok = bbvfl_oc_take_contributors(c, sl->r, (unsigned)got, err);
  if (ok == 0 && c->is_active) ok = send_aggregate(c, sl, list, lens, k, psum, slen, err);
  free(list);
  free(lens);
  free(tmp);
  free(psum);
  payloads_free(&P);
  return ok;
}

int bbvfl_oc_round_sum(cl *c, bbvfl_oc_slot *sl, const bbvfl_receipt *rc, bbvfl_err *err) {
  if (c->hashed) return hashed_sum(c, sl, err);
  bbvfl_cev ev;
  int f = rc ? bbvfl_oc_receipt_event(c, rc, BBVFL_EV_ROUND_COMPLETED, sl->r, &ev, err) : 0;
  if (f < 0) return -1;
  if (!f) {
    c->blk = c->conn.ev_blk;
    if (bbvfl_oc_wait_event(c, BBVFL_EV_ROUND_COMPLETED, sl->r, &ev, err) != 0) return -1;
  }
  bbvfl_oc_raise_ev_blk(c, ev.block_number);
  int ok = bbvfl_oc_sum_from_event(c, &ev, sl->L.coords, err);
  bbvfl_cev_clear(&ev);
  return ok;
}
