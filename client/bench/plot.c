/* Figures from the benchmark's and the sweep's JSON files, drawn by
 * gnuplot (Debian's gnuplot-nox) as PNG. Each figure is a data file and a script under
 * DIR/plotdata/ (kept, so a figure can be redrawn or restyled by hand) and DIR/<name>.png. */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "common/fsutil.h"
#include "ml/metrics.h"

extern char **environ;

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static int ival(const json_t *o, const char *k) { return (int)json_integer_value(json_object_get(o, k)); }

/* A memory stream for one data file or script. */
typedef struct {
  char *buf;
  size_t len;
  FILE *f;
} mstream;

static int ms_open(mstream *m, bbvfl_err *err) {
  m->buf = NULL;
  m->len = 0;
  m->f = open_memstream(&m->buf, &m->len);
  return m->f ? 0 : bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
}

/* Closes the stream and writes it to dir/plotdata/name. */
static int ms_save(mstream *m, const char *dir, const char *name, bbvfl_err *err) {
  int bad = fclose(m->f) != 0;
  m->f = NULL;
  if (bad) {
    free(m->buf);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  char pd[4096];
  snprintf(pd, sizeof pd, "%s/plotdata", dir);
  int rc = bbvfl_bench_write(pd, name, m->buf, m->len, err);
  free(m->buf);
  m->buf = NULL;
  return rc;
}

static void ms_drop(mstream *m) {
  if (m->f) fclose(m->f);
  m->f = NULL;
  free(m->buf);
  m->buf = NULL;
}

/* Runs gnuplot on dir/plotdata/script (working folder dir/plotdata), its messages into
 * dir/plotdata/gnuplot.log. */
static int run_gnuplot(const char *dir, const char *script, bbvfl_err *err) {
  char pd[4096], log[4200];
  snprintf(pd, sizeof pd, "%s/plotdata", dir);
  snprintf(log, sizeof log, "%s/gnuplot.log", pd);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0644);
  char *const argv[] = {"gnuplot", "-e", NULL, (char *)script, NULL};
  char cd[4200];
  snprintf(cd, sizeof cd, "cd '%s'", pd);
  ((char **)argv)[2] = cd;
  pid_t pid;
  int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "cannot run gnuplot (%s): install Debian's gnuplot-nox", strerror(rc));
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR) return bbvfl_fail(err, BBVFL_E_STATE, "waiting for gnuplot: %s", strerror(errno));
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    return bbvfl_fail(err, BBVFL_E_STATE, "gnuplot failed on %s/%s (see %s)", pd, script, log);
  return 0;
}

static int plotdata_dir(const char *dir, bbvfl_err *err) {
  char pd[4096];
  snprintf(pd, sizeof pd, "%s/plotdata", dir);
  return bbvfl_mkdirs(pd, 0755, err);
}

#define TERM "set terminal pngcairo size %d,%d font 'DejaVu Sans,10'\n"

/* ------------------------------------------------------------------ Table I bars */

