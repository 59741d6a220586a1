/* Fuzz target: JSON-RPC response parsing (result / error objects, revert data decoding, receipts,
 * quantities). Any input must give either a result or a clear error, never a crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "eth/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

/* Starting points for the driver's mutations: the shapes a node really sends. */
static const char *const SEEDS[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"0x7a69\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}",
    "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32003,\"message\":\"nonce too low\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":3,\"message\":\"execution reverted: abc\","
    "\"data\":\"0x08c379a0000000000000000000000000000000000000000000000000000000000000002000000000"
    "000000000000000000000000000000000000000000000000000000036162630000000000000000000000000000000000"
    "000000000000000000000000\"}}",
    "{\"id\":1,\"error\":{\"code\":3,\"message\":\"execution reverted: custom error 0x6ad9cdfc: "
    "\\u0000\\u000b\",\"data\":\"0x6ad9cdfc000000000000000000000000000000000000000000000000000000000000000b\"}}",
    "{\"id\":1,\"error\":{\"code\":-32015,\"message\":\"reverted\",\"data\":{\"data\":\"0x4e487b71"
    "0000000000000000000000000000000000000000000000000000000000000011\"}}}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"status\":\"0x1\",\"blockNumber\":\"0x2a\","
    "\"gasUsed\":\"0x5208\",\"effectiveGasPrice\":\"0x3b9aca00\",\"contractAddress\":"
    "\"0x5fbdb2315678afecb367f032d93f642f64180aa3\",\"transactionHash\":"
    "\"0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\",\"logs\":[]}}",
};

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  for (size_t i = 0; i < sizeof SEEDS / sizeof SEEDS[0]; i++)
    add((const uint8_t *)SEEDS[i], strlen(SEEDS[i]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bbvfl_err err;
  memset(&err, 0, sizeof err);
  json_t *res = NULL;
  int rc = bbvfl_rpc_parse_response((const char *)data, size, &res, &err);
  if (rc == 0) {
    uint64_t v;
    (void)bbvfl_rpc_parse_u64(res, &v, NULL);
    bbvfl_receipt r;
    if (bbvfl_rpc_parse_receipt(res, &r, NULL) == 0) bbvfl_receipt_clear(&r);
    else if (r.logs) __builtin_trap(); /* a failed parse must not hand out references */
    json_decref(res);
  } else {
    if (res) __builtin_trap();
    if (err.code == BBVFL_OK || err.msg[0] == 0) __builtin_trap(); /* errors always explain */
    if (memchr(err.msg, 0, sizeof err.msg) == NULL) __builtin_trap();
  }
  /* the same bytes as raw revert data */
  char out[512];
  bbvfl_revert_describe(data, size, out, sizeof out);
  if (memchr(out, 0, sizeof out) == NULL || out[0] == 0) __builtin_trap();
  return 0;
}
