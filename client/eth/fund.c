/* Funding addresses with plain transfers: sent together, then awaited (eth/sender.h). */
#include <stdlib.h>
#include <string.h>

#include "eth/sender.h"

int bbvfl_sender_fund(bbvfl_sender *s, const uint8_t (*to)[20], size_t n, const bbvfl_u256 *value, double timeout_s,
                      size_t *failed, bbvfl_err *err) {
  if (failed) *failed = n;
  if (n == 0) return 0;
  bbvfl_pending *p = calloc(n, sizeof *p);
  if (!p) return bbvfl_fail(err, BBVFL_E_NOMEM, "funding: out of memory");
  int rc = 0;
  size_t sent = 0;
  for (; sent < n; sent++)
    if (bbvfl_sender_send_tracked(s, to[sent], value, NULL, 0, 21000, &p[sent], err) != 0) {
      if (failed) *failed = sent;
      rc = -1;
      break;
    }
  for (size_t i = 0; i < sent; i++) {
    if (rc == 0) {
      bbvfl_receipt r;
      if (bbvfl_sender_wait_tracked(s, &p[i], timeout_s, &r, err) != 0) {
        if (failed) *failed = i;
        rc = -1;
      }
      bbvfl_receipt_clear(&r);
    }
    bbvfl_pending_clear(&p[i]);
  }
  free(p);
  return rc;
}
