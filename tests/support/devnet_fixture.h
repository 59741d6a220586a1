/* Test helper: the one set-up of the C integration tests that run against the devnet of
 * tests/with-devnet.sh (BBVFL_RPC_URL): a JSON-RPC client, the chain id, anvil's development
 * account 0 as the funder, fresh funded keys, a deployed aggregator, and the registration and
 * election of a session's clients. The helpers fail the current cmocka test (fail_msg, naming the
 * library's error message) on any error, except devnet_open, which is meant for a group set-up.
 *
 * BBVFL_ANVIL_DEV_KEY0 (eth/wallet.h) is anvil's publicly documented development account 0: a test-chain key, not
 * a secret, and the tests' one copy of it. */
#ifndef BBVFL_TEST_DEVNET_FIXTURE_H
#define BBVFL_TEST_DEVNET_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "binding/contract.h"


/* Owned by the fixture: devnet_close frees the client and the sender and wipes the key. */
typedef struct {
  const char *url;      /* BBVFL_RPC_URL (the environment's string) */
  bbvfl_rpc *rpc;
  uint64_t chain_id;    /* asked from the node */
  bbvfl_key dev;        /* BBVFL_ANVIL_DEV_KEY0 */
  bbvfl_sender *dev_s;  /* sends as dev */
} devnet_fixture;

/* Fills *fx from BBVFL_RPC_URL. Returns 0, or -1 after a message on stderr (no BBVFL_RPC_URL: not
 * run under tests/with-devnet.sh; or the node does not answer); *fx is then closed. */
int devnet_open(devnet_fixture *fx);
void devnet_close(devnet_fixture *fx);

/* Fails the current test with err->msg when rc != 0. */
void devnet_check(int rc, const bbvfl_err *err);

/* Sends a transaction from s (gas estimated by the node) and waits up to 60 s for its receipt;
 * fails the test when it is not mined or reverts. Takes data (malloc'ed or NULL) and frees it. */
void devnet_tx(bbvfl_sender *s, const uint8_t to[20], const bbvfl_u256 *value, uint8_t *data, size_t len);

/* A fresh key, funded with `ether` ether by dev, and its sender (caller frees it: bbvfl_sender_free,
 * and wipes the key: bbvfl_key_wipe). */
bbvfl_sender *devnet_new_client(devnet_fixture *fx, unsigned ether, bbvfl_key *key);

/* Deploys the aggregator contract `name` (BbvflAggregator, BbvflHashAggregator; the artifact from
 * BBVFL_ABI_DIR when set) with config c, from dev; its address in out. */
void devnet_deploy_aggregator(devnet_fixture *fx, const char *name, const bbvfl_cconfig *c, uint8_t out[20]);

/* Registers clients 0..n-1 in that order, then each commits to and reveals secrets[i] (the
 * commitment for `contract` on the senders' chain id): the
 * election of the session's active client (the contract elects on the last reveal). */
void devnet_register_and_elect(bbvfl_sender *const *s, const bbvfl_key *keys, size_t n,
                               const uint8_t contract[20], const uint8_t (*secrets)[32]);

#endif
