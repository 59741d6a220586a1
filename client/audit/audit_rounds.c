/* Event replay of the rounds: submissions (recovered from their signed transactions), the
 * sums, the gradients and label gradients, the session's end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit_int.h"
#include "audit/leak.h"
#include "eth/abi.h"
#include "eth/keccak.h"
#include "binding/packing.h"
#include "core/schedule.h"

int bbvfl_audit_decode_submit(const uint8_t *in, size_t len, uint64_t *round, const uint8_t **q, size_t *qlen,
                              char *why, size_t whyn) {
  bbvfl_err e = {0};
  if (bbvfl_cdec_submit(in, len, round, q, qlen, &e) == 0) return 0; /* the binding's decoder (binding/contract.h) */
  snprintf(why, whyn, "%.100s", e.msg); /* the decoder's messages are short */
  return -1;
}

/* Is the submission's round open to it? 1 yes; 0 with the reason recorded. */
static int check_submission_round(st_t *S, const bbvfl_cev *ev) {
  if (bbvfl_au_round_acceptable(S, ev->round)) return 1;
  if (!S->hashed || ev->round <= S->round || ev->round >= S->p.total_rounds)
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "round %llu is not open (open: %llu%s)",
                         (unsigned long long)ev->round, (unsigned long long)S->round, S->complete ? ", complete" : "");
  else if (ev->round - S->round >= HASH_RING)
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "round %llu is %d or more rounds ahead of the oldest open round %llu",
                         (unsigned long long)ev->round, HASH_RING, (unsigned long long)S->round);
  else
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev,
                         "round %llu: %llu TRAIN rounds lie between it and the oldest open round %llu (staleness %u)",
                         (unsigned long long)ev->round, (unsigned long long)bbvfl_au_train_between(S, S->round, ev->round),
                         (unsigned long long)S->round, S->p.cfg.staleness);
  return 0;
}

/* The submission's figures: pipelining (a round after the head), its gas, the round's count of
 * Submitted events (sl: the round's slot, NULL when it has none). */
static void count_submission(st_t *S, const bbvfl_cev *ev, const fetched *fx, rslot *sl) {
  if (sl && ev->round > S->round) {
    S->r->ahead++;
    if (ev->round - S->round > S->r->max_ahead) S->r->max_ahead = ev->round - S->round;
  }
  rslot *gs = sl ? sl : bbvfl_au_head(S);
  if (gs) {
    if (fx->have_gas) gs->gas += fx->gas;
    gs->nsub_all += sl != NULL; /* the Submitted events of the round */
  }
}

/* The submitted bytes. Hashed mode: SubmittedPayload's q. Lane mode: from the signed transaction,
 * a direct submit(round, q) to the aggregator, signed by the event's client, with keccak256(q) =
 * the event's dataHash. *q NULL when they cannot be recovered. Returns 1 when everything matches,
 * 0 with the reasons recorded. */
static int recover_submission(st_t *S, const bbvfl_cev *ev, const fetched *fx, const uint8_t **q, size_t *qlen) {
  *q = NULL;
  *qlen = 0;
  if (ev->kind == BBVFL_EV_SUBMITTED_PAYLOAD) {
    /* hashed mode: the bytes the contract hashed and stored are in the log itself, however the
       client sent submit() (an EOA, an EIP-7702 delegate, a contract wallet): the event's client
       is the contract's msg.sender; aggregate()'s sum is checked against them */
    if (!S->hashed) {
      bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "SubmittedPayload from a lane-mode aggregator");
      return 0;
    }
    *q = ev->data;
    *qlen = ev->data_len;
    return 1;
  }
  if (S->hashed) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "Submitted from a hashed-mode aggregator (it emits SubmittedPayload)");
    return 0;
  }
  if (!fx->have_tx) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "transaction not recoverable: %s", fx->tx_err);
    return 0;
  }
  char why[128];
  uint64_t cr = 0;
  if (!fx->has_to || memcmp(fx->to, S->r->contract, 20)) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev,
                         "transaction is not addressed to the aggregator (its bytes are not in calldata)");
    return 0;
  }
  if (bbvfl_audit_decode_submit(fx->input, fx->input_len, &cr, q, qlen, why, sizeof why) < 0) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "%s", why);
    *q = NULL;
    return 0;
  }
  int valid = 1;
  uint8_t h[32];
  bbvfl_keccak256(*q, *qlen, h);
  if (memcmp(h, ev->word, 32)) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "Submitted dataHash is not keccak256 of the calldata bytes");
    valid = 0;
  }
  if (cr != ev->round) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "calldata round %llu, event round %llu",
                         (unsigned long long)cr, (unsigned long long)ev->round);
    valid = 0;
  }
  if (memcmp(fx->from, ev->client, 20)) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "the transaction's signer is not the client the event names");
    valid = 0;
  }
  return valid;
}

