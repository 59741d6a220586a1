#include "onchain/statedir.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fsutil.h"
#include "core/ckpt.h"
#include "eth/hex.h"
#include "eth/wallet.h"

/* The client's files in its state dir that must stay private, and what each holds. */
static const struct {
  const char *name, *what;
} private_files[] = {
    {"election-secret.hex", "election secret"},   {"noise.key", "private noise key"},
    {"progress.ckpt", "checkpoint"},              {"party-0.ckpt", "checkpoint"},
    {"party-1.ckpt", "checkpoint"},               {"head-0.ckpt", "checkpoint"},
    {"head-1.ckpt", "checkpoint"},
};
#define NPRIVATE (sizeof private_files / sizeof private_files[0])

/* stat of dir/name: 1 there (*st filled), 0 absent (or dir is no folder), -1 error. */
static int look(const char *dir, const char *name, char *path, size_t cap, struct stat *st, bbvfl_err *err) {
  if (snprintf(path, cap, "%s/%s", dir, name) >= (int)cap)
    return bbvfl_fail(err, BBVFL_E_ARG, "--state-dir %s is too long", dir);
  if (stat(path, st) == 0) return 1;
  if (errno == ENOENT || errno == ENOTDIR) return 0;
  return bbvfl_fail(err, BBVFL_E_IO, "%s: %s", path, strerror(errno));
}

/* The binding at path: its chain id and contract, or -1 BBVFL_E_PARSE. */
static int read_binding(const char *path, uint64_t *chain_id, uint8_t contract[20], bbvfl_err *err) {
  json_error_t je;
  json_t *o = json_load_file(path, 0, &je);
  if (!o) return bbvfl_fail(err, BBVFL_E_PARSE, "%s is not a session binding: %s", path, je.text);
  json_t *ci = json_object_get(o, "chain_id");
  const char *ct = json_string_value(json_object_get(o, "contract"));
  int rc = 0;
  if (!json_is_integer(ci) || json_integer_value(ci) <= 0 || !ct)
    rc = bbvfl_fail(err, BBVFL_E_PARSE, "%s is not a session binding: it needs \"chain_id\" and \"contract\"", path);
  else if (bbvfl_hex_decode_fixed(ct, contract, 20, err) < 0)
    rc = bbvfl_wrap(err, "%s: \"contract\"", path);
  else
    *chain_id = (uint64_t)json_integer_value(ci);
  json_decref(o);
  return rc;
}

/* progress.ckpt's aggregator against contract (path: the file, which exists). */
static int check_progress(const char *dir, const char *path, const uint8_t contract[20], bbvfl_err *err) {
  bbvfl_ckpt k = {0};
  uint8_t addr[20];
  if (bbvfl_ckpt_open(&k, path, BBVFL_STATEDIR_PROGRESS_KIND, err) < 0) return -1;
  int rc = bbvfl_ckpt_get_bytes(&k, addr, 20, err);
  bbvfl_ckpt_free(&k);
  if (rc) return bbvfl_wrap(err, "%s", path);
  if (memcmp(addr, contract, 20)) {
    char a[43];
    bbvfl_addr_checksum(addr, a);
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "%s belongs to another session (the aggregator %s): use a fresh --state-dir for this session, "
                      "or delete %s",
                      path, a, dir);
  }
  return 0;
}

int bbvfl_statedir_check(const char *dir, uint64_t chain_id, const uint8_t contract[20], bbvfl_err *err) {
  char path[1200];
  struct stat st;
  int bound = look(dir, BBVFL_STATEDIR_BINDING, path, sizeof path, &st, err);
  if (bound < 0) return -1;
  if (bound) {
    uint64_t bchain = 0;
    uint8_t bcontract[20];
    if (read_binding(path, &bchain, bcontract, err) < 0) return -1;
    if (bchain != chain_id || memcmp(bcontract, contract, 20)) {
      char have[43], want[43];
      bbvfl_addr_checksum(bcontract, have);
      bbvfl_addr_checksum(contract, want);
      return bbvfl_fail(err, BBVFL_E_STATE,
                        "--state-dir %s belongs to another session (chain id %llu, aggregator %s), not to this one "
                        "(chain id %llu, aggregator %s): its noise key and election secret must never serve a second "
                        "session; use a fresh --state-dir for this session, or delete %s",
                        dir, (unsigned long long)bchain, have, (unsigned long long)chain_id, want, dir);
    }
  }
  for (size_t i = 0; i < NPRIVATE; i++) {
    int there = look(dir, private_files[i].name, path, sizeof path, &st, err);
    if (there < 0) return -1;
    if (!there) continue;
    if (!bound)
      return bbvfl_fail(err, BBVFL_E_STATE,
                        "--state-dir %s holds %s but no %s, so which session it belongs to cannot be told (made by an "
                        "older bbvfl, or copied): use a fresh --state-dir for this session, or delete %s",
                        dir, private_files[i].name, BBVFL_STATEDIR_BINDING, dir);
    if (st.st_mode & 077)
      return bbvfl_fail(err, BBVFL_E_STATE,
                        "%s (the client's %s) has mode %04o, open to group or others; run chmod 600 %s",
                        path, private_files[i].what, (unsigned)(st.st_mode & 07777), path);
    if (!strcmp(private_files[i].name, "progress.ckpt") && check_progress(dir, path, contract, err) < 0) return -1;
  }
  return 0;
}

int bbvfl_statedir_bind(const char *dir, uint64_t chain_id, const uint8_t contract[20], bbvfl_err *err) {
  char path[1200], addr[43], text[160];
  struct stat st;
  int there = look(dir, BBVFL_STATEDIR_BINDING, path, sizeof path, &st, err);
  if (there != 0) return there < 0 ? -1 : 0;
  bbvfl_addr_checksum(contract, addr);
  int n = snprintf(text, sizeof text, "{\"chain_id\": %llu, \"contract\": \"%s\"}\n", (unsigned long long)chain_id, addr);
  return bbvfl_write_file_atomic(path, text, (size_t)n, 0600, err);
}
