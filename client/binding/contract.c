#include "binding/contract.h"
#include "binding/packing.h"

#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/abi.h"
#include "eth/hex.h"
#include "eth/keccak.h"

/* ------------------------------------------------------------------ the round layout (encoders: binding/contract_enc.c) */

uint32_t bbvfl_cconfig_windows(uint32_t R, uint32_t K) { return K ? (uint32_t)(((uint64_t)R + K - 1) / K) : 0; }

int bbvfl_cconfig_derive(bbvfl_cconfig *c, bbvfl_err *err) {
  if (c->batches_per_epoch == 0) {
    /* the protocol before windows: T batches of B rows, V evaluation rounds of B rows */
    c->batches_per_epoch = c->train_rounds;
    c->window = 1;
    c->eval_rows = c->eval_rounds * c->batch;
    c->eval_rows_per_round = c->batch;
    if (!c->train_rows) c->train_rows = c->batches_per_epoch * c->batch;
    if (!c->test_rows) c->test_rows = c->eval_rows;
  }
  if (c->batches_per_epoch < 1) return bbvfl_fail(err, BBVFL_E_ARG, "batches per epoch must be >= 1");
  if (c->window < 1 || c->window > c->batches_per_epoch)
    return bbvfl_fail(err, BBVFL_E_ARG, "window %u must be in 1..%u (the batches of an epoch)", c->window,
                      c->batches_per_epoch);
  if (c->eval_rows > 0 && c->eval_rows_per_round < 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "evaluation rows per round must be >= 1");
  if ((uint64_t)c->train_rows < (uint64_t)c->batches_per_epoch * c->batch)
    return bbvfl_fail(err, BBVFL_E_ARG, "%u training rows cannot fill %u batches of %u", c->train_rows,
                      c->batches_per_epoch, c->batch);
  if (c->test_rows < c->eval_rows)
    return bbvfl_fail(err, BBVFL_E_ARG, "%u evaluation rows exceed the %u test rows", c->eval_rows, c->test_rows);
  c->train_rounds = bbvfl_cconfig_windows(c->batches_per_epoch, c->window);
  c->eval_rounds = c->eval_rows ? bbvfl_cconfig_windows(c->eval_rows, c->eval_rows_per_round) : 0;
  c->curv_rounds = 0;
  if (c->curv_every) {
    if (c->hashed || c->batch != 1)
      return bbvfl_fail(err, BBVFL_E_ARG, "curvature rounds need lane mode and batch 1 (the LR full batch)");
    if (c->curv_rows < 1 || c->curv_rows > c->batches_per_epoch)
      return bbvfl_fail(err, BBVFL_E_ARG, "curvature rows %u must be in 1..%u", c->curv_rows, c->batches_per_epoch);
    c->curv_rounds = bbvfl_cconfig_windows(c->curv_rows, c->window);
  }
  return 0;
}

uint64_t bbvfl_cconfig_curv_epochs(uint64_t e, uint32_t L) { return L == 0 || e < 2 * (uint64_t)L ? 0 : e / L - 1; }

uint64_t bbvfl_cconfig_epoch_start(const bbvfl_cconfig *c, uint64_t e) {
  return e * ((uint64_t)c->train_rounds + c->eval_rounds) + bbvfl_cconfig_curv_epochs(e, c->curv_every) * c->curv_rounds;
}

uint64_t bbvfl_cconfig_total(const bbvfl_cconfig *c) { return bbvfl_cconfig_epoch_start(c, c->epochs); }

/* Epoch and position of round r (the contract's _locate); *ce: the epoch has curvature rounds. */
static void locate(const bbvfl_cconfig *c, uint64_t r, uint64_t *e, uint64_t *pos, int *ce) {
  uint64_t per = (uint64_t)c->train_rounds + c->eval_rounds, L = c->curv_every;
  *ce = 0;
  if (L == 0 || r < L * per) {
    *e = r / per;
    *pos = r % per;
    return;
  }
  uint64_t x = r - L * per, blk = L * per + c->curv_rounds, o = x % blk, k = o / per;
  if (k >= L - 1) k = L - 1;
  *e = L + (x / blk) * L + k;
  *pos = o - k * per;
  *ce = k == L - 1;
}

