/* Build-time generator: the contracts' custom errors, from abi/ JSON files, as C.
 *
 *   gen_errors OUT.h OUT.c ABI.json...
 *
 * Reads every {"type":"error"} entry of the ABI files' "abi" arrays, computes its selector
 * (the first 4 bytes of keccak256 of the canonical signature "Name(type,...)", with the
 * project's own Keccak) and writes
 *   OUT.h  one constant BBVFL_SEL_<Name> per error (its selector as a uint32_t, big-endian
 *          order: 0x08c379a0 is Error(string)), the table type and the lookup;
 *   OUT.c  the table: name, signature, selector, the parameter tuple type and parameter names.
 * The same error declared by several contracts (inherited or shared) appears once. Two errors
 * with one name and different signatures are refused (the constant would be ambiguous), as is
 * anything but a well-formed ABI. Output is sorted by name: it does not depend on the order of
 * the files. Exit 0 on success, 1
 * with a message on stderr otherwise (no partial output: files are written through a
 * temporary name and renamed). */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eth/keccak.h"

typedef struct {
  char *name;
  char *sig;    /* Name(uint64,uint64) */
  char *types;  /* (uint64,uint64) */
  char *pnames; /* round,open */
  uint32_t sel;
} entry;

static entry *E;
static size_t NE_, CAP;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gen_errors: ");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

/* Appends the canonical type of ABI parameter p to buf (tuples from their components). */
static void canon_type(const json_t *p, char *buf, size_t cap, const char *file) {
  const char *t = json_string_value(json_object_get(p, "type"));
  if (!t) die("%s: an error parameter without a type", file);
  if (strncmp(t, "tuple", 5) == 0) {
    const json_t *comps = json_object_get(p, "components");
    if (!json_is_array(comps)) die("%s: tuple parameter without components", file);
    strncat(buf, "(", cap - strlen(buf) - 1);
    size_t i;
    const json_t *c;
    json_array_foreach(comps, i, c) {
      if (i) strncat(buf, ",", cap - strlen(buf) - 1);
      canon_type(c, buf, cap, file);
    }
    strncat(buf, ")", cap - strlen(buf) - 1);
    strncat(buf, t + 5, cap - strlen(buf) - 1); /* array suffixes: "tuple[]" -> "(...)[]" */
  } else {
    strncat(buf, t, cap - strlen(buf) - 1);
  }
  if (strlen(buf) + 1 >= cap) die("%s: a signature too long", file);
}

static int valid_ident(const char *s) {
  if (!s || !*s) return 0;
  for (const char *p = s; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || (p != s && *p >= '0' && *p <= '9')))
      return 0;
  return 1;
}