int bbvfl_bench_plot_table1(const char *dir, const json_t *t1, json_t *made, bbvfl_err *err) {
  const json_t *rows = json_object_get(t1, "table1");
  if (!json_is_array(rows) || json_array_size(rows) == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "table1 JSON: no \"table1\" rows");
  if (plotdata_dir(dir, err) != 0) return -1;
  mstream d, g;
  if (ms_open(&d, err) != 0) return -1;
  fprintf(d.f, "# label offchain_s onchain_train_s onchain_masked_s paper_onchain_s onchain_eval_s demo_onchain_s\n");
  size_t i, j;
  json_t *r, *q;
  json_array_foreach(rows, i, r) {
    if (json_is_true(json_object_get(r, "masked"))) continue;
    double masked = -1;
    json_array_foreach(rows, j, q)
      if (json_is_true(json_object_get(q, "masked")) && ival(q, "M") == ival(r, "M") && ival(q, "b") == ival(r, "b"))
        masked = num(q, "onchain_s");
    const json_t *paper = json_object_get(r, "paper_onchain_s");
    fprintf(d.f, "\"M=%d b=%d\" %.9g %.9g ", ival(r, "M"), ival(r, "b"), num(r, "offchain_s"), num(r, "onchain_s"));
    if (masked >= 0) fprintf(d.f, "%.9g ", masked);
    else fprintf(d.f, "? ");
    if (paper) fprintf(d.f, "%.9g ", json_number_value(paper));
    else fprintf(d.f, "? ");
    fprintf(d.f, "%.9g", num(r, "onchain_eval_s"));
    const json_t *demo = json_object_get(r, "demo_onchain_s");
    if (json_is_number(demo)) fprintf(d.f, " %.9g\n", json_number_value(demo));
    else fprintf(d.f, " ?\n");
  }
  if (ms_save(&d, dir, "table1.dat", err) != 0) return -1;
  if (ms_open(&g, err) != 0) return -1;
  const json_t *cfg = json_object_get(t1, "config");
  fprintf(g.f, TERM, 900, 560);
  fprintf(g.f,
          "set output '../table1.png'\n"
          "set datafile missing '?'\n"
          "set title \"Aggregation time per epoch (%d training rounds; median of %d epochs), Breast Cancer B=%d P=%d\"\n"
          "set style data histograms\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
          "set boxwidth 0.9\nset logscale y\nset yrange [1e-6:100]\nset format y '10^{%%L}'\n"
          "set ylabel 'seconds per epoch (log)'\nset grid ytics\nset key outside below center horizontal\nset xtics rotate by -30\n"
          "plot 'table1.dat' using 2:xtic(1) title 'off-chain (in-process sum)' lc rgb '#4daf4a', \\\n"
          "     '' using 3 title 'on-chain, bbvfl (anvil)' lc rgb '#377eb8', \\\n"
          "     '' using 7 title 'on-chain, bbvfl demo (M client processes)' lc rgb '#a6cee3', \\\n"
          "     '' using 4 title 'on-chain masked, bbvfl' lc rgb '#984ea3', \\\n"
          "     '' using 5 title 'on-chain, paper (PyEVM)' lc rgb '#e41a1c'\n",
          ival(cfg, "train_rounds_per_epoch"), ival(cfg, "epochs"), ival(cfg, "B"), ival(cfg, "P"));
  if (ms_save(&g, dir, "table1.gp", err) != 0) return -1;
  if (run_gnuplot(dir, "table1.gp", err) != 0) return -1;
  if (made) json_array_append_new(made, json_string("table1.png"));
  return 1;
}

/* ------------------------------------------------------------------ scaling */

static void opt_num(FILE *f, const json_t *r, const char *k) {
  const json_t *v = json_object_get(r, k);
  if (json_is_number(v)) fprintf(f, " %.9g", json_number_value(v));
  else fprintf(f, " ?");
}

