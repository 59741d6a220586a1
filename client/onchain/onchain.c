#include "onchain/onchain_int.h"
#include "onchain/statedir.h"

/* ------------------------------------------------------------------ registration and election */

/* A 32-byte secret kept as hex in the state dir: 1 read into out, 0 no such file, -1 error (a
   file that does not decode: err names the path and `what`). The text read is wiped. */
static int secret_read(const char *p, const char *what, uint8_t out[32], bbvfl_err *err) {
  if (access(p, F_OK) != 0) return 0;
  char *text = NULL;
  size_t len = 0;
  if (bbvfl_read_file(p, 4096, &text, &len, err) < 0) return -1;
  while (len && (text[len - 1] == '\n' || text[len - 1] == ' ')) text[--len] = 0;
  int rc = bbvfl_hex_decode_fixed(text, out, 32, err);
  bbvfl_secret_wipe(text, len);
  free(text);
  return rc < 0 ? bbvfl_wrap(err, "%s%s", p, what) : 1;
}

/* Writes s as one hex line, mode 0600, atomically; the hex is wiped. 0 or -1. */
static int secret_write(const char *p, const uint8_t s[32], bbvfl_err *err) {
  char hex[70];
  bbvfl_hex_encode(s, 32, hex);
  size_t l = strlen(hex);
  hex[l] = '\n';
  int rc = bbvfl_write_file_atomic(p, hex, l + 1, 0600, err);
  bbvfl_secret_wipe(hex, sizeof hex);
  return rc;
}

static int bbvfl_oc_load_or_make_secret(cl *c, uint8_t secret[32], bbvfl_err *err) {
  char p[1100];
  bbvfl_oc_path_in(c, p, sizeof p, "election-secret.hex");
  int k = secret_read(p, "", secret, err);
  if (k != 0) return k < 0 ? -1 : 0;
  if (bbvfl_rng_secret(secret, 32, err) < 0) return -1;
  return secret_write(p, secret, err);
}

/* The private noise key (c->noise_key): every DP draw of this client (its PBM and Gaussian releases,
   DP-SGD, DP-PCA, the DP scaling, the label randomized response) comes from streams of this key,
   which only this client holds. Kept in its state dir so that a restart draws the same scaling,
   encoder and randomized labels again instead of fresh ones (a second independent draw would
   compose: twice the epsilon, unreported); the PBM and DP-SGD generators' positions are in the
   party checkpoint (same state dir, mode 0600). Nothing here is derived from the session, but the
   key serves one session only: the state dir is bound to it (onchain/statedir.h, checked before
   this runs), so a second session never reuses it. */
static int bbvfl_oc_noise_key_load(cl *c, bbvfl_err *err) {
  char p[1100];
  bbvfl_oc_path_in(c, p, sizeof p, "noise.key");
  int k = secret_read(p, " (the client's private noise key)", c->noise_key, err);
  if (k != 0) return k < 0 ? -1 : 0;
  if (bbvfl_rng_secret(c->noise_key, sizeof c->noise_key, err) < 0) return -1;
  c->noise_key_new = 1;
  return 0;
}

static int bbvfl_oc_noise_key_save(cl *c, bbvfl_err *err) {
  if (!c->noise_key_new) return 0;
  char p[1100];
  bbvfl_oc_path_in(c, p, sizeof p, "noise.key");
  int rc = secret_write(p, c->noise_key, err);
  if (rc == 0) c->noise_key_new = 0;
  return rc;
}