/* May client i submit to the round (slot sl)? A registered participant, once. */
static int check_submitter(st_t *S, const bbvfl_cev *ev, int i, const rslot *sl) {
  if (i < 0) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "submission from an unregistered address");
    return 0;
  }
  if (!S->cl[i].participant) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "submission from an excluded client");
    return 0;
  }
  if (sl && (sl->sub_mask >> i & 1)) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "second submission to the round");
    return 0;
  }
  return 1;
}

/* Hashed mode: client i's first Submitted event of the round; its payload kept for aggregate(),
 * and the head marked full once every participant has submitted to it. */
static void keep_payload(st_t *S, const bbvfl_cev *ev, rslot *sl, int i, const uint8_t *q, size_t qlen) {
  if (!S->hashed || i < 0 || (sl->ev_mask >> i & 1)) return;
  sl->ev_mask |= (uint64_t)1 << i;
  size_t want = S->p.value_bits ? bbvfl_packed_len((size_t)sl->L.coords, S->p.value_bits)
                                : (size_t)sl->L.coords * (S->p.cfg.masked ? 2 : 1);
  if (q && qlen == want && (sl->pay[i] = malloc(want ? want : 1))) memcpy(sl->pay[i], q, want);
  uint64_t part = bbvfl_au_participant_mask(S);
  if (ev->round == S->round && !S->head_full && (sl->ev_mask & part) == part) {
    S->head_full = 1;
    S->head_full_at = ev->block_number;
  }
}

/* The bytes q added to the round's sum: rows*P values (2-byte lanes masked), each <= b in plain
 * mode. 1 when they are well-formed; 0 with the reason recorded (a wrong length leaves the sum
 * unknown). */
static int add_packed(st_t *S, const bbvfl_cev *ev, rslot *sl, const uint8_t *q, size_t qlen);

static int add_to_sum(st_t *S, const bbvfl_cev *ev, rslot *sl, const uint8_t *q, size_t qlen) {
  if (S->p.value_bits) return add_packed(S, ev, sl, q, qlen);
  size_t coords = (size_t)sl->L.coords;
  size_t want = S->p.cfg.masked ? 2 * coords : coords;
  if (qlen != want) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "%zu bytes, expected %zu (%u rows x P = %u%s)", qlen, want,
                         sl->L.rows, S->p.cfg.dim, S->p.cfg.masked ? ", 2 bytes each" : "");
    sl->sum_unknown = 1;
    return 0;
  }
  if (S->p.cfg.masked) {
    for (size_t j = 0; j < coords; j++) sl->sum[j] += ((uint32_t)q[2 * j] << 8) | q[2 * j + 1];
    return 1;
  }
  size_t bad = SIZE_MAX;
  for (size_t j = 0; j < coords; j++) {
    if (q[j] > S->p.cfg.levels && bad == SIZE_MAX) bad = j;
    sl->sum[j] += q[j];
  }
  if (bad == SIZE_MAX) return 1;
  bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "value %u at coordinate %zu is above b = %u", q[bad], bad,
                       S->p.cfg.levels);
  return 0;
}

/* Packed and optimistic modes: q is rows*P values bit-packed at value_bits (binding/packing.h; no
 * padding bit set), each <= b; unpacked into sl->sum. */
