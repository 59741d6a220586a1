/* Looking after what was sent (eth/sender.h; state in eth/sender_int.h): the periodic check that
 * re-sends and replaces, receipts and confirmations, why nothing is mined, the send-and-wait calls. */
#include "eth/sender_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"

static void note_receipt(bbvfl_sender *s, sent_tx *t, const bbvfl_receipt *rc) {
  bbvfl_u256 wei = bbvfl_u256_from_u64(rc->effective_gas_price);
  if (bbvfl_u256_mul_u64(&wei, &wei, rc->gas_used) != 0) wei = bbvfl_u256_from_u64(0);
  if (t && t->mined) {
    s->paid_gas -= t->paid_gas;
    bbvfl_u256_sub(&s->paid_wei, &s->paid_wei, &t->paid_wei);
  }
  s->paid_gas += rc->gas_used;
  bbvfl_u256_add(&s->paid_wei, &s->paid_wei, &wei);
  if (t) {
    t->mined = 1;
    t->paid_gas = rc->gas_used;
    t->paid_wei = wei;
  }
}

static int check(bbvfl_sender *s, int force, unsigned *acted, bbvfl_err *err) {
  if (acted) *acted = 0;
  if (s->top == 0) return 0; /* nothing sent */
  double now = bbvfl_now();
  if (!force && now - s->last_check < CHECK_EVERY_S) return 0;
  s->last_check = now;
  uint64_t latest, pending;
  if (bbvfl_snd_read_chain(s, &latest, &pending, err) != 0) return -1;
  unsigned n = 0;
  for (uint64_t k = latest; k < s->top; k++) {
    sent_tx *t = bbvfl_snd_slot_of(s, k);
    if (!t) continue; /* not this process's, or too old to be kept */
    int lost = k >= pending; /* neither mined nor in the node's pool */
    if (!t->head_known) {
      t->sent_head = s->head;
      t->head_known = 1;
    }
    if (t->mined) {
      /* it had a receipt and the chain's nonce is behind it again: a reorg took it out */
      s->paid_gas -= t->paid_gas;
      bbvfl_u256_sub(&s->paid_wei, &s->paid_wei, &t->paid_wei);
      t->mined = 0;
      t->paid_gas = 0;
      t->paid_wei = bbvfl_u256_from_u64(0);
      bbvfl_snd_report(s, BBVFL_SENDER_VANISHED, t, "transaction %" PRIu64 " had a receipt but the chain no longer has it (a reorg)",
             t->nonce);
    }
    int k2 = 0;
    if (lost) {
      k2 = bbvfl_snd_resend(s, t, err);
    } else if (s->reprice_blocks && s->head >= t->sent_head + s->reprice_blocks) {
      /* in the pool and unmined for reprice_blocks blocks: the next in line, or one whose max fee
         the base fee has passed, is replaced (a later one waiting behind a stuck one is not) */
      if (bbvfl_snd_fetch_fees(s, 0, err) != 0) return -1;
      const bbvfl_u256 *signed_fee = t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee;
      if (k == latest || bbvfl_u256_cmp(bbvfl_snd_chain_price(s), signed_fee) > 0) k2 = bbvfl_snd_reprice(s, t, err);
    }
    if (k2 < 0) return -1;
    n += (unsigned)k2;
  }
  if (acted) *acted = n;
  return 0;
}

int bbvfl_sender_check(bbvfl_sender *s, unsigned *acted, bbvfl_err *err) { return check(s, 0, acted, err); }

int bbvfl_sender_recover(bbvfl_sender *s, unsigned *resent, bbvfl_err *err) {
  if (resent) *resent = 0;
  uint64_t o = bbvfl_rpc_outages(s->rpc);
  if (o == s->outages_seen) return 0;
  if (check(s, 1, resent, err) != 0) return bbvfl_wrap(err, "checking the account's transactions after the node came back");
  s->outages_seen = o;
  s->have_nonce = 0;
  return 0;
}

