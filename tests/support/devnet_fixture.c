#include "devnet_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eth/deploy.h"

int devnet_open(devnet_fixture *fx) {
  memset(fx, 0, sizeof *fx);
  fx->url = getenv("BBVFL_RPC_URL");
  if (!fx->url) {
    fprintf(stderr, "BBVFL_RPC_URL is not set: run under tests/with-devnet.sh\n");
    return -1;
  }
  bbvfl_err err = {0};
  fx->rpc = bbvfl_rpc_new(fx->url, NULL, &err);
  if (fx->rpc && bbvfl_rpc_chain_id(fx->rpc, &fx->chain_id, &err) == 0 &&
      bbvfl_key_from_hex(BBVFL_ANVIL_DEV_KEY0, &fx->dev, &err) == 0 &&
      (fx->dev_s = bbvfl_sender_new(fx->rpc, &fx->dev, fx->chain_id, &err)) != NULL)
    return 0;
  fprintf(stderr, "devnet at %s: %s\n", fx->url, err.msg);
  devnet_close(fx);
  return -1;
}

void devnet_close(devnet_fixture *fx) {
  bbvfl_sender_free(fx->dev_s);
  bbvfl_rpc_free(fx->rpc);
  bbvfl_key_wipe(&fx->dev);
  memset(fx, 0, sizeof *fx);
}

void devnet_check(int rc, const bbvfl_err *err) {
  if (rc != 0) fail_msg("unexpected error: %s", err->msg);
}

void devnet_tx(bbvfl_sender *s, const uint8_t to[20], const bbvfl_u256 *value, uint8_t *data, size_t len) {
  bbvfl_err err = {0};
  bbvfl_receipt rc;
  int st = bbvfl_sender_transact(s, to, value, data, len, 0, 60, &rc, &err);
  bbvfl_receipt_clear(&rc);
  free(data);
  devnet_check(st, &err);
}

bbvfl_sender *devnet_new_client(devnet_fixture *fx, unsigned ether, bbvfl_key *key) {
  bbvfl_err err = {0};
  devnet_check(bbvfl_key_generate(key, &err), &err);
  bbvfl_u256 one = bbvfl_u256_from_u64(1000000000000000000ull), wei;
  if (bbvfl_u256_mul_u64(&wei, &one, ether)) fail_msg("%u ether overflows", ether);
  devnet_tx(fx->dev_s, key->addr, &wei, NULL, 0);
  bbvfl_sender *s = bbvfl_sender_new(fx->rpc, key, fx->chain_id, &err);
  devnet_check(s ? 0 : -1, &err);
  return s;
}

void devnet_deploy_aggregator(devnet_fixture *fx, const char *name, const bbvfl_cconfig *c, uint8_t out[20]) {
  bbvfl_err err = {0};
  uint8_t *args = NULL;
  size_t alen = 0;
  devnet_check(bbvfl_cenc_ctor(c, NULL, 0, &args, &alen, &err), &err); /* open registration */
  int st = bbvfl_deploy(fx->dev_s, name, args, alen, 60, out, NULL, &err);
  free(args);
  devnet_check(st, &err);
}

void devnet_register_and_elect(bbvfl_sender *const *s, const bbvfl_key *keys, size_t n,
                               const uint8_t contract[20], const uint8_t (*secrets)[32]) {
  bbvfl_err err = {0};
  uint8_t *cd;
  size_t len;
  for (size_t i = 0; i < n; i++) {
    devnet_check(bbvfl_cenc_register(keys[i].pub, &cd, &len, &err), &err);
    devnet_tx(s[i], contract, NULL, cd, len);
  }
  for (size_t i = 0; i < n; i++) {
    uint8_t cm[32];
    bbvfl_election_commitment(secrets[i], keys[i].addr, contract, bbvfl_sender_chain_id(s[i]), cm);
    devnet_check(bbvfl_cenc_commit(cm, &cd, &len, &err), &err);
    devnet_tx(s[i], contract, NULL, cd, len);
  }
  for (size_t i = 0; i < n; i++) {
    devnet_check(bbvfl_cenc_reveal(secrets[i], &cd, &len, &err), &err);
    devnet_tx(s[i], contract, NULL, cd, len);
  }
}
