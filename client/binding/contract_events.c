/* The contracts' events: the table, one decoder per event, and the log filters built from them
 * (see "events" in contract.h). */
#include "binding/contract.h"

#include <stdlib.h>
#include <string.h>

#include "eth/abi.h"
#include "eth/hex.h"
#include "eth/keccak.h"

/* ------------------------------------------------------------------ one decoder per event */

/* The decoders get the log's arguments in declaration order (indexed ones included), already
   checked against the declaration by bbvfl_abi_decode_log; bytes go into o->data / o->data2. */
typedef int (*ev_decoder)(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err);

static int take_bytes(const bbvfl_abi_value *v, uint8_t **out, size_t *len, bbvfl_err *err) {
  uint8_t *p = malloc(v->len ? v->len : 1);
  if (!p) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  if (v->len) memcpy(p, v->bytes, v->len);
  *out = p;
  *len = v->len;
  return 0;
}

static uint64_t val_u64(const bbvfl_abi_value *v) {
  uint64_t x = 0;
  for (int k = 24; k < 32; k++) x = (x << 8) | v->word[k];
  return x;
}

static void val_addr(const bbvfl_abi_value *v, uint8_t out[20]) { memcpy(out, v->word + 12, 20); }

static int dec_registered(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  val_addr(&it[0], o->client);
  o->index = it[1].word[31];
  return take_bytes(&it[2], &o->data, &o->data_len, err);
}

/* Committed(client, commitment) and Revealed(client, secret) */
static int dec_client_word(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  val_addr(&it[0], o->client);
  memcpy(o->word, it[1].word, 32);
  return 0;
}

static int dec_excluded(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  val_addr(&it[0], o->client);
  o->reason = it[1].word[31];
  return 0;
}

static int dec_elected(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  memcpy(o->word, it[0].word, 32);
  val_addr(&it[1], o->client);
  o->round = val_u64(&it[2]);
  o->participants = it[3].word[31];
  o->reason = it[4].word[31];
  return 0;
}

static int dec_submitted(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  o->round = val_u64(&it[0]);
  val_addr(&it[1], o->client);
  memcpy(o->word, it[2].word, 32);
  return 0;
}

static int dec_round_completed(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  o->round = val_u64(&it[0]);
  o->participants = it[1].word[31];
  return take_bytes(&it[2], &o->data, &o->data_len, err);
}

static int dec_gradient_posted(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  o->round = val_u64(&it[0]);
  val_addr(&it[1], o->client);
  if (take_bytes(&it[2], &o->data, &o->data_len, err) < 0) return -1;
  return take_bytes(&it[3], &o->data2, &o->data2_len, err);
}

static int dec_metrics_posted(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  o->epoch = (uint32_t)val_u64(&it[0]);
  val_addr(&it[1], o->client);
  o->auroc_micro = (uint32_t)val_u64(&it[2]);
  o->accuracy_micro = (uint32_t)val_u64(&it[3]);
  o->loss_micro = val_u64(&it[4]);
  return 0;
}

static int dec_rewards_paid(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  o->epoch = (uint32_t)val_u64(&it[0]);
  val_addr(&it[1], o->client);
  memcpy(o->amount.be, it[2].word, 32);
  o->submissions = (uint32_t)val_u64(&it[3]);
  return 0;
}

static int dec_session_ended(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  o->round = val_u64(&it[0]);
  return 0;
}

static int dec_label_holder(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  val_addr(&it[0], o->client);
  o->index = it[1].word[31];
  return 0;
}

static int dec_label_gradient_posted(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  o->round = val_u64(&it[0]);
  val_addr(&it[1], o->client);
  return take_bytes(&it[2], &o->data, &o->data_len, err);
}

/* SubmittedPayload(round, client, q): q into data, keccak256(q) into word */
static int dec_submitted_payload(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  o->round = val_u64(&it[0]);
  val_addr(&it[1], o->client);
  if (take_bytes(&it[2], &o->data, &o->data_len, err) < 0) return -1;
  bbvfl_keccak256(o->data, o->data_len, o->word);
  return 0;
}

static int dec_round_reopened(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  o->round = val_u64(&it[0]);
  o->bitmap = val_u64(&it[1]);
  o->participants = it[2].word[31];
  return 0;
}