int bbvfl_sender_stall_cause(bbvfl_sender *s, char *out, size_t cap) {
  out[0] = 0;
  uint64_t latest, pending;
  bbvfl_err e = {0};
  if (bbvfl_snd_read_chain(s, &latest, &pending, &e) != 0) {
    snprintf(out, cap, "the node does not answer: %s", e.msg);
    return 1;
  }
  double quiet = bbvfl_now() - s->head_time;
  if (quiet >= NO_BLOCK_S) {
    snprintf(out, cap, "no new block for %.0f s (the chain's head is block %" PRIu64 "): is the node mining?", quiet,
             s->head);
    return 1;
  }
  if (bbvfl_snd_fetch_fees(s, 1, NULL) == 0 && s->has_cap && bbvfl_u256_cmp(bbvfl_snd_chain_price(s), &s->cap) > 0) {
    snprintf(out, cap, "%s %.3f gwei is above --max-fee-gwei %.3f: this client is waiting for it to fall",
             bbvfl_snd_legacy(s) ? "the gas price" : "the base fee", bbvfl_snd_gwei(bbvfl_snd_chain_price(s)), bbvfl_snd_gwei(&s->cap));
    return 1;
  }
  if (latest >= s->top) return 0;
  sent_tx *t = bbvfl_snd_slot_of(s, latest);
  if (pending <= latest) {
    snprintf(out, cap, "a nonce gap: the chain's nonce for this key is %" PRIu64 " and the node's pool does not have "
             "transaction %" PRIu64 "%s", latest, latest, t ? "" : " (not one this process keeps)");
    return 1;
  }
  if (t) {
    char h[67];
    bbvfl_hex_encode(t->hash[t->nver - 1], 32, h);
    const bbvfl_u256 *fee = t->type == BBVFL_TX_LEGACY ? &t->gas_price : &t->max_fee;
    snprintf(out, cap, "transaction %" PRIu64 " (%s, %u version%s) not included since block %" PRIu64 ": max fee %.3f gwei, "
             "tip %.3f gwei, %s %.3f gwei", t->nonce, h, t->nver, t->nver == 1 ? "" : "s", t->sent_head, bbvfl_snd_gwei(fee),
             bbvfl_snd_gwei(t->type == BBVFL_TX_LEGACY ? fee : &t->tip), bbvfl_snd_legacy(s) ? "gas price" : "base fee",
             bbvfl_snd_gwei(bbvfl_snd_chain_price(s)));
    return 1;
  }
  snprintf(out, cap, "transaction %" PRIu64 " of this key is in the node's pool and not included", latest);
  return 1;
}

/* One eth_call replay of a transaction on the state after block `at`: 1 it reverted (*e filled,
   BBVFL_E_REVERT), 0 it did not, -1 the call failed otherwise (*e). */
static int replay_at(bbvfl_sender *s, uint64_t at, const uint8_t *to, const bbvfl_u256 *value, const uint8_t *data,
                     size_t len, bbvfl_err *e) {
  char blk[24];
  snprintf(blk, sizeof blk, "0x%" PRIx64, at);
  uint8_t *out = NULL;
  size_t out_len = 0;
  memset(e, 0, sizeof *e);
  int crc = bbvfl_rpc_eth_call_value(s->rpc, s->key->addr, to, value, data, len, blk, &out, &out_len, e);
  free(out);
  if (crc == 0) return 0;
  return e->code == BBVFL_E_REVERT ? 1 : -1;
}

/* Why a mined transaction reverted: replay it as eth_call on the state before its block. When
   that call succeeds, a transaction ahead of it in the same block changed what it read (two
   clients' calls racing into one block, e.g. two disputes of one claim, the later one reverting
   NoClaim): the replay on the block's final state, which holds that change, gives the reason
   then, and the message says which replay it is. */