static int bbvfl_oc_election(cl *c, bbvfl_err *err) {
  const bbvfl_key *k = c->cfg->key;
  bbvfl_client_info ci;
  uint8_t *cd = NULL;
  size_t len = 0;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  bbvfl_phase ph;
  if (!ci.registered) {
    if (bbvfl_aggc_phase(&c->agg, &ph, err) < 0) return -1;
    if (ph != BBVFL_PHASE_REGISTRATION)
      return bbvfl_fail(err, BBVFL_E_STATE, "registration is closed: the session already has its %u clients",
                        (unsigned)c->cp.cfg.clients);
    if ((c->cfg->label_rows ? bbvfl_cenc_register_label_holder(k->pub, &cd, &len, err)
                            : bbvfl_cenc_register(k->pub, &cd, &len, err)) < 0)
      return -1;
    int rc = bbvfl_oc_tx(c, cd, len, 300000, 0, NULL, c->cfg->label_rows ? "registerLabelHolder()" : "register()", err);
    free(cd);
    if (rc < 0) return -1;
    bbvfl_oc_log(c, "registered");
  }
  if (bbvfl_oc_wait_phase(c, BBVFL_PHASE_COMMIT, &ph, "waiting for every client to register", err) < 0) return -1;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  c->res->index = ci.index;
  uint8_t secret[32];
  if (bbvfl_oc_load_or_make_secret(c, secret, err) < 0) return -1;
  if (!ci.committed && ph == BBVFL_PHASE_COMMIT) {
    uint8_t com[32];
    bbvfl_election_commitment(secret, c->me, c->sess->contract, c->sess->chain_id, com);
    if (bbvfl_cenc_commit(com, &cd, &len, err) < 0) return -1;
    int rc = bbvfl_oc_tx(c, cd, len, 120000, 0, NULL, "commit()", err);
    free(cd);
    if (rc < 0) return -1;
    ci.committed = 1;
  }
  if (bbvfl_oc_wait_phase(c, BBVFL_PHASE_REVEAL, &ph, "waiting for every client to commit", err) < 0) return -1;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  if (ph == BBVFL_PHASE_REVEAL && ci.committed && !ci.revealed) {
    if (bbvfl_cenc_reveal(secret, &cd, &len, err) < 0) return -1;
    int rc = bbvfl_oc_tx(c, cd, len, 200000 + 90000 * (uint64_t)c->cp.cfg.clients, 0, NULL, "reveal()", err);
    free(cd);
    if (rc < 0) return -1;
  }
  memset(secret, 0, sizeof secret);
  if (bbvfl_oc_wait_phase(c, BBVFL_PHASE_TRAINING, &ph, "waiting for every client to reveal", err) < 0) return -1;
  if (bbvfl_aggc_client_info(&c->agg, c->me, &ci, err) < 0) return -1;
  if (ci.excluded) return bbvfl_fail(err, BBVFL_E_STATE, "this client was excluded from the session");
  if (bbvfl_aggc_seed(&c->agg, c->res->S, err) < 0 || bbvfl_aggc_active(&c->agg, c->active, err) < 0) return -1;
  c->is_active = !memcmp(c->active, c->me, 20);
  return 0;
}

/* ------------------------------------------------------------------ setup */

static void bbvfl_oc_cl_free(cl *c) {
  if (c->have_party) bbvfl_party_free(&c->party);
  bbvfl_oc_lr_free(c);
  bbvfl_oc_head_check_free(c);
  bbvfl_oc_dispute_free(c);
  bbvfl_oc_kept_free(c);
  if (c->have_head) bbvfl_vhead_free(&c->head);
  if (c->have_sched) bbvfl_schedule_free(&c->sched);
  if (c->have_data) bbvfl_vfl_data_free(&c->data);
  bbvfl_oc_rounds_free(c);
  bbvfl_oc_out_free(c);
  bbvfl_oc_conn_close(c);
  if (c->masked) bbvfl_mclient_free(&c->mc);
  free(c->sum);
  free(c->grad);
  free(c->probs);
  free(c->grad_be);
  free(c->head_be);
  free(c->yb);
  free(c->yeval);
  bbvfl_oc_labels_free(c);
}

void bbvfl_onchain_result_free(bbvfl_onchain_result *r) {
  if (!r) return;
  free(r->per_epoch);
  free(r->agg_s);
  memset(r, 0, sizeof *r);
}

