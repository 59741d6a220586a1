#include "eth/tx.h"

#include <stdlib.h>
#include <string.h>

#include "eth/buf.h"
#include "eth/keccak.h"
#include "eth/rlp.h"

/* Appends the fields shared by the signed and unsigned forms. */
static void put_to(bbvfl_buf *b, const bbvfl_tx *tx) {
  bbvfl_rlp_put_bytes(b, tx->to, tx->has_to ? 20 : 0);
}

static void put_access_list(bbvfl_buf *b, const bbvfl_tx *tx) {
  size_t outer = bbvfl_rlp_list_begin(b);
  for (size_t i = 0; i < tx->access_len; i++) {
    const bbvfl_access_entry *e = &tx->access_list[i];
    size_t m = bbvfl_rlp_list_begin(b);
    bbvfl_rlp_put_bytes(b, e->address, 20);
    size_t mk = bbvfl_rlp_list_begin(b);
    for (size_t j = 0; j < e->nkeys; j++) bbvfl_rlp_put_bytes(b, e->keys[j], 32);
    bbvfl_rlp_list_end(b, mk);
    bbvfl_rlp_list_end(b, m);
  }
  bbvfl_rlp_list_end(b, outer);
}

/* Legacy body without the signature triple: nonce, gasPrice, gas, to, value, data. */
static void put_legacy_body(bbvfl_buf *b, const bbvfl_tx *tx) {
  bbvfl_rlp_put_u64(b, tx->nonce);
  bbvfl_rlp_put_u256(b, &tx->gas_price);
  bbvfl_rlp_put_u64(b, tx->gas_limit);
  put_to(b, tx);
  bbvfl_rlp_put_u256(b, &tx->value);
  bbvfl_rlp_put_bytes(b, tx->data, tx->data_len);
}

/* Type 2 fields before the access list: chainId, nonce, fees, gas, to, value, data. */
static void put_1559_head(bbvfl_buf *b, const bbvfl_tx *tx) {
  bbvfl_rlp_put_u64(b, tx->chain_id);
  bbvfl_rlp_put_u64(b, tx->nonce);
  bbvfl_rlp_put_u256(b, &tx->max_priority_fee);
  bbvfl_rlp_put_u256(b, &tx->max_fee);
  bbvfl_rlp_put_u64(b, tx->gas_limit);
  put_to(b, tx);
  bbvfl_rlp_put_u256(b, &tx->value);
  bbvfl_rlp_put_bytes(b, tx->data, tx->data_len);
}

/* Type 2 body without the signature: chainId .. accessList. */
static void put_1559_body(bbvfl_buf *b, const bbvfl_tx *tx) {
  put_1559_head(b, tx);
  put_access_list(b, tx);
}

/* The unsigned form (what is hashed for signing). The access list of a type 2 transaction comes
 * from tx->access_list, or, when access_verbatim is set, is the list payload access_rlp
 * (access_rlp_len bytes) re-emitted as it was decoded. */
static void put_unsigned(bbvfl_buf *b, const bbvfl_tx *tx, int access_verbatim, const uint8_t *access_rlp,
                         size_t access_rlp_len) {
  if (tx->type == BBVFL_TX_LEGACY) {
    size_t m = bbvfl_rlp_list_begin(b);
    put_legacy_body(b, tx);
    if (tx->chain_id) {
      bbvfl_rlp_put_u64(b, tx->chain_id);
      bbvfl_rlp_put_u64(b, 0);
      bbvfl_rlp_put_u64(b, 0);
    }
    bbvfl_rlp_list_end(b, m);
  } else {
    bbvfl_buf_byte(b, 0x02);
    size_t m = bbvfl_rlp_list_begin(b);
    if (access_verbatim) {
      put_1559_head(b, tx);
      size_t al = bbvfl_rlp_list_begin(b);
      bbvfl_buf_append(b, access_rlp, access_rlp_len);
      bbvfl_rlp_list_end(b, al);
    } else {
      put_1559_body(b, tx);
    }
    bbvfl_rlp_list_end(b, m);
  }
}

