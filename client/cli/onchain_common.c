#include "cli/onchain_common.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/fsutil.h"

void session_flags_defaults(session_flags *f) {
  memset(f, 0, sizeof *f);
  train_common_defaults(&f->tc);
  f->clients = 5;
  f->b = 16;
  f->beta = 0.2;
  f->mechanism = "pbm";
  f->aggregation = "lane";
  afe_flags_defaults(&f->afe);
}

size_t session_flags_opts(session_flags *f, cli_opt *o) {
  size_t n = train_common_opts(&f->tc, o);
  o[n++] = (cli_opt){"clients", OPT_INT, &f->clients, "M", "number of clients (default 5)"};
  o[n++] = (cli_opt){"b", OPT_INT, &f->b, "N", "PBM trials per coordinate, 1..255 (default 16)"};
  o[n++] = (cli_opt){"beta", OPT_DBL, &f->beta, "X", "PBM bias in (0, 0.5) (default 0.2)"};
  o[n++] = (cli_opt){"mechanism", OPT_STR, &f->mechanism, "NAME", "pbm (the only one the contract sums)"};
  o[n++] = (cli_opt){"seed", OPT_STR, &f->seed, "N", "session seed: split, schedule, model init (default: random); the noise stays private unless --reproducible-noise"};
  o[n++] = (cli_opt){"aggregation", OPT_STR, &f->aggregation, "MODE",
                     "lane (default: each submission adds into packed storage lanes), hashed (each submission "
                     "stores its keccak; the active client re-supplies the payloads, the contract checks and sums "
                     "them: cheaper gas, pipelining), packed (hashed with values at ceil(log2(b+1)) bits) or "
                     "optimistic (packed; the active client posts the sum alone, any client disputes a wrong one)"};
  o[n++] = (cli_opt){"round-rows", OPT_INT, &f->round_rows, "N",
                     "--model lr --batch 0: training rows per round, the full batch spread over ceil(N_train/N) "
                     "rounds (default 0: as many as one submission carries)"};
  n += afe_flags_opts(&f->afe, o + n);
  return n;
}

static char cfg_strings[16][1024];

int session_flags_config(session_flags *f, int argc, char **argv, bbvfl_err *err) {
  const char *path = NULL;
  for (int i = 0; i < argc; i++) {
    if (!strcmp(argv[i], "--config") && i + 1 < argc) path = argv[i + 1];
    if (!strncmp(argv[i], "--config=", 9)) path = argv[i] + 9;
  }
  if (!path) return 0;
  char *text;
  size_t len;
  if (bbvfl_read_file(path, 1 << 20, &text, &len, err) < 0) return bbvfl_wrap(err, "--config");
  json_error_t je;
  json_t *o = json_loadb(text, len, 0, &je);
  free(text);
  if (!json_is_object(o)) {
    json_decref(o);
    return bbvfl_fail(err, BBVFL_E_PARSE, "--config %s: not a JSON object (line %d: %s)", path, je.line, je.text);
  }
  const char *key;
  json_t *v;
  int ns = 0, rc = 0;
  json_object_foreach(o, key, v) {
    int *ip = NULL;
    double *dp = NULL;
    const char **sp = NULL;
    if (!strcmp(key, "clients")) ip = &f->clients;
    else if (!strcmp(key, "b")) ip = &f->b;
    else if (!strcmp(key, "window")) ip = &f->tc.window, f->window_given = 1;
    else if (!strcmp(key, "staleness")) ip = &f->tc.staleness, f->staleness_given = 1;
    else if (!strcmp(key, "eval-rows-per-round")) ip = &f->tc.eval_rows, f->eval_given = 1;
    else if (!strcmp(key, "aggregation")) sp = &f->aggregation;
    else if (!strcmp(key, "epochs")) ip = &f->tc.epochs;
    else if (!strcmp(key, "batch")) ip = &f->tc.batch;
    else if (!strcmp(key, "P")) ip = &f->tc.P;
    else if (!strcmp(key, "beta")) dp = &f->beta;
    else if (!strcmp(key, "lr")) dp = &f->tc.lr;
    else if (!strcmp(key, "lr-decay")) dp = &f->tc.lr_decay;
    else if (!strcmp(key, "momentum")) dp = &f->tc.momentum;
    else if (!strcmp(key, "mechanism")) sp = &f->mechanism;
    else if (!strcmp(key, "data")) sp = &f->tc.data;
    else if (!strcmp(key, "label")) sp = &f->tc.label;
    else if (!strcmp(key, "hidden")) sp = &f->tc.hidden;
    else if (!strcmp(key, "optimizer")) sp = &f->tc.optimizer;
    else if (!strcmp(key, "seed")) sp = &f->seed;
    else if (!strcmp(key, "reproducible-noise")) {
      if (!json_is_boolean(v)) {
        rc = bbvfl_fail(err, BBVFL_E_ARG, "--config %s: \"reproducible-noise\" must be true or false", path);
        break;
      }
      f->tc.reproducible_noise = json_is_true(v);
      continue;
    }
    else if (!strcmp(key, "rpc") || !strcmp(key, "out")) continue;
    else {
      rc = bbvfl_fail(err, BBVFL_E_ARG, "--config %s: unknown key \"%s\"", path, key);
      break;
    }
    if (ip) {
      if (!json_is_integer(v)) {
        rc = bbvfl_fail(err, BBVFL_E_ARG, "--config %s: \"%s\" must be an integer", path, key);
        break;
      }
      *ip = (int)json_integer_value(v);
    } else if (dp) {
      if (!json_is_number(v)) {
        rc = bbvfl_fail(err, BBVFL_E_ARG, "--config %s: \"%s\" must be a number", path, key);
        break;
      }
      *dp = json_number_value(v);
    } else {
      char tmp[64];
      const char *sv = NULL;
      if (json_is_string(v)) sv = json_string_value(v);
      else if (json_is_integer(v)) {
        snprintf(tmp, sizeof tmp, "%lld", (long long)json_integer_value(v));
        sv = tmp;
      }
      if (!sv || strlen(sv) >= sizeof cfg_strings[0] || ns == 16) {
        rc = bbvfl_fail(err, BBVFL_E_ARG, "--config %s: \"%s\" must be a (short) string", path, key);
        break;
      }
      strcpy(cfg_strings[ns], sv);
      *sp = cfg_strings[ns++];
    }
  }
  json_decref(o);
  return rc;
}