/* SumClaimed(round, claimer, sumHash) and SumDisputed(round, claimer, disputer) (optimistic mode) */
static int dec_sum_claim(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  o->round = val_u64(&it[0]);
  val_addr(&it[1], o->client);
  memcpy(o->word, it[2].word, 32);
  return 0;
}

static int dec_sum_disputed(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  o->round = val_u64(&it[0]);
  val_addr(&it[1], o->client);
  val_addr(&it[2], o->to);
  return 0;
}

/* Members(members): the addresses packed 20 bytes each into data */
static int dec_members(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  size_t n = it[0].n;
  if (n > 64) return bbvfl_fail(err, BBVFL_E_PARSE, "Members names %zu addresses (at most 64)", n);
  o->data = malloc(20 * n + 1);
  if (!o->data) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) val_addr(&it[0].items[i], o->data + 20 * i);
  o->data_len = 20 * n;
  return 0;
}

/* the token's Transfer(from, to, value) and Approval(owner, spender, value) */
static int dec_token_move(const bbvfl_abi_value *it, bbvfl_cev *o, bbvfl_err *err) {
  (void)err;
  val_addr(&it[0], o->client);
  val_addr(&it[1], o->to);
  memcpy(o->amount.be, it[2].word, 32);
  return 0;
}

/* ------------------------------------------------------------------ the table */

typedef struct {
  const char *sig;   /* canonical signature (topic0) */
  const char *decl;  /* with "indexed" markers, for bbvfl_abi_decode_log */
  ev_decoder decode;
} ev_def;

/* Every event of BbvflBase.sol (every aggregator), of BbvflOptimisticAggregator and of BbvflRewardToken.sol (OpenZeppelin's
   ERC-20); the unit test test_vfl_contract checks this list against abi/. */
static const ev_def EV[BBVFL_EV_COUNT] = {
    [BBVFL_EV_REGISTERED] = {"Registered(address,uint8,bytes)", "Registered(address indexed,uint8,bytes)",
                             dec_registered},
    [BBVFL_EV_COMMITTED] = {"Committed(address,bytes32)", "Committed(address indexed,bytes32)", dec_client_word},
    [BBVFL_EV_REVEALED] = {"Revealed(address,bytes32)", "Revealed(address indexed,bytes32)", dec_client_word},
    [BBVFL_EV_EXCLUDED] = {"Excluded(address,uint8)", "Excluded(address indexed,uint8)", dec_excluded},
    [BBVFL_EV_ELECTED] = {"Elected(bytes32,address,uint64,uint8,uint8)",
                          "Elected(bytes32,address indexed,uint64,uint8,uint8)", dec_elected},
    [BBVFL_EV_SUBMITTED] = {"Submitted(uint64,address,bytes32)", "Submitted(uint64 indexed,address indexed,bytes32)",
                            dec_submitted},
    [BBVFL_EV_ROUND_COMPLETED] = {"RoundCompleted(uint64,uint8,bytes)", "RoundCompleted(uint64 indexed,uint8,bytes)",
                                  dec_round_completed},
    [BBVFL_EV_GRADIENT_POSTED] = {"GradientPosted(uint64,address,bytes,bytes)",
                                  "GradientPosted(uint64 indexed,address indexed,bytes,bytes)", dec_gradient_posted},
    [BBVFL_EV_METRICS_POSTED] = {"MetricsPosted(uint32,address,uint32,uint32,uint64)",
                                 "MetricsPosted(uint32 indexed,address indexed,uint32,uint32,uint64)",
                                 dec_metrics_posted},
    [BBVFL_EV_REWARDS_PAID] = {"RewardsPaid(uint32,address,uint256,uint32)",
                               "RewardsPaid(uint32 indexed,address indexed,uint256,uint32)", dec_rewards_paid},
    [BBVFL_EV_SESSION_ENDED] = {"SessionEnded(uint64)", "SessionEnded(uint64)", dec_session_ended},
    [BBVFL_EV_LABEL_HOLDER] = {"LabelHolder(address,uint8)", "LabelHolder(address indexed,uint8)", dec_label_holder},
    [BBVFL_EV_LABEL_GRADIENT_POSTED] = {"LabelGradientPosted(uint64,address,bytes)",
                                        "LabelGradientPosted(uint64 indexed,address indexed,bytes)",
                                        dec_label_gradient_posted},
    [BBVFL_EV_TRANSFER] = {"Transfer(address,address,uint256)", "Transfer(address indexed,address indexed,uint256)",
                           dec_token_move},
    [BBVFL_EV_ROUND_REOPENED] = {"RoundReopened(uint64,uint64,uint8)", "RoundReopened(uint64 indexed,uint64,uint8)",
                                 dec_round_reopened},
    [BBVFL_EV_APPROVAL] = {"Approval(address,address,uint256)", "Approval(address indexed,address indexed,uint256)",
                           dec_token_move},
    [BBVFL_EV_SUBMITTED_PAYLOAD] = {"SubmittedPayload(uint64,address,bytes)",
                                    "SubmittedPayload(uint64 indexed,address indexed,bytes)", dec_submitted_payload},
    [BBVFL_EV_SUM_CLAIMED] = {"SumClaimed(uint64,address,bytes32)", "SumClaimed(uint64 indexed,address indexed,bytes32)",
                              dec_sum_claim},
    [BBVFL_EV_SUM_DISPUTED] = {"SumDisputed(uint64,address,address)",
                               "SumDisputed(uint64 indexed,address indexed,address indexed)", dec_sum_disputed},
    [BBVFL_EV_MEMBERS] = {"Members(address[])", "Members(address[])", dec_members},
};

