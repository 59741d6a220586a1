/* The active client's payouts in optimistic mode (docs/ONCHAIN.md "Sequences of calls").
 *
 * Every claim of an epoch stays disputable for roundTimeoutBlocks blocks after it was made, and
 * the contract refuses payRewards(e) with DisputeWindowOpen(until) while one can (a payout cannot
 * be rolled back, a dispute must stay possible). So the active client does not send the payout
 * with the epoch's metrics: it queues the epoch and pays it once the chain is past the window,
 * from the rounds that follow (never waiting for it there) and, at the session's end, waiting
 * for the window of the last epoch. It asks the chain, not its own arithmetic: each attempt is
 * first a call (eth_call of payRewards(e) from this client), and a transaction is sent only when
 * the call goes through. A call that reverts says why: DisputeWindowOpen(until) (wait for block
 * until + 1), RewardsAlreadyPaid (someone paid it: done), EpochNotComplete (a dispute rolled the
 * epoch back: it is paid after it completes again), NotActive (another client was elected: it
 * pays). A chain that makes blocks only for transactions (anvil's automine) makes none while
 * everybody waits: there, at the session's end, the client asks the node for the empty blocks
 * the window needs (anvil_mine), and says so; a node without that method is waited for. */
#include "onchain/onchain_int.h"

#include "bbvfl_errors.h" /* generated from abi/: BBVFL_SEL_* */

void bbvfl_oc_payout_queue(cl *c, uint32_t upto) {
  if (upto > c->act.pay_hi) c->act.pay_hi = upto;
}

/* Blocks until the chain's head is at least `target` (see the top of the file: on a chain that
   makes no block for a while, the node is asked to mine them). */
static int wait_block(cl *c, uint64_t target, uint32_t e, bbvfl_err *err) {
  uint64_t last = UINT64_MAX;
  double t_last = bbvfl_now(), idle = 3 * c->sess->block_time_s;
  int said = 0, no_mine = 0;
  if (idle < 2) idle = 2;
  for (;;) {
    uint64_t h;
    if (bbvfl_rpc_block_number(c->conn.rpc, &h, err) < 0) return bbvfl_wrap(err, "reading the chain's head");
    if (h > c->blk) c->blk = h;
    if (h >= target) return 0;
    double now = bbvfl_now();
    if (h != last) {
      last = h;
      t_last = now;
    } else if (now - t_last > idle && !no_mine) {
      uint64_t n = target - h;
      if (n > 1000) n = 1000;
      char hex[24];
      snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)n);
      json_t *res = NULL;
      bbvfl_err e2 = {0};
      if (bbvfl_rpc_call(c->conn.rpc, "anvil_mine", json_pack("[s]", hex), &res, &e2) == 0) {
        if (!said)
          bbvfl_oc_log(c, "epoch %u: the chain made no block for %.0f s (it makes blocks only for transactions): "
                          "asking the node for the %llu empty blocks to block %llu, where the epoch's dispute window "
                          "has closed (anvil_mine)",
                       e + 1, now - t_last, (unsigned long long)(target - h), (unsigned long long)target);
        said = 1;
        json_decref(res);
        continue;
      }
      no_mine = 1; /* not a devnet that mines on request: wait for the chain */
      bbvfl_oc_log(c, "epoch %u: waiting for block %llu (head %llu) for the payout; the node does not mine on request (%s)",
                   e + 1, (unsigned long long)target, (unsigned long long)h, e2.msg);
    } else if (no_mine && now - t_last > c->cfg->round_timeout_s) {
      return bbvfl_fail(err, BBVFL_E_TIMEOUT,
                        "epoch %u: the chain made no block for %.0f s (head %llu) while its payout waits for block "
                        "%llu, the end of its dispute window",
                        e + 1, now - t_last, (unsigned long long)h, (unsigned long long)target);
    }
    bbvfl_sleep(0.2);
  }
}

int bbvfl_oc_payout_due(cl *c, int wait, bbvfl_err *err) {
  while (c->act.pay_lo < c->act.pay_hi && c->is_active) {
    uint32_t e = c->act.pay_lo;
    /* known to be inside the window (c->blk: the latest block this client has seen) */
    if (!wait && c->act.pay_after && c->blk <= c->act.pay_after) return 0;
    uint8_t *cd, *out = NULL;
    size_t len, olen = 0;
    if (bbvfl_cenc_pay_rewards(e, &cd, &len, err) < 0) return -1;
    bbvfl_err e2 = {0};
    int rc = bbvfl_rpc_eth_call(c->conn.rpc, c->me, c->agg.address, cd, len, NULL, &out, &olen, &e2);
    free(out);
    if (rc == 0) {
      rc = bbvfl_oc_out_send(c, cd, len, 150000 + 80000 * (uint64_t)c->cp.cfg.clients, "payRewards()", OC_GAS_PAYOUT, err);
      free(cd);
      if (rc < 0) return -1;
      bbvfl_oc_log(c, "epoch %u: its dispute window has closed: paying its rewards", e + 1);
      c->act.pay_lo++;
      c->act.pay_after = 0;
      continue;
    }
    free(cd);
    if (bbvfl_err_revert_sel_is(&e2, BBVFL_SEL_RewardsAlreadyPaid)) {
      c->act.pay_lo++;
      c->act.pay_after = 0;
      continue;
    }
    if (bbvfl_err_revert_sel_is(&e2, BBVFL_SEL_DisputeWindowOpen) && e2.revert.nargs >= 1) {
      uint64_t until = e2.revert.args[0];
      if (until != c->act.pay_after)
        bbvfl_oc_log(c, "epoch %u: its last claim can be disputed until block %llu: its payout waits until then", e + 1,
                     (unsigned long long)until);
      c->act.pay_after = until;
      if (!wait) return 0;
      if (wait_block(c, until + 1, e, err) < 0) return -1;
      continue;
    }
    if (bbvfl_err_revert_sel_is(&e2, BBVFL_SEL_EpochNotComplete) && !wait) return 0; /* rolled back: later */
    if (bbvfl_err_revert_sel_is(&e2, BBVFL_SEL_NotActive)) {
      bbvfl_oc_log(c, "epoch %u: another client was elected active: the payout is its to make", e + 1);
      c->act.pay_lo = c->act.pay_hi;
      return 0;
    }
    *err = e2;
    return bbvfl_wrap(err, "epoch %u: payRewards() as a call", e + 1);
  }
  return 0;
}