static int names_flag(const char *arg, const char *flag) {
  size_t n = strlen(flag);
  return !strncmp(arg, flag, n) && (arg[n] == 0 || arg[n] == '=');
}

void session_flags_given(session_flags *f, int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    f->window_given |= names_flag(argv[i], "--window") || names_flag(argv[i], "--round-rows");
    f->eval_given |= names_flag(argv[i], "--eval-rows-per-round");
    f->staleness_given |= names_flag(argv[i], "--staleness");
  }
}

int session_flags_apply(const session_flags *f, bbvfl_session *s, bbvfl_dataset *ds, bbvfl_err *err) {
  memset(ds, 0, sizeof *ds);
  bbvfl_offchain_cfg *c = &s->train;
  bbvfl_offchain_defaults(c);
  c->M = f->clients;
  if (bbvfl_mech_parse(f->mechanism, &c->mech.kind) != 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "--mechanism '%s' is not a mechanism; on chain only pbm is supported",
                      f->mechanism);
  c->mech.b = f->b;
  c->mech.beta = f->beta;
  if (train_common_apply(&f->tc, c, err) < 0) return -1;
  if (afe_flags_apply(&f->afe, &c->afe, &c->mech.clip, err) < 0) return -1;
  if (f->round_rows < 0 || (f->round_rows > 0 && (c->model != BBVFL_MODEL_LR || c->B != 0)))
    return bbvfl_fail(err, BBVFL_E_ARG, "--round-rows %d: a positive row count, for --model lr --batch 0 only",
                      f->round_rows);
  s->cparams.window = (uint32_t)f->round_rows;
  s->window_insist = f->window_given;
  s->eval_insist = f->eval_given;
  s->staleness_auto = !f->staleness_given;
  if (bbvfl_session_set_aggregation(s, f->aggregation, err) < 0) return -1;
  if (bbvfl_session_check_setup(s, err) < 0) return -1;
  if (f->seed) {
    if (bbvfl_session_parse_seed(f->seed, &c->seed, err) < 0) return -1;
  } else {
    if (getrandom(&c->seed, sizeof c->seed, 0) != (ssize_t)sizeof c->seed)
      return bbvfl_fail(err, BBVFL_E_CRYPTO, "getrandom failed");
    c->seed &= INT64_MAX;
  }
  const char *data = f->tc.data ? f->tc.data : train_default_data();
  if (strlen(data) >= sizeof s->data) return bbvfl_fail(err, BBVFL_E_ARG, "--data path too long");
  strcpy(s->data, data);
  snprintf(s->label, sizeof s->label, "%s", f->tc.label ? f->tc.label : "");
  if (train_common_load(&f->tc, ds, err) < 0) return -1;
  if (bbvfl_session_check_table(s, ds, err) < 0) {
    bbvfl_dataset_free(ds);
    return -1;
  }
  return 0;
}

int rpc_flag_join(int argc, char **argv, char *buf, size_t n, const char **rpc, bbvfl_err *err) {
  size_t used = 0;
  int count = 0;
  buf[0] = 0;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (!strcmp(argv[i], "--rpc") && i + 1 < argc) v = argv[++i];
    else if (!strncmp(argv[i], "--rpc=", 6)) v = argv[i] + 6;
    if (!v) continue;
    size_t l = strlen(v);
    if (used + l + 2 > n) return bbvfl_fail(err, BBVFL_E_ARG, "--rpc: the endpoints given are too long together");
    if (count++) buf[used++] = ',';
    memcpy(buf + used, v, l + 1);
    used += l;
  }
  if (count > 1) *rpc = buf;
  return 0;
}

size_t keystore_opts(bbvfl_key_source *src, cli_opt *o) {
  size_t n = 0;
  o[n++] = (cli_opt){"keystore", OPT_STR, &src->keystore, "FILE",
                     "the key from an encrypted Web3 Secret Storage v3 file (geth, cast wallet new/import), with "
                     "--password-file or --password-env"};
  o[n++] = (cli_opt){"password-file", OPT_STR, &src->password_file, "FILE",
                     "--keystore's password: the first line of FILE (mode 0600)"};
  o[n++] = (cli_opt){"password-env", OPT_STR, &src->password_env, "VAR",
                     "--keystore's password: the value of environment variable VAR"};
  return n;
}
