/* The audit's HTML report (audit/report.h: bbvfl_audit_html, bbvfl_audit_write_html): one
 * self-contained page, inline SVG charts, nothing fetched. Text and JSON: audit/report.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/report.h"
#include "audit/report_int.h"
#include "common/fsutil.h"
#include "dp/accountant.h"

/* ------------------------------------------------------------------ HTML */

static void esc(FILE *f, const char *s) {
  for (; *s; s++) {
    switch (*s) {
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '&': fputs("&amp;", f); break;
      case '"': fputs("&quot;", f); break;
      default: fputc(*s, f);
    }
  }
}

typedef struct {
  const char *name, *color;
  const double *y;
} series;

static double nice_max(double v) {
  if (!(v > 0)) return 1;
  double p = pow(10, floor(log10(v)));
  double m = v / p;
  double n = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
  return n * p;
}

/* A line chart (bars when bars = 1, grouped by series) of n points; x labels from xs. */
static void svg_chart(FILE *f, const char *title, const char *xlabel, const double *xs, size_t n, const series *s,
                      size_t ns, int bars, double ymax_fixed) {
  const double W = 560, L = 70, R = 12, T = 30 + 14.0 * (double)ns, B = 42, H = 232 + 14.0 * (double)ns;
  double pw = W - L - R, ph = H - T - B;
  double ymax = 0;
  for (size_t k = 0; k < ns; k++)
    for (size_t i = 0; i < n; i++)
      if (isfinite(s[k].y[i]) && s[k].y[i] > ymax) ymax = s[k].y[i];
  ymax = ymax_fixed > 0 ? ymax_fixed : nice_max(ymax);
  fprintf(f, "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n",
          W, H, W, H);
  fprintf(f, "<text x=\"%.0f\" y=\"18\" class=\"t\">", L);
  esc(f, title);
  fputs("</text>\n", f);
  for (int g = 0; g <= 4; g++) {
    double y = T + ph - ph * g / 4.0;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>", L, y, L + pw, y);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"yl\">%.4g</text>\n", L - 6, y + 4, ymax * g / 4.0);
  }
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>", L, T + ph, L + pw, T + ph);
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"axis\"/>\n", L, T, L, T + ph);
  if (n > 0) {
    size_t step = n > 8 ? (n + 7) / 8 : 1;
    for (size_t i = 0; i < n; i += step) {
      double x = bars ? L + pw * (i + 0.5) / n : (n == 1 ? L + pw / 2 : L + pw * i / (double)(n - 1));
      fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">%.6g</text>", x, T + ph + 16, xs[i]);
    }
    if (bars) {
      double gw = pw / n, bw = gw * 0.8 / ns;
      for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < n; i++) {
          double v = isfinite(s[k].y[i]) ? s[k].y[i] : 0;
          double h = ph * (v > ymax ? 1 : v / ymax);
          fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"><title>%.6g</title></rect>",
                  L + gw * i + gw * 0.1 + bw * k, T + ph - h, bw > 0.5 ? bw : 0.5, h, s[k].color, v);
        }
    } else {
      for (size_t k = 0; k < ns; k++) {
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", s[k].color);
        for (size_t i = 0; i < n; i++) {
          double v = isfinite(s[k].y[i]) ? s[k].y[i] : 0;
          double x = n == 1 ? L + pw / 2 : L + pw * i / (double)(n - 1);
          fprintf(f, "%.2f,%.2f ", x, T + ph - ph * (v > ymax ? 1 : v / ymax));
        }
        fputs("\"/>\n", f);
        if (n <= 60)
          for (size_t i = 0; i < n; i++) {
            double v = isfinite(s[k].y[i]) ? s[k].y[i] : 0;
            double x = n == 1 ? L + pw / 2 : L + pw * i / (double)(n - 1);
            fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.2\" fill=\"%s\"/>", x,
                    T + ph - ph * (v > ymax ? 1 : v / ymax), s[k].color);
          }
      }
    }
  } else {
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">no data</text>", L + pw / 2, T + ph / 2);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"xl\">", L + pw / 2, H - 6);
  esc(f, xlabel);
  fputs("</text>\n", f);
  for (size_t k = 0; k < ns; k++) {
    double x = L + 4, y = 24 + 14.0 * (double)k; /* legend rows between the title and the plot */
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" class=\"lg\">",
            x, y, s[k].color, x + 14, y + 9);
    esc(f, s[k].name);
    fputs("</text>\n", f);
  }
  fputs("</svg></figure>\n", f);
}