static int bbvfl_oc_check_params(const cl *c, bbvfl_err *err) {
  const bbvfl_cconfig *a = &c->cp.cfg, *b = &c->sess->cparams;
  if (a->clients != b->clients || a->batch != b->batch || a->dim != b->dim || a->levels != b->levels ||
      a->beta_micro != b->beta_micro || a->train_rounds != b->train_rounds || a->eval_rounds != b->eval_rounds ||
      a->epochs != b->epochs || !a->masked != !b->masked || a->window != b->window ||
      a->batches_per_epoch != b->batches_per_epoch || a->eval_rows != b->eval_rows ||
      a->eval_rows_per_round != b->eval_rows_per_round || a->train_rows != b->train_rows ||
      a->test_rows != b->test_rows || a->staleness != b->staleness || !a->hashed != !b->hashed ||
      a->curv_every != b->curv_every || a->curv_rows != b->curv_rows || a->wire != b->wire)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "the contract's parameters (M %u, B %u, P %u, b %u, window %u, T %u, V %u, staleness %u, "
                      "epochs %u%s, %s) do not match the session file's (M %u, B %u, P %u, b %u, window %u, T %u, V %u, "
                      "staleness %u, epochs %u%s, %s)",
                      a->clients, a->batch, a->dim, a->levels, a->window, a->train_rounds, a->eval_rounds,
                      a->staleness, a->epochs, a->masked ? ", masked" : "", bbvfl_session_aggregation_name(a->wire),
                      b->clients, b->batch, b->dim, b->levels, b->window, b->train_rounds, b->eval_rounds, b->staleness,
                      b->epochs, b->masked ? ", masked" : "", bbvfl_session_aggregation_name(b->wire));
  return 0;
}

/* The data against the session, before anything touches the chain (and before --state-dir is
   created: a refused start leaves nothing behind): the row count and the label column's classes. */
static int check_data(const cl *c, bbvfl_err *err) {
  const bbvfl_onchain_cfg *cfg = c->cfg;
  const bbvfl_session *s = c->sess;
  if (!bbvfl_session_may_register(s, c->me)) {
    char a[43];
    bbvfl_addr_checksum(c->me, a);
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "this client's address %s is not one of the session's %d members (the session file's "
                      "\"members\"): the contract would refuse its register() (NotMember); nothing was sent. Use a "
                      "member's key, or ask the deployer for a session that lists this address (bbvfl deploy --members)",
                      a, s->nmembers);
  }
  if (cfg->ds->n != s->n_rows)
    return bbvfl_fail(err, BBVFL_E_ARG, "the data file has %zu rows but the session was set up for %llu", cfg->ds->n,
                      (unsigned long long)s->n_rows);
  if (s->n_classes > 0) {
    int same = cfg->ds->nclasses == s->n_classes;
    for (int k = 0; same && k < s->n_classes; k++) same = strcmp(cfg->ds->class_names[k], s->classes[k]) == 0;
    if (!same) {
      char have[256] = "", want[256] = "";
      for (int k = 0; k < cfg->ds->nclasses; k++)
        snprintf(have + strlen(have), sizeof have - strlen(have), "%s'%.20s'", k ? ", " : "", cfg->ds->class_names[k]);
      for (int k = 0; k < s->n_classes; k++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s'%.20s'", k ? ", " : "", s->classes[k]);
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "the data file's label column holds the classes %s, but the session's table has %s: "
                        "nothing was sent",
                        have, want);
    }
  }
  return 0;
}

/* This client's columns of the table (DP preprocessing with its noise key) and the session's
   sizes; -1 when the split does not give the session's rows. */
static int load_data(cl *c, bbvfl_err *err) {
  const bbvfl_onchain_cfg *cfg = c->cfg;
  const bbvfl_session *s = c->sess;
  if (!cfg->seeded_noise && bbvfl_oc_noise_key_load(c, err) < 0) return -1;
  const uint8_t *nkey = cfg->seeded_noise ? NULL : c->noise_key;
  if (bbvfl_vfl_data_prepare_dp(cfg->ds, s->train.seed, s->train.test_frac, 1, cfg->columns, &s->train.rowdp,
                                cfg->seeded_noise, nkey, &c->data, err) < 0)
    return bbvfl_wrap(err, "--columns");
  c->have_data = 1;
  c->B = s->cparams.batch;
  c->n = bbvfl_cconfig_max_coords(&s->cparams);
  c->T = s->cparams.train_rounds;
  c->V = s->cparams.eval_rounds;
  if (c->data.n_train != s->cparams.train_rows || c->data.n_test != s->cparams.test_rows)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "with this data file the split gives %zu training / %zu test rows, but the session has %u / %u: "
                      "is it the session's table?",
                      c->data.n_train, c->data.n_test, s->cparams.train_rows, s->cparams.test_rows);
  c->K = cfg->ds->nclasses == 2 ? 1 : cfg->ds->nclasses;
  c->neval = s->cparams.eval_rows;
  c->hashed = s->cparams.hashed;
  if (cfg->submit_via_self && !c->hashed)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "--submit-via-self needs a hashed-mode session: lane mode's submissions are audited from the "
                      "submit() calldata, which a call through the account's execute() wraps");
  return 0;
}