static int explain_revert(bbvfl_sender *s, const bbvfl_receipt *rc, const uint8_t *to,
                          const bbvfl_u256 *value, const uint8_t *data, size_t len,
                          uint64_t gas_limit, bbvfl_err *err) {
  char h[67];
  bbvfl_hex_encode(rc->hash, 32, h);
  bbvfl_err e;
  int crc = replay_at(s, rc->block_number ? rc->block_number - 1 : 0, to, value, data, len, &e);
  if (crc == 1) {
    bbvfl_fail(err, BBVFL_E_REVERT, "transaction %s reverted in block %" PRIu64 ": %s", h, rc->block_number, e.msg);
    if (err) err->revert = e.revert; /* the replay's revert data is the transaction's */
    return -1;
  }
  if (gas_limit && rc->gas_used >= gas_limit)
    return bbvfl_fail(err, BBVFL_E_REVERT,
                      "transaction %s reverted in block %" PRIu64 ": out of gas (used all %" PRIu64
                      ")",
                      h, rc->block_number, rc->gas_used);
  if (crc == 0 && replay_at(s, rc->block_number, to, value, data, len, &e) == 1) {
    bbvfl_fail(err, BBVFL_E_REVERT,
               "transaction %s reverted in block %" PRIu64 ": %s (replayed on that block's final state: on the "
               "state before it the call succeeds, so a transaction ahead of it in the block changed what it read)",
               h, rc->block_number, e.msg);
    if (err) err->revert = e.revert;
    return -1;
  }
  return bbvfl_fail(err, BBVFL_E_REVERT,
                    "transaction %s reverted in block %" PRIu64
                    " (gas used %" PRIu64 "); replaying it as a call %s, so the reason is unknown",
                    h, rc->block_number, rc->gas_used,
                    crc == 0 ? "did not revert, before its block nor on its final state" : "failed");
}

/* One look for a receipt of any of t's versions (t NULL: of hash only). 1 found, 0 not, -1 error. */
static int any_receipt(bbvfl_sender *s, sent_tx *t, const uint8_t hash[32], bbvfl_receipt *out, bbvfl_err *err) {
  if (!t || t->nver <= 1) return bbvfl_rpc_receipt(s->rpc, t ? t->hash[0] : hash, out, err);
  bbvfl_rpc_req q[VERSIONS];
  memset(q, 0, sizeof q);
  for (unsigned i = 0; i < t->nver; i++) {
    q[i].method = "eth_getTransactionReceipt";
    q[i].params = json_pack("[o]", bbvfl_json_hex(t->hash[i], 32));
  }
  memset(out, 0, sizeof *out);
  if (bbvfl_rpc_batch(s->rpc, q, t->nver, err) != 0) return bbvfl_wrap(err, "reading receipts");
  int rc = 0;
  for (unsigned i = 0; i < t->nver && rc == 0; i++) {
    if (q[i].err.code != BBVFL_OK) {
      if (err) *err = q[i].err;
      rc = -1;
    } else if (q[i].result && !json_is_null(q[i].result)) {
      rc = bbvfl_rpc_parse_receipt(q[i].result, out, err) == 0 ? 1 : -1;
      if (rc < 0) bbvfl_receipt_clear(out);
    }
  }
  bbvfl_rpc_batch_clear(q, t->nver);
  return rc;
}

/* Waits for the receipt of a sent transaction (nonce; hash and raw when it is not in the ring):
   polls with a short growing backoff, and about every CHECK_EVERY_S looks after this key's
   transactions (check: re-sends what the node lost, replaces what is overdue). Without a slot,
   every drop_check seconds asks whether the node still knows hash and hands raw in again if not.
   A timeout names the stall's cause. */
