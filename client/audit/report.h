/* Reports of an audit (audit/audit.h): a human text report, a JSON document, and a
 * self-contained HTML page (inline CSS and SVG charts drawn here, no script, no external
 * resource). Pure formatting: nothing is fetched; the caller owns every output. */
#ifndef BBVFL_AUDIT_REPORT_H
#define BBVFL_AUDIT_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "audit/audit.h"
#include "common/err.h"

/* Summary first, then one line per check (PASS/FAIL/SKIP) with the first offending round,
 * transaction and client, then the figures. */
void bbvfl_audit_print_text(FILE *f, const bbvfl_audit_result *r);

/* The JSON document (new reference, caller decrefs): ok, summary, checks[] (name, status,
 * checked, failures, note, first_failure {round, epoch, tx, block, client, detail} or null),
 * figures (rounds, submissions, gas_per_round, rewards_per_client, metrics_per_epoch,
 * schedule, epsilon), params. */
json_t *bbvfl_audit_json(const bbvfl_audit_result *r);

/* The HTML page as a malloc'd NUL-terminated string (caller frees), or NULL when out of memory. */
char *bbvfl_audit_html(const bbvfl_audit_result *r);

/* Writes the HTML page to path atomically. */
int bbvfl_audit_write_html(const bbvfl_audit_result *r, const char *path, bbvfl_err *err);

#endif
