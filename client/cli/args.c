#include "cli/args.h"

#include "common/fsutil.h"

#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const cli_opt *find_opt(const cli_spec *s, const char *name, size_t len) {
  for (size_t i = 0; i < s->nopts; i++)
    if (strlen(s->opts[i].name) == len && strncmp(s->opts[i].name, name, len) == 0)
      return &s->opts[i];
  return NULL;
}

static int set_value(const cli_spec *s, const cli_opt *o, const char *v, bbvfl_err *err) {
  char *end = NULL;
  errno = 0;
  switch (o->kind) {
    case OPT_STR: *(const char **)o->dst = v; return 0;
    case OPT_INT: {
      long x = strtol(v, &end, 10);
      if (errno || end == v || *end || x < -2147483647L || x > 2147483647L)
        return bbvfl_fail(err, BBVFL_E_ARG, "%s: --%s needs a whole number, got '%s'", s->command,
                          o->name, v);
      *(int *)o->dst = (int)x;
      return 0;
    }
    case OPT_U64: {
      if (*v == '-')
        return bbvfl_fail(err, BBVFL_E_ARG, "%s: --%s needs a non-negative number, got '%s'",
                          s->command, o->name, v);
      unsigned long long x = strtoull(v, &end, 0);
      if (errno || end == v || *end)
        return bbvfl_fail(err, BBVFL_E_ARG, "%s: --%s needs a non-negative number, got '%s'",
                          s->command, o->name, v);
      *(unsigned long long *)o->dst = x;
      return 0;
    }
    case OPT_DBL: {
      double x = strtod(v, &end);
      if (errno || end == v || *end || x != x)
        return bbvfl_fail(err, BBVFL_E_ARG, "%s: --%s needs a number, got '%s'", s->command,
                          o->name, v);
      *(double *)o->dst = x;
      return 0;
    }
    case OPT_FLAG: *(int *)o->dst = 1; return 0;
  }
  return bbvfl_fail(err, BBVFL_E_INTERNAL, "bad option kind");
}

int cli_parse(const cli_spec *s, int argc, char **argv, const char **pos, size_t maxpos,
              size_t *npos, bbvfl_err *err) {
  size_t np = 0;
  int only_pos = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!only_pos && strcmp(a, "--") == 0) {
      only_pos = 1;
      continue;
    }
    if (!only_pos && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
      cli_print_help(s);
      return 1;
    }
    if (!only_pos && strncmp(a, "--", 2) == 0) {
      const char *name = a + 2;
      const char *eq = strchr(name, '=');
      size_t len = eq ? (size_t)(eq - name) : strlen(name);
      const cli_opt *o = find_opt(s, name, len);
      if (!o)
        return bbvfl_fail(err, BBVFL_E_ARG, "%s: unknown option --%.*s (see %s --help)",
                          s->command, (int)len, name, s->command);
      if (o->kind == OPT_FLAG) {
        if (eq)
          return bbvfl_fail(err, BBVFL_E_ARG, "%s: --%s takes no value", s->command, o->name);
        *(int *)o->dst = 1;
        continue;
      }
      const char *v = eq ? eq + 1 : NULL;
      if (!v) {
        if (i + 1 >= argc)
          return bbvfl_fail(err, BBVFL_E_ARG, "%s: --%s needs a value (%s)", s->command, o->name,
                            o->metavar ? o->metavar : "VALUE");
        v = argv[++i];
      }
      if (set_value(s, o, v, err) != 0) return -1;
      continue;
    }
    if (np >= maxpos)
      return bbvfl_fail(err, BBVFL_E_ARG, "%s: unexpected argument '%s' (see %s --help)",
                        s->command, a, s->command);
    pos[np++] = a;
  }
  if (npos) *npos = np;
  return 0;
}

