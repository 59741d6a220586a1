#include "ml/data.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "common/rundirs.h"
#include "dp/rng.h"

/* One line split into fields (pointers into a scratch copy). */
typedef struct {
  char **f;
  size_t n, cap;
} fields;

static int split_line(char *line, fields *fl, bbvfl_err *err) {
  fl->n = 0;
  char *p = line;
  for (;;) {
    if (fl->n == fl->cap) {
      size_t nc = fl->cap ? 2 * fl->cap : 32;
      char **nf = realloc(fl->f, nc * sizeof *nf);
      if (!nf) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory reading CSV");
      fl->f = nf;
      fl->cap = nc;
    }
    char *c = strchr(p, ',');
    if (c) *c = '\0';
    /* trim blanks and one pair of surrounding double quotes */
    while (*p == ' ' || *p == '\t') p++;
    size_t l = strlen(p);
    while (l > 0 && (p[l - 1] == ' ' || p[l - 1] == '\t')) p[--l] = '\0';
    if (l >= 2 && p[0] == '"' && p[l - 1] == '"') {
      p[l - 1] = '\0';
      p++;
    }
    fl->f[fl->n++] = p;
    if (!c) break;
    p = c + 1;
  }
  return 0;
}

static char *xstrdup(const char *s) {
  size_t l = strlen(s) + 1;
  char *d = malloc(l);
  if (d) memcpy(d, s, l);
  return d;
}

static int parse_num(const char *s, double *v) {
  if (!*s) return -1;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (*end != '\0' || errno == ERANGE) return -1;
  *v = x;
  return 0;
}

static int cmp_label(const void *a, const void *b, int numeric) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  if (numeric) {
    double u = strtod(x, NULL), w = strtod(y, NULL);
    return (u > w) - (u < w);
  }
  return strcmp(x, y);
}
static int cmp_label_num(const void *a, const void *b) { return cmp_label(a, b, 1); }
static int cmp_label_str(const void *a, const void *b) { return cmp_label(a, b, 0); }

void bbvfl_dataset_free(bbvfl_dataset *ds) {
  if (!ds) return;
  if (ds->feature_names)
    for (size_t j = 0; j < ds->d; j++) free(ds->feature_names[j]);
  if (ds->class_names)
    for (int k = 0; k < ds->nclasses; k++) free(ds->class_names[k]);
  free(ds->feature_names);
  free(ds->class_names);
  free(ds->label_name);
  free(ds->x);
  free(ds->y);
  memset(ds, 0, sizeof *ds);
}

/* The parse of one CSV text: what bbvfl_csv_parse's steps share. Every pointer into buf. */
typedef struct {
  const char *src;
  char *buf;           /* the text, owned; lines and fields point into it */
  char **lines;        /* owned array */
  size_t nlines;
  fields fl;           /* the last line split */
  char **hdr;          /* ncols header names (into buf), owned array */
  size_t ncols, label_col, id_col;
  char **labels;       /* n label cells (into buf), owned array */
  int all_numeric;     /* every label cell is a finite number: classes sort numerically */
} csv_parse;