static int check_tx(const bbvfl_tx *tx, bbvfl_err *err) {
  if (tx->type != BBVFL_TX_LEGACY && tx->type != BBVFL_TX_EIP1559)
    return bbvfl_fail(err, BBVFL_E_ARG, "unsupported transaction type %d (use 0 or 2)", (int)tx->type);
  if (tx->data_len && !tx->data) return bbvfl_fail(err, BBVFL_E_ARG, "transaction data is NULL");
  if (tx->access_len && tx->type != BBVFL_TX_EIP1559)
    return bbvfl_fail(err, BBVFL_E_ARG, "an access list needs a type 2 transaction");
  if (tx->access_len && !tx->access_list) return bbvfl_fail(err, BBVFL_E_ARG, "access list is NULL");
  return 0;
}

int bbvfl_tx_encode_unsigned(const bbvfl_tx *tx, uint8_t **out, size_t *len, bbvfl_err *err) {
  if (check_tx(tx, err) < 0) return -1;
  bbvfl_buf b;
  bbvfl_buf_init(&b);
  put_unsigned(&b, tx, 0, NULL, 0);
  return bbvfl_buf_take(&b, out, len, err);
}

int bbvfl_tx_sign(const bbvfl_tx *tx, const bbvfl_key *k, uint8_t **raw, size_t *raw_len,
                  uint8_t hash[32], bbvfl_err *err) {
  *raw = NULL;
  *raw_len = 0;
  uint8_t *unsig;
  size_t ulen;
  if (bbvfl_tx_encode_unsigned(tx, &unsig, &ulen, err) < 0) return -1;
  uint8_t sighash[32], sig[65];
  bbvfl_keccak256(unsig, ulen, sighash);
  free(unsig);
  if (bbvfl_sign_hash(k, sighash, sig, err) < 0) return -1;
  bbvfl_u256 r, s;
  bbvfl_u256_from_be(sig, 32, &r);
  bbvfl_u256_from_be(sig + 32, 32, &s);

  bbvfl_buf b;
  bbvfl_buf_init(&b);
  if (tx->type == BBVFL_TX_LEGACY) {
    bbvfl_u256 v;
    if (tx->chain_id) {
      /* EIP-155: v = recid + 35 + 2 * chainId, computed in 256 bits (chain ids are 64-bit) */
      bbvfl_u256 add = bbvfl_u256_from_u64(35u + sig[64]);
      bbvfl_u256 cid = bbvfl_u256_from_u64(tx->chain_id);
      bbvfl_u256_mul_u64(&v, &cid, 2);
      bbvfl_u256_add(&v, &v, &add);
    } else {
      v = bbvfl_u256_from_u64(27u + sig[64]);
    }
    size_t m = bbvfl_rlp_list_begin(&b);
    put_legacy_body(&b, tx);
    bbvfl_rlp_put_u256(&b, &v);
    bbvfl_rlp_put_u256(&b, &r);
    bbvfl_rlp_put_u256(&b, &s);
    bbvfl_rlp_list_end(&b, m);
  } else {
    bbvfl_buf_byte(&b, 0x02);
    size_t m = bbvfl_rlp_list_begin(&b);
    put_1559_body(&b, tx);
    bbvfl_rlp_put_u64(&b, sig[64]); /* y parity, bare */
    bbvfl_rlp_put_u256(&b, &r);
    bbvfl_rlp_put_u256(&b, &s);
    bbvfl_rlp_list_end(&b, m);
  }
  if (bbvfl_buf_take(&b, raw, raw_len, err) < 0) return -1;
  bbvfl_keccak256(*raw, *raw_len, hash);
  return 0;
}

/* ---- decoding ---- */

static int next_field(bbvfl_rlp_iter *it, bbvfl_rlp_item *item, const char *name, bbvfl_err *err) {
  int rc = bbvfl_rlp_next(it, item, err);
  if (rc < 0) return bbvfl_wrap(err, "transaction field %s", name);
  if (rc == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "transaction: missing field %s", name);
  return 0;
}

static int field_u64(bbvfl_rlp_iter *it, uint64_t *out, const char *name, bbvfl_err *err) {
  bbvfl_rlp_item item;
  if (next_field(it, &item, name, err) < 0) return -1;
  if (bbvfl_rlp_item_u64(&item, out, err) < 0) return bbvfl_wrap(err, "transaction field %s", name);
  return 0;
}

static int field_u256(bbvfl_rlp_iter *it, bbvfl_u256 *out, const char *name, bbvfl_err *err) {
  bbvfl_rlp_item item;
  if (next_field(it, &item, name, err) < 0) return -1;
  if (bbvfl_rlp_item_u256(&item, out, err) < 0) return bbvfl_wrap(err, "transaction field %s", name);
  return 0;
}