static int wait_mined(bbvfl_sender *s, uint64_t nonce, const uint8_t hash[32], const uint8_t *raw, size_t raw_len,
                      double timeout_s, bbvfl_receipt *out, bbvfl_err *err) {
  double t0 = bbvfl_now(), delay = 0.0002, last_drop = t0;
  for (;;) {
    sent_tx *t = bbvfl_snd_slot_of(s, nonce);
    if (t && memcmp(t->hash[0], hash, 32) != 0) {
      int mine = 0; /* the slot is this transaction's when one of its versions is hash */
      for (unsigned i = 0; i < t->nver; i++) mine |= !memcmp(t->hash[i], hash, 32);
      if (!mine) t = NULL;
    }
    bbvfl_err e = {0};
    int k = any_receipt(s, t, hash, out, &e);
    if (k < 0) {
      if (err) *err = e;
      return bbvfl_wrap(err, "waiting for the receipt");
    }
    if (k == 1) {
      note_receipt(s, t, out);
      if (out->block_number > s->head) s->head = out->block_number;
      return 0;
    }
    if (check(s, 0, NULL, &e) != 0) {
      if (err) *err = e;
      return bbvfl_wrap(err, "looking after the transactions in flight");
    }
    double now = bbvfl_now();
    if (!t && raw && now - last_drop >= s->drop_check) {
      /* not in the ring: dropped from the pool? Then hand the same bytes in again */
      last_drop = now;
      int known = bbvfl_rpc_get_tx(s->rpc, hash, NULL, &e);
      if (known < 0) {
        if (err) *err = e;
        return bbvfl_wrap(err, "checking whether the node still knows the transaction");
      }
      uint8_t h2[32];
      if (known == 0 && bbvfl_rpc_send_raw(s->rpc, raw, raw_len, h2, &e) != 0) {
        if (err) *err = e;
        return bbvfl_wrap(err, "re-sending a transaction the node had dropped");
      }
    }
    if (now - t0 >= timeout_s) {
      char h[67], why[400];
      bbvfl_hex_encode(hash, 32, h);
      if (!bbvfl_sender_stall_cause(s, why, sizeof why))
        snprintf(why, sizeof why, "the transaction may still be mined later");
      return bbvfl_fail(err, BBVFL_E_TIMEOUT, "no receipt for transaction %s (nonce %" PRIu64 ") after %.1f s: %s", h,
                        nonce, timeout_s, why);
    }
    double left = timeout_s - (now - t0);
    bbvfl_sleep(delay < left ? delay : left);
    delay *= 2;
    if (delay > 0.02) delay = 0.02;
  }
}

int bbvfl_sender_confirm(bbvfl_sender *s, bbvfl_receipt *rc, unsigned confirmations, double timeout_s,
                         bbvfl_err *err) {
  if (confirmations == 0) return 0;
  if (timeout_s <= 0) timeout_s = 120;
  double t0 = bbvfl_now();
  /* the transaction's slot, by any of its versions' hashes */
  sent_tx *t = NULL;
  uint64_t nonce = 0;
  for (int i = 0; i < RECENT && !t; i++)
    for (unsigned v = 0; v < s->recent[i].nver; v++)
      if (s->recent[i].used && !memcmp(s->recent[i].hash[v], rc->hash, 32)) {
        t = &s->recent[i];
        nonce = t->nonce;
      }
  uint8_t hash[32];
  memcpy(hash, rc->hash, 32);
  for (;;) {
    uint64_t head;
    if (bbvfl_rpc_block_number(s->rpc, &head, err) != 0) return bbvfl_wrap(err, "waiting for confirmations");
    if (head >= rc->block_number + confirmations) {
      /* deep enough: is the receipt still there, in the block now canonical at its height? */
      bbvfl_receipt now;
      int k = any_receipt(s, t && bbvfl_snd_slot_of(s, nonce) == t ? t : NULL, hash, &now, err);
      if (k < 0) return bbvfl_wrap(err, "re-reading a receipt for its confirmations");
      int same = 0;
      if (k == 1 && now.block_number == rc->block_number && now.has_block_hash && rc->has_block_hash &&
          !memcmp(now.block_hash, rc->block_hash, 32)) {
        char num[24];
        json_t *b = NULL;
        snprintf(num, sizeof num, "0x%" PRIx64, rc->block_number);
        if (bbvfl_rpc_get_block(s->rpc, num, 0, &b, err) != 0) {
          bbvfl_receipt_clear(&now);
          return bbvfl_wrap(err, "reading block %" PRIu64 " for a confirmation", rc->block_number);
        }
        uint8_t bh[32];
        const char *hs = json_string_value(json_object_get(b, "hash"));
        same = hs && bbvfl_hex_decode_fixed(hs, bh, 32, NULL) == 0 && !memcmp(bh, rc->block_hash, 32);
        json_decref(b);
      }
      if (same) {
        bbvfl_receipt_clear(&now);
        return 0;
      }
      if (k == 1 && now.has_block_hash) {
        /* mined again elsewhere (a reorg): confirm that one */
        note_receipt(s, t && bbvfl_snd_slot_of(s, nonce) == t ? t : NULL, &now);
        bbvfl_receipt_clear(rc);
        *rc = now;
        if (rc->status == 0)
          return bbvfl_fail(err, BBVFL_E_REVERT, "a transaction re-mined after a reorg reverted in block %" PRIu64,
                            rc->block_number);
        continue;
      }
      bbvfl_receipt_clear(&now);
      /* gone: the sender hands it in again; wait for its new receipt */
      if (!t) return bbvfl_fail(err, BBVFL_E_STATE, "a confirmed step's transaction vanished (a reorg) and is no longer "
                                "kept by this sender: it cannot be re-sent");
      bbvfl_receipt again;
      double left = timeout_s - (bbvfl_now() - t0);
      if (left <= 0) left = 0.001;
      if (wait_mined(s, nonce, hash, NULL, 0, left, &again, err) != 0) return -1;
      bbvfl_receipt_clear(rc);
      *rc = again;
      if (rc->status == 0)
        return bbvfl_fail(err, BBVFL_E_REVERT, "a transaction re-sent after a reorg reverted in block %" PRIu64,
                          rc->block_number);
      continue;
    }
    if (check(s, 0, NULL, err) != 0) return -1;
    if (bbvfl_now() - t0 > timeout_s) {
      char why[400];
      if (!bbvfl_sender_stall_cause(s, why, sizeof why)) snprintf(why, sizeof why, "blocks are slow");
      return bbvfl_fail(err, BBVFL_E_TIMEOUT, "waiting for %u confirmations of block %" PRIu64 " (head %" PRIu64
                        ") after %.0f s: %s", confirmations, rc->block_number, head, timeout_s, why);
    }
    bbvfl_sleep(0.05);
  }
}

