#include "binding/fit.h"

#include <jansson.h>

#include "binding/packing.h"
#include "eth/rpc.h"

static int packed(const bbvfl_fit_setup *s) {
  return !s->masked && (s->wire == BBVFL_WIRE_PACKED || s->wire == BBVFL_WIRE_OPTIMISTIC);
}

uint64_t bbvfl_fit_wire_bytes(const bbvfl_fit_setup *s, uint64_t n) {
  if (s->masked) return 2 * n;
  if (packed(s)) return bbvfl_packed_len((size_t)n, bbvfl_pack_bits(s->levels));
  return n;
}

uint64_t bbvfl_fit_sum_bytes(const bbvfl_fit_setup *s, uint64_t n) {
  (void)n; /* the claim is keccak256 of the packed sum, whatever its length */
  return s->masked || s->wire != BBVFL_WIRE_OPTIMISTIC ? 0 : 32;
}

static unsigned lane_bytes(const bbvfl_fit_setup *s) {
  return s->masked || (uint64_t)s->M * s->levels >= 256 ? 2 : 1;
}

uint64_t bbvfl_fit_submit_gas(const bbvfl_fit_setup *s, uint64_t n, int via_self) {
  uint64_t bytes = bbvfl_fit_wire_bytes(s, n);
  /* hashed: calldata (the EIP-7623 floor: 40 per byte) + hashing + the payload's log (8 per
     byte); through the account's own execute(): one more call and copy */
  if (s->hashed) return 60000 + 72 * bytes + (via_self ? 40000 + 16 * bytes : 0);
  uint64_t words = (n * lane_bytes(s) + 31) / 32;
  return 21000 + 64 * bytes + 25000 * (words + 4);
}

uint64_t bbvfl_fit_aggregate_call_gas(uint64_t calldata_len, uint64_t got) {
  return 100000 + 64 * calldata_len + 20000 * got;
}

uint64_t bbvfl_fit_aggregate_gas(const bbvfl_fit_setup *s, uint64_t n) {
  uint64_t sum = bbvfl_fit_sum_bytes(s, n);
  /* postSum(uint64,bytes32): selector, round, the sum's hash */
  if (sum) return bbvfl_fit_aggregate_call_gas(4 + 32 + sum, 0);
  /* aggregate(uint64,bytes[]): selector, round, offset, count, M offsets, M x (length, padded bytes) */
  uint64_t pad = (bbvfl_fit_wire_bytes(s, n) + 31) / 32 * 32;
  uint64_t len = 4 + 3 * 32 + (uint64_t)s->M * (32 + 32 + pad);
  return bbvfl_fit_aggregate_call_gas(len, s->M);
}

uint64_t bbvfl_fit_gradient_gas(uint64_t n, size_t head_len) { return 150000 + 40 * (4 * n + (uint64_t)head_len); }

static int has_dispute(const bbvfl_fit_setup *s) { return !s->masked && s->wire == BBVFL_WIRE_OPTIMISTIC; }

uint64_t bbvfl_fit_dispute_calldata(const bbvfl_fit_setup *s, uint64_t n, uint64_t payloads) {
  /* dispute(uint64,address,bytes32,bytes[]): selector, round, claimer, sumHash, offset, count,
     an offset per payload, each payload's length and its bytes zero-padded to words */
  uint64_t pad = (bbvfl_packed_len((size_t)n, bbvfl_pack_bits(s->levels)) + 31) / 32 * 32;
  return 4 + 5 * 32 + payloads * (32 + 32 + pad);
}