static int field_bytes(bbvfl_rlp_iter *it, bbvfl_rlp_item *item, const char *name, bbvfl_err *err) {
  if (next_field(it, item, name, err) < 0) return -1;
  if (item->is_list)
    return bbvfl_fail(err, BBVFL_E_PARSE, "transaction field %s: expected bytes, found a list", name);
  return 0;
}

static int field_to(bbvfl_rlp_iter *it, bbvfl_tx *tx, bbvfl_err *err) {
  bbvfl_rlp_item item;
  if (field_bytes(it, &item, "to", err) < 0) return -1;
  if (item.len == 0) {
    tx->has_to = 0;
  } else if (item.len == 20) {
    tx->has_to = 1;
    memcpy(tx->to, item.payload, 20);
  } else {
    return bbvfl_fail(err, BBVFL_E_PARSE, "transaction field to: %zu bytes, expected 20 or 0", item.len);
  }
  return 0;
}

static int field_sig_word(bbvfl_rlp_iter *it, uint8_t out[32], const char *name, bbvfl_err *err) {
  bbvfl_u256 v;
  if (field_u256(it, &v, name, err) < 0) return -1;
  if (bbvfl_u256_is_zero(&v)) return bbvfl_fail(err, BBVFL_E_PARSE, "transaction signature %s is zero", name);
  memcpy(out, v.be, 32);
  return 0;
}

static int check_access_list(const bbvfl_rlp_item *al, size_t *count, bbvfl_err *err) {
  bbvfl_rlp_iter it, kit, eit;
  bbvfl_rlp_item e, f;
  if (bbvfl_rlp_iter_init(&it, al, err) < 0) return bbvfl_wrap(err, "access list");
  size_t n = 0;
  int rc;
  while ((rc = bbvfl_rlp_next(&it, &e, err)) == 1) {
    if (bbvfl_rlp_iter_init(&eit, &e, err) < 0) return bbvfl_wrap(err, "access list entry %zu", n);
    if (bbvfl_rlp_next(&eit, &f, err) != 1 || f.is_list || f.len != 20)
      return bbvfl_fail(err, BBVFL_E_PARSE, "access list entry %zu: expected a 20-byte address", n);
    if (bbvfl_rlp_next(&eit, &f, err) != 1 || !f.is_list)
      return bbvfl_fail(err, BBVFL_E_PARSE, "access list entry %zu: expected a list of storage keys", n);
    bbvfl_rlp_item key;
    if (bbvfl_rlp_iter_init(&kit, &f, err) < 0) return -1;
    while ((rc = bbvfl_rlp_next(&kit, &key, err)) == 1)
      if (key.is_list || key.len != 32)
        return bbvfl_fail(err, BBVFL_E_PARSE, "access list entry %zu: storage keys must be 32 bytes", n);
    if (rc < 0) return bbvfl_wrap(err, "access list entry %zu", n);
    if (bbvfl_rlp_next(&eit, &f, err) != 0)
      return bbvfl_fail(err, BBVFL_E_PARSE, "access list entry %zu: extra fields", n);
    n++;
  }
  if (rc < 0) return bbvfl_wrap(err, "access list");
  *count = n;
  return 0;
}