void cli_print_help(const cli_spec *s) {
  printf("%s - %s\n\nUsage: %s %s\n", s->command, s->summary, s->command,
         s->usage ? s->usage : "[OPTIONS]");
  if (s->nopts) printf("\nOptions:\n");
  for (size_t i = 0; i < s->nopts; i++) {
    char left[64];
    if (s->opts[i].kind == OPT_FLAG)
      snprintf(left, sizeof left, "--%s", s->opts[i].name);
    else
      snprintf(left, sizeof left, "--%s %s", s->opts[i].name,
               s->opts[i].metavar ? s->opts[i].metavar : "VALUE");
    printf("  %-26s %s\n", left, s->opts[i].help ? s->opts[i].help : "");
  }
  printf("  %-26s %s\n", "--help", "show this help");
  if (s->details) printf("\n%s\n", s->details);
}

int cli_start(const cli_spec *spec, int argc, char **argv, int *status) {
  bbvfl_err err = {0};
  size_t npos = 0;
  int rc = cli_parse(spec, argc, argv, NULL, 0, &npos, &err);
  if (rc == 0) return 0;
  *status = rc == 1 ? 0 : cli_report(&err);
  return 1;
}

int cli_start_verb(const cli_spec *spec, int argc, char **argv, const char **verb, const char *need, int *status) {
  bbvfl_err err = {0};
  size_t npos = 0;
  int rc = cli_parse(spec, argc, argv, verb, 1, &npos, &err);
  if (rc != 0) {
    *status = rc == 1 ? 0 : cli_report(&err);
    return 1;
  }
  if (npos != 1) {
    fprintf(stderr, "%s: %s (see %s --help)\n", spec->command, need, spec->command);
    *status = 2;
    return 1;
  }
  return 0;
}

int cli_parse_u64(const char *text, const char *flag, uint64_t *out, bbvfl_err *err) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text || *end || text[0] == '-')
    return bbvfl_fail(err, BBVFL_E_ARG, "%s '%s': expected a non-negative number", flag, text);
  *out = v;
  return 0;
}

int cli_print_json(json_t *o, size_t extra) {
  char *s = o ? json_dumps(o, JSON_COMPACT | extra) : NULL;
  json_decref(o);
  if (!s) return -1;
  printf("%s\n", s);
  free(s);
  return 0;
}

int cli_report(const bbvfl_err *err) {
  fprintf(stderr, "bbvfl: error: %s\n", err->msg[0] ? err->msg : "unknown error");
  return bbvfl_exit_code(err->code);
}

int cli_isatty_err(void) { return isatty(STDERR_FILENO); }

int cli_mkdirs_tracked(const char *path, cli_made_dirs *m, bbvfl_err *err) {
  memset(m, 0, sizeof *m);
  if (snprintf(m->path, sizeof m->path, "%s", path) >= (int)sizeof m->path)
    return bbvfl_fail(err, BBVFL_E_ARG, "path too long: %.80s...", path);
  /* the outermost missing folder: walk up from path while the parent does not exist */
  char cur[sizeof m->path];
  snprintf(cur, sizeof cur, "%s", path);
  struct stat st;
  while (cur[0] && stat(cur, &st) != 0 && errno == ENOENT) {
    snprintf(m->top, sizeof m->top, "%s", cur);
    char *slash = strrchr(cur, '/');
    if (!slash) break;
    while (slash > cur && slash[-1] == '/') slash--;
    if (slash == cur) break;
    *slash = 0;
  }
  return bbvfl_mkdirs(path, 0700, err);
}

void cli_undo_dirs(const cli_made_dirs *m) {
  if (!m->top[0]) return;
  char cur[sizeof m->path];
  snprintf(cur, sizeof cur, "%s", m->path);
  size_t top_len = strlen(m->top);
  while (strlen(cur) >= top_len) {
    if (rmdir(cur) != 0) return;
    if (strlen(cur) == top_len) return;
    char *slash = strrchr(cur, '/');
    if (!slash) return;
    *slash = 0;
  }
}
