/* Private to run/local*.c: the state of one local session run, shared by its three files
 * (local.c: the setup, node, deploy, keys and funding; local_clients.c: the client processes and
 * the progress watch; local_report.c: the report). Never included elsewhere. */
#ifndef BBVFL_RUN_LOCAL_INT_H
#define BBVFL_RUN_LOCAL_INT_H

#include <sys/types.h>

#include "devnet/devnet.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"
#include "run/local.h"
#include "binding/contract.h"

typedef struct {
  pid_t pid;
  int done, status;
  char dir[1200];  /* RUN/clients/<m> */
  char key[1200];  /* RUN/keys/client-<m>.key */
  uint8_t addr[20];
} bbvfl_lchild;

typedef struct {
  const bbvfl_local_opts *o;
  bbvfl_session *s;
  int M;
  bbvfl_partition part;
  char run[1024];
  char session_path[1300];
  const char *rpc_url;         /* opts->rpc_url or the embedded devnet's */
  bbvfl_devnet dn;             /* the embedded devnet (when started) */
  bbvfl_rpc *rpc;              /* owned */
  bbvfl_key fk;                /* the funder's key (wiped at the end) */
  bbvfl_sender *snd;           /* owned (the funder's; borrows fk) */
  bbvfl_lchild ch[BBVFL_LOCAL_MAX_CLIENTS];
  int nch;                     /* clients started */
  double t_start, t_train0, t_train1;
  uint64_t chain_gas;          /* gas of every block since the deploy (the watch's count) */
} bbvfl_lrun;

/* Sends ev (kind and the run's common fields set here) to the progress callback: its verdict
 * (non-zero: stop). */
int bbvfl_lrun_emit(bbvfl_lrun *x, bbvfl_local_event *ev);
/* Forks the M clients (x->nch counts those started). */
int bbvfl_lrun_clients_start(bbvfl_lrun *x, bbvfl_err *err);
/* Watches until every client is done: progress events, stop requests, failures (then every
 * client is stopped). Sets x->t_train1 and x->chain_gas. */
int bbvfl_lrun_clients_wait(bbvfl_lrun *x, bbvfl_err *err);
/* SIGTERM to every client still running, SIGKILL after 5 s; reaps them. */
void bbvfl_lrun_clients_stop(bbvfl_lrun *x);
/* The report from the clients' summaries, the chain and the off-chain rerun: RUN/metrics.csv,
 * RUN/report.json and res's figures. */
int bbvfl_lrun_report(bbvfl_lrun *x, bbvfl_local_result *res, bbvfl_err *err);

#endif
