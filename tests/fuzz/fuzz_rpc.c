/* Fuzz target: JSON-RPC response parsing (result / error objects, revert data decoding, receipts,
 * quantities). Any input must give either a result or a clear error, never a crash or leak. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "eth/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