static const char CSS[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1d232a;background:#fff}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:26px 0 8px;border-bottom:1px solid #ddd}"
    ".verdict{display:inline-block;padding:4px 12px;border-radius:4px;color:#fff;font-weight:600}"
    ".ok{background:#1f7a3a}.bad{background:#b3261e}.inc{background:#a15c00}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #d5d9de;padding:4px 8px;text-align:left}"
    "th{background:#f2f4f6}td.PASS{color:#1f7a3a;font-weight:600}td.FAIL{color:#b3261e;font-weight:600}"
    "td.SKIP{color:#6b7280;font-weight:600}code{font-size:12px}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}figure{margin:0;border:1px solid #e3e6ea;border-radius:4px}"
    "svg .t{font-size:14px;font-weight:600;fill:#1d232a}svg .yl{font-size:11px;text-anchor:end;fill:#555}"
    "svg .xl{font-size:11px;text-anchor:middle;fill:#555}svg .lg{font-size:11px;fill:#333}"
    "svg .grid{stroke:#eceff2}svg .axis{stroke:#888}";

/* The page's head and what was audited: the verdict, what is missing, the session's setup. */
static void html_head(FILE *f, const bbvfl_audit_result *r) {
  char a[43], t[43];
  addr_str(r->contract, a);
  addr_str(r->token, t);
  const bbvfl_cconfig *c = &r->params.cfg;
  char *rounds = NULL;
  size_t rlen = 0;
  FILE *rf = open_memstream(&rounds, &rlen);
  if (rf) {
    bbvfl_rep_rounds_phrase(rf, r);
    fclose(rf);
  }
  fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
             "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
             "<title>bbvfl audit %s</title><style>%s</style></head><body>\n",
          a, CSS);
  bbvfl_audit_verdict v = bbvfl_audit_verdict_of(r);
  fprintf(f, "<h1>bbvfl audit of %s</h1>\n<p><span class=\"verdict %s\">%s</span> %zu passed, %zu failed, %zu skipped</p>\n",
          a, v == BBVFL_AV_PASS ? "ok" : v == BBVFL_AV_FAIL ? "bad" : "inc",
          v == BBVFL_AV_PASS ? "PASS: every check holds"
          : v == BBVFL_AV_FAIL ? "FAIL: discrepancies found"
                               : "INCOMPLETE: the session has not finished",
          bbvfl_rep_count_status(r, BBVFL_AS_PASS), bbvfl_rep_count_status(r, BBVFL_AS_FAIL), bbvfl_rep_count_status(r, BBVFL_AS_SKIP));
  if (r->nmissing) {
    fprintf(f, "<p>The session has not finished by block %llu%s. Missing:</p>\n<ul>", (unsigned long long)r->to_block,
            v == BBVFL_AV_FAIL ? " (and a check failed)" : "; no check failed so far");
    for (unsigned i = 0; i < r->nmissing; i++) {
      fputs("<li>", f);
      esc(f, r->missing[i]);
      fputs("</li>", f);
    }
    fputs("</ul>\n", f);
  }
  fprintf(f, "<table><tr><th>chain</th><td>%llu</td><th>blocks</th><td>%llu .. %llu</td></tr>"
             "<tr><th>token</th><td><code>%s</code></td><th>deployed in block</th><td>%s%llu</td></tr>"
             "<tr><th>deployed code</th><td colspan=\"3\">%s abi/%s.json</td></tr>"
             "<tr><th>session</th><td colspan=\"3\">M=%u, B=%u, P=%u, b=%u, beta=%.6g, %u-bit lanes, %s mode</td></tr>"
             "<tr><th>rounds</th><td colspan=\"3\">%s</td></tr>"
             "<tr><th>read</th><td colspan=\"3\">%llu logs: %llu rounds complete, %llu submissions, %llu gradients, "
             "%llu epochs, %s%s; audit took %.2f s</td></tr></table>\n",
          (unsigned long long)r->chain_id, (unsigned long long)r->from_block, (unsigned long long)r->to_block, t,
          r->has_deploy ? "" : "not in range ", (unsigned long long)r->deploy_block,
          !r->code_known     ? "not compared (no artifact)"
          : r->code_matches ? "identical to the product artifact"
                            : "DIFFERS from the product artifact (the checks verify behaviour):",
          bbvfl_rep_artifact_name(r),
          c->clients, c->batch, c->dim,
          c->levels, c->beta_micro / 1e6, r->params.lane_bits, c->masked ? "masked" : "plain", rounds ? rounds : "",
          (unsigned long long)r->logs,
          (unsigned long long)r->rounds_completed, (unsigned long long)r->submissions,
          (unsigned long long)r->gradients, (unsigned long long)r->epochs_completed,
          r->session_ended ? "session ended" : "session still running",
          r->reelections ? ", with re-elections" : "", r->elapsed_s);
  free(rounds);

}

