/* What the audit's report files share (audit/report.h is the interface): report.c (text, JSON)
 * and report_html.c (HTML) word the same facts the same way. Only those two include it. */
#ifndef BBVFL_AUDIT_REPORT_INT_H
#define BBVFL_AUDIT_REPORT_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "audit/report.h"
#include "eth/hex.h"
#include "eth/wallet.h"

static inline void addr_str(const uint8_t a[20], char out[43]) { bbvfl_addr_checksum(a, out); }
static inline void hex32(const uint8_t h[32], char out[67]) { bbvfl_hex_encode(h, 32, out); }

/* A uint256 as a double (rounded), for charts. */
double bbvfl_rep_u256_to_double(const bbvfl_u256 *v);
/* How many checks have status s. */
size_t bbvfl_rep_count_status(const bbvfl_audit_result *r, bbvfl_audit_status s);
/* The product contract of the session's aggregation mode (its abi/ file name). */
const char *bbvfl_rep_artifact_name(const bbvfl_audit_result *r);
/* The round structure in one phrase: windows, evaluation rounds, staleness, aggregation. */
void bbvfl_rep_rounds_phrase(FILE *f, const bbvfl_audit_result *r);
/* A check's first failure in one line: round, epoch, client, transaction, detail. */
void bbvfl_rep_failure_text(FILE *f, const bbvfl_audit_failure *x);

#endif