/* The round buffers (c->n values: the largest round) and the result's per-epoch tables. */
static int alloc_buffers(cl *c, bbvfl_err *err) {
  size_t maxrows = c->n / c->sess->cparams.dim; /* rows of the largest round */
  bbvfl_onchain_result *res = c->res;
  c->sum = malloc(c->n * sizeof *c->sum);
  c->grad = malloc(c->n * sizeof *c->grad);
  c->grad_be = malloc(4 * c->n);
  c->probs = calloc(c->neval * (size_t)c->K + 1, sizeof *c->probs);
  c->yb = malloc(maxrows * sizeof *c->yb);
  c->yeval = malloc((c->neval + 1) * sizeof *c->yeval);
  res->epochs = (int)c->sess->cparams.epochs;
  res->per_epoch = calloc((size_t)res->epochs, sizeof *res->per_epoch);
  res->agg_s = calloc((size_t)res->epochs, sizeof *res->agg_s);
  if (!c->sum || !c->grad || !c->grad_be || !c->probs || !c->yb || !c->yeval || !res->per_epoch || !res->agg_s)
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory");
  return bbvfl_oc_rounds_init(c, maxrows, err);
}

/* Masked mode's pair keys (after the election: the registered clients) and the start line. */
static int start_masked(cl *c, uint64_t chain_id, bbvfl_err *err) {
  const bbvfl_onchain_cfg *cfg = c->cfg;
  bbvfl_onchain_result *res = c->res;
  if (c->cp.cfg.masked) {
    if (bbvfl_mclient_init(&c->mc, &c->agg, cfg->key, chain_id, c->sess->deploy_block, (unsigned)res->index, c->n,
                           c->cp.cfg.levels, err) < 0)
      return -1;
    c->masked = 1;
    res->masked = 1;
    bbvfl_oc_log(c, "masked mode: pair keys derived for %u registered clients; %u participants", c->mc.mk.nclients,
                 c->mc.nparts);
  }
  if (cfg->dump_q_dir)
    bbvfl_oc_log(c, "WARNING: BBVFL_TEST_DUMP_Q is set: this client writes its unmasked q of every round to %s (a test "
                 "hook: plaintext embeddings, never use it in production)",
                 cfg->dump_q_dir);
  char me[43], act[43];
  bbvfl_addr_checksum(c->me, me);
  bbvfl_addr_checksum(c->active, act);
  bbvfl_oc_log(c, "client %s index %d; active client %s%s", me, res->index, act, c->is_active ? " (this client)" : "");
  return 0;
}

/* The learning state, exactly as the off-chain trainer builds it: the LR model's or the party
   (and the head where this client needs one), then the schedule of S. */
static int init_learning(cl *c, bbvfl_err *err) {
  const bbvfl_onchain_cfg *cfg = c->cfg;
  const bbvfl_session *s = c->sess;
  float *cols = NULL;
  size_t ncols = 0;
  if (bbvfl_vfl_data_client_cols(&c->data, 0, &cols, &ncols, err) < 0) return -1;
  int index = cfg->party >= 0 ? cfg->party : c->res->index;
  if (s->train.model == BBVFL_MODEL_LR) {
    int lrc = bbvfl_oc_lr_init(c, cols, ncols, index, err); /* takes cols */
    if (lrc < 0 || (c->is_active && bbvfl_oc_lr_init_head(c, err) < 0)) return -1;
    cols = NULL;
  }
  bbvfl_party_cfg pc = {.index = index,
                        .P = (int)s->cparams.dim,
                        .nhidden = s->train.nhidden,
                        .mech = s->train.mech,
                        .opt = s->train.opt,
                        .seed = cfg->seed,
                        .seeded_noise = cfg->seeded_noise,
                        .noise_key = cfg->seeded_noise ? NULL : c->noise_key,
                        .rowdp = s->train.rowdp,
                        .train_rows = c->data.train,
                        .n_train = c->data.n_train};
  memcpy(pc.hidden, s->train.hidden, sizeof pc.hidden);
  pc.afe = s->train.afe; /* VFL-AFE's local steps before PBM (session "afe"; off when absent) */
  pc.afe.nclasses = cfg->ds->nclasses;
  pc.afe.B = c->B;
  if (!c->lr) {
    int prc = bbvfl_party_init(&c->party, &pc, cols, cfg->ds->n, ncols, err);
    free(cols);
    if (prc < 0) return -1;
    c->have_party = 1;
    if ((c->is_active || (c->lab.split && c->lab.holder)) && bbvfl_oc_init_head(c, err) < 0) return -1;
  }
  if (bbvfl_schedule_init(&c->sched, c->res->S, c->data.n_train, c->B, err) < 0) return -1;
  c->have_sched = 1;
  return 0;
}

