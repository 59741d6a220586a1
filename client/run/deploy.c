/* run/deploy.h: a session's deployment, its session file, and the clients' throwaway keys. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "eth/wallet.h"
#include "run/deploy.h"

int bbvfl_deploy_check_out(const char *out, const char *flag, bbvfl_err *err) {
  char dir[4096];
  const char *slash = strrchr(out, '/');
  if (!*out) return bbvfl_fail(err, BBVFL_E_ARG, "%s: an empty file name", flag);
  if (strlen(out) >= sizeof dir) return bbvfl_fail(err, BBVFL_E_ARG, "%s: the path is too long", flag);
  if (!slash) strcpy(dir, ".");
  else if (slash == out) strcpy(dir, "/");
  else {
    memcpy(dir, out, (size_t)(slash - out));
    dir[slash - out] = 0;
  }
  struct stat st;
  if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
    return bbvfl_fail(err, BBVFL_E_ARG, "%s %s: the folder %s does not exist (nothing was deployed)", flag, out, dir);
  if (access(dir, W_OK | X_OK) < 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "%s %s: the folder %s is not writable (nothing was deployed)", flag, out, dir);
  if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
    return bbvfl_fail(err, BBVFL_E_ARG, "%s %s is a folder, not a file (nothing was deployed)", flag, out);
  return 0;
}

int bbvfl_deployer_key(bbvfl_rpc *rpc, const bbvfl_key_source *src, const char *flag, bbvfl_key *k, bbvfl_err *err) {
  if (src && (bbvfl_key_source_given(src) || src->password_file || src->password_env)) {
    if (bbvfl_key_source_load(src, k, err) == 0) return 0;
    return src->keystore ? -1 : bbvfl_wrap(err, "%s", flag); /* a keystore's errors name --keystore already */
  }
  return bbvfl_session_devnet_key(rpc, flag, k, err);
}

int bbvfl_deploy_key_path(char *buf, size_t n, const char *dir, int m, bbvfl_err *err) {
  if (snprintf(buf, n, "%s/client-%d.key", dir, m) >= (int)n)
    return bbvfl_fail(err, BBVFL_E_ARG, "the key folder's path is too long");
  return 0;
}

int bbvfl_deploy_make_keys(const char *dir, int n, uint8_t (*addrs)[20], bbvfl_err *err) {
  if (n < 1 || n > 64) return bbvfl_fail(err, BBVFL_E_ARG, "1..64 client keys, got %d", n);
  for (int m = 0; m < n; m++) {
    char path[4200];
    bbvfl_key k;
    memset(&k, 0, sizeof k);
    if (bbvfl_deploy_key_path(path, sizeof path, dir, m, err) < 0 || bbvfl_key_generate(&k, err) < 0 ||
        bbvfl_key_save_file(path, &k, err) < 0) {
      bbvfl_key_wipe(&k);
      return -1;
    }
    memcpy(addrs[m], k.addr, 20);
    bbvfl_key_wipe(&k);
  }
  return 0;
}

int bbvfl_deploy_fund_addrs(bbvfl_sender *snd, const uint8_t (*addrs)[20], int n, double block_time, bbvfl_err *err) {
  bbvfl_u256 value, eth = bbvfl_u256_from_u64(1000000000000000000ULL);
  bbvfl_u256_mul_u64(&value, &eth, 10);
  size_t bad;
  if (bbvfl_sender_fund(snd, addrs, (size_t)n, &value, 60 + 4 * block_time, &bad, err) < 0)
    return bbvfl_wrap(err, "funding client %zu", bad);
  return 0;
}

int bbvfl_deploy_run(const bbvfl_deploy_req *r, bbvfl_session *s, bbvfl_err *err) {
  const char *out_flag = r->out_flag ? r->out_flag : "--out";
  if (!r->rpc_url || !r->ds || !r->out) return bbvfl_fail(err, BBVFL_E_ARG, "a deployment needs a node, a table and a session file");
  if (r->client_keys_dir && (r->nkeys < 1 || r->nkeys > 64))
    return bbvfl_fail(err, BBVFL_E_ARG, "1..64 client keys, got %d", r->nkeys);
  if (strlen(r->rpc_url) >= sizeof s->rpc_url) return bbvfl_fail(err, BBVFL_E_ARG, "the node's URL is too long");
  /* the session file is the only record of the contracts: refuse before any transaction when it
     cannot be written (a missing folder, no permission, a folder in its place) */
  if (bbvfl_deploy_check_out(r->out, out_flag, err) < 0) return -1;
  snprintf(s->rpc_url, sizeof s->rpc_url, "%s", r->rpc_url);
  bbvfl_rpc *rpc = bbvfl_rpc_new(r->rpc_url, NULL, err);
  if (!rpc) return -1;
  bbvfl_key k;
  memset(&k, 0, sizeof k);
  bbvfl_sender *snd = NULL;
  int ok = bbvfl_deployer_key(rpc, r->key, r->key_flag ? r->key_flag : "--deployer-key", &k, err);
  if (!ok) {
    snd = bbvfl_sender_new(rpc, &k, 0, err); /* borrows the key */
    ok = snd ? 0 : -1;
  }
  if (!ok && r->max_fee_gwei > 0) {
    bbvfl_u256 cap = bbvfl_u256_from_u64((uint64_t)(r->max_fee_gwei * 1e9 + 0.5));
    bbvfl_sender_set_max_fee(snd, &cap);
  }
  /* who may register, before anything is sent: the throwaway keys, the given members, or anyone */
  s->open_registration = r->open_registration;
  s->nmembers = 0;
  if (!ok && r->open_registration && (r->members || r->client_keys_dir))
    ok = bbvfl_fail(err, BBVFL_E_ARG, "--open-registration takes no member list (nothing was deployed)");
  if (!ok && r->members && r->client_keys_dir)
    ok = bbvfl_fail(err, BBVFL_E_ARG, "--members and generated client keys are two member lists: give one (nothing was deployed)");
  if (!ok && r->members) ok = bbvfl_session_parse_members(s, r->members, "--members", err);
  if (!ok && r->client_keys_dir) ok = bbvfl_mkdirs(r->client_keys_dir, 0700, err);
  if (!ok && r->client_keys_dir) {
    ok = bbvfl_deploy_make_keys(r->client_keys_dir, r->nkeys, s->members, err);
    if (!ok) s->nmembers = r->nkeys;
  }
  if (!ok) ok = bbvfl_session_deploy(rpc, snd, r->ds, s, err);
  if (!ok) ok = bbvfl_session_save(s, r->out, err);
  if (!ok && r->client_keys_dir)
    ok = bbvfl_deploy_fund_addrs(snd, (const uint8_t(*)[20])s->members, r->nkeys, s->block_time_s, err);
  bbvfl_sender_free(snd);
  bbvfl_key_wipe(&k);
  bbvfl_rpc_free(rpc);
  return ok;
}