int bbvfl_bench_plot_scaling(const char *dir, const json_t *sc, json_t *made, bbvfl_err *err) {
  const json_t *rows = json_object_get(sc, "rows");
  if (!json_is_array(rows) || json_array_size(rows) == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "scaling JSON: no \"rows\"");
  if (plotdata_dir(dir, err) != 0) return -1;
  mstream m, c, g;
  if (ms_open(&m, err) != 0) return -1;
  if (ms_open(&c, err) != 0) {
    ms_drop(&m);
    return -1;
  }
  double floor_ms = num(sc, "floor_ms");
  fprintf(m.f, "# M round_ms naive_round_ms M*floor_ms gas_per_coord naive_gas_per_coord gas_per_round naive_gas_per_round\n");
  fprintf(c.f, "# coords_per_submission max_tx_gas naive_max_tx_gas sweep(P=1,B=2)\n");
  size_t i;
  json_t *r;
  json_array_foreach(rows, i, r) {
    const char *sw = json_string_value(json_object_get(r, "sweep"));
    if (!sw) continue;
    int ok = json_object_get(r, "status") && strcmp(json_string_value(json_object_get(r, "status")), "ok") == 0;
    if (strcmp(sw, "M") == 0) {
      fprintf(m.f, "%d", ival(r, "M"));
      if (ok) opt_num(m.f, r, "round_ms");
      else fprintf(m.f, " ?");
      opt_num(m.f, r, "naive_round_ms");
      double fl = num(r, "floor_interleaved_ms");
      fprintf(m.f, " %.9g", (fl > 0 ? fl : floor_ms) * ival(r, "M"));
      if (ok) opt_num(m.f, r, "gas_per_coordinate");
      else fprintf(m.f, " ?");
      opt_num(m.f, r, "naive_gas_per_coordinate");
      if (ok) opt_num(m.f, r, "gas_per_round");
      else fprintf(m.f, " ?");
      opt_num(m.f, r, "naive_gas_per_round");
      fputc('\n', m.f);
    }
    fprintf(c.f, "%d", ival(r, "coords_per_submission"));
    if (ok) opt_num(c.f, r, "max_tx_gas");
    else fprintf(c.f, " ?");
    opt_num(c.f, r, "naive_max_tx_gas");
    fprintf(c.f, " %d\n", strcmp(sw, "M") == 0 ? 0 : strcmp(sw, "P") == 0 ? 1 : 2);
  }
  if (ms_save(&m, dir, "scaling_m.dat", err) != 0) {
    ms_drop(&c);
    return -1;
  }
  if (ms_save(&c, dir, "scaling_coords.dat", err) != 0) return -1;
  if (ms_open(&g, err) != 0) return -1;
  double cap = num(sc, "tx_gas_cap"), blk = num(sc, "block_gas_limit");
  fprintf(g.f, TERM, 1100, 820);
  fprintf(g.f,
          "set output '../scaling.png'\nset datafile missing '?'\n"
          "set multiplot layout 2,2 title 'One aggregation round: bbvfl vs the naive one-word-per-value contract (b=%d)'\n"
          "set grid\nset logscale x 2\nset key top left Left reverse\nset xlabel 'clients M (B=10, P=16)'\n"
          "set logscale y\nset ylabel 'ms per round (log)'\nset title 'time per round'\n"
          "plot 'scaling_m.dat' using 1:2 with linespoints lw 2 pt 7 title 'bbvfl', \\\n"
          "     '' using 1:3 with linespoints lw 2 pt 5 title 'naive (submits + aggregate)', \\\n"
          "     '' using 1:4 with lines dt 2 lw 2 title 'M x floor (fresh chain: %.2f ms)'\n"
          "set ylabel 'gas per coordinate (log)'\nset title 'gas per coordinate, steady state'\n"
          "plot 'scaling_m.dat' using 1:5 with linespoints lw 2 pt 7 title 'bbvfl', \\\n"
          "     '' using 1:6 with linespoints lw 2 pt 5 title 'naive'\n"
          "set ylabel 'gas per round (log)'\nset title 'gas of a whole round vs the block gas limit'\n"
          "set arrow 1 from graph 0, first %g to graph 1, first %g nohead dt 3 lw 2 lc rgb '#e41a1c'\n"
          "set label 1 'block gas limit %.0fM' at graph 0.02, first %g offset 0,0.7 tc rgb '#e41a1c'\n"
          "plot 'scaling_m.dat' using 1:7 with linespoints lw 2 pt 7 title 'bbvfl', \\\n"
          "     '' using 1:8 with linespoints lw 2 pt 5 title 'naive'\n"
          "unset arrow 1\nunset label 1\n"
          "set xlabel 'coordinates per submission B*P (all sweeps)'\nset logscale x 10\n"
          "set ylabel 'gas of the largest transaction (log)'\nset title 'largest transaction vs the EIP-7825 cap (2^{24})'\n"
          "set yrange [1e4:%g]\nset key bottom right\n"
          "set arrow 2 from graph 0, first %g to graph 1, first %g nohead dt 3 lw 2 lc rgb '#e41a1c'\n"
          "set label 2 'per-transaction cap 2^{24}' at graph 0.02, first %g offset 0,0.7 tc rgb '#e41a1c'\n"
          "plot 'scaling_coords.dat' using 1:2 with points pt 7 ps 1.3 title 'bbvfl submit', \\\n"
          "     '' using 1:3 with points pt 5 ps 1.3 title 'naive (submit or aggregate)'\n"
          "unset multiplot\n",
          ival(sc, "b"), floor_ms, blk, blk, blk / 1e6, blk, cap * 8, cap, cap, cap);
  if (ms_save(&g, dir, "scaling.gp", err) != 0) return -1;
  if (run_gnuplot(dir, "scaling.gp", err) != 0) return -1;
  if (made) json_array_append_new(made, json_string("scaling.png"));
  return 1;
}