/* The execution of dispute() with `payloads` payloads of n values (BbvflOptimisticAggregator:
   _claimStanding, _claimHash copying and hashing each payload, _sum, keccak256 of the sum,
   _rollback excluding the claimer and re-electing, SumDisputed, RoundCompleted with the sum).
   Fitted by least squares (within 1 %) to 7 disputes measured with
     devnet/tool.sh forge test --offline --use devnet/solc-wrapper --match-contract DisputeGas -vv
   (contract/test/DisputeGas.t.sol test_measure_dispute_points: B 10, P 16, b 16, payloads built to
   make the adder's carries ripple as far as they can, storage cold, refunds not subtracted):
     M  K    values  payload bytes  execution
     2    1     160        100          69,585
     2  512  81,920     51,200       1,726,480
     16   1     160        100         224,894
     16  64  10,240      6,400       1,431,063
     16 256  40,960     25,600       5,166,529
     64   1     160        100         773,416
     64  32   5,120      3,200       3,337,748
   fit: 45,383 + 9,191 per payload (the exclusion's reads and rewrites of the participant list)
   + 184.6 per payload per block of 256 values per sum plane (the adder: SB = bits(M*b) planes,
   an upper bound of the planes a carry reaches) + 497.7 per block per sum plane (the sum's
   accumulator, copy, keccak and log at 8 gas per byte). Here rounded up (50,000, 10,000, 200,
   550), plus the memory's quadratic cost (words^2/512 of the payload copy, the accumulator and
   two copies of the sum: inside the fitted points, explicit for larger rounds), and 25 % on top. */
uint64_t bbvfl_fit_dispute_exec(const bbvfl_fit_setup *s, uint64_t n, uint64_t payloads) {
  uint64_t nb = (n + 255) / 256, sb = bbvfl_pack_bits((uint32_t)((uint64_t)s->M * s->levels));
  uint64_t plen = bbvfl_packed_len((size_t)n, bbvfl_pack_bits(s->levels));
  uint64_t words = (plen + 31) / 32 + 3 * nb * sb + payloads + 64;
  uint64_t e = 50000 + 10000 * payloads + 200 * payloads * nb * sb + 550 * nb * sb + words * words / 512;
  return e + e / 4;
}

uint64_t bbvfl_fit_dispute_call_gas(const bbvfl_fit_setup *s, uint64_t calldata_len, uint64_t payloads, uint64_t n) {
  /* Cancun: 16 per calldata byte (all taken as non-zero) + the execution; Prague: at least the
     EIP-7623 floor, 10 per token, 4 tokens per non-zero byte */
  uint64_t cancun = 21000 + 16 * calldata_len + bbvfl_fit_dispute_exec(s, n, payloads);
  uint64_t floor = 21000 + 40 * calldata_len;
  return cancun > floor ? cancun : floor;
}

uint64_t bbvfl_fit_dispute_gas(const bbvfl_fit_setup *s, uint64_t n) {
  if (!has_dispute(s)) return 0;
  return bbvfl_fit_dispute_call_gas(s, bbvfl_fit_dispute_calldata(s, n, s->M), s->M, n);
}

uint64_t bbvfl_fit_dispute_limit(const bbvfl_fit_chain *ch) {
  double b = ch->margin * (double)ch->block_gas;
  return b < (double)ch->tx_cap ? (uint64_t)b : ch->tx_cap;
}

/* Gas a transaction USES, an upper estimate under both rule sets: the EIP-7623 floor (40 per
   nonzero calldata byte, Prague) or Cancun's 16 per byte plus the execution (the payload's log 8
   per byte, keccak, memory), whichever is higher, with room (contract/GAS.md measures 35-42 per
   submitted value, 24-40 per aggregated one). Lane mode: each lane word a cold read and a
   rewrite (5,000; the limit allows 25,000), GAS.md measures 187 per value at K=45. */
static uint64_t submit_used(const bbvfl_fit_setup *s, uint64_t n) {
  uint64_t bytes = bbvfl_fit_wire_bytes(s, n);
  if (s->hashed) return 40000 + 44 * bytes;
  uint64_t words = (n * lane_bytes(s) + 31) / 32;
  return 40000 + 44 * bytes + 6000 * (words + 4);
}
static uint64_t aggregate_used(const bbvfl_fit_setup *s, uint64_t n) {
  uint64_t sum = bbvfl_fit_sum_bytes(s, n);
  if (sum) return 60000 + 44 * sum;
  return 60000 + 20000 * (uint64_t)s->M + 44 * (uint64_t)s->M * bbvfl_fit_wire_bytes(s, n);
}
static uint64_t gradient_used(uint64_t n, size_t head_len) { return 60000 + 44 * (4 * n + (uint64_t)head_len); }