static int add_packed(st_t *S, const bbvfl_cev *ev, rslot *sl, const uint8_t *q, size_t qlen) {
  size_t coords = (size_t)sl->L.coords;
  uint32_t *v = malloc((coords ? coords : 1) * sizeof *v);
  bbvfl_err e = {0};
  if (!v || bbvfl_unpack(q, qlen, coords, S->p.value_bits, v, &e) < 0) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "packed payload: %s", v ? e.msg : "out of memory");
    free(v);
    sl->sum_unknown = 1;
    return 0;
  }
  size_t bad = SIZE_MAX;
  for (size_t j = 0; j < coords; j++) {
    if (v[j] > S->p.cfg.levels && bad == SIZE_MAX) bad = j;
    sl->sum[j] += v[j];
  }
  uint32_t vb = bad == SIZE_MAX ? 0 : v[bad];
  free(v);
  if (bad == SIZE_MAX) return 1;
  bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "value %u at coordinate %zu is above b = %u", vb, bad,
                       S->p.cfg.levels);
  return 0;
}

/* Submitted(round, client, dataHash): the head round's, or in hashed mode a later one within the
 * staleness. A round not done yet keeps what was submitted to it, acceptable or not: its sum is
 * then judged on its own terms (the contract may have counted a submission it should have
 * refused). */
/* opts->on_release (the attacks): n values of round `round` from client (-1: the sum), q bytes
 * (plain) or vals as they are, with the window's training-row positions from the schedule. */
static void emit_release(st_t *S, uint64_t round, int client, unsigned contributors, const uint8_t *q,
                         const uint32_t *vals, size_t n) {
  if (!S->o->on_release || round >= S->p.total_rounds) return;
  bbvfl_round_layout L = bbvfl_au_layout(S, round);
  if (L.curv || n != L.coords) return;
  uint32_t *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return;
  uint32_t mask = S->p.cfg.masked ? 0xFFFFu : 0xFFFFFFFFu;
  for (size_t j = 0; j < n; j++) v[j] = q ? q[j] : vals[j] & mask;
  const size_t *rows = NULL;
  size_t B = S->p.cfg.batch;
  if (L.train && S->perm && ((uint64_t)L.first + L.nb) * B <= S->p.cfg.train_rows) {
    if (S->perm_epoch != (int64_t)L.epoch) {
      bbvfl_schedule_perm(S->seed, L.epoch, (size_t)S->p.cfg.train_rows, S->perm);
      S->perm_epoch = (int64_t)L.epoch;
    }
    rows = S->perm + (size_t)L.first * B;
  }
  S->o->on_release(S->o->release_ctx, round, &L, client, client >= 0 ? S->cl[client].addr : NULL, contributors, v, rows);
  free(v);
}

void bbvfl_au_on_submitted(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  int i = bbvfl_au_find_client(S, ev->client);
  S->r->submissions++;
  if (fx->have_gas && i >= 0) S->cl[i].gas += fx->gas;
  if (!S->elected || S->ended) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_SUBMISSIONS, ev, "submission outside training");
    return;
  }
  rslot *sl = NULL;
  if (ev->round >= S->round && ev->round < S->p.total_rounds && ev->round - S->round < MAX_SLOTS)
    sl = bbvfl_au_slot_of(S, ev->round, 1);
  int valid = check_submission_round(S, ev);
  count_submission(S, ev, fx, sl);
  const uint8_t *q = NULL;
  size_t qlen = 0;
  valid &= recover_submission(S, ev, fx, &q, &qlen);
  valid &= check_submitter(S, ev, i, sl);
  if (!sl) return;
  keep_payload(S, ev, sl, i, q, qlen);
  if (q) valid &= add_to_sum(S, ev, sl, q, qlen);
  else sl->sum_unknown = 1;
  if (valid && q && !S->p.cfg.masked) emit_release(S, ev->round, i, 0, q, NULL, qlen);
  if (valid) {
    sl->sub_mask |= (uint64_t)1 << i;
    sl->nsub_valid++;
    if (!S->hashed) S->cl[i].accepted++;
    bbvfl_au_ok(S, BBVFL_AC_SUBMISSIONS);
  }
}