/* buf into lines (CR LF or LF; trailing blank lines dropped); at least a header and a data row. */
static int csv_lines(csv_parse *P, bbvfl_err *err) {
  size_t cap = 0;
  for (char *p = P->buf; *p;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = '\0';
    size_t l = strlen(p);
    if (l > 0 && p[l - 1] == '\r') p[l - 1] = '\0';
    if (P->nlines == cap) {
      cap = cap ? 2 * cap : 1024;
      char **nlp = realloc(P->lines, cap * sizeof *nlp);
      if (!nlp) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory reading %s", P->src);
      P->lines = nlp;
    }
    P->lines[P->nlines++] = p;
    if (!nl) break;
    p = nl + 1;
  }
  while (P->nlines > 0 && P->lines[P->nlines - 1][0] == '\0') P->nlines--; /* trailing blank lines */
  if (P->nlines == 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: the file is empty (expected a header row and data rows)", P->src);
  if (P->nlines == 1) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: only a header row, no data rows", P->src);
  return 0;
}

/* The header: names non-empty and distinct; the label column (o->label, else the last) and the id
   column (o->id_column, optional) found. */
static int csv_header(csv_parse *P, const bbvfl_csv_opts *o, bbvfl_err *err) {
  const char *src = P->src;
  if (split_line(P->lines[0], &P->fl, err) != 0) return -1;
  size_t ncols = P->ncols = P->fl.n;
  char **hdr = P->hdr = calloc(ncols, sizeof *hdr);
  if (!hdr) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  for (size_t j = 0; j < ncols; j++) {
    hdr[j] = P->fl.f[j];
    if (!hdr[j][0]) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: line 1 (header): column %zu has an empty name", src, j + 1);
    for (size_t k = 0; k < j; k++)
      if (strcmp(hdr[k], hdr[j]) == 0)
        return bbvfl_fail(err, BBVFL_E_PARSE, "%s: line 1 (header): column name '%s' appears twice (columns %zu and %zu)",
                          src, hdr[j], k + 1, j + 1);
  }
  P->label_col = ncols - 1;
  P->id_col = (size_t)-1;
  if (o->label) {
    P->label_col = (size_t)-1;
    for (size_t j = 0; j < ncols; j++)
      if (strcmp(hdr[j], o->label) == 0) P->label_col = j;
    if (P->label_col == (size_t)-1)
      return bbvfl_fail(err, BBVFL_E_ARG, "%s: no label column named '%s' in the header (first column: '%s', last: '%s')",
                        src, o->label, hdr[0], hdr[ncols - 1]);
  }
  if (o->id_column) {
    for (size_t j = 0; j < ncols; j++)
      if (strcmp(hdr[j], o->id_column) == 0) P->id_col = j;
    if (P->id_col == (size_t)-1)
      return bbvfl_fail(err, BBVFL_E_ARG, "%s: no id column named '%s' in the header", src, o->id_column);
    if (P->id_col == P->label_col)
      return bbvfl_fail(err, BBVFL_E_ARG, "%s: the id column and the label column are the same ('%s')", src, o->id_column);
  }
  return 0;
}

/* ds's shape, feature names and buffers (n rows, d features), and P->labels. */
static int csv_alloc(csv_parse *P, bbvfl_dataset *ds, bbvfl_err *err) {
  int has_id = P->id_col != (size_t)-1;
  size_t d = P->ncols - 1 - (size_t)has_id;
  if (d == 0) return bbvfl_fail(err, BBVFL_E_PARSE, "%s: no feature columns (only label%s)", P->src, has_id ? " and id" : "");
  size_t n = P->nlines - 1;
  ds->n = n;
  ds->d = d;
  ds->x = malloc(n * d * sizeof *ds->x);
  ds->y = malloc(n * sizeof *ds->y);
  ds->feature_names = calloc(d, sizeof *ds->feature_names);
  ds->label_name = xstrdup(P->hdr[P->label_col]);
  P->labels = calloc(n, sizeof *P->labels);
  if (!ds->x || !ds->y || !ds->feature_names || !P->labels || !ds->label_name)
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory for %zu x %zu table", n, d);
  for (size_t j = 0, k = 0; j < P->ncols; j++) {
    if (j == P->label_col || j == P->id_col) continue;
    ds->feature_names[k] = xstrdup(P->hdr[j]);
    if (!ds->feature_names[k++]) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  return 0;
}

/* Data row i (file line i + 2): its features into ds->x, its label cell into P->labels[i]. */
static int csv_row(csv_parse *P, size_t i, bbvfl_dataset *ds, bbvfl_err *err) {
  const char *src = P->src;
  size_t line = i + 2, ncols = P->ncols;
  fields *fl = &P->fl;
  if (split_line(P->lines[i + 1], fl, err) != 0) return -1;
  if (fl->n != ncols)
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: line %zu has %zu field%s, the header has %zu columns", src, line, fl->n,
                      fl->n == 1 ? "" : "s", ncols);
  for (size_t j = 0, k = 0; j < ncols; j++) {
    if (j == P->id_col) continue;
    double v;
    if (j == P->label_col) {
      if (!fl->f[j][0])
        return bbvfl_fail(err, BBVFL_E_PARSE, "%s: line %zu, column %zu ('%s'): the label is empty", src, line, j + 1,
                          P->hdr[j]);
      P->labels[i] = fl->f[j];
      if (parse_num(fl->f[j], &v) != 0 || !isfinite(v)) P->all_numeric = 0;
      continue;
    }
    if (!fl->f[j][0])
      return bbvfl_fail(err, BBVFL_E_PARSE, "%s: line %zu, column %zu ('%s'): empty cell (missing values are not supported)",
                        src, line, j + 1, P->hdr[j]);
    if (parse_num(fl->f[j], &v) != 0)
      return bbvfl_fail(err, BBVFL_E_PARSE, "%s: line %zu, column %zu ('%s'): '%.40s' is not a number", src, line, j + 1,
                        P->hdr[j], fl->f[j]);
    if (!isfinite(v) || fabs(v) > 3.4e38)
      return bbvfl_fail(err, BBVFL_E_PARSE,
                        "%s: line %zu, column %zu ('%s'): '%.40s' is not a finite number (NaN and infinity are not allowed)",
                        src, line, j + 1, P->hdr[j], fl->f[j]);
    ds->x[i * ds->d + k++] = (float)v;
  }
  return 0;
}

/* The classes: the distinct label values, sorted (numerically when every one is a number), into
   ds->class_names, and each row's class index into ds->y. At least two. */
static int csv_classes(csv_parse *P, bbvfl_dataset *ds, bbvfl_err *err) {
  size_t n = ds->n;
  int num = P->all_numeric;
  char **u = malloc(n * sizeof *u);
  if (!u) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  memcpy(u, P->labels, n * sizeof *u);
  qsort(u, n, sizeof *u, num ? cmp_label_num : cmp_label_str);
  size_t nu = 0;
  for (size_t i = 0; i < n; i++)
    if (nu == 0 || (num ? cmp_label_num(&u[nu - 1], &u[i]) : strcmp(u[nu - 1], u[i])) != 0) u[nu++] = u[i];
  if (nu < 2) {
    free(u);
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: the label column '%s' has only one value ('%s'): need at least two classes",
                      P->src, P->hdr[P->label_col], P->labels[0]);
  }
  ds->nclasses = (int)nu;
  ds->class_names = calloc(nu, sizeof *ds->class_names);
  if (!ds->class_names) {
    free(u);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  for (size_t k = 0; k < nu; k++) ds->class_names[k] = xstrdup(u[k]);
  for (size_t i = 0; i < n; i++) {
    const char *key = P->labels[i];
    size_t lo = 0, hi = nu;
    while (hi - lo > 1) { /* binary search in the sorted distinct labels */
      size_t mid = (lo + hi) / 2;
      int c = num ? cmp_label_num(&key, &u[mid]) : strcmp(key, u[mid]);
      if (c < 0) hi = mid;
      else lo = mid;
    }
    ds->y[i] = (int)lo;
  }
  free(u);
  for (size_t k = 0; k < nu; k++)
    if (!ds->class_names[k]) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return 0;
}

int bbvfl_csv_parse(const char *text, size_t len, const char *src, const bbvfl_csv_opts *o,
                    bbvfl_dataset *ds, bbvfl_err *err) {
  bbvfl_csv_opts dflt = {0};
  if (!o) o = &dflt;
  memset(ds, 0, sizeof *ds);
  csv_parse P = {.src = src, .all_numeric = 1};
  P.buf = malloc(len + 1);
  if (!P.buf) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory reading %s", src);
  memcpy(P.buf, text, len);
  P.buf[len] = '\0';
  int rc = -1;
  if (memchr(P.buf, '\0', len)) {
    bbvfl_fail(err, BBVFL_E_PARSE, "%s: contains a NUL byte: not a text CSV file", src);
    goto out;
  }
  if (csv_lines(&P, err) != 0 || csv_header(&P, o, err) != 0 || csv_alloc(&P, ds, err) != 0) goto out;
  for (size_t i = 0; i < ds->n; i++)
    if (csv_row(&P, i, ds, err) != 0) goto out;
  if (csv_classes(&P, ds, err) != 0) goto out;
  rc = 0;
out:
  free(P.fl.f);
  free(P.hdr);
  free(P.labels);
  free(P.lines);
  free(P.buf);
  if (rc != 0) bbvfl_dataset_free(ds);
  return rc;
}

const char *bbvfl_default_data_path(void) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/breast_cancer.csv", bbvfl_rundir_path(BBVFL_RUNDIR_DATA));
  return path;
}