uint64_t bbvfl_fit_round_used_gas(const bbvfl_fit_setup *s, uint64_t n, int train) {
  uint64_t used = (uint64_t)s->M * submit_used(s, n);
  if (s->hashed) used += aggregate_used(s, n);
  if (train) used += gradient_used(n, s->head_len);
  return used;
}

uint64_t bbvfl_fit_block_gas(const bbvfl_fit_setup *s, uint64_t n, int train) {
  /* a block takes a transaction while its gas LIMIT fits what the transactions before it USED:
     the used gas of all of them plus the largest limit-minus-used, whichever comes last */
  uint64_t used = (uint64_t)s->M * submit_used(s, n), slack = bbvfl_fit_submit_gas(s, n, 0) - submit_used(s, n);
  if (s->hashed) {
    uint64_t u = aggregate_used(s, n), l = bbvfl_fit_aggregate_gas(s, n);
    used += u;
    if (l - u > slack) slack = l - u;
  }
  if (train) {
    uint64_t u = gradient_used(n, s->head_len), l = bbvfl_fit_gradient_gas(n, s->head_len);
    used += u;
    if (l > u && l - u > slack) slack = l - u;
  }
  return used + slack;
}

int bbvfl_fit_ok(const bbvfl_fit_setup *s, const bbvfl_fit_chain *ch, uint64_t n, int train) {
  if (bbvfl_fit_submit_gas(s, n, 0) > ch->tx_cap) return 0;
  if (s->hashed && bbvfl_fit_aggregate_gas(s, n) > ch->tx_cap) return 0;
  if (train && bbvfl_fit_gradient_gas(n, s->head_len) > ch->tx_cap) return 0;
  if (bbvfl_fit_dispute_gas(s, n) > bbvfl_fit_dispute_limit(ch)) return 0;
  return (double)bbvfl_fit_block_gas(s, n, train) <= ch->margin * (double)ch->block_gas;
}