/* Everything from the connection to the end of the session (the data loaded). */
static int run_session(cl *c, bbvfl_err *err) {
  uint64_t chain_id;
  if (bbvfl_oc_conn_open(c, &chain_id, err) < 0 || bbvfl_oc_check_params(c, err) < 0) return -1;
  c->wire = c->cp.cfg.wire;
  if (bbvfl_oc_sender_open(c, chain_id, err) < 0 || alloc_buffers(c, err) < 0 || bbvfl_oc_labels_init(c, err) < 0)
    return -1;
  if (bbvfl_mkdirs(c->dir, 0700, err) < 0) return bbvfl_wrap(err, "--state-dir");
  /* the binding before the first secret: a state dir never holds secrets of an unnamed session */
  if (bbvfl_statedir_bind(c->dir, c->sess->chain_id, c->sess->contract, err) < 0 ||
      bbvfl_oc_noise_key_save(c, err) < 0 || bbvfl_oc_election(c, err) < 0)
    return -1;
  c->res->participants = c->cp.cfg.clients;
  c->res->n_train = c->data.n_train;
  if (start_masked(c, chain_id, err) < 0 || bbvfl_oc_labels_holders(c, err) < 0) return -1;
  if (c->is_active && !c->cfg->has_labels && !c->lab.split)
    return bbvfl_fail(err, BBVFL_E_STATE,
                      "this client was elected active client but holds no labels (--labels): in this session every "
                      "client that may be elected must hold the label column");
  if (init_learning(c, err) < 0) return -1;
  uint64_t start = 0, first_open = 0;
  int resumed = bbvfl_oc_load_progress(c, &start, &first_open, err);
  if (resumed < 0) return -1;
  if (resumed) bbvfl_oc_log(c, "resuming at round %llu from the checkpoint", (unsigned long long)start);
  if (bbvfl_oc_run_rounds(c, start, first_open, resumed, err) < 0) return -1;
  c->res->was_active = c->is_active;
  if (c->masked) c->res->participants = c->mc.min_parts;
  bbvfl_oc_log(c, "session complete");
  return 0;
}

int bbvfl_onchain_run(const bbvfl_onchain_cfg *cfg, bbvfl_onchain_result *res, bbvfl_err *err) {
  memset(res, 0, sizeof *res);
  cl c;
  memset(&c, 0, sizeof c);
  c.sess = cfg->sess;
  c.res = res;
  c.ck.slot = 1;
  c.act.takeover_epoch = -1;
  c.disp.round = c.disp.posted = c.disp.claimed = UINT64_MAX;
  double t_start = bbvfl_now();
  bbvfl_onchain_cfg local = *cfg;
  if (local.round_timeout_s <= 0) local.round_timeout_s = 120;
  c.cfg = &local;
  if (snprintf(c.dir, sizeof c.dir, "%s", cfg->state_dir) >= (int)sizeof c.dir)
    return bbvfl_fail(err, BBVFL_E_ARG, "--state-dir is too long");
  memcpy(c.me, cfg->key->addr, 20);
  /* before the noise key is read and anything is sent: the state dir is this session's (or new),
     its secrets and checkpoints private (onchain/statedir.h) */
  if (check_data(&c, err) < 0 || bbvfl_statedir_check(c.dir, cfg->sess->chain_id, cfg->sess->contract, err) < 0)
    return -1;
  int rc = load_data(&c, err) < 0 ? -1 : run_session(&c, err);
  res->wall_s = bbvfl_now() - t_start;
  if (!c.is_active && !(c.lab.split && c.lab.holder)) {
    free(res->per_epoch);
    free(res->agg_s);
    res->per_epoch = NULL;
    res->agg_s = NULL;
  }
  bbvfl_oc_cl_free(&c);
  bbvfl_secret_wipe(c.noise_key, sizeof c.noise_key);
  return rc;
}
