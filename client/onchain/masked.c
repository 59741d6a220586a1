/* Masked mode, client side: see masked.h. */
#include "onchain/masked.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "eth/rpc.h"

/* The bitmap of participants() by client index (position in clients()). */
static int read_set(bbvfl_aggc *agg, uint64_t *set, bbvfl_err *err) {
  uint8_t(*cl)[20] = NULL, (*pa)[20] = NULL;
  size_t ncl = 0, npa = 0;
  if (bbvfl_aggc_clients(agg, &cl, &ncl, err) < 0) return bbvfl_wrap(err, "reading clients()");
  if (bbvfl_aggc_participants(agg, &pa, &npa, err) < 0) {
    free(cl);
    return bbvfl_wrap(err, "reading participants()");
  }
  uint64_t s = 0;
  int rc = 0;
  for (size_t i = 0; i < npa && rc == 0; i++) {
    size_t j = 0;
    while (j < ncl && memcmp(pa[i], cl[j], 20)) j++;
    if (j == ncl || j >= BBVFL_MASK_MAX_CLIENTS)
      rc = bbvfl_fail(err, BBVFL_E_STATE, "participants() names an address that is not among clients()");
    else
      s |= 1ULL << j;
  }
  free(cl);
  free(pa);
  *set = s;
  return rc;
}

int bbvfl_mclient_init(bbvfl_mclient *m, bbvfl_aggc *agg, const bbvfl_key *key, uint64_t chain_id,
                       uint64_t from_block, unsigned self, size_t n, unsigned levels, bbvfl_err *err) {
  memset(m, 0, sizeof *m);
  m->n = n;
  m->levels = levels;
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(agg, BBVFL_EV_REGISTERED, NULL, from_block, UINT64_MAX, &logs, err) < 0)
    return bbvfl_wrap(err, "reading the Registered events (the peers' public keys)");
  uint8_t(*pubs)[64] = calloc(BBVFL_MASK_MAX_CLIENTS, 64);
  uint8_t seen[BBVFL_MASK_MAX_CLIENTS] = {0};
  unsigned nclients = 0;
  int rc = -1;
  if (!pubs) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  size_t i;
  json_t *log;
  json_array_foreach(logs, i, log) {
    bbvfl_cev ev;
    int k = bbvfl_cev_decode(log, &ev, err);
    if (k < 0) goto out;
    if (k == 1 && ev.kind == BBVFL_EV_REGISTERED && !memcmp(ev.emitter, agg->address, 20)) {
      if (ev.index >= BBVFL_MASK_MAX_CLIENTS || ev.data_len != 64) {
        bbvfl_cev_clear(&ev);
        bbvfl_fail(err, BBVFL_E_PARSE, "a Registered event has index %u and a %zu-byte key", (unsigned)ev.index,
                   ev.data_len);
        goto out;
      }
      memcpy(pubs[ev.index], ev.data, 64);
      seen[ev.index] = 1;
      if ((unsigned)ev.index + 1 > nclients) nclients = (unsigned)ev.index + 1;
    }
    bbvfl_cev_clear(&ev);
  }
  for (unsigned j = 0; j < nclients; j++)
    if (!seen[j]) {
      bbvfl_fail(err, BBVFL_E_STATE, "no Registered event for client index %u since block %llu", j,
                 (unsigned long long)from_block);
      goto out;
    }
  if (self >= nclients || memcmp(pubs[self], key->pub, 64)) {
    bbvfl_fail(err, BBVFL_E_STATE, "the key registered for client index %u is not this client's key", self);
    goto out;
  }
  uint8_t session[32];
  bbvfl_mask_session_id(chain_id, agg->address, session);
  if (bbvfl_masker_init(&m->mk, key, self, nclients, (const uint8_t(*)[64])pubs, session, err) < 0) {
    bbvfl_wrap(err, "masked mode: deriving the pair keys");
    goto out;
  }
  if (read_set(agg, &m->set, err) < 0) goto out;
  if (!(m->set >> self & 1)) {
    bbvfl_fail(err, BBVFL_E_STATE, "this client (index %u) is not among the session's participants", self);
    goto out;
  }
  m->nparts = m->min_parts = (unsigned)__builtin_popcountll(m->set);
  if ((unsigned long)m->nparts * levels >= 65536) {
    bbvfl_fail(err, BBVFL_E_ARG, "masked mode needs participants * b < 65536, got %u * %u", m->nparts, levels);
    goto out;
  }
  m->lanes = malloc(n ? 2 * n : 1);
  if (!m->lanes) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
    goto out;
  }
  m->reopen_round = UINT64_MAX;
  rc = 0;
out:
  json_decref(logs);
  free(pubs);
  if (rc < 0) bbvfl_mclient_free(m);
  return rc;
}

void bbvfl_mclient_free(bbvfl_mclient *m) {
  if (!m) return;
  bbvfl_masker_wipe(&m->mk);
  free(m->lanes);
  memset(m, 0, sizeof *m);
}

int bbvfl_mclient_mask(bbvfl_mclient *m, uint64_t round, const uint8_t *q, bbvfl_err *err) {
  if (bbvfl_masker_mask_u8(&m->mk, round, m->set, m->levels, q, m->n, m->lanes, err) < 0)
    return bbvfl_wrap(err, "masking round %llu", (unsigned long long)round);
  return 0;
}

int bbvfl_mclient_poll_reopened(bbvfl_mclient *m, bbvfl_aggc *agg, uint64_t round, uint64_t from_block,
                                bbvfl_err *err) {
  if (m->reopen_round != round) {
    m->reopen_round = round;
    m->reopen_seen = 0;
  }
  uint8_t t1[32];
  bbvfl_cenc_word_u64(round, t1);
  json_t *logs = NULL;
  if (bbvfl_aggc_logs(agg, BBVFL_EV_ROUND_REOPENED, t1, from_block, BBVFL_BLOCK_LATEST, &logs, err) < 0) return -1;
  int rc = 0;
  size_t cnt = json_array_size(logs);
  bbvfl_cev ev;
  memset(&ev, 0, sizeof ev);
  if (cnt > m->reopen_seen) {
    int k = bbvfl_cev_decode(json_array_get(logs, cnt - 1), &ev, err);
    if (k != 1 || ev.kind != BBVFL_EV_ROUND_REOPENED) {
      if (k >= 0) bbvfl_fail(err, BBVFL_E_PARSE, "eth_getLogs for RoundReopened returned another event");
      rc = bbvfl_wrap(err, "a RoundReopened log");
    } else {
      m->reopen_seen = cnt;
      if (!(ev.bitmap >> m->mk.self & 1)) {
        rc = bbvfl_fail(err, BBVFL_E_STATE,
                        "round %llu was re-opened without this client (index %u): it was excluded from the session",
                        (unsigned long long)round, m->mk.self);
      } else {
        m->set = ev.bitmap;
        m->nparts = (unsigned)__builtin_popcountll(ev.bitmap);
        if (m->nparts < m->min_parts) m->min_parts = m->nparts;
        rc = 1;
      }
    }
  }
  bbvfl_cev_clear(&ev);
  json_decref(logs);
  return rc;
}