static void add_error(const json_t *item, const char *file) {
  const char *name = json_string_value(json_object_get(item, "name"));
  if (!valid_ident(name)) die("%s: an error entry with a bad name", file);
  const json_t *inputs = json_object_get(item, "inputs");
  if (inputs && !json_is_array(inputs)) die("%s: error %s: inputs is not an array", file, name);
  char types[512] = "(", pnames[512] = "";
  size_t i;
  const json_t *p;
  json_array_foreach(inputs, i, p) {
    if (i) {
      strncat(types, ",", sizeof types - strlen(types) - 1);
      strncat(pnames, ",", sizeof pnames - strlen(pnames) - 1);
    }
    canon_type(p, types, sizeof types, file);
    const char *pn = json_string_value(json_object_get(p, "name"));
    char fallback[32];
    if (!pn || !*pn) {
      snprintf(fallback, sizeof fallback, "arg%zu", i);
      pn = fallback;
    }
    if (!valid_ident(pn)) die("%s: error %s: a parameter with a bad name", file, name);
    strncat(pnames, pn, sizeof pnames - strlen(pnames) - 1);
  }
  strncat(types, ")", sizeof types - strlen(types) - 1);
  char sig[600];
  snprintf(sig, sizeof sig, "%s%s", name, types);
  uint8_t h[32];
  bbvfl_keccak256(sig, strlen(sig), h);
  uint32_t sel = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
  for (size_t k = 0; k < NE_; k++) {
    if (strcmp(E[k].name, name) != 0) continue;
    if (strcmp(E[k].sig, sig) == 0) return; /* the same error from another contract */
    die("two errors named %s with different signatures (%s): rename one", E[k].sig, sig);
  }
  for (size_t k = 0; k < NE_; k++)
    if (E[k].sel == sel) die("selector collision between %s and %s", E[k].sig, sig);
  if (NE_ == CAP) {
    CAP = CAP ? 2 * CAP : 64;
    E = realloc(E, CAP * sizeof *E);
    if (!E) die("out of memory");
  }
  entry *e = &E[NE_++];
  e->name = strdup(name);
  e->sig = strdup(sig);
  e->types = strdup(types);
  e->pnames = strdup(pnames);
  e->sel = sel;
  if (!e->name || !e->sig || !e->types || !e->pnames) die("out of memory");
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static FILE *open_tmp(const char *path, char *tmp, size_t cap) {
  snprintf(tmp, cap, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) die("cannot write %s: %s", tmp, strerror(errno));
  return f;
}

static void close_rename(FILE *f, const char *tmp, const char *path) {
  if (ferror(f) || fclose(f) != 0) die("writing %s failed", tmp);
  if (rename(tmp, path) != 0) die("cannot rename %s: %s", tmp, strerror(errno));
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: gen_errors OUT.h OUT.c ABI.json...\n");
    return 1;
  }
  for (int a = 3; a < argc; a++) {
    json_error_t je;
    json_t *doc = json_load_file(argv[a], 0, &je);
    if (!doc) die("%s: not JSON (%s)", argv[a], je.text);
    const json_t *abi = json_object_get(doc, "abi");
    if (!json_is_array(abi)) die("%s: no \"abi\" array", argv[a]);
    size_t i;
    const json_t *item;
    json_array_foreach(abi, i, item) {
      const char *t = json_string_value(json_object_get(item, "type"));
      if (t && strcmp(t, "error") == 0) add_error(item, argv[a]);
    }
    json_decref(doc);
  }
  if (NE_ == 0) die("no custom errors in the ABI files");
  qsort(E, NE_, sizeof *E, by_name);

  char tmp[4096];
  FILE *h = open_tmp(argv[1], tmp, sizeof tmp);
  fprintf(h,
          "/* Generated at build time by tools/gen_errors.c from abi/ JSON files: do not edit.\n"
          " *\n"
          " * The contracts' custom errors. BBVFL_SEL_<Name> is the error's 4-byte selector as a\n"
          " * uint32_t (first byte of the revert data in the high byte): compare with\n"
          " * bbvfl_err_revert_sel_is (common/err.h). bbvfl_contract_error_find returns the table\n"
          " * entry of a selector (static storage, never freed) or NULL for one no contract declares;\n"
          " * `types` is the parameter tuple in canonical ABI form (for eth/abi.h's decoder) and\n"
          " * `params` the parameter names, comma-separated (\"\" for none). */\n"
          "#ifndef BBVFL_GEN_ERRORS_H\n#define BBVFL_GEN_ERRORS_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n");
  for (size_t k = 0; k < NE_; k++)
    fprintf(h, "#define BBVFL_SEL_%s 0x%08xu /* %s */\n", E[k].name, (unsigned)E[k].sel, E[k].sig);
  fprintf(h,
          "\ntypedef struct {\n  const char *name;      /* NotActive */\n"
          "  const char *signature; /* NotActive() */\n  uint32_t selector;\n"
          "  const char *types;     /* (uint64,uint64) */\n  const char *params;    /* round,open */\n"
          "} bbvfl_contract_error;\n\n"
          "extern const bbvfl_contract_error bbvfl_contract_errors[];\n"
          "extern const size_t bbvfl_contract_error_count;\n\n"
          "const bbvfl_contract_error *bbvfl_contract_error_find(uint32_t selector);\n\n#endif\n");
  char tmp2[4096];
  snprintf(tmp2, sizeof tmp2, "%s", tmp);
  close_rename(h, tmp2, argv[1]);

  FILE *c = open_tmp(argv[2], tmp, sizeof tmp);
  fprintf(c, "/* Generated at build time by tools/gen_errors.c from abi/ JSON files: do not edit. */\n"
             "#include \"bbvfl_errors.h\"\n\nconst bbvfl_contract_error bbvfl_contract_errors[] = {\n");
  for (size_t k = 0; k < NE_; k++)
    fprintf(c, "    {\"%s\", \"%s\", 0x%08xu, \"%s\", \"%s\"},\n", E[k].name, E[k].sig, (unsigned)E[k].sel,
            E[k].types, E[k].pnames);
  fprintf(c, "};\n\nconst size_t bbvfl_contract_error_count = %zu;\n\n"
             "const bbvfl_contract_error *bbvfl_contract_error_find(uint32_t selector) {\n"
             "  for (size_t i = 0; i < bbvfl_contract_error_count; i++)\n"
             "    if (bbvfl_contract_errors[i].selector == selector) return &bbvfl_contract_errors[i];\n"
             "  return NULL;\n}\n",
          NE_);
  close_rename(c, tmp, argv[2]);
  for (size_t k = 0; k < NE_; k++) {
    free(E[k].name);
    free(E[k].sig);
    free(E[k].types);
    free(E[k].pnames);
  }
  free(E);
  return 0;
}