void bbvfl_pending_clear(bbvfl_pending *p) {
  if (!p) return;
  free(p->raw);
  free(p->data);
  memset(p, 0, sizeof *p);
}

int bbvfl_sender_send_tracked(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value, const uint8_t *data,
                              size_t len, uint64_t gas, bbvfl_pending *p, bbvfl_err *err) {
  memset(p, 0, sizeof *p);
  if (!gas) return bbvfl_fail(err, BBVFL_E_ARG, "sender: a tracked transaction needs a gas limit");
  if (bbvfl_sender_recover(s, NULL, err) != 0) return -1;
  p->data = malloc(len ? len : 1);
  if (!p->data) return bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
  if (len) memcpy(p->data, data, len);
  p->len = len;
  p->gas = gas;
  if (value) {
    p->value = *value;
    p->has_value = 1;
  }
  if (to) {
    memcpy(p->to, to, 20);
    p->has_to = 1;
  }
  if (!s->have_nonce && bbvfl_snd_fetch_nonce(s, err) != 0) {
    bbvfl_pending_clear(p);
    return -1;
  }
  if (bbvfl_snd_send_keep(s, to, value, data, len, gas, p->hash, &p->raw, &p->raw_len, NULL, 0, err) != 0) {
    bbvfl_pending_clear(p);
    return -1;
  }
  p->nonce = s->nonce - 1;
  return 0;
}

int bbvfl_sender_wait_tracked(bbvfl_sender *s, bbvfl_pending *p, double timeout_s, bbvfl_receipt *out,
                              bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (!p->raw) return bbvfl_fail(err, BBVFL_E_ARG, "sender: no transaction to wait for");
  if (timeout_s <= 0) timeout_s = 60;
  if (wait_mined(s, p->nonce, p->hash, p->raw, p->raw_len, timeout_s, out, err) != 0) return -1;
  if (out->status == 0) {
    explain_revert(s, out, p->has_to ? p->to : NULL, p->has_value ? &p->value : NULL, p->data, p->len, p->gas, err);
    return -1;
  }
  return 0;
}