/* Hashed mode: aggregate() sums the current participants' payloads, each checked against its
 * hash by the contract; recomputed here from the SubmittedPayload bytes kept for the round. */
static void hashed_contributors(st_t *S, const bbvfl_cev *ev, rslot *h) {
  size_t np = bbvfl_au_n_participants(S), coords = (size_t)h->L.coords;
  uint64_t part = bbvfl_au_participant_mask(S), in = h->ev_mask & part;
  unsigned n = (unsigned)__builtin_popcountll(in);
  if (ev->participants != n)
    bbvfl_au_fail(S, BBVFL_AC_CONTRIBUTORS, ev, 1, ev->round, -1, NULL,
            "RoundCompleted says its sum covers %u submissions; the round has %u Submitted events of participants",
            (unsigned)ev->participants, n);
  else
    bbvfl_au_ok(S, BBVFL_AC_CONTRIBUTORS);
  if ((h->sub_mask & part) != part)
    bbvfl_au_fail(S, BBVFL_AC_SUBMISSIONS, ev, 1, ev->round, -1, NULL,
            "round aggregated with %d valid submissions from %zu participants", __builtin_popcountll(h->sub_mask & part),
            np);
  memset(h->sum, 0, coords * sizeof *h->sum);
  h->sum_unknown = 0;
  uint32_t *v = S->p.value_bits ? malloc((coords ? coords : 1) * sizeof *v) : NULL;
  for (size_t i = 0; i < S->ncl; i++) {
    if (!(in >> i & 1)) continue;
    const uint8_t *q = h->pay[i];
    if (!q) {
      h->sum_unknown = 1;
      continue;
    }
    if (S->p.value_bits) { /* packed: the payload as kept (its length checked at submission) */
      bbvfl_err e = {0};
      if (!v || bbvfl_unpack(q, bbvfl_packed_len(coords, S->p.value_bits), coords, S->p.value_bits, v, &e) < 0)
        h->sum_unknown = 1;
      else
        for (size_t j = 0; j < coords; j++) h->sum[j] += v[j];
    } else if (S->p.cfg.masked)
      for (size_t j = 0; j < coords; j++) h->sum[j] += ((uint32_t)q[2 * j] << 8) | q[2 * j + 1];
    else
      for (size_t j = 0; j < coords; j++) h->sum[j] += q[j];
  }
  free(v);
}

/* Lane mode: the sum covers every Submitted event of the round, one per participant. */
static void lane_contributors(st_t *S, const bbvfl_cev *ev, const rslot *h) {
  size_t np = bbvfl_au_n_participants(S);
  if (ev->participants != h->nsub_all)
    bbvfl_au_fail(S, BBVFL_AC_CONTRIBUTORS, ev, 1, ev->round, -1, NULL,
            "RoundCompleted says its sum covers %u submissions; the round has %u Submitted events",
            (unsigned)ev->participants, h->nsub_all);
  else
    bbvfl_au_ok(S, BBVFL_AC_CONTRIBUTORS);
  if (h->nsub_valid != np)
    bbvfl_au_fail(S, BBVFL_AC_SUBMISSIONS, ev, 1, ev->round, -1, NULL,
            "round completed with %u valid submissions from %zu participants", h->nsub_valid, np);
}

/* Optimistic mode: SumClaimed(round, claimer, sumHash), just before the claim's RoundCompleted. */
void bbvfl_au_on_sum_claimed(st_t *S, const bbvfl_cev *ev) {
  S->claim_have = 1;
  S->claim_round = ev->round;
  memcpy(S->claim_hash, ev->word, 32);
}

/* Optimistic mode, a claim's RoundCompleted (no sum): the claimed sumHash against keccak256 of the
   sum recomputed from the submitted bytes, packed at sum_bits as the contract's adder lays it out. */
