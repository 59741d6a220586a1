/* The sender's private state and the helpers its three files share (eth/sender.h is the
 * interface): sender.c (the key's nonces and fees, the chain's head, the event reports),
 * sender_send.c (signing, handing in, re-sending and replacing), sender_track.c (looking after
 * what was sent: receipts, confirmations, stall causes). Only those files include it. */
#ifndef BBVFL_ETH_SENDER_INT_H
#define BBVFL_ETH_SENDER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "eth/sender.h"

#define DEFAULT_FEE_TTL_S 5.0
#define DEFAULT_DROP_CHECK_S 5.0
#define DEFAULT_REPRICE_BLOCKS 3
#define ONE_GWEI 1000000000ULL
#define RECENT 64      /* transactions kept (ring by nonce) for re-sending and replacing */
#define VERSIONS 8     /* signed versions (hashes) kept per transaction */
#define CHECK_EVERY_S 0.25
#define NO_BLOCK_S 10.0 /* a stall cause: no new block for this long */

/* One transaction this key sent: the call (to sign it again with other fees), the latest signed
   version's fees and bytes, every version's hash, and what its receipt said. */
typedef struct {
  int used;
  uint64_t nonce;
  bbvfl_txtype type;
  uint8_t to[20];
  int has_to;
  bbvfl_u256 value;
  uint8_t *data;
  size_t len;
  uint64_t gas;
  bbvfl_u256 max_fee, tip, gas_price; /* the latest version's */
  uint8_t *raw;                       /* the latest version's signed bytes */
  size_t raw_len;
  uint8_t hash[VERSIONS][32];         /* oldest first; the latest is hash[nver - 1] */
  unsigned nver;
  uint64_t sent_head;                 /* the chain's head when the latest version was handed in */
  int head_known;                     /* sent_head read after it was handed in (else: at the next check) */
  int mined;                          /* a receipt was seen (and counted in the fees) */
  uint64_t paid_gas;
  bbvfl_u256 paid_wei;
} sent_tx;

struct bbvfl_sender {
  bbvfl_rpc *rpc;
  const bbvfl_key *key;
  uint64_t chain_id;
  bbvfl_txtype type;
  int auto_legacy; /* the node has no base fee: legacy transactions although EIP-1559 was asked */
  int have_nonce;
  uint64_t nonce;
  uint64_t top;    /* one past the highest nonce this sender handed in (0: none) */
  double fee_ttl, drop_check;
  int sync;
  double fee_time; /* bbvfl_now() of the last fetch; < 0: none */
  bbvfl_u256 max_fee, tip, gas_price, base_fee;
  int has_cap;
  bbvfl_u256 cap;
  unsigned reprice_blocks;
  double gas_limit_wait; /* seconds a send waits for the block gas limit to come back */
  int fee_waiting;
  uint64_t head;     /* the latest block seen */
  double head_time;  /* when it last changed (< 0: never read) */
  double last_check;
  int automine;      /* -1 unknown; asked again every 10 s */
  double automine_time;
  bbvfl_sender_status_fn status_fn;
  void *status_ctx;
  uint64_t paid_gas;
  bbvfl_u256 paid_wei;
  sent_tx recent[RECENT];
  uint64_t outages_seen;
};

double bbvfl_snd_gwei(const bbvfl_u256 *v);
int bbvfl_snd_legacy(const bbvfl_sender *s);
const bbvfl_u256 *bbvfl_snd_chain_price(const bbvfl_sender *s);
void bbvfl_snd_report(bbvfl_sender *s, bbvfl_sender_event kind, const sent_tx *t, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
sent_tx *bbvfl_snd_slot_of(bbvfl_sender *s, uint64_t nonce);
void bbvfl_snd_slot_free(sent_tx *t);
int bbvfl_snd_fetch_nonce(bbvfl_sender *s, bbvfl_err *err);
int bbvfl_snd_fetch_fees(bbvfl_sender *s, int force, bbvfl_err *err);
int bbvfl_snd_fees_under_cap(bbvfl_sender *s, bbvfl_err *err);
int bbvfl_snd_read_chain(bbvfl_sender *s, uint64_t *latest, uint64_t *pending, bbvfl_err *err);
int bbvfl_snd_gas_for(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value, const uint8_t *data, size_t len,
                   uint64_t gas_limit, uint64_t *gas, bbvfl_err *err);
int bbvfl_snd_send_keep(bbvfl_sender *s, const uint8_t *to, const bbvfl_u256 *value,
                     const uint8_t *data, size_t len, uint64_t gas_limit, uint8_t hash[32],
                     uint8_t **raw, size_t *raw_len, bbvfl_receipt *sync_out,
                     double sync_timeout, bbvfl_err *err);
int bbvfl_snd_reprice(bbvfl_sender *s, sent_tx *t, bbvfl_err *err);
int bbvfl_snd_resend(bbvfl_sender *s, sent_tx *t, bbvfl_err *err);

#endif