int bbvfl_cconfig_epoch_end(const bbvfl_cconfig *c, uint64_t r) {
  uint64_t e, pos;
  int ce;
  locate(c, r + 1, &e, &pos, &ce);
  return pos == 0;
}

int bbvfl_cconfig_round(const bbvfl_cconfig *c, uint64_t r, bbvfl_round_layout *o, bbvfl_err *err) {
  memset(o, 0, sizeof *o);
  uint64_t per = (uint64_t)c->train_rounds + c->eval_rounds, total = bbvfl_cconfig_total(c), e, pos;
  int ce;
  if (per == 0 || r >= total)
    return bbvfl_fail(err, BBVFL_E_ARG, "round %llu is past the session (%llu rounds)", (unsigned long long)r,
                      (unsigned long long)total);
  locate(c, r, &e, &pos, &ce);
  uint64_t tc = c->train_rounds + (ce ? c->curv_rounds : 0);
  o->epoch = (uint32_t)e;
  if (pos >= c->train_rounds && pos < tc) { /* a curvature round: positions (pos-T)*K .. */
    o->train = 1;
    o->curv = 1;
    o->index = (uint32_t)pos;
    o->first = (uint32_t)((pos - c->train_rounds) * c->window);
    uint32_t left = c->curv_rows - o->first;
    o->nb = left < c->window ? left : c->window;
    o->rows = o->nb; /* B = 1 */
  } else if (pos < c->train_rounds) {
    o->train = 1;
    o->index = (uint32_t)pos;
    o->first = (uint32_t)(pos * c->window);
    uint32_t left = c->batches_per_epoch - o->first;
    o->nb = left < c->window ? left : c->window;
    o->rows = o->nb * c->batch;
  } else {
    o->index = (uint32_t)(pos - tc);
    o->first = o->index * c->eval_rows_per_round;
    uint32_t left = c->eval_rows - o->first;
    o->rows = left < c->eval_rows_per_round ? left : c->eval_rows_per_round;
  }
  o->coords = (uint64_t)o->rows * c->dim;
  return 0;
}

uint64_t bbvfl_cconfig_max_coords(const bbvfl_cconfig *c) {
  uint64_t tr = (uint64_t)c->window * c->batch, ev = c->eval_rows ? c->eval_rows_per_round : 0;
  if (ev > c->eval_rows) ev = c->eval_rows;
  return (tr > ev ? tr : ev) * c->dim;
}

/* ------------------------------------------------------------------ view decoders */

/* Word i of a static return tuple, checked to fit `bits` bits (as Solidity's decoder would). */
static int word_u(const uint8_t *data, size_t len, size_t i, unsigned bits, uint64_t *out, const char *what,
                  bbvfl_err *err) {
  if (len < (i + 1) * 32)
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: return data too short (%zu bytes, need %zu)", what, len,
                      (i + 1) * 32);
  const uint8_t *w = data + i * 32;
  size_t keep = bits / 8;
  for (size_t k = 0; k < 32 - keep; k++)
    if (w[k]) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: word %zu does not fit uint%u", what, i, bits);
  uint64_t v = 0;
  for (size_t k = 32 - keep; k < 32; k++) v = (v << 8) | w[k];
  *out = v;
  return 0;
}

static int word_addr(const uint8_t *data, size_t len, size_t i, uint8_t out[20], const char *what, bbvfl_err *err) {
  if (len < (i + 1) * 32) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: return data too short", what);
  const uint8_t *w = data + i * 32;
  for (size_t k = 0; k < 12; k++)
    if (w[k]) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: word %zu is not an address", what, i);
  memcpy(out, w + 12, 20);
  return 0;
}