/* ------------------------------------------------------------------ sweep: Figure 2, AUROC vs epsilon */

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over the cell's runs of AUROC at epoch e (0-based); NAN when none has it. */
static double cell_median_at(const json_t *cell, size_t e) {
  double v[256];
  size_t n = 0, i;
  json_t *run;
  json_array_foreach(json_object_get(cell, "runs"), i, run) {
    const json_t *a = json_array_get(json_object_get(run, "auroc_per_epoch"), e);
    if (json_is_number(a) && n < 256) v[n++] = json_number_value(a);
  }
  return n ? bbvfl_median(v, n) : NAN;
}

static int is_mech(const json_t *c, const char *m) {
  const char *s = json_string_value(json_object_get(c, "mechanism"));
  return s && strcmp(s, m) == 0;
}

int bbvfl_bench_plot_sweep(const char *dir, const json_t *sweep, int M, json_t *made, bbvfl_err *err) {
  const json_t *cells = json_object_get(sweep, "cells");
  if (!json_is_array(cells) || json_array_size(cells) == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "sweep JSON: no \"cells\" (is it the sweep.json of `bbvfl sweep`?)");
  size_t i, j;
  json_t *c;
  if (M <= 0) M = ival(json_array_get(cells, 0), "clients");
  int epochs = ival(sweep, "epochs");
  if (epochs < 1) return bbvfl_fail(err, BBVFL_E_PARSE, "sweep JSON: no \"epochs\"");
  /* distinct b and beta of the PBM cells with M clients, ascending */
  int bs[16], nb = 0;
  double betas[16];
  int nbeta = 0;
  const json_t *npq = NULL;
  json_array_foreach(cells, i, c) {
    if (ival(c, "clients") != M) continue;
    if (is_mech(c, "npq")) npq = c;
    if (!is_mech(c, "pbm")) continue;
    int b = ival(c, "b");
    double be = num(c, "beta");
    int seen = 0;
    for (int k = 0; k < nb; k++) seen |= bs[k] == b;
    if (!seen && nb < 16) bs[nb++] = b;
    seen = 0;
    for (int k = 0; k < nbeta; k++) seen |= fabs(betas[k] - be) < 1e-12;
    if (!seen && nbeta < 16) betas[nbeta++] = be;
  }
  if (nb == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "sweep JSON: no PBM cells with %d clients", M);
  for (int a = 0; a < nb; a++)
    for (int b2 = a + 1; b2 < nb; b2++)
      if (bs[b2] < bs[a]) {
        int t = bs[a];
        bs[a] = bs[b2];
        bs[b2] = t;
      }
  qsort(betas, (size_t)nbeta, sizeof *betas, cmp_dbl);
  if (plotdata_dir(dir, err) != 0) return -1;

  /* Figure 2: fig2.dat has one block per b (index k): epoch npq beta_1 .. beta_n */
  mstream d, e, g;
  if (ms_open(&d, err) != 0) return -1;
  for (int k = 0; k < nb; k++) {
    fprintf(d.f, "# b=%d: epoch npq", bs[k]);
    for (int t = 0; t < nbeta; t++) fprintf(d.f, " beta=%g", betas[t]);
    fputc('\n', d.f);
    for (int ep = 0; ep < epochs; ep++) {
      fprintf(d.f, "%d", ep + 1);
      double v = npq ? cell_median_at(npq, (size_t)ep) : NAN;
      if (isnan(v)) fprintf(d.f, " ?");
      else fprintf(d.f, " %.6f", v);
      for (int t = 0; t < nbeta; t++) {
        const json_t *cell = NULL;
        json_array_foreach(cells, j, c)
          if (ival(c, "clients") == M && is_mech(c, "pbm") && ival(c, "b") == bs[k] && fabs(num(c, "beta") - betas[t]) < 1e-12)
            cell = c;
        v = cell ? cell_median_at(cell, (size_t)ep) : NAN;
        if (isnan(v)) fprintf(d.f, " ?");
        else fprintf(d.f, " %.6f", v);
      }
      fputc('\n', d.f);
    }
    fprintf(d.f, "\n\n");
  }
  if (ms_save(&d, dir, "fig2.dat", err) != 0) return -1;
  if (ms_open(&g, err) != 0) return -1;
  int cols = nb > 1 ? 2 : 1, rows = (nb + cols - 1) / cols;
  fprintf(g.f, TERM, 1000, 360 * rows + 60);
  fprintf(g.f,
          "set output '../fig2_auroc_by_epoch.png'\nset datafile missing '?'\n"
          "set multiplot layout %d,%d title 'Test AUROC by epoch, M=%d, median of %d seeds (like the paper, Fig. 2)'\n"
          "set grid\nset key bottom right\nset xlabel 'epoch'\nset ylabel 'test AUROC'\nset yrange [*:1]\n",
          rows, cols, M, ival(sweep, "seeds"));
  for (int k = 0; k < nb; k++) {
    fprintf(g.f, "set title 'b = %d'\nplot 'fig2.dat' index %d using 1:2 with lines dt 2 lw 2 lc rgb 'black' title 'NPQ (no noise)'", bs[k], k);
    for (int t = 0; t < nbeta; t++)
      fprintf(g.f, ", \\\n  '' index %d using 1:%d with lines lw 2 title 'beta=%g'", k, t + 3, betas[t]);
    fputc('\n', g.f);
  }
  fprintf(g.f, "unset multiplot\n");
  if (ms_save(&g, dir, "fig2.gp", err) != 0) return -1;
  if (run_gnuplot(dir, "fig2.gp", err) != 0) return -1;
  if (made) json_array_append_new(made, json_string("fig2_auroc_by_epoch.png"));

  /* AUROC against epsilon: one block per b, points in beta order */
  if (ms_open(&e, err) != 0) return -1;
  for (int k = 0; k < nb; k++) {
    fprintf(e.f, "# b=%d: epsilon_feature auroc_median beta\n", bs[k]);
    for (int t = 0; t < nbeta; t++)
      json_array_foreach(cells, j, c)
        if (ival(c, "clients") == M && is_mech(c, "pbm") && ival(c, "b") == bs[k] && fabs(num(c, "beta") - betas[t]) < 1e-12 &&
            json_is_number(json_object_get(c, "epsilon_feature")))
          fprintf(e.f, "%.6g %.6f %g\n", num(c, "epsilon_feature"), num(c, "auroc_median"), betas[t]);
    fprintf(e.f, "\n\n");
  }
  if (ms_save(&e, dir, "auroc_eps.dat", err) != 0) return -1;
  if (ms_open(&g, err) != 0) return -1;
  fprintf(g.f, TERM, 900, 560);
  fprintf(g.f,
          "set output '../auroc_vs_epsilon.png'\n"
          "set title \"Test AUROC after %d epochs against feature-level epsilon (delta=%g), M=%d, median of %d seeds\"\n"
          "set grid\nset logscale x\nset key bottom right\nset xlabel 'epsilon (feature-level, exact RDP conversion; log)'\n"
          "set ylabel 'test AUROC'\n",
          epochs, num(sweep, "delta"), M, ival(sweep, "seeds"));
  if (npq)
    fprintf(g.f, "set arrow 1 from graph 0, first %.6f to graph 1, first %.6f nohead dt 2 lw 2 lc rgb 'black'\n"
                 "set label 1 'NPQ (no privacy) %.3f' at graph 0.02, first %.6f offset 0,0.7\n",
            num(npq, "auroc_median"), num(npq, "auroc_median"), num(npq, "auroc_median"), num(npq, "auroc_median"));
  fprintf(g.f, "plot ");
  for (int k = 0; k < nb; k++)
    fprintf(g.f, "%s'auroc_eps.dat' index %d using 1:2 with linespoints lw 2 pt 7 title 'b=%d (beta %g..%g)'", k ? ", \\\n  " : "", k,
            bs[k], betas[0], betas[nbeta - 1]);
  fputc('\n', g.f);
  if (ms_save(&g, dir, "auroc_eps.gp", err) != 0) return -1;
  if (run_gnuplot(dir, "auroc_eps.gp", err) != 0) return -1;
  if (made) json_array_append_new(made, json_string("auroc_vs_epsilon.png"));
  return 2;
}