static int known(bbvfl_cev_kind k) { return k > BBVFL_EV_NONE && k < BBVFL_EV_COUNT; }

const char *bbvfl_cev_signature(bbvfl_cev_kind k) { return known(k) ? EV[k].sig : NULL; }

bbvfl_cev_kind bbvfl_cev_submission(int hashed) {
  return hashed ? BBVFL_EV_SUBMITTED_PAYLOAD : BBVFL_EV_SUBMITTED;
}

const char *bbvfl_cev_declaration(bbvfl_cev_kind k) { return known(k) ? EV[k].decl : NULL; }

static uint8_t ev_topics[BBVFL_EV_COUNT][32];
static int ev_topics_ready;

static void ev_topics_init(void) {
  if (ev_topics_ready) return;
  for (int k = 1; k < BBVFL_EV_COUNT; k++) bbvfl_abi_event_topic(EV[k].sig, ev_topics[k]);
  ev_topics_ready = 1;
}

void bbvfl_cev_topic(bbvfl_cev_kind k, uint8_t out[32]) {
  if (!known(k)) {
    memset(out, 0, 32);
    return;
  }
  bbvfl_abi_event_topic(EV[k].sig, out);
}

/* ------------------------------------------------------------------ decoding a log */

void bbvfl_cev_clear(bbvfl_cev *ev) {
  if (!ev) return;
  free(ev->data);
  free(ev->data2);
  memset(ev, 0, sizeof *ev);
}

static int json_hex_fixed(const json_t *o, const char *key, uint8_t *out, size_t n, bbvfl_err *err) {
  const json_t *v = json_object_get(o, key);
  if (!json_is_string(v)) return bbvfl_fail(err, BBVFL_E_PARSE, "log: field \"%s\" missing", key);
  return bbvfl_hex_decode_fixed(json_string_value(v), out, n, err);
}

/* The log's topics (1..4) into t. */
static int log_topics(const json_t *log, uint8_t t[4][32], size_t *nt, bbvfl_err *err) {
  const json_t *topics = json_object_get(log, "topics");
  if (!json_is_array(topics) || json_array_size(topics) == 0 || json_array_size(topics) > 4)
    return bbvfl_fail(err, BBVFL_E_PARSE, "log: topics missing or malformed");
  *nt = json_array_size(topics);
  for (size_t i = 0; i < *nt; i++) {
    const json_t *s = json_array_get(topics, i);
    if (!json_is_string(s) || bbvfl_hex_decode_fixed(json_string_value(s), t[i], 32, err) < 0)
      return bbvfl_fail(err, BBVFL_E_PARSE, "log: topic %zu is not 32 bytes of hex", i);
  }
  return 0;
}

/* Where the log is: emitter, block, index, transaction. */
static int log_place(const json_t *log, bbvfl_cev *o, bbvfl_err *err) {
  if (json_hex_fixed(log, "address", o->emitter, 20, err) < 0) return -1;
  const json_t *bn = json_object_get(log, "blockNumber");
  if (bn && !json_is_null(bn) && bbvfl_rpc_parse_u64(bn, &o->block_number, err) < 0) return -1;
  const json_t *li = json_object_get(log, "logIndex");
  if (li && !json_is_null(li) && bbvfl_rpc_parse_u64(li, &o->log_index, err) < 0) return -1;
  const json_t *th = json_object_get(log, "transactionHash");
  if (json_is_string(th) && bbvfl_hex_decode_fixed(json_string_value(th), o->tx_hash, 32, err) < 0) return -1;
  return 0;
}