int bbvfl_tx_decode(const uint8_t *raw, size_t len, bbvfl_tx_decoded *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (len == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "transaction: empty input");
  bbvfl_tx *tx = &out->tx;
  bbvfl_rlp_item list, item;
  bbvfl_rlp_iter it;
  uint8_t sig[65];
  if (raw[0] >= 0xc0) {
    tx->type = BBVFL_TX_LEGACY;
    if (bbvfl_rlp_decode_exact(raw, len, &list, err) < 0) return bbvfl_wrap(err, "legacy transaction");
    if (bbvfl_rlp_iter_init(&it, &list, err) < 0) return -1;
    if (field_u64(&it, &tx->nonce, "nonce", err) < 0 ||
        field_u256(&it, &tx->gas_price, "gasPrice", err) < 0 ||
        field_u64(&it, &tx->gas_limit, "gasLimit", err) < 0 || field_to(&it, tx, err) < 0 ||
        field_u256(&it, &tx->value, "value", err) < 0 || field_bytes(&it, &item, "data", err) < 0)
      return -1;
    tx->data = item.payload;
    tx->data_len = item.len;
    bbvfl_u256 v;
    if (field_u256(&it, &v, "v", err) < 0 || field_sig_word(&it, out->r, "r", err) < 0 ||
        field_sig_word(&it, out->s, "s", err) < 0)
      return -1;
    if (bbvfl_rlp_next(&it, &item, err) != 0)
      return bbvfl_fail(err, BBVFL_E_PARSE, "legacy transaction: unexpected fields after s");
    uint64_t v64;
    if (bbvfl_u256_to_u64(&v, &v64) == 0 && (v64 == 27 || v64 == 28)) {
      tx->chain_id = 0;
      out->recid = (int)(v64 - 27);
    } else {
      bbvfl_u256 base = bbvfl_u256_from_u64(35), rest, cid;
      if (bbvfl_u256_sub(&rest, &v, &base))
        return bbvfl_fail(err, BBVFL_E_PARSE, "legacy transaction: v must be 27, 28 or >= 35");
      out->recid = (int)bbvfl_u256_divmod_u64(&cid, &rest, 2);
      if (bbvfl_u256_to_u64(&cid, &tx->chain_id) < 0 || tx->chain_id == 0)
        return bbvfl_fail(err, BBVFL_E_PARSE, "legacy transaction: v implies a chain id outside 1..2^64-1");
    }
  } else if (raw[0] == 0x02) {
    tx->type = BBVFL_TX_EIP1559;
    if (bbvfl_rlp_decode_exact(raw + 1, len - 1, &list, err) < 0)
      return bbvfl_wrap(err, "type 2 transaction");
    if (bbvfl_rlp_iter_init(&it, &list, err) < 0) return bbvfl_wrap(err, "type 2 transaction");
    if (field_u64(&it, &tx->chain_id, "chainId", err) < 0 || field_u64(&it, &tx->nonce, "nonce", err) < 0 ||
        field_u256(&it, &tx->max_priority_fee, "maxPriorityFeePerGas", err) < 0 ||
        field_u256(&it, &tx->max_fee, "maxFeePerGas", err) < 0 ||
        field_u64(&it, &tx->gas_limit, "gasLimit", err) < 0 || field_to(&it, tx, err) < 0 ||
        field_u256(&it, &tx->value, "value", err) < 0 || field_bytes(&it, &item, "data", err) < 0)
      return -1;
    tx->data = item.payload;
    tx->data_len = item.len;
    if (next_field(&it, &item, "accessList", err) < 0) return -1;
    if (check_access_list(&item, &out->access_count, err) < 0) return -1;
    out->access_rlp = item.payload;
    out->access_rlp_len = item.len;
    uint64_t parity;
    if (field_u64(&it, &parity, "yParity", err) < 0) return -1;
    if (parity > 1) return bbvfl_fail(err, BBVFL_E_PARSE, "type 2 transaction: yParity must be 0 or 1");
    out->recid = (int)parity;
    if (field_sig_word(&it, out->r, "r", err) < 0 || field_sig_word(&it, out->s, "s", err) < 0) return -1;
    if (bbvfl_rlp_next(&it, &item, err) != 0)
      return bbvfl_fail(err, BBVFL_E_PARSE, "type 2 transaction: unexpected fields after s");
  } else {
    return bbvfl_fail(err, BBVFL_E_PARSE, "transaction type 0x%02x is not supported (legacy or 0x02 only)",
                      raw[0]);
  }

  /* signing hash: re-encode the unsigned form from the decoded fields (the access list is
   * re-emitted verbatim from the input) */
  bbvfl_buf b;
  bbvfl_buf_init(&b);
  put_unsigned(&b, tx, 1, out->access_rlp, out->access_rlp_len);
  if (bbvfl_buf_check(&b, err) < 0) {
    bbvfl_buf_free(&b);
    return -1;
  }
  uint8_t sighash[32];
  bbvfl_keccak256(b.p, b.len, sighash);
  bbvfl_buf_free(&b);
  memcpy(sig, out->r, 32);
  memcpy(sig + 32, out->s, 32);
  sig[64] = (uint8_t)out->recid;
  if (bbvfl_recover_addr(sighash, sig, out->from, err) < 0) return bbvfl_wrap(err, "transaction signature");
  bbvfl_keccak256(raw, len, out->hash);
  return 0;
}