/* ------------------------------------------------------------------ AUROC against blocks */

int bbvfl_bench_plot_blocks(const char *dir, const json_t *t, json_t *made, bbvfl_err *err) {
  const json_t *rows = json_object_get(t, "rows");
  if (!json_is_array(rows) || json_array_size(rows) == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "blocks JSON: no \"rows\"");
  if (plotdata_dir(dir, err) != 0) return -1;
  mstream d, g;
  if (ms_open(&d, err) != 0) return -1;
  size_t i, nplot = 0;
  const json_t *r;
  json_array_foreach(rows, i, r) {
    double bpe = num(r, "blocks_per_epoch");
    const json_t *curve = json_object_get(r, "auroc_by_epoch_median");
    if (!(bpe > 0) || !json_is_array(curve)) continue;
    fprintf(d.f, "# %s\n", json_string_value(json_object_get(r, "row")));
    for (size_t e = 0; e < json_array_size(curve); e++)
      fprintf(d.f, "%.6g %.6g\n", (double)(e + 1) * bpe, json_number_value(json_array_get(curve, e)));
    fprintf(d.f, "\n\n");
    nplot++;
  }
  if (nplot == 0) {
    ms_drop(&d);
    return bbvfl_fail(err, BBVFL_E_PARSE, "blocks JSON: no row has blocks per epoch (an off-chain-only run?)");
  }
  if (ms_save(&d, dir, "blocks.dat", err) != 0) return -1;
  if (ms_open(&g, err) != 0) return -1;
  fprintf(g.f, TERM, 900, 560);
  fprintf(g.f, "set output '../blocks.png'\n");
  fprintf(g.f, "set title 'Test AUROC against blocks (median of %d seeds), one curve per window/staleness'\n",
          ival(json_object_get(t, "config"), "seeds"));
  fprintf(g.f, "set xlabel 'blocks (epochs x measured blocks per epoch, %g s block time)'\n",
          num(json_object_get(t, "config"), "block_time"));
  fprintf(g.f, "set ylabel 'test AUROC'\nset logscale x\nset grid\nset key bottom right\n");
  fprintf(g.f, "plot ");
  size_t k = 0;
  json_array_foreach(rows, i, r) {
    if (!(num(r, "blocks_per_epoch") > 0)) continue;
    fprintf(g.f, "%s'blocks.dat' index %zu with linespoints title '%s'", k ? ", " : "", k,
            json_string_value(json_object_get(r, "row")));
    k++;
  }
  fprintf(g.f, "\n");
  if (ms_save(&g, dir, "blocks.gp", err) != 0) return -1;
  if (run_gnuplot(dir, "blocks.gp", err) != 0) return -1;
  if (made) json_array_append_new(made, json_string("blocks.png"));
  return 1;
}