/* Every check with its first discrepancy or note, and what the audit has to trust. */
static void html_checks(FILE *f, const bbvfl_audit_result *r) {
  fputs("<h2>Checks</h2>\n<table><tr><th>check</th><th>status</th><th>checked</th><th>discrepancies</th>"
        "<th>first discrepancy / note</th></tr>\n", f);
  for (int k = 0; k < BBVFL_AC_COUNT; k++) {
    const bbvfl_audit_check *x = &r->checks[k];
    fprintf(f, "<tr><td>%s</td><td class=\"%s\">%s</td><td>%llu</td><td>%llu</td><td>", bbvfl_audit_check_name(k),
            bbvfl_audit_status_name(x->status), bbvfl_audit_status_name(x->status), (unsigned long long)x->checked,
            (unsigned long long)x->failures);
    if (x->first.present) {
      char *line = NULL;
      size_t ll = 0;
      FILE *m = open_memstream(&line, &ll);
      if (m) {
        bbvfl_rep_failure_text(m, &x->first);
        fclose(m);
        esc(f, line);
        free(line);
      }
    } else {
      esc(f, x->note);
    }
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
  fputs("<h2>Trusted (the chain cannot show it)</h2>\n<ul>\n", f);
  for (size_t i = 0; bbvfl_audit_trusted(i); i++) {
    fputs("<li>", f);
    esc(f, bbvfl_audit_trusted(i));
    fputs("</li>\n", f);
  }
  fputs("</ul>\n", f);

}

/* Per-round gas and timing. */
static void html_rounds(FILE *f, const bbvfl_audit_result *r) {
  const bbvfl_cconfig *c = &r->params.cfg;
  size_t n = r->nrounds;
  double *xs = calloc(n ? n : 1, sizeof *xs), *gas = calloc(n ? n : 1, sizeof *gas),
         *secs = calloc(n ? n : 1, sizeof *secs), *blocks = calloc(n ? n : 1, sizeof *blocks);
  if (xs && gas && secs && blocks) {
    for (size_t i = 0; i < n; i++) {
      const bbvfl_audit_round_fig *x = &r->rounds[i];
      double w = (double)(x->round_hi - x->round_lo + 1);
      xs[i] = (double)x->round_lo;
      gas[i] = (double)x->gas / w;
      secs[i] = x->seconds / w;
      blocks[i] = (double)x->blocks / w;
    }
    fprintf(f, "<h2>Rounds</h2>\n<p>Gas of the M submissions%s and the gradient post of each round; time from the "
               "block that opened the round to the block that completed it (block timestamps, 1 s resolution)%s.</p>\n"
               "<div class=\"charts\">\n",
            c->hashed ? ", the aggregate() call" : "",
            r->bucket_width > 1 ? "; long history: each point averages adjacent rounds" : "");
    series sg = {"gas", "#2f6db5", gas};
    svg_chart(f, "gas per round", "round", xs, n, &sg, 1, 0, 0);
    series st[2] = {{"seconds", "#c0562b", secs}, {"blocks", "#6a9f3a", blocks}};
    svg_chart(f, "duration per round", "round", xs, n, st, 2, 0, 0);
    fputs("</div>\n", f);
  }
  free(xs);
  free(gas);
  free(secs);
  free(blocks);

}

/* Per-client contributions and rewards. */
static void html_clients(FILE *f, const bbvfl_audit_result *r) {
  const bbvfl_cconfig *c = &r->params.cfg;
  char a[43];
  size_t m = r->nclients;
  double *ci = calloc(m ? m : 1, sizeof *ci), *acc = calloc(m ? m : 1, sizeof *acc),
         *rew = calloc(m ? m : 1, sizeof *rew), *tok = calloc(m ? m : 1, sizeof *tok);
  if (ci && acc && rew && tok) {
    double rate = bbvfl_rep_u256_to_double(&c->reward_per_submission);
    for (size_t i = 0; i < m; i++) {
      ci[i] = (double)i;
      acc[i] = (double)r->clients[i].accepted;
      rew[i] = (double)r->clients[i].rewarded;
      tok[i] = rate > 0 ? bbvfl_rep_u256_to_double(&r->clients[i].transferred) / rate : 0;
    }
    fputs("<h2>Clients</h2>\n<div class=\"charts\">\n", f);
    series sc[3] = {{"accepted submissions", "#2f6db5", acc}, {"rewarded", "#6a9f3a", rew},
                    {"tokens received / rate", "#d4a017", tok}};
    svg_chart(f, "contributions and rewards per client", "client index", ci, m, sc, 3, 1, 0);
    fputs("</div>\n<table><tr><th>index</th><th>client</th><th>accepted</th><th>rewarded</th><th>paid (RewardsPaid)</th>"
          "<th>received (Transfer)</th><th>gas</th><th>status</th></tr>\n", f);
    for (size_t i = 0; i < m; i++) {
      const bbvfl_audit_client_fig *x = &r->clients[i];
      char d1[80], d2[80];
      addr_str(x->addr, a);
      bbvfl_u256_to_dec(&x->paid, d1);
      bbvfl_u256_to_dec(&x->transferred, d2);
      fprintf(f, "<tr><td>%u</td><td><code>%s</code></td><td>%llu</td><td>%llu</td><td>%s</td><td>%s</td><td>%llu</td>"
                 "<td>%s</td></tr>\n",
              x->index, a, (unsigned long long)x->accepted, (unsigned long long)x->rewarded, d1, d2,
              (unsigned long long)x->gas,
              !x->excluded ? "participant" : x->excluded_reason == 1 ? "excluded: no commit"
                                             : x->excluded_reason == 2 ? "excluded: no reveal"
                                                                       : "excluded: missed a round");
    }
    fputs("</table>\n", f);
  }
  free(ci);
  free(acc);
  free(rew);
  free(tok);

}

/* The metrics posted per epoch. */
static void html_metrics(FILE *f, const bbvfl_audit_result *r) {
  size_t ne = 0;
  for (size_t i = 0; i < r->nepochs; i++) ne += r->epochs[i].has_metrics;
  double *ex = calloc(ne ? ne : 1, sizeof *ex), *au = calloc(ne ? ne : 1, sizeof *au),
         *ac = calloc(ne ? ne : 1, sizeof *ac), *lo = calloc(ne ? ne : 1, sizeof *lo);
  if (ex && au && ac && lo) {
    size_t k = 0;
    for (size_t i = 0; i < r->nepochs; i++)
      if (r->epochs[i].has_metrics) {
        ex[k] = r->epochs[i].epoch;
        au[k] = r->epochs[i].auroc_micro / 1e6;
        ac[k] = r->epochs[i].accuracy_micro / 1e6;
        lo[k] = r->epochs[i].loss_micro / 1e6;
        k++;
      }
    fputs("<h2>Metrics posted per epoch</h2>\n<div class=\"charts\">\n", f);
    series sm[2] = {{"AUROC", "#2f6db5", au}, {"accuracy", "#6a9f3a", ac}};
    svg_chart(f, "test AUROC and accuracy", "epoch", ex, ne, sm, 2, 0, 1.0);
    series sl = {"loss", "#c0562b", lo};
    svg_chart(f, "test loss", "epoch", ex, ne, &sl, 1, 0, 0);
    fputs("</div>\n", f);
  }
  free(ex);
  free(au);
  free(ac);
  free(lo);

}

/* The privacy rows of the last table. */
static void html_privacy(FILE *f, const bbvfl_audit_result *r) {
  if (r->has_eps) {
    const bbvfl_privacy *p = &r->priv;
    if (p->reproducible)
      fprintf(f, "<tr><th>epsilon, every level</th><td>%s</td></tr>", BBVFL_PRIVACY_VOID);
    if (!p->reproducible) {
    if (isfinite(p->person.epsilon))
      fprintf(f, "<tr><th>epsilon per person: one person's whole record, all parties' columns and the label (delta "
                 "%g)</th><td>%.4g (%s)</td></tr>",
              r->delta, p->person.epsilon, p->person.method);
    else
      fprintf(f, "<tr><th>epsilon per person: one person's whole record (delta %g)</th><td>unbounded: the labels "
                 "are unprotected</td></tr>",
              r->delta);
    fprintf(f, "<tr><th>epsilon per person, features only: all parties' columns of a row</th><td>%.4g (%s)</td></tr>",
            p->row_sample.epsilon, p->row_sample.method);
    fprintf(f, "<tr><th>epsilon per party: one party's columns of a row</th><td>%.4g (%s)</td></tr>",
            p->row_feature.epsilon, p->row_feature.method);
    if (r->has_declared)
      fprintf(f, "<tr><th>per person, as the session file declares (row mode, end to end if so; not on "
                 "chain)</th><td>%.4g (%s)</td></tr>",
              r->declared.person.epsilon, r->declared.person.method);
    if (isfinite(p->labels.epsilon))
      fprintf(f, "<tr><th>epsilon, labels (one row's label; randomized response, as declared)</th><td>%.4g (rr)</td></tr>",
              p->labels.epsilon);
    else
      fprintf(f, "<tr><th>labels</th><td>unprotected: the posted gradients give them back</td></tr>");
    if (!isnan(p->feature_set.epsilon))
      fprintf(f, "<tr><th>epsilon per party, its whole column set (%d rows)</th><td>%.4g (%s)</td></tr>", p->rows,
              p->feature_set.epsilon, p->feature_set.method);
    if (r->has_masked_eps)
      fprintf(f, "<tr><th>epsilon per party, masked (against one participant)</th><td>%.4g (%s)</td></tr>",
              p->masked_row_feature.epsilon, p->masked_row_feature.method);
    fprintf(f, "<tr><th>what these are</th><td>not end-to-end: %s</td></tr>", BBVFL_ACCT_SCOPE);
    }
  }
}

/* The election, the schedule digests and the privacy figures. */
static void html_election(FILE *f, const bbvfl_audit_result *r) {
  char a[43], h[67];
  fputs("<h2>Election, schedule and privacy</h2>\n<table>", f);
  if (r->has_seed) {
    hex32(r->seed, h);
    fprintf(f, "<tr><th>session seed S</th><td><code>%s</code></td></tr>", h);
  }
  if (r->has_active) {
    addr_str(r->active, a);
    fprintf(f, "<tr><th>active client (last)</th><td><code>%s</code> (%llu re-elections)</td></tr>", a,
            (unsigned long long)r->reelections);
  }
  for (size_t i = 0; i < r->nepochs && i < 3; i++)
    if (r->epochs[i].has_digest) {
      hex32(r->epochs[i].schedule_digest, h);
      fprintf(f, "<tr><th>schedule digest, epoch %u</th><td><code>%s</code></td></tr>", r->epochs[i].epoch, h);
    }
  html_privacy(f, r);
}

char *bbvfl_audit_html(const bbvfl_audit_result *r) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  html_head(f, r);
  html_checks(f, r);
  html_rounds(f, r);
  html_clients(f, r);
  html_metrics(f, r);
  html_election(f, r);
  fputs("</table>\n<p>Generated by bbvfl audit from the chain alone: events, signed transactions, receipts and "
        "block headers.</p>\n</body></html>\n", f);
  if (fclose(f) != 0) {
    free(buf);
    return NULL;
  }
  return buf;
}

int bbvfl_audit_write_html(const bbvfl_audit_result *r, const char *path, bbvfl_err *err) {
  char *s = bbvfl_audit_html(r);
  if (!s) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory while writing the HTML report");
  int rc = bbvfl_write_file_atomic(path, s, strlen(s), 0644, err);
  free(s);
  return rc;
}
