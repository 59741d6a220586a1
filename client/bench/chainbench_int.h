/* The benchmark pool's state, shared by bench/chainbench.c (the run) and bench/chainbench_pool.c
 * (the pool's keys and connections). Only those two include it. */
#ifndef BBVFL_BENCH_CHAINBENCH_INT_H
#define BBVFL_BENCH_CHAINBENCH_INT_H

#include <stdint.h>

#include "bench/chainbench.h"
#include "eth/rpc.h"
#include "eth/sender.h"
#include "eth/wallet.h"

#define TX_TIMEOUT_S 60.0 /* a benchmark transaction's wait for its receipt */

typedef struct {
  bbvfl_key key;
  bbvfl_rpc *rpc;
  bbvfl_sender *s;
} pool_client;

struct bbvfl_cbench_pool {
  char url[512];
  int n;
  pool_client *c;
  uint64_t chain_id, block_gas_limit;
};

#endif