static void verify_claim(st_t *S, const bbvfl_cev *ev, const rslot *h) {
  size_t coords = (size_t)h->L.coords, slen = bbvfl_packed_len(coords, S->p.sum_bits);
  int have = S->claim_have && S->claim_round == ev->round; /* none: fails as a wrong claim */
  S->claim_have = 0;
  uint8_t *ps = malloc(slen ? slen : 1), hash[32];
  bbvfl_err e = {0};
  if (!ps) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "out of memory");
    return;
  }
  if (bbvfl_pack(h->sum, coords, S->p.sum_bits, ps, slen, &e) < 0) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "the submitted bytes' sum: %s", e.msg);
  } else {
    bbvfl_keccak256(ps, slen, hash);
    if (!have || memcmp(hash, S->claim_hash, 32))
      bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL,
                    "the sum hash claimed (postSum) is not keccak256 of the sum the submitted bytes add up to%s",
                    have ? "" : " (no SumClaimed before the claim's RoundCompleted)");
    else
      bbvfl_au_ok(S, BBVFL_AC_SUMS);
  }
  free(ps);
}

/* The emitted sum against the one recomputed from the submitted bytes (mod 2^16 masked). */
static void verify_sum(st_t *S, const bbvfl_cev *ev, const rslot *h) {
  size_t coords = (size_t)h->L.coords;
  if (h->sum_unknown) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "a submission's bytes could not be recovered: sum unverifiable");
    return;
  }
  if (S->p.cfg.wire == BBVFL_WIRE_OPTIMISTIC && ev->data_len == 0) {
    verify_claim(S, ev, h);
    return;
  }
  uint32_t *got = malloc((coords ? coords : 1) * sizeof *got);
  bbvfl_err e = {0};
  size_t lane = S->p.lane_bits / 8;
  unsigned sb = S->p.sum_bits; /* packed and optimistic: the sum bit-sliced at sum_bits */
  if (!got) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "out of memory");
  } else if (sb && bbvfl_cdec_round_sum(&S->p, ev->data, ev->data_len, got, coords, &e) < 0) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "%s", e.msg);
  } else if (!sb && ev->data_len != coords * lane) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "sum is %zu bytes, expected %zu (%u rows x P = %u, %zu-byte lanes)",
            ev->data_len, coords * lane, h->L.rows, S->p.cfg.dim, lane);
  } else if (!sb && bbvfl_cdec_sum(ev->data, ev->data_len, S->p.lane_bits, got, coords, &e) < 0) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "%s", e.msg);
  } else {
    uint32_t mask = S->p.cfg.masked ? 0xFFFFu : sb ? (1u << sb) - 1 : 0xFFFFFFFFu;
    size_t bad = SIZE_MAX;
    for (size_t j = 0; j < coords; j++)
      if ((h->sum[j] & mask) != got[j]) {
        bad = j;
        break;
      }
    if (bad != SIZE_MAX)
      bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "lane %zu: %s %u, the submitted bytes add up to %u",
              bad, S->p.cfg.wire == BBVFL_WIRE_OPTIMISTIC ? "claimed (postSum)" : "emitted", got[bad],
              h->sum[bad] & mask);
    else
      bbvfl_au_ok(S, BBVFL_AC_SUMS);
  }
  free(got);
}

/* Lane mode: the contract keeps the last RING rounds' sums (roundSum), compared at the end. */
static void remember_sum(st_t *S, uint64_t round, const rslot *h) {
  if (h->sum_unknown || S->hashed) return;
  size_t k = (size_t)(round % RING), coords = (size_t)h->L.coords;
  memcpy(S->ring[k], h->sum, coords * sizeof *h->sum);
  S->ring_round[k] = round;
  S->ring_coords[k] = coords;
  S->ring_have[k] = 1;
}