uint64_t bbvfl_fit_max_values(const bbvfl_fit_setup *s, const bbvfl_fit_chain *ch, int train) {
  /* every gas figure grows with n: the largest n that fits, by bisection */
  uint64_t lo = 0, hi = UINT64_C(1) << 32;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo + 1) / 2;
    if (bbvfl_fit_ok(s, ch, mid, train)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

static void describe(const bbvfl_fit_chain *ch, char *buf, size_t n) {
  snprintf(buf, n, "the 2^24 gas cap per transaction (EIP-7825) and %.0f%% of the block gas limit %llu",
           100 * ch->margin, (unsigned long long)ch->block_gas);
}

/* A round of n values whose dispute does not fit (optimistic mode): says so, with the gas, the limit
   and what to change. 0 when the dispute fits. */
static int dispute_refusal(const bbvfl_fit_setup *s, const bbvfl_fit_chain *ch, uint64_t n, const char *what,
                           bbvfl_err *err) {
  uint64_t g = bbvfl_fit_dispute_gas(s, n), lim = bbvfl_fit_dispute_limit(ch);
  if (g <= lim) return 0;
  return bbvfl_fail(err, BBVFL_E_ARG,
                    "optimistic mode: the dispute() of %s (%u payloads of %llu values at %u bits, %llu calldata "
                    "bytes) needs %llu gas, above %llu (the 2^24 gas cap per transaction, EIP-7825, or %.0f%% of the "
                    "block gas limit %llu), so a wrong claim could never be disputed: use fewer --clients or --b "
                    "levels, a smaller --batch, window or P, or --aggregation packed",
                    what, s->M, (unsigned long long)n, bbvfl_pack_bits(s->levels),
                    (unsigned long long)bbvfl_fit_dispute_calldata(s, n, s->M), (unsigned long long)g,
                    (unsigned long long)lim, 100 * ch->margin, (unsigned long long)ch->block_gas);
}

int bbvfl_fit_window(const bbvfl_fit_setup *s, const bbvfl_fit_chain *ch, size_t R, size_t B, size_t n_test, size_t P,
                     size_t *K, int insist_K, size_t *E, int insist_E, bbvfl_err *err) {
  char lim[160];
  describe(ch, lim, sizeof lim);
  if (R < 1 || B < 1 || P < 1 || n_test < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "sizing windows: %zu minibatches of %zu rows, %zu test rows, P %zu", R, B,
                      n_test, P);
  uint64_t nt = bbvfl_fit_max_values(s, ch, 1), ne = bbvfl_fit_max_values(s, ch, 0);
  uint64_t kfit = nt / ((uint64_t)B * P), efit = ne / P;
  if (kfit < 1 && dispute_refusal(s, ch, (uint64_t)B * P, "a round of one minibatch", err)) return -1;
  if (kfit < 1)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "one minibatch of %zu rows x P %zu = %llu values per client does not fit %s (at most %llu values "
                      "per round): lower --batch or --P",
                      B, P, (unsigned long long)B * P, lim, (unsigned long long)nt);
  if (efit < 1 && dispute_refusal(s, ch, P, "a round of one test row", err)) return -1;
  if (efit < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "one test row of P %zu values does not fit %s", P, lim);
  size_t k = *K < 1 ? 1 : *K > R ? R : *K;
  if (k > kfit) {
    if (insist_K && dispute_refusal(s, ch, (uint64_t)k * B * P, "a training round", err))
      return bbvfl_wrap(err, "--window %zu: the largest window that fits is %llu", k, (unsigned long long)kfit);
    if (insist_K)
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "--window %zu: a round of %llu values (window %zu x batch %zu x P %zu) is above %llu, the most "
                        "that fits %s: the largest window that fits is %llu",
                        k, (unsigned long long)k * B * P, k, B, P, (unsigned long long)nt, lim, (unsigned long long)kfit);
    k = (size_t)kfit;
  }
  size_t e = *E == 0 || *E > n_test ? n_test : *E;
  if (e > efit) {
    if (insist_E && dispute_refusal(s, ch, (uint64_t)e * P, "an evaluation round", err))
      return bbvfl_wrap(err, "--eval-rows-per-round %zu: the largest that fits is %llu", e, (unsigned long long)efit);
    if (insist_E)
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "--eval-rows-per-round %zu: a round of %llu values (%zu evaluation rows x P %zu) is above %llu, "
                        "the most that fits %s: the largest that fits is %llu",
                        e, (unsigned long long)e * P, e, P, (unsigned long long)ne, lim, (unsigned long long)efit);
    e = (size_t)efit;
  }
  *K = k;
  *E = e;
  return 0;
}

int bbvfl_fit_read_chain(bbvfl_rpc *rpc, bbvfl_fit_chain *ch, bbvfl_err *err) {
  ch->tx_cap = BBVFL_FIT_TX_CAP;
  ch->margin = BBVFL_BLOCK_GAS_MARGIN;
  ch->block_gas = BBVFL_DEFAULT_BLOCK_GAS;
  json_t *b = NULL;
  if (bbvfl_rpc_get_block(rpc, "latest", 0, &b, err) < 0) return bbvfl_wrap(err, "reading the block gas limit");
  int rc = 0;
  if (json_is_object(b) && json_object_get(b, "gasLimit"))
    rc = bbvfl_rpc_parse_u64(json_object_get(b, "gasLimit"), &ch->block_gas, err);
  json_decref(b);
  return rc < 0 ? bbvfl_wrap(err, "the latest block's gasLimit") : 0;
}