int bbvfl_cev_decode(const json_t *log, bbvfl_cev *o, bbvfl_err *err) {
  memset(o, 0, sizeof *o);
  if (!json_is_object(log)) return bbvfl_fail(err, BBVFL_E_PARSE, "log: not a JSON object");
  uint8_t t[4][32];
  size_t nt = 0;
  if (log_topics(log, t, &nt, err) < 0 || log_place(log, o, err) < 0) return -1;
  ev_topics_init();
  bbvfl_cev_kind k = BBVFL_EV_NONE;
  for (int i = 1; i < BBVFL_EV_COUNT; i++)
    if (!memcmp(t[0], ev_topics[i], 32)) k = (bbvfl_cev_kind)i;
  if (k == BBVFL_EV_NONE) return 0;

  const json_t *dj = json_object_get(log, "data");
  if (!json_is_string(dj)) return bbvfl_fail(err, BBVFL_E_PARSE, "log: data missing");
  uint8_t *data = NULL;
  size_t dlen = 0;
  if (bbvfl_hex_decode_alloc(json_string_value(dj), &data, &dlen, err) < 0) return -1;
  bbvfl_abi_value v;
  int rc = bbvfl_abi_decode_log(EV[k].decl, (const uint8_t(*)[32])t, nt, data, dlen, &v, err);
  free(data);
  if (rc < 0) return bbvfl_wrap(err, "log %s", EV[k].sig);
  rc = EV[k].decode(v.items, o, err);
  bbvfl_abi_value_clear(&v);
  if (rc < 0) {
    bbvfl_cev_clear(o);
    return -1;
  }
  o->kind = k;
  return 1;
}

/* ------------------------------------------------------------------ log filters */

int bbvfl_cev_filter_event(bbvfl_log_filter *f, bbvfl_cev_kind kind, bbvfl_err *err) {
  if (!known(kind)) return bbvfl_fail(err, BBVFL_E_ARG, "log filter: unknown event kind %d", (int)kind);
  ev_topics_init();
  return bbvfl_log_filter_topic0(f, ev_topics[kind], err);
}

void bbvfl_cev_filter_index(bbvfl_log_filter *f, uint64_t v) {
  uint8_t w[32];
  bbvfl_cenc_word_u64(v, w);
  bbvfl_log_filter_topic1(f, w);
}

int bbvfl_aggc_filter(const bbvfl_aggc *a, bbvfl_cev_kind kind, const uint8_t *topic1, uint64_t from_block,
                      uint64_t to_block, bbvfl_log_filter *f, bbvfl_err *err) {
  bbvfl_log_filter_init(f, from_block, to_block);
  if (bbvfl_log_filter_address(f, a->address, err) < 0 || bbvfl_cev_filter_event(f, kind, err) < 0) return -1;
  if (topic1) bbvfl_log_filter_topic1(f, topic1);
  return 0;
}

int bbvfl_aggc_logs(bbvfl_aggc *a, bbvfl_cev_kind kind, const uint8_t *topic1, uint64_t from_block,
                    uint64_t to_block, json_t **logs, bbvfl_err *err) {
  *logs = NULL;
  if (a->depth) {
    /* only blocks at least `depth` deep: head - depth at most */
    uint64_t head;
    if (bbvfl_rpc_block_number(a->rpc, &head, err) < 0) return bbvfl_wrap(err, "eth_getLogs %s", EV[kind].sig);
    uint64_t deep = head >= a->depth ? head - a->depth : 0;
    if (head < a->depth || from_block > deep) {
      *logs = json_array();
      return *logs ? 0 : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    }
    if (to_block == BBVFL_BLOCK_LATEST || to_block > deep) to_block = deep;
  }
  bbvfl_log_filter f;
  if (bbvfl_aggc_filter(a, kind, topic1, from_block, to_block, &f, err) < 0) return -1;
  if (bbvfl_rpc_get_logs(a->rpc, &f, logs, err) < 0) return bbvfl_wrap(err, "eth_getLogs %s", EV[kind].sig);
  return 0;
}