/* The head round is complete: an epoch's last round completes the epoch; an EVAL round is done. */
static void mark_complete(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  S->complete = 1;
  S->completed_at = ev->block_number;
  S->r->rounds_completed++;
  if (bbvfl_cconfig_epoch_end(&S->p.cfg, ev->round)) {
    uint32_t e = bbvfl_au_layout(S, ev->round).epoch;
    S->epoch_done_any = 1;
    S->epoch_done_block = ev->block_number;
    S->r->epochs_completed = (uint64_t)e + 1;
    bbvfl_au_epoch_fig(S, e, 1);
    if (S->perm) bbvfl_au_schedule_digest(S, e);
  }
  if (!bbvfl_au_is_train(S, ev->round)) bbvfl_au_open_next(S, ev, fx);
}

/* RoundCompleted: only for the head round (rounds complete in order, also when pipelined), with
 * the sum of the round's submitted bytes and their count. In hashed mode it is aggregate()'s. */
void bbvfl_au_on_round_completed(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  rslot *h = NULL;
  if (!S->elected || S->ended || ev->round != S->round || S->complete || !(h = bbvfl_au_head(S))) {
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "completion of round %llu, which is not the open round",
            (unsigned long long)ev->round);
    return;
  }
  if (fx->have_gas) h->gas += fx->gas; /* hashed: the aggregate() call */
  if (S->hashed && bbvfl_au_is_train(S, ev->round)) S->head_base = ev->block_number; /* aggregated, gradient pending */
  if (S->hashed) hashed_contributors(S, ev, h);
  else lane_contributors(S, ev, h);
  verify_sum(S, ev, h);
  if (!h->sum_unknown) emit_release(S, ev->round, -1, ev->participants, NULL, h->sum, (size_t)h->L.coords);
  bbvfl_au_head_sum(S, ev);
  remember_sum(S, ev->round, h);
  mark_complete(S, ev, fx);
}

/* What the gradient gives away: each row's label (audit/leak.h), handed to opts->on_labels batch by
   batch (a window's gradient is its nb batches' gradients in batch order) with the batch's
   training-row positions from the schedule. */
static void read_labels(st_t *S, const bbvfl_cev *ev, const bbvfl_round_layout *L) {
  size_t B = S->p.cfg.batch, P = S->p.cfg.dim, rows = L->rows;
  if (!S->leak) S->leak = malloc((S->max_coords / (P ? P : 1) + 1) * sizeof *S->leak);
  bbvfl_err e = {0};
  if (!S->leak || bbvfl_leak_labels(ev->data, ev->data_len, rows, P, ev->data2, ev->data2_len, S->leak, &e) < 0) {
    S->r->labels_unread += rows;
    return;
  }
  uint64_t epoch = L->epoch;
  for (uint32_t k = 0; k < L->nb; k++) {
    uint64_t batch = (uint64_t)L->first + k;
    const size_t *pos = NULL;
    if (S->perm && (batch + 1) * B <= S->p.cfg.train_rows) {
      if (S->perm_epoch != (int64_t)epoch) {
        bbvfl_schedule_perm(S->seed, epoch, (size_t)S->p.cfg.train_rows, S->perm);
        S->perm_epoch = (int64_t)epoch;
      }
      pos = S->perm + batch * B;
    }
    S->r->labels_read += B;
    S->o->on_labels(S->o->labels_ctx, ev->round, epoch, batch, S->leak + (size_t)k * B, pos, B);
  }
}