static int word_u256(const uint8_t *data, size_t len, size_t i, bbvfl_u256 *out, const char *what, bbvfl_err *err) {
  if (len < (i + 1) * 32) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: return data too short", what);
  memcpy(out->be, data + i * 32, 32);
  return 0;
}

int bbvfl_cdec_params(const uint8_t *d, size_t len, bbvfl_cparams *o, bbvfl_err *err) {
  memset(o, 0, sizeof *o);
  /* every Config field but the last two in order, then T, V, laneBits, token, totalRounds, maxCoords,
     then curvEvery, curvRows, curvRoundsPerEpoch */
  enum { NW = 30 };
  uint64_t v[NW];
  static const unsigned bits[NW] = {8, 32, 32, 8, 32, 8, 32, 32, 32, 32, 32, 32, 8, 8, 32, 0, 0, 64, 64, 64, 64,
                                    32, 32, 8, 0, 64, 32, 32, 32, 32};
  for (size_t i = 0; i < NW; i++) {
    if (!bits[i]) continue;
    if (word_u(d, len, i, bits[i], &v[i], "params()", err) < 0) return -1;
  }
  if (v[5] > 1 || v[13] > 1) return bbvfl_fail(err, BBVFL_E_PARSE, "params(): masked or hashed is not a bool");
  bbvfl_cconfig *c = &o->cfg;
  c->clients = (uint8_t)v[0];
  c->batch = (uint32_t)v[1];
  c->dim = (uint32_t)v[2];
  c->levels = (uint8_t)v[3];
  c->beta_micro = (uint32_t)v[4];
  c->masked = (int)v[5];
  c->batches_per_epoch = (uint32_t)v[6];
  c->window = (uint32_t)v[7];
  c->eval_rows = (uint32_t)v[8];
  c->eval_rows_per_round = (uint32_t)v[9];
  c->train_rows = (uint32_t)v[10];
  c->test_rows = (uint32_t)v[11];
  c->staleness = (uint8_t)v[12];
  c->hashed = (int)v[13];
  c->epochs = (uint32_t)v[14];
  if (word_u256(d, len, 15, &c->reward_per_submission, "params()", err) < 0) return -1;
  if (word_u256(d, len, 16, &c->reward_pool, "params()", err) < 0) return -1;
  c->commit_blocks = v[17];
  c->reveal_blocks = v[18];
  c->active_blocks = v[19];
  c->round_timeout_blocks = v[20];
  c->train_rounds = (uint32_t)v[21];
  c->eval_rounds = (uint32_t)v[22];
  o->lane_bits = (uint8_t)v[23];
  if (word_addr(d, len, 24, o->token, "params()", err) < 0) return -1;
  o->total_rounds = v[25];
  o->max_coords = (uint32_t)v[26];
  c->curv_every = (uint32_t)v[27];
  c->curv_rows = (uint32_t)v[28];
  c->curv_rounds = (uint32_t)v[29];
  return 0;
}

int bbvfl_cdec_round_state(const uint8_t *d, size_t len, bbvfl_round_state *o, bbvfl_err *err) {
  uint64_t v[6];
  static const unsigned bits[6] = {64, 8, 8, 8, 64, 64};
  for (size_t i = 0; i < 6; i++)
    if (word_u(d, len, i, bits[i], &v[i], "roundState()", err) < 0) return -1;
  if (v[3] > 1) return bbvfl_fail(err, BBVFL_E_PARSE, "roundState(): complete is not a bool");
  o->round = v[0];
  o->submitted = (uint8_t)v[1];
  o->participants = (uint8_t)v[2];
  o->complete = (int)v[3];
  o->opened_at = v[4];
  o->completed_at = v[5];
  return 0;
}

