/* A small, uniform flag parser for every subcommand: --name VALUE, --name=VALUE, boolean
 * --name, and --help. Unknown flags and bad values are errors that name the flag. */
#ifndef BBVFL_CLI_ARGS_H
#define BBVFL_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef enum { OPT_FLAG, OPT_STR, OPT_INT, OPT_DBL, OPT_U64 } cli_optkind;

typedef struct {
  const char *name;    /* without the leading "--" */
  cli_optkind kind;
  void *dst;           /* int* (FLAG, INT), const char** (STR), double* (DBL), unsigned long long* */
  const char *metavar; /* e.g. "N", "FILE"; NULL for flags */
  const char *help;
} cli_opt;

typedef struct {
  const char *command; /* "bbvfl devnet up" */
  const char *summary; /* one line */
  const char *usage;   /* positional part, e.g. "[OPTIONS]" */
  const char *details; /* optional paragraph printed after the options */
  const cli_opt *opts;
  size_t nopts;
} cli_spec;

/* Parses argv[0..argc) (argv[0] is the first argument after the subcommand name).
 * Positional arguments are collected into pos (at most maxpos, else an error).
 * Returns 0 on success, 1 when --help was printed (caller exits 0), -1 on error (err filled). */
int cli_parse(const cli_spec *spec, int argc, char **argv, const char **pos, size_t maxpos,
              size_t *npos, bbvfl_err *err);

void cli_print_help(const cli_spec *spec);

/* The start of a command: cli_parse without positional arguments. Returns 1 when the command is
 * to stop at once with exit status *status (--help printed: 0; a refused flag reported on stderr:
 * its code), 0 to carry on. */
int cli_start(const cli_spec *spec, int argc, char **argv, int *status);
/* The same for a command taking exactly one positional argument (a verb such as `up`): without
 * one, "<command>: <need> (see <command> --help)" goes to stderr and *status is 2. */
int cli_start_verb(const cli_spec *spec, int argc, char **argv, const char **verb, const char *need, int *status);

/* Prints o as one compact JSON line on stdout (extra: more jansson flags, e.g.
 * JSON_REAL_PRECISION(8)) and releases it (json_decref). Returns 0, or -1 when o is NULL or out
 * of memory (nothing printed). */
struct json_t;
int cli_print_json(struct json_t *o, size_t extra);

/* A non-negative decimal 64-bit number given to flag (e.g. "--seed"); a clear error otherwise. */
int cli_parse_u64(const char *text, const char *flag, uint64_t *out, bbvfl_err *err);

/* Prints "bbvfl: error: <msg>" to stderr and returns the exit code for err. */
int cli_report(const bbvfl_err *err);

/* 1 when stdout/stderr is a terminal (progress bars only then). */
int cli_isatty_err(void);

/* The folders a command creates for its output, so that a command that fails before writing
 * anything can remove exactly what it created (and nothing that was there before). */
typedef struct {
  char path[1300];  /* the folder asked for */
  char top[1300];   /* the outermost folder of path that did not exist; empty: none created */
} cli_made_dirs;

/* mkdir -p path (mode 0700 for new folders), remembering in *m the outermost folder it created.
 * Returns 0, or -1 with err filled. */
int cli_mkdirs_tracked(const char *path, cli_made_dirs *m, bbvfl_err *err);

/* Removes the folders cli_mkdirs_tracked created, innermost first, each only if it is still
 * empty (rmdir); whatever a later step wrote into them stays. */
void cli_undo_dirs(const cli_made_dirs *m);

#endif