void bbvfl_au_on_gradient(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  rslot *h = S->elected && !S->ended ? bbvfl_au_head(S) : NULL;
  if (fx->have_gas && h) h->gas += fx->gas;
  int ai = bbvfl_au_find_client(S, ev->client);
  if (!S->elected || S->ended) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient outside training");
    return;
  }
  int bad = 0;
  if (ai < 0 || ai != S->active) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient posted by a client that is not active");
    bad = 1;
  }
  if (ev->round != S->round) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient for round %llu, the open round is %llu",
         (unsigned long long)ev->round, (unsigned long long)S->round);
    return;
  }
  if (!bbvfl_au_is_train(S, ev->round)) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient for an EVAL round");
    bad = 1;
  }
  if (!S->complete) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient for an incomplete round");
    bad = 1;
  }
  bbvfl_round_layout L = bbvfl_au_layout(S, ev->round);
  if (ev->data_len != L.coords * 4) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "gradient is %zu bytes, expected %llu (%u batches x B = %u x P = %u, binary32)",
         ev->data_len, (unsigned long long)(L.coords * 4), L.nb, S->p.cfg.batch, S->p.cfg.dim);
    bad = 1;
  }
  if (!bad) bbvfl_au_ok(S, BBVFL_AC_GRADIENTS);
  if (L.curv) S->r->curv_rounds++;
  if (!bad && S->o->on_labels && !L.curv) read_labels(S, ev, &L);
  if (!bad && S->o->on_params && !L.curv) S->o->on_params(S->o->release_ctx, ev->round, ev->data2, ev->data2_len); /* a curvature round's post is no dLoss/dz */
  if (!bad) bbvfl_au_head_gradient(S, ev, ai);
  else bbvfl_au_head_stop(S, ev);
  S->r->gradients++;
  if (S->complete) bbvfl_au_open_next(S, ev, fx);
}


/* LabelGradientPosted(round, client, grad): from a declared label holder that is not excluded,
   once per round, for the open TRAIN round once it is complete (so before its gradient), rows x C
   binary32 (rows: the round's, nb*B for a window) with 1 <= C <= 256. */
void bbvfl_au_on_label_gradient(st_t *S, const bbvfl_cev *ev, const fetched *fx) {
  rslot *h = S->elected && !S->ended ? bbvfl_au_head(S) : NULL;
  if (fx->have_gas && h) h->gas += fx->gas;
  int i = bbvfl_au_find_client(S, ev->client);
  if (!S->elected || S->ended) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "label gradient outside training");
    return;
  }
  int bad = 0;
  if (i < 0 || !S->cl[i].label_holder || S->cl[i].excluded) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "label gradient from a client that is %s",
         i < 0 || !S->cl[i].label_holder ? "not a declared label holder" : "excluded");
    bad = 1;
  }
  if (ev->round != S->round || !bbvfl_au_is_train(S, ev->round) || !S->complete) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev,
         "label gradient for round %llu while the open round is %llu (%s, %s)", (unsigned long long)ev->round,
         (unsigned long long)S->round, bbvfl_au_is_train(S, S->round) ? "TRAIN" : "EVAL",
         S->complete ? "complete" : "not complete");
    bad = 1;
  }
  /* rows x C binary32 of the round's rows (the head round's when the post names another) */
  bbvfl_round_layout L = bbvfl_au_layout(S, ev->round < S->p.total_rounds ? ev->round : S->round);
  size_t unit = 4 * (size_t)L.rows;
  if (unit == 0 || ev->data_len == 0 || ev->data_len % unit || ev->data_len > 256 * unit) {
    bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev,
         "label gradient is %zu bytes, not rows x C binary32 (a non-zero multiple of %zu, C <= 256)", ev->data_len, unit);
    bad = 1;
  }
  if (S->lp_round != ev->round) {
    S->lp_round = ev->round;
    S->lp_mask = 0;
  }
  if (i >= 0 && i < 64) {
    if (S->lp_mask >> i & 1) {
      bbvfl_au_round_client_fail(S, BBVFL_AC_GRADIENTS, ev, "second label gradient of this holder for the round");
      bad = 1;
    }
    S->lp_mask |= 1ULL << i;
  }
  if (!bad) bbvfl_au_ok(S, BBVFL_AC_GRADIENTS);
  if (!bad) bbvfl_au_head_label(S, ev, i);
}

void bbvfl_au_on_session_ended(st_t *S, const bbvfl_cev *ev) {
  if (!S->ended || ev->round != S->p.total_rounds)
    bbvfl_au_fail(S, BBVFL_AC_SUMS, ev, 1, ev->round, -1, NULL, "SessionEnded(%llu) but the auditor counts %llu completed rounds",
         (unsigned long long)ev->round, (unsigned long long)S->r->rounds_completed);
  S->r->session_ended = 1;
}
