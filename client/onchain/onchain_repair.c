/* A client after a reorg (docs/ONCHAIN.md, "Fees, lost transactions and reorgs").
 *
 * A reorg takes blocks out of the chain; the sender hands each of this client's transactions that
 * vanished to the node again, the same bytes (eth/sender.h). Re-mined in another order among the
 * others' transactions, such a copy can revert where the original went through: an aggregate()
 * that now lands before the last submission of its round, a postGradient() before the round's
 * aggregate, a submission before its round is open again. Its nonce is spent, nothing says so, and
 * every client then waits for a round that never opens. So each client keeps its latest calls (its
 * submissions; the active client's aggregate or postSum, postGradient, postMetrics and payRewards
 * too: the latest OC_KEPT = 32, enough for a reorg several rounds deep; a deeper one is not
 * repaired and the wait ends in its timeout, naming the reorg) and, while it waits after a reorg,
 * asks the chain whether one of them would now go through: as a call from its own address, oldest
 * first, and only when nothing of its own is on its way (the sender's next nonce = the chain's). The first
 * that would is sent again (a new transaction) and waited for. Every kept call is one the contract
 * accepts once (a client's submission to a round, a round's aggregate, a round's gradient, an
 * epoch's metrics and payout), so a call no longer needed reverts as a call and is never sent. */
#include "onchain/onchain_int.h"

int bbvfl_oc_keep_call(cl *c, const uint8_t *cd, size_t len, uint64_t gas, const char *what, int kind,
                       bbvfl_err *err) {
  bbvfl_oc_kept *k = &c->kept;
  if (k->replaying) return 0;
  uint8_t *copy = malloc(len ? len : 1);
  if (!copy) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memcpy(copy, cd, len);
  if (k->n == OC_KEPT) {
    free(k->e[0].cd);
    memmove(&k->e[0], &k->e[1], (OC_KEPT - 1) * sizeof k->e[0]);
    k->n--;
  }
  k->e[k->n].cd = copy;
  k->e[k->n].len = len;
  k->e[k->n].gas = gas;
  k->e[k->n].what = what;
  k->e[k->n].kind = kind;
  k->n++;
  return 0;
}

int bbvfl_oc_repair_lost(cl *c, bbvfl_err *err) {
  bbvfl_oc_kept *k = &c->kept;
  double now = bbvfl_now();
  if (k->n == 0 || k->lost_at == 0 || now - k->lost_at > 600) return 0; /* no reorg seen lately */
  if (now - k->checked_at < 0.5) return 0;
  k->checked_at = now;
  /* the sender's next nonce counts what it still looks after, also what a node dropped from its
     pool (a fee spike) and the sender will hand in again: only when the chain has reached it is
     nothing of this client's own on its way */
  uint64_t next = 0, latest = 0;
  if (bbvfl_sender_next_nonce(c->conn.snd, &next, err) < 0 ||
      bbvfl_rpc_nonce(c->conn.rpc, c->me, "latest", &latest, err) < 0)
    return bbvfl_wrap(err, "this client's nonce");
  if (next != latest) return 0; /* something of its own is still on its way */
  for (size_t i = 0; i < k->n; i++) {
    uint8_t *out = NULL;
    size_t olen = 0;
    bbvfl_err e = {0};
    int rc = bbvfl_rpc_eth_call(c->conn.rpc, c->me, c->agg.address, k->e[i].cd, k->e[i].len, NULL, &out, &olen, &e);
    free(out);
    if (rc != 0) continue; /* not needed (done, or not its turn): the contract says why; nothing sent */
    bbvfl_oc_log(c, "the chain no longer has this client's %s (a reorg took it out, and the copy sent again did not "
                    "take effect): sending it again",
                 k->e[i].what);
    k->replaying = 1;
    rc = bbvfl_oc_out_send(c, k->e[i].cd, k->e[i].len, k->e[i].gas, k->e[i].what, k->e[i].kind, err);
    k->replaying = 0;
    if (rc == 0) rc = bbvfl_oc_out_wait(c, err);
    if (rc < 0 && err->code == BBVFL_E_REVERT) {
      /* a race: between the call and the transaction another copy (the sender's, after a further
         reorg) took effect; the chain has what was needed */
      bbvfl_oc_log(c, "%s sent again reverted (%s): the chain has it another way now", k->e[i].what,
                   err->revert.error[0] ? err->revert.error : err->msg);
      memset(err, 0, sizeof *err);
      return 1;
    }
    if (rc < 0) return bbvfl_wrap(err, "sending %s again", k->e[i].what);
    return 1;
  }
  return 0;
}

void bbvfl_oc_kept_free(cl *c) {
  for (size_t i = 0; i < c->kept.n; i++) free(c->kept.e[i].cd);
  c->kept.n = 0;
}
