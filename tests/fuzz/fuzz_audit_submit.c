/* Fuzz target: the auditor's decoder of submit(uint64,bytes) calldata, which reads whatever a
 * transaction on chain carries. Properties: no out-of-bounds access; a decoded payload lies inside
 * the input; a failure has a reason; well-formed calldata from the contract bindings' encoder
 * decodes back to its round and bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "binding/contract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t round = 0;
  const uint8_t *q = NULL;
  size_t qlen = 0;
  char why[128] = "";
  if (bbvfl_audit_decode_submit(data, size, &round, &q, &qlen, why, sizeof why) == 0) {
    if (q < data || qlen > size || q + qlen > data + size) abort();
  } else if (!why[0]) {
    abort();
  }
  /* round trip: the input's first bytes as a payload, its first 8 as the round */
  uint64_t r = 0;
  for (size_t i = 0; i < size && i < 8; i++) r = r << 8 | data[i];
  uint8_t *cd = NULL;
  size_t cdlen = 0;
  size_t n = size > 300 ? 300 : size;
  if (bbvfl_cenc_submit(r, data, n, &cd, &cdlen, NULL) == 0) {
    if (bbvfl_audit_decode_submit(cd, cdlen, &round, &q, &qlen, why, sizeof why) != 0) abort();
    if (round != r || qlen != n || (n && memcmp(q, data, n))) abort();
    free(cd);
  }
  return 0;
}

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  uint8_t q[40];
  for (size_t i = 0; i < sizeof q; i++) q[i] = (uint8_t)i;
  uint8_t *cd = NULL;
  size_t len = 0;
  if (bbvfl_cenc_submit(7, q, sizeof q, &cd, &len, NULL) == 0) {
    add(cd, len);
    free(cd);
  }
}