/* ------------------------------------------------------------------ bench lr */

int bbvfl_bench_plot_lr(const char *dir, const json_t *t, json_t *made, bbvfl_err *err) {
  const json_t *rows = json_object_get(t, "rows");
  if (!json_is_array(rows) || json_array_size(rows) == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "lr JSON: no \"rows\"");
  if (plotdata_dir(dir, err) != 0) return -1;
  int nfig = 0;
  size_t i = 0;
  while (i < json_array_size(rows)) {
    const char *data = json_string_value(json_object_get(json_array_get(rows, i), "data"));
    size_t j = i;
    while (j < json_array_size(rows) &&
           strcmp(json_string_value(json_object_get(json_array_get(rows, j), "data")), data) == 0)
      j++;
    char dname[64], gname[64], png[64];
    snprintf(dname, sizeof dname, "lr_%d.dat", nfig + 1);
    snprintf(gname, sizeof gname, "lr_%d.gp", nfig + 1);
    snprintf(png, sizeof png, "lr_%d.png", nfig + 1);
    mstream d, g;
    if (ms_open(&d, err) != 0) return -1;
    for (size_t k = i; k < j; k++) {
      const json_t *r = json_array_get(rows, k), *curve = json_object_get(r, "curve"), *pt;
      size_t e;
      fprintf(d.f, "# %s\n", json_string_value(json_object_get(r, "method")));
      json_array_foreach(curve, e, pt)
        fprintf(d.f, "%lld %.6g\n", (long long)json_integer_value(json_array_get(pt, 0)),
                json_number_value(json_array_get(pt, 1)));
      fprintf(d.f, "\n\n");
    }
    if (ms_save(&d, dir, dname, err) != 0) return -1;
    if (ms_open(&g, err) != 0) return -1;
    const char *slash = strrchr(data, '/');
    double target = num(json_array_get(rows, i), "target_loss");
    fprintf(g.f, TERM, 900, 560);
    fprintf(g.f, "set output '../%s'\n", png);
    fprintf(g.f, "set title 'Test loss against aggregation rounds, %s, M=%d, NPQ (dashed: the target %.4f)' noenhanced\n",
            slash ? slash + 1 : data, ival(json_object_get(t, "config"), "M"), target);
    fprintf(g.f, "set xlabel 'aggregation rounds (training + curvature; log)'\nset ylabel 'test loss (log)'\n"
                 "set logscale xy\nset grid\nset key top right\n");
    fprintf(g.f, "plot ");
    for (size_t k = i; k < j; k++)
      fprintf(g.f, "%s'%s' index %zu with lines lw 2 title '%s' noenhanced", k > i ? ", " : "", dname, k - i,
              json_string_value(json_object_get(json_array_get(rows, k), "method")));
    fprintf(g.f, ", %.9g with lines dt 2 lc rgb 'black' title 'target'\n", target);
    if (ms_save(&g, dir, gname, err) != 0) return -1;
    if (run_gnuplot(dir, gname, err) != 0) return -1;
    if (made) json_array_append_new(made, json_string(png));
    nfig++;
    i = j;
  }
  return nfig;
}

