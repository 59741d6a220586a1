/* A small on-chain DP-BBVFL session through libbbvfl's public API, audited from the chain.
 *
 *   cc onchain_session.c $(pkg-config --cflags --libs bbvfl) -o onchain_session
 *   bbvfl devnet up --dir /tmp/dev          (prints the node's rpc_url)
 *   ./onchain_session http://127.0.0.1:PORT /tmp/run
 *
 * Deploys a session for 3 clients (PBM b 16 beta 0.2, embedding P 4, batch 40, 1 epoch, the
 * bundled Breast Cancer table, private noise) from anvil's development account, which also funds
 * one throwaway key per client (RUN_DIR/keys); runs every client in a process of its own
 * (bbvfl_client_run after fork: one client per process), prints what each did, then audits the
 * session from its session file and the chain alone. The last line is "audit: pass" when every
 * sum, minibatch, election and payment checks out. The same session as
 *   bbvfl deploy --rpc URL --members ADDR,ADDR,ADDR --clients 3 --P 4 --batch 40 --epochs 1 --out RUN_DIR/session.json
 * followed by one `bbvfl client` per organisation and `bbvfl audit --session RUN_DIR/session.json`.
 * Exit status: 0 when the audit passes, 1 otherwise (errors printed with their category). */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid */
#include <bbvfl/bbvfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLIENTS 3

static int fail(const char *what, const bbvfl_error *err) {
  fprintf(stderr, "onchain_session: %s: %s (%s)\n", what, err->message, bbvfl_status_name(err->code));
  return 1;
}

/* One organisation: its client of the deployed session, in a forked process. */
static int run_client(const bbvfl_deploy_result *dep, const char *run_dir, int m) {
  char key[1200], state[1200];
  snprintf(key, sizeof key, "%s/keys/client-%d.key", run_dir, m);
  snprintf(state, sizeof state, "%s/clients/%d", run_dir, m);
  bbvfl_client_opts o = {.session_file = dep->session_file, .key_file = key, .columns = dep->columns[m],
                         .state_dir = state, .has_labels = 1, .party = m};
  bbvfl_client_result r;
  bbvfl_error err;
  if (bbvfl_client_run(&o, &r, &err) != BBVFL_STATUS_OK) return fail("client", &err);
  printf("client %d: columns %s, registered #%d%s, %llu rounds, %llu submissions, %llu gas\n", m, dep->columns[m],
         r.index, r.was_active ? " (active: trained the head)" : "", (unsigned long long)r.rounds,
         (unsigned long long)r.submissions, (unsigned long long)r.gas_used);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s RPC_URL RUN_DIR\n", argv[0]);
    return 1;
  }
  const char *rpc_url = argv[1], *run_dir = argv[2];
  mkdir(run_dir, 0700); /* the session file's folder must exist */

  bbvfl_error err;
  bbvfl_config *cfg = NULL;
  if (bbvfl_config_create(&cfg, &err) != BBVFL_STATUS_OK || bbvfl_config_set_clients(cfg, CLIENTS, &err) != BBVFL_STATUS_OK ||
      bbvfl_config_set_embedding(cfg, 4, &err) != BBVFL_STATUS_OK || bbvfl_config_set_batch(cfg, 40, &err) != BBVFL_STATUS_OK ||
      bbvfl_config_set_epochs(cfg, 1, &err) != BBVFL_STATUS_OK) {
    bbvfl_config_destroy(cfg);
    return fail("config", &err);
  }

  /* the contracts and the session file; the clients' keys funded by the deployer */
  char session_file[1100], keys[1100];
  snprintf(session_file, sizeof session_file, "%s/session.json", run_dir);
  snprintf(keys, sizeof keys, "%s/keys", run_dir);
  bbvfl_deploy_opts dopt = {.rpc_url = rpc_url, .config = cfg, .session_file = session_file, .client_keys_dir = keys};
  bbvfl_deploy_result dep;
  bbvfl_status st = bbvfl_deploy_session(&dopt, &dep, &err);
  bbvfl_config_destroy(cfg);
  if (st != BBVFL_STATUS_OK) return fail("deploy", &err);
  printf("deployed: aggregator %s at block %llu, %llu rounds, session %s\n", dep.contract,
         (unsigned long long)dep.deploy_block, (unsigned long long)dep.rounds, dep.session_file);

  /* one process per client; wait for exactly those */
  pid_t pids[CLIENTS];
  int started = 0, failed = 0;
  fflush(stdout); /* nothing buffered is printed twice */
  for (int m = 0; m < CLIENTS; m++) {
    pid_t pid = fork();
    if (pid == 0) {
      int rc = run_client(&dep, run_dir, m);
      fflush(NULL);
      _exit(rc);
    }
    if (pid < 0) {
      perror("onchain_session: fork");
      failed = 1;
      break;
    }
    pids[started++] = pid;
  }
  for (int i = 0; i < started; i++) {
    int status = 0;
    if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  }
  if (failed) {
    fprintf(stderr, "onchain_session: a client failed\n");
    bbvfl_deploy_result_free(&dep);
    return 1;
  }

  /* anyone can check the session from its file and the chain */
  bbvfl_audit_summary au;
  st = bbvfl_audit_session(dep.session_file, rpc_url, &au, &err);
  bbvfl_deploy_result_free(&dep);
  if (st != BBVFL_STATUS_OK) return fail("audit", &err);
  if (au.verdict != BBVFL_AUDIT_PASS) {
    printf("audit: %s after %d checks, %d failed: %s\n", au.verdict == BBVFL_AUDIT_FAIL ? "fail" : "incomplete",
           au.checks, au.checks_failed, au.first_failure);
    return 1;
  }
  printf("audit: pass (%d checks, %llu rounds verified)\n", au.checks, (unsigned long long)au.rounds);
  return 0;
}