int bbvfl_csv_load(const char *path, const bbvfl_csv_opts *o, bbvfl_dataset *ds, bbvfl_err *err) {
  char *text;
  size_t len;
  if (bbvfl_read_file(path, (size_t)1 << 31, &text, &len, err) != 0)
    return bbvfl_wrap(err, "reading data file %s", path);
  int rc = bbvfl_csv_parse(text, len, path, o, ds, err);
  free(text);
  return rc;
}

static int cmp_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

int bbvfl_split(size_t n, double test_frac, uint64_t seed, size_t **train, size_t *n_train,
                size_t **test, size_t *n_test, bbvfl_err *err) {
  if (!(test_frac > 0 && test_frac < 1))
    return bbvfl_fail(err, BBVFL_E_ARG, "test fraction must be in (0, 1), got %g", test_frac);
  size_t nt = (size_t)llround(test_frac * (double)n);
  if (nt < 1 || nt >= n)
    return bbvfl_fail(err, BBVFL_E_ARG, "%zu rows are too few to split %g for testing", n, test_frac);
  size_t *perm = malloc(n * sizeof *perm);
  size_t *tr = malloc((n - nt) * sizeof *tr), *te = malloc(nt * sizeof *te);
  if (!perm || !tr || !te) {
    free(perm);
    free(tr);
    free(te);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  bbvfl_rng r;
  bbvfl_rng_init_seeded(&r, seed, bbvfl_rng_stream(BBVFL_STREAM_SPLIT, 0));
  for (size_t i = 0; i < n; i++) perm[i] = i;
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = (size_t)bbvfl_rng_below(&r, i + 1);
    size_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  memcpy(te, perm, nt * sizeof *te);
  memcpy(tr, perm + nt, (n - nt) * sizeof *tr);
  qsort(te, nt, sizeof *te, cmp_size);
  qsort(tr, n - nt, sizeof *tr, cmp_size);
  free(perm);
  *train = tr;
  *test = te;
  *n_train = n - nt;
  *n_test = nt;
  return 0;
}

int bbvfl_standardize_fit(const bbvfl_dataset *ds, const size_t *rows, size_t nrows, double *mean,
                          double *sd, bbvfl_err *err) {
  if (nrows == 0) return bbvfl_fail(err, BBVFL_E_ARG, "cannot standardise over zero rows");
  for (size_t j = 0; j < ds->d; j++) {
    double s = 0;
    for (size_t i = 0; i < nrows; i++) s += ds->x[rows[i] * ds->d + j];
    double m = s / (double)nrows, v = 0;
    for (size_t i = 0; i < nrows; i++) {
      double t = ds->x[rows[i] * ds->d + j] - m;
      v += t * t;
    }
    v /= (double)nrows;
    mean[j] = m;
    sd[j] = v > 1e-24 ? sqrt(v) : 1.0;
  }
  return 0;
}

void bbvfl_standardize_apply(bbvfl_dataset *ds, const double *mean, const double *sd) {
  for (size_t i = 0; i < ds->n; i++)
    for (size_t j = 0; j < ds->d; j++) {
      float *c = &ds->x[i * ds->d + j];
      *c = (float)((*c - mean[j]) / sd[j]);
    }
}

void bbvfl_partition_free(bbvfl_partition *p) {
  if (!p) return;
  free(p->off);
  free(p->cols);
  memset(p, 0, sizeof *p);
}

int bbvfl_partition_even(size_t d, int M, bbvfl_partition *p, bbvfl_err *err) {
  memset(p, 0, sizeof *p);
  if (M < 1) return bbvfl_fail(err, BBVFL_E_ARG, "need at least one client, got %d", M);
  if ((size_t)M > d)
    return bbvfl_fail(err, BBVFL_E_ARG, "%d clients but only %zu feature columns: every client needs at least one", M, d);
  p->M = M;
  p->off = malloc((size_t)(M + 1) * sizeof *p->off);
  p->cols = malloc(d * sizeof *p->cols);
  if (!p->off || !p->cols) {
    bbvfl_partition_free(p);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  size_t base = d / (size_t)M, extra = d % (size_t)M, c = 0;
  for (int m = 0; m < M; m++) {
    p->off[m] = c;
    size_t k = base + ((size_t)m < extra);
    for (size_t t = 0; t < k; t++, c++) p->cols[c] = c;
  }
  p->off[M] = c;
  return 0;
}

int bbvfl_partition_parse(const char *spec, size_t d, bbvfl_partition *p, bbvfl_err *err) {
  memset(p, 0, sizeof *p);
  int M = 1;
  for (const char *s = spec; *s; s++) M += *s == '/';
  p->M = M;
  p->off = calloc((size_t)M + 1, sizeof *p->off);
  p->cols = malloc((d ? d : 1) * sizeof *p->cols);
  unsigned char *seen = calloc(d ? d : 1, 1);
  if (!p->off || !p->cols || !seen) {
    free(seen);
    bbvfl_partition_free(p);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  }
  size_t c = 0;
  const char *s = spec;
  for (int m = 0; m < M; m++) {
    p->off[m] = c;
    for (;;) {
      char *end;
      errno = 0;
      if (*s < '0' || *s > '9') goto bad;
      unsigned long a = strtoul(s, &end, 10), b = a;
      if (errno) goto bad;
      s = end;
      if (*s == '-') {
        s++;
        if (*s < '0' || *s > '9') goto bad;
        b = strtoul(s, &end, 10);
        if (errno) goto bad;
        s = end;
      }
      if (b < a) {
        free(seen);
        bbvfl_partition_free(p);
        return bbvfl_fail(err, BBVFL_E_ARG, "partition '%s': client %d: range %lu-%lu is backwards", spec, m, a, b);
      }
      for (unsigned long k = a; k <= b; k++) {
        if (k >= d) {
          free(seen);
          bbvfl_partition_free(p);
          return bbvfl_fail(err, BBVFL_E_ARG, "partition '%s': client %d: column %lu does not exist (the data has %zu feature columns, 0..%zu)",
                            spec, m, k, d, d ? d - 1 : 0);
        }
        if (seen[k]) {
          free(seen);
          bbvfl_partition_free(p);
          return bbvfl_fail(err, BBVFL_E_ARG, "partition '%s': column %lu is given to more than one client (or twice)", spec, k);
        }
        seen[k] = 1;
        p->cols[c++] = k;
      }
      if (*s == ',') {
        s++;
        continue;
      }
      if (*s == '/' || *s == '\0') {
        if (*s == '/') s++;
        break;
      }
      goto bad;
    }
  }
  p->off[M] = c;
  free(seen);
  return 0;
bad:
  free(seen);
  bbvfl_partition_free(p);
  return bbvfl_fail(err, BBVFL_E_ARG,
                    "partition '%s': expected column indices or ranges like 0-5,7 per client, clients separated by '/'", spec);
}

int bbvfl_partition_for(const char *spec, size_t d, int M, const char *who, const char *against, bbvfl_partition *p,
                        bbvfl_err *err) {
  if ((spec ? bbvfl_partition_parse(spec, d, p, err) : bbvfl_partition_even(d, M, p, err)) < 0) return -1;
  if (p->M == M) return 0;
  int n = p->M;
  bbvfl_partition_free(p);
  return bbvfl_fail(err, BBVFL_E_ARG, "%s names %d clients but %s %d", who, n, against, M);
}
