/* run/client.h: one client from its session file, key and table. */
#include <stdio.h>
#include <string.h>

#include "ml/data.h"
#include "run/client.h"

/* The summary of a run (rc: bbvfl_onchain_run's return) and, for the active client, its privacy
 * lines to log. A failed run leaves a summary only when it refused a gradient. */
static void finish(const bbvfl_session *s, const bbvfl_onchain_result *res, int rc, const char *state_dir, FILE *log,
                   bbvfl_onchain_summary *out) {
  char p[1200];
  snprintf(p, sizeof p, "%s/summary.json", state_dir);
  bbvfl_onchain_summary sm;
  bbvfl_err e2 = {0};
  memset(&sm, 0, sizeof sm);
  if (rc < 0 && !res->head_refused) return;
  if (bbvfl_onchain_summary_write(s, res, 1e-5, p, &sm, &e2) < 0) {
    if (log) fprintf(log, "bbvfl client: warning: %s\n", e2.msg);
    bbvfl_onchain_summary_free(&sm);
    return;
  }
  if (rc == 0 && log && sm.privacy_done) {
    char line[1024];
    bbvfl_privacy_line(&sm.privacy, line, sizeof line);
    fprintf(log, "privacy: %s\n", line);
    if (!sm.privacy.reproducible) fprintf(log, "privacy scope: %s\n", bbvfl_privacy_scope(&sm.privacy));
  } else if (rc == 0 && log && res->was_active) {
    fprintf(log, "bbvfl client: warning: privacy report: %s\n", sm.privacy_err.msg);
  }
  if (out) *out = sm;
  else bbvfl_onchain_summary_free(&sm);
}

int bbvfl_client_files_run(bbvfl_client_files *c, bbvfl_onchain_summary *sm, bbvfl_err *err) {
  if (sm) memset(sm, 0, sizeof *sm);
  if (!c->session || !c->key || !c->cfg.columns || !c->cfg.state_dir)
    return bbvfl_fail(err, BBVFL_E_ARG, "a client needs a session file, a key, its columns and a state folder");
  bbvfl_session s;
  if (bbvfl_session_load(c->session, &s, err) < 0) return -1;
  if (c->contract && bbvfl_session_check_contract(&s, c->contract, err) < 0) return -1;
  bbvfl_onchain_cfg *cfg = &c->cfg;
  cfg->sess = &s;
  cfg->seed = c->seed_given ? c->seed : s.train.seed;
  /* the noise: private (this client's own key in the state folder) unless the session declares
     reproducible noise; the seed moves the initialisation only */
  cfg->seeded_noise = s.train.seeded_noise;
  bbvfl_key k;
  if (bbvfl_key_source_load(c->key, &k, err) < 0) return -1;
  bbvfl_dataset ds;
  bbvfl_csv_opts co = {.label = c->label ? c->label : (s.label[0] ? s.label : NULL)};
  if (bbvfl_csv_load(c->data ? c->data : s.data, &co, &ds, err) < 0) {
    bbvfl_key_wipe(&k);
    return -1;
  }
  cfg->key = &k;
  cfg->ds = &ds;
  bbvfl_onchain_result res;
  int rc = bbvfl_onchain_run(cfg, &res, err);
  bbvfl_key_wipe(&k);
  bbvfl_dataset_free(&ds);
  cfg->key = NULL;
  cfg->ds = NULL;
  cfg->sess = NULL;
  finish(&s, &res, rc, cfg->state_dir, cfg->log, sm);
  bbvfl_onchain_result_free(&res);
  return rc;
}