int bbvfl_cdec_client_info(const uint8_t *d, size_t len, bbvfl_client_info *o, bbvfl_err *err) {
  uint64_t v[8];
  static const unsigned bits[8] = {8, 8, 8, 8, 8, 64, 32, 32};
  for (size_t i = 0; i < 8; i++)
    if (word_u(d, len, i, bits[i], &v[i], "clientInfo()", err) < 0) return -1;
  for (size_t i = 0; i < 4; i++)
    if (v[i] > 1) return bbvfl_fail(err, BBVFL_E_PARSE, "clientInfo(): word %zu is not a bool", i);
  o->registered = (int)v[0];
  o->excluded = (int)v[1];
  o->committed = (int)v[2];
  o->revealed = (int)v[3];
  o->index = (uint8_t)v[4];
  o->last_round_plus1 = v[5];
  o->accepted = (uint32_t)v[6];
  o->rewarded = (uint32_t)v[7];
  return 0;
}

int bbvfl_cdec_epoch_state(const uint8_t *d, size_t len, bbvfl_epoch_state *o, bbvfl_err *err) {
  uint64_t v[3];
  for (size_t i = 0; i < 3; i++) {
    if (word_u(d, len, i, 8, &v[i], "epochState()", err) < 0) return -1;
    if (v[i] > 1) return bbvfl_fail(err, BBVFL_E_PARSE, "epochState(): word %zu is not a bool", i);
  }
  o->complete = (int)v[0];
  o->metrics_posted = (int)v[1];
  o->rewards_paid = (int)v[2];
  return 0;
}

static int decode_typed(const char *type, const uint8_t *d, size_t len, bbvfl_abi_value *v, bbvfl_err *err) {
  bbvfl_abi_type *t = NULL;
  if (bbvfl_abi_type_parse(type, &t, err) < 0) return -1;
  int rc = bbvfl_abi_decode(t, d, len, v, err);
  bbvfl_abi_type_free(t);
  return rc;
}

int bbvfl_cdec_addresses(const uint8_t *d, size_t len, uint8_t (**addrs)[20], size_t *n, bbvfl_err *err) {
  *addrs = NULL;
  *n = 0;
  bbvfl_abi_value v;
  if (decode_typed("(address[])", d, len, &v, err) < 0) return -1;
  const bbvfl_abi_value *arr = &v.items[0];
  uint8_t (*a)[20] = malloc((arr->n ? arr->n : 1) * 20);
  if (!a) {
    bbvfl_abi_value_clear(&v);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t i = 0; i < arr->n; i++) memcpy(a[i], arr->items[i].word + 12, 20);
  *n = arr->n;
  *addrs = a;
  bbvfl_abi_value_clear(&v);
  return 0;
}