/* ------------------------------------------------------------------ bench tables */

int bbvfl_bench_plot_tables(const char *dir, const json_t *t, json_t *made, bbvfl_err *err) {
  const json_t *rows = json_object_get(t, "rows");
  if (!json_is_array(rows) || json_array_size(rows) == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "tables JSON: no \"rows\"");
  if (plotdata_dir(dir, err) != 0) return -1;
  /* one curve per (M, chain), in the order they first appear */
  char keys[16][48];
  size_t nk = 0, i;
  const json_t *r;
  json_array_foreach(rows, i, r) {
    char k[48];
    snprintf(k, sizeof k, "M=%d, %s", ival(r, "M"), json_string_value(json_object_get(r, "chain")));
    size_t j;
    for (j = 0; j < nk && strcmp(keys[j], k); j++) {
    }
    if (j == nk && nk < 16) snprintf(keys[nk++], sizeof keys[0], "%s", k);
  }
  mstream d, g;
  if (ms_open(&d, err) != 0) return -1;
  for (size_t j = 0; j < nk; j++) {
    fprintf(d.f, "# %s: rows blocks_per_epoch gas_per_epoch\n", keys[j]);
    json_array_foreach(rows, i, r) {
      char k[48];
      snprintf(k, sizeof k, "M=%d, %s", ival(r, "M"), json_string_value(json_object_get(r, "chain")));
      if (!strcmp(k, keys[j])) fprintf(d.f, "%.0f %.6g %.6g\n", num(r, "rows"), num(r, "blocks_per_epoch"), num(r, "gas_per_epoch"));
    }
    fprintf(d.f, "\n\n");
  }
  if (ms_save(&d, dir, "tables.dat", err) != 0) return -1;
  if (ms_open(&g, err) != 0) return -1;
  const json_t *cfg = json_object_get(t, "config");
  fprintf(g.f, TERM, 1100, 480);
  fprintf(g.f, "set output '../tables.png'\nset multiplot layout 1,2 title 'Windows sized for the chain (2^{24} gas per "
               "transaction; devnet %.0f M, mainnet %.0f M gas blocks), staleness 1: one block per window'\n",
          num(cfg, "devnet_block_gas") / 1e6, num(cfg, "mainnet_block_gas") / 1e6);
  fprintf(g.f, "set logscale x\nset grid\nset key top left\nset xlabel 'table rows (100,000: synthetic)'\n");
  for (int pass = 0; pass < 2; pass++) {
    fprintf(g.f, "set ylabel '%s'\n%s", pass ? "gas per epoch (used, upper estimate)" : "blocks per epoch",
            pass ? "set logscale y\n" : "unset logscale y\n");
    fprintf(g.f, "plot ");
    for (size_t j = 0; j < nk; j++)
      fprintf(g.f, "%s'tables.dat' index %zu using 1:%d with linespoints title '%s'", j ? ", " : "", j, pass ? 3 : 2,
              keys[j]);
    fprintf(g.f, "\n");
  }
  fprintf(g.f, "unset multiplot\n");
  if (ms_save(&g, dir, "tables.gp", err) != 0) return -1;
  if (run_gnuplot(dir, "tables.gp", err) != 0) return -1;
  if (made) json_array_append_new(made, json_string("tables.png"));
  return 1;
}