int bbvfl_sender_transact_many(bbvfl_sender *s, const uint8_t *to, size_t n, const uint8_t *const *data,
                               const size_t *len, const uint64_t *gas, double timeout_s, bbvfl_receipt *out,
                               size_t *failed, bbvfl_err *err) {
  for (size_t i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
  if (failed) *failed = n;
  if (n == 0) return 0;
  bbvfl_pending *p = calloc(n, sizeof *p);
  if (!p) return bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
  int rc = -1;
  size_t sent = 0;
  for (; sent < n; sent++)
    if (bbvfl_sender_send_tracked(s, to, NULL, data[sent], len[sent], gas[sent], &p[sent], err) != 0) {
      if (failed) *failed = sent;
      goto done;
    }
  rc = 0;
  for (size_t i = 0; i < n; i++) {
    bbvfl_err e = {0};
    if (bbvfl_sender_wait_tracked(s, &p[i], timeout_s, &out[i], &e) != 0 && rc == 0) {
      /* the first failure is the one reported; the later calls are still collected */
      rc = -1;
      if (err) *err = e;
      if (failed) *failed = i;
    }
  }
done:
  for (size_t i = 0; i < n; i++) bbvfl_pending_clear(&p[i]);
  free(p);
  return rc;
}

/* 1 when the node mines a block for each transaction (anvil's automine, asked every 10 s; a node
   without the method: 0): only then is eth_sendRawTransactionSync used, which would hold the
   wait in the node while this sender should be looking after its transactions. */
static int automines(bbvfl_sender *s) {
  double now = bbvfl_now();
  if (s->automine >= 0 && now - s->automine_time < 10) return s->automine;
  json_t *res = NULL;
  bbvfl_err e = {0};
  s->automine = bbvfl_rpc_call(s->rpc, "anvil_getAutomine", json_array(), &res, &e) == 0 && json_is_true(res);
  json_decref(res);
  s->automine_time = now;
  return s->automine;
}

int bbvfl_sender_transact(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                          const uint8_t *data, size_t len, uint64_t gas_limit, double timeout_s,
                          bbvfl_receipt *out, bbvfl_err *err) {
  memset(out, 0, sizeof *out);
  if (timeout_s <= 0) timeout_s = 60;
  if (bbvfl_sender_recover(s, NULL, err) != 0) return -1;
  uint8_t hash[32], *raw;
  size_t raw_len;
  uint64_t gas; /* estimated here (gas_limit 0) so that explain_revert knows the limit */
  if (bbvfl_snd_gas_for(s, to, value, data, len, gas_limit, &gas, err) != 0) return -1;
  /* a node known to lack eth_sendRawTransactionSync, or one with a block time: send the ordinary
     way, so that the wait below looks after the transaction */
  int sync = s->sync && bbvfl_rpc_has_sync(s->rpc) && automines(s);
  if (!s->have_nonce && bbvfl_snd_fetch_nonce(s, err) != 0) return -1;
  uint64_t tried = s->nonce;
  if (bbvfl_snd_send_keep(s, to, value, data, len, gas, hash, &raw, &raw_len, sync ? out : NULL, timeout_s, err) != 0) {
    bbvfl_receipt_clear(out);
    sent_tx *t = bbvfl_snd_slot_of(s, tried);
    if (bbvfl_rpc_outages(s->rpc) == s->outages_seen || !t) return -1;
    /* the node went away and came back during this send: restarted from a saved state it may have
       lost earlier transactions of ours (then this one waits behind a nonce gap) and this one's
       answer. Hand in again what it no longer has, this one included, then wait for its receipt. */
    bbvfl_err e2 = {0};
    if (bbvfl_sender_recover(s, NULL, &e2) != 0) {
      if (err) *err = e2;
      return -1;
    }
    t = bbvfl_snd_slot_of(s, tried);
    if (!t) return bbvfl_fail(err, BBVFL_E_STATE, "sender: transaction %" PRIu64 " was lost in a node restart", tried);
    raw = malloc(t->raw_len);
    if (!raw) return bbvfl_fail(err, BBVFL_E_NOMEM, "sender: out of memory");
    memcpy(raw, t->raw, t->raw_len);
    raw_len = t->raw_len;
    memcpy(hash, t->hash[0], 32);
    if (err) memset(err, 0, sizeof *err);
    sync = 0;
  } else {
    tried = s->nonce - 1; /* the nonce it went out with (a "nonce too low" answer re-read it) */
  }
  int rc;
  if (sync) {
    note_receipt(s, bbvfl_snd_slot_of(s, tried), out);
    rc = 0;
  } else {
    rc = wait_mined(s, tried, hash, raw, raw_len, timeout_s, out, err);
  }
  if (rc == 0 && out->status == 0) {
    explain_revert(s, out, to, value, data, len, gas, err);
    free(raw);
    return -1; /* out keeps the receipt */
  }
  free(raw);
  if (rc != 0) bbvfl_receipt_clear(out);
  return rc;
}