int bbvfl_cdec_bytes(const uint8_t *d, size_t len, uint8_t **out, size_t *out_len, bbvfl_err *err) {
  *out = NULL;
  *out_len = 0;
  bbvfl_abi_value v;
  if (decode_typed("(bytes)", d, len, &v, err) < 0) return -1;
  const bbvfl_abi_value *b = &v.items[0];
  uint8_t *p = malloc(b->len ? b->len : 1);
  if (!p) {
    bbvfl_abi_value_clear(&v);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  if (b->len) memcpy(p, b->bytes, b->len);
  *out = p;
  *out_len = b->len;
  bbvfl_abi_value_clear(&v);
  return 0;
}

int bbvfl_cdec_u64(const uint8_t *d, size_t len, uint64_t *out, bbvfl_err *err) {
  return word_u(d, len, 0, 64, out, "view", err);
}

int bbvfl_cdec_word(const uint8_t *d, size_t len, uint8_t out[32], bbvfl_err *err) {
  if (len < 32) return bbvfl_fail(err, BBVFL_E_PARSE, "view: return data too short (%zu bytes)", len);
  memcpy(out, d, 32);
  return 0;
}

int bbvfl_cdec_address(const uint8_t *d, size_t len, uint8_t out[20], bbvfl_err *err) {
  return word_addr(d, len, 0, out, "view", err);
}

int bbvfl_cdec_submit(const uint8_t *cd, size_t len, uint64_t *round, const uint8_t **q, size_t *qlen,
                      bbvfl_err *err) {
  uint8_t sel[4];
  bbvfl_abi_selector("submit(uint64,bytes)", sel);
  if (len < 4 + 64 || memcmp(cd, sel, 4))
    return bbvfl_fail(err, BBVFL_E_PARSE, "transaction is not a direct submit(uint64,bytes) call");
  const uint8_t *a = cd + 4;
  size_t alen = len - 4;
  for (int i = 0; i < 24; i++)
    if (a[i]) return bbvfl_fail(err, BBVFL_E_PARSE, "round argument does not fit uint64");
  uint64_t r = 0, off = 0, l = 0;
  for (int i = 24; i < 32; i++) r = r << 8 | a[i];
  for (int i = 32; i < 56; i++)
    if (a[i]) goto bad;
  for (int i = 56; i < 64; i++) off = off << 8 | a[i];
  if (off > alen || alen - off < 32) goto bad;
  for (size_t i = 0; i < 24; i++)
    if (a[off + i]) goto bad;
  for (size_t i = 24; i < 32; i++) l = l << 8 | a[off + i];
  if (l > alen - off - 32) goto bad;
  *round = r;
  *q = a + off + 32;
  *qlen = (size_t)l;
  return 0;
bad:
  return bbvfl_fail(err, BBVFL_E_PARSE, "malformed bytes argument in submit calldata");
}

int bbvfl_cdec_sum(const uint8_t *sum, size_t sum_len, unsigned lane_bits, uint32_t *out, size_t n,
                     bbvfl_err *err) {
  if (lane_bits != 8 && lane_bits != 16)
    return bbvfl_fail(err, BBVFL_E_ARG, "lane width %u bits is not supported (8 or 16)", lane_bits);
  size_t lb = lane_bits / 8;
  if (sum_len != n * lb)
    return bbvfl_fail(err, BBVFL_E_PARSE, "round sum has %zu bytes, expected %zu (%zu lanes of %u bits)", sum_len,
                      n * lb, n, lane_bits);
  if (lb == 1)
    for (size_t i = 0; i < n; i++) out[i] = sum[i];
  else
    for (size_t i = 0; i < n; i++) out[i] = ((uint32_t)sum[2 * i] << 8) | sum[2 * i + 1];
  return 0;
}

int bbvfl_cdec_round_sum(const bbvfl_cparams *p, const uint8_t *sum, size_t sum_len, uint32_t *out, size_t n,
                         bbvfl_err *err) {
  if (p->sum_bits) return bbvfl_unpack(sum, sum_len, n, p->sum_bits, out, err);
  return bbvfl_cdec_sum(sum, sum_len, p->lane_bits, out, n, err);
}

/* ------------------------------------------------------------------ RPC-backed views */

void bbvfl_aggc_init(bbvfl_aggc *a, bbvfl_rpc *rpc, const uint8_t address[20]) {
  a->rpc = rpc;
  memcpy(a->address, address, 20);
  a->depth = 0;
}

/* eth_call of a view with a prepared calldata on `to`. */
/* A view on "latest". A node refusing it with a JSON-RPC error object that is not a revert is
   asked again, up to 5 times 0.1 to 0.5 s apart: a node in the middle of a reorg, or load-balanced
   nodes whose heads differ by a block, answer "latest" with a block height they no longer (or do
   not yet) have. A revert, or a refusal that persists, is returned. */
static int view_call(bbvfl_rpc *rpc, const uint8_t to[20], const uint8_t *cd, size_t cdlen, uint8_t **out,
                     size_t *len, const char *what, bbvfl_err *err) {
  for (int attempt = 1;; attempt++) {
    bbvfl_err e = {0};
    if (bbvfl_rpc_eth_call(rpc, NULL, to, cd, cdlen, NULL, out, len, &e) == 0) return 0;
    if (attempt >= 5 || e.code != BBVFL_E_RPC || !e.rpc.present) {
      if (err) *err = e;
      return bbvfl_wrap(err, "%s", what);
    }
    bbvfl_sleep(0.1 * attempt);
  }
}

static int view0(bbvfl_aggc *a, const char *sig, uint8_t **out, size_t *len, bbvfl_err *err) {
  uint8_t sel[4];
  bbvfl_abi_selector(sig, sel);
  return view_call(a->rpc, a->address, sel, 4, out, len, sig, err);
}

static int view_word(bbvfl_aggc *a, const char *sig, const uint8_t w[32], uint8_t **out, size_t *len,
                     bbvfl_err *err) {
  uint8_t cd[36];
  bbvfl_abi_selector(sig, cd);
  memcpy(cd + 4, w, 32);
  return view_call(a->rpc, a->address, cd, sizeof cd, out, len, sig, err);
}

#define VIEW0(sig, decode_expr)                           \
  do {                                                    \
    uint8_t *d_ = NULL;                                   \
    size_t l_ = 0;                                        \
    if (view0(a, sig, &d_, &l_, err) < 0) return -1;      \
    int rc_ = (decode_expr);                              \
    free(d_);                                             \
    return rc_ < 0 ? bbvfl_wrap(err, "%s", sig) : 0;      \
  } while (0)

int bbvfl_aggc_has_submitted(bbvfl_aggc *a, uint64_t round, const uint8_t addr[20], int *out, bbvfl_err *err) {
  const char *sig = "hasSubmitted(uint64,address)";
  uint8_t cd[68];
  bbvfl_abi_selector(sig, cd);
  bbvfl_cenc_word_u64(round, cd + 4);
  bbvfl_cenc_word_address(addr, cd + 36);
  uint8_t *d = NULL;
  size_t l = 0;
  if (view_call(a->rpc, a->address, cd, sizeof cd, &d, &l, sig, err) < 0) return -1;
  uint64_t v = 0;
  int rc = bbvfl_cdec_u64(d, l, &v, err);
  free(d);
  if (rc < 0 || v > 1) return rc < 0 ? bbvfl_wrap(err, "%s", sig) : bbvfl_fail(err, BBVFL_E_PARSE, "%s: not a bool", sig);
  *out = (int)v;
  return 0;
}

static int params_only(bbvfl_aggc *a, bbvfl_cparams *out, bbvfl_err *err) {
  VIEW0("params()", bbvfl_cdec_params(d_, l_, out, err));
}

/* params() and, for a hashed contract, packing(): a contract without it (BbvflHashAggregator
   reverts on the unknown selector) is the plain hashed mode. */
int bbvfl_aggc_params(bbvfl_aggc *a, bbvfl_cparams *out, bbvfl_err *err) {
  if (params_only(a, out, err) < 0) return -1;
  out->cfg.wire = out->cfg.hashed ? BBVFL_WIRE_HASHED : BBVFL_WIRE_LANES;
  out->value_bits = out->sum_bits = 0;
  out->dispute_blocks = 0;
  if (!out->cfg.hashed) return 0;
  uint8_t *d = NULL;
  size_t l = 0;
  bbvfl_err e = {0};
  if (view0(a, "packing()", &d, &l, &e) < 0) {
    if (e.code == BBVFL_E_REVERT) return 0;
    if (err) *err = e;
    return -1;
  }
  uint64_t v[4];
  int rc = 0;
  for (int i = 0; i < 4 && rc == 0; i++) rc = word_u(d, l, (size_t)i, i == 3 ? 64 : 8, &v[i], "packing()", err);
  free(d);
  if (rc < 0) return -1;
  if (v[0] < 1 || v[0] > 8 || v[1] < v[0] || v[1] > 16)
    return bbvfl_fail(err, BBVFL_E_PARSE, "packing(): %llu bits per value, %llu per sum", (unsigned long long)v[0],
                      (unsigned long long)v[1]);
  out->value_bits = (uint8_t)v[0];
  out->sum_bits = (uint8_t)v[1];
  out->cfg.wire = v[2] ? BBVFL_WIRE_OPTIMISTIC : BBVFL_WIRE_PACKED;
  out->dispute_blocks = v[3];
  return 0;
}

int bbvfl_aggc_phase(bbvfl_aggc *a, bbvfl_phase *out, bbvfl_err *err) {
  uint64_t v = 0;
  uint8_t *d = NULL;
  size_t l = 0;
  if (view0(a, "phase()", &d, &l, err) < 0) return -1;
  int rc = word_u(d, l, 0, 8, &v, "phase()", err);
  free(d);
  if (rc < 0) return -1;
  if (v > BBVFL_PHASE_ENDED) return bbvfl_fail(err, BBVFL_E_PARSE, "phase(): unknown phase %llu", (unsigned long long)v);
  *out = (bbvfl_phase)v;
  return 0;
}

int bbvfl_aggc_current_round(bbvfl_aggc *a, uint64_t *out, bbvfl_err *err) {
  VIEW0("currentRound()", bbvfl_cdec_u64(d_, l_, out, err));
}

int bbvfl_aggc_round_state(bbvfl_aggc *a, bbvfl_round_state *out, bbvfl_err *err) {
  VIEW0("roundState()", bbvfl_cdec_round_state(d_, l_, out, err));
}

int bbvfl_aggc_round_sum(bbvfl_aggc *a, uint64_t round, uint8_t **sum, size_t *len, bbvfl_err *err) {
  uint8_t w[32];
  bbvfl_cenc_word_u64(round, w);
  uint8_t *d = NULL;
  size_t l = 0;
  if (view_word(a, "roundSum(uint64)", w, &d, &l, err) < 0) return -1;
  int rc = bbvfl_cdec_bytes(d, l, sum, len, err);
  free(d);
  return rc;
}

int bbvfl_aggc_client_info(bbvfl_aggc *a, const uint8_t addr[20], bbvfl_client_info *out, bbvfl_err *err) {
  uint8_t w[32];
  bbvfl_cenc_word_address(addr, w);
  uint8_t *d = NULL;
  size_t l = 0;
  if (view_word(a, "clientInfo(address)", w, &d, &l, err) < 0) return -1;
  int rc = bbvfl_cdec_client_info(d, l, out, err);
  free(d);
  return rc;
}

int bbvfl_aggc_clients(bbvfl_aggc *a, uint8_t (**addrs)[20], size_t *n, bbvfl_err *err) {
  VIEW0("clients()", bbvfl_cdec_addresses(d_, l_, addrs, n, err));
}

int bbvfl_aggc_participants(bbvfl_aggc *a, uint8_t (**addrs)[20], size_t *n, bbvfl_err *err) {
  VIEW0("participants()", bbvfl_cdec_addresses(d_, l_, addrs, n, err));
}

int bbvfl_aggc_seed(bbvfl_aggc *a, uint8_t S[32], bbvfl_err *err) {
  VIEW0("seed()", bbvfl_cdec_word(d_, l_, S, err));
}

int bbvfl_aggc_election_seed(bbvfl_aggc *a, uint8_t S[32], bbvfl_err *err) {
  VIEW0("electionSeed()", bbvfl_cdec_word(d_, l_, S, err));
}

int bbvfl_aggc_active(bbvfl_aggc *a, uint8_t addr[20], bbvfl_err *err) {
  VIEW0("active()", bbvfl_cdec_address(d_, l_, addr, err));
}

int bbvfl_aggc_last_fusion_round(bbvfl_aggc *a, uint64_t *out, bbvfl_err *err) {
  VIEW0("lastFusionRound()", bbvfl_cdec_u64(d_, l_, out, err));
}

int bbvfl_aggc_last_fusion_hash(bbvfl_aggc *a, uint8_t h[32], bbvfl_err *err) {
  VIEW0("lastFusionParamsHash()", bbvfl_cdec_word(d_, l_, h, err));
}

int bbvfl_aggc_label_holders(bbvfl_aggc *a, uint64_t *bitmap, bbvfl_err *err) {
  VIEW0("labelHolders()", bbvfl_cdec_u64(d_, l_, bitmap, err));
}

int bbvfl_aggc_token(bbvfl_aggc *a, uint8_t token[20], bbvfl_err *err) {
  VIEW0("token()", bbvfl_cdec_address(d_, l_, token, err));
}

int bbvfl_aggc_epoch_state(bbvfl_aggc *a, uint32_t epoch, bbvfl_epoch_state *out, bbvfl_err *err) {
  uint8_t w[32];
  bbvfl_cenc_word_u64(epoch, w);
  uint8_t *d = NULL;
  size_t l = 0;
  if (view_word(a, "epochState(uint32)", w, &d, &l, err) < 0) return -1;
  int rc = bbvfl_cdec_epoch_state(d, l, out, err);
  free(d);
  return rc;
}

int bbvfl_token_balance(bbvfl_rpc *rpc, const uint8_t token[20], const uint8_t holder[20], bbvfl_u256 *out,
                        bbvfl_err *err) {
  uint8_t cd[36];
  bbvfl_abi_selector("balanceOf(address)", cd);
  bbvfl_cenc_word_address(holder, cd + 4);
  uint8_t *d = NULL;
  size_t l = 0;
  if (view_call(rpc, token, cd, sizeof cd, &d, &l, "balanceOf(address)", err) < 0) return -1;
  int rc = word_u256(d, l, 0, out, "balanceOf(address)", err);
  free(d);
  return rc;
}

int bbvfl_aggc_round_payloads(bbvfl_aggc *a, uint64_t round, uint64_t from_block, const uint8_t (*clients)[20],
                              size_t n, size_t want_len, uint8_t **out, size_t *out_len, size_t *count,
                              bbvfl_err *err) {
  for (size_t i = 0; i < n; i++) out[i] = NULL, out_len[i] = 0;
  *count = 0;
  uint8_t t1[32];
  bbvfl_cenc_word_u64(round, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(a, BBVFL_EV_SUBMITTED_PAYLOAD, t1, from_block, UINT64_MAX, &logs, err) < 0) return -1;
  size_t nl = json_array_size(logs);
  int rc = -1;
  /* the latest SubmittedPayload per client (a masked round re-opened after an expiry is
     submitted again): the logs come in chain order */
  for (size_t k = 0; k < nl; k++) {
    bbvfl_cev e;
    int d = bbvfl_cev_decode(json_array_get(logs, k), &e, err);
    if (d < 0) goto out;
    if (d == 1 && e.kind == BBVFL_EV_SUBMITTED_PAYLOAD && e.round == round && !memcmp(e.emitter, a->address, 20)) {
      if (want_len && e.data_len != want_len) {
        bbvfl_cev_clear(&e);
        bbvfl_fail(err, BBVFL_E_VERIFY,
                   "round %llu: a SubmittedPayload log holds %zu bytes, the round takes %zu (the contract refuses "
                   "that length: the node's logs are not the chain's)",
                   (unsigned long long)round, e.data_len, want_len);
        goto out;
      }
      for (size_t i = 0; i < n; i++)
        if (!memcmp(clients[i], e.client, 20)) {
          if (!out[i]) (*count)++;
          free(out[i]);
          out[i] = e.data;
          out_len[i] = e.data_len;
          e.data = NULL;
          e.data_len = 0;
          break;
        }
    }
    bbvfl_cev_clear(&e);
  }
  rc = 0;
out:
  if (rc < 0) {
    for (size_t i = 0; i < n; i++) free(out[i]), out[i] = NULL, out_len[i] = 0;
    *count = 0;
  }
  json_decref(logs);
  return rc;
}
