/* Fuzz target: the session file reader (bbvfl_session_load), the JSON file every on-chain
 * client trusts for its contract address, chain id and training setup. The input is the file's
 * content (handed over through an in-memory file). Any input gives either a session whose
 * fields are inside the ranges the reader promises, or an error that names the file, never a
 * crash, a read past the input or a leak. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "binding/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

static const char SEED[] =
    "{\"version\": 1, \"rpc_url\": \"http://127.0.0.1:8545\", \"chain_id\": 31337,\n"
    " \"contract\": \"0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512\",\n"
    " \"token\": \"0x5FbDB2315678afecb367f032d93F642f64180aa3\", \"deploy_block\": 2,\n"
    " \"contract_params\": {\"clients\": 5, \"batch\": 10, \"dim\": 16, \"levels\": 16,\n"
    "  \"beta_micro\": 200000, \"masked\": false, \"train_rounds\": 45, \"eval_rounds\": 11,\n"
    "  \"epochs\": 30, \"commit_blocks\": 1000, \"reveal_blocks\": 1000, \"active_blocks\": 100000,\n"
    "  \"round_timeout_blocks\": 100000, \"reward_per_submission\": \"1000000000000000000\",\n"
    "  \"reward_pool\": \"8400000000000000000000\", \"lane_bits\": 8},\n"
    " \"training\": {\"seed\": 7, \"test_frac\": 0.2, \"label\": \"\", \"data\": \"data/bc.csv\",\n"
    "  \"n_rows\": 569, \"hidden\": [32, 32], \"optimizer\": \"adam\", \"lr\": 0.001,\n"
    "  \"lr_decay\": 1.0, \"momentum\": 0.0, \"mechanism\": \"pbm\", \"b\": 16, \"beta\": 0.2,\n"
    "  \"C\": 1.0, \"batch\": 10}}\n";

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  add((const uint8_t *)SEED, sizeof SEED - 1);
}

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (fd < 0) {
    fd = memfd_create("fuzz-session", 0);
    if (fd < 0) __builtin_trap();
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  }
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) __builtin_trap();
  bbvfl_session s;
  bbvfl_err err;
  memset(&err, 0, sizeof err);
  if (bbvfl_session_load(path, &s, &err) == 0) {
    if (memchr(s.rpc_url, 0, sizeof s.rpc_url) == NULL || memchr(s.label, 0, sizeof s.label) == NULL ||
        memchr(s.data, 0, sizeof s.data) == NULL)
      __builtin_trap();
    if (s.cparams.clients < 1 || s.cparams.clients > 64 || s.lane_bits < 8 || s.lane_bits > 16)
      __builtin_trap();
    if (s.train.mech.b != s.cparams.levels || s.train.M != s.cparams.clients) __builtin_trap();
    if (s.train.nhidden < 0 || s.train.nhidden > BBVFL_MAX_HIDDEN) __builtin_trap();
  } else {
    if (err.code == BBVFL_OK || err.msg[0] == 0) __builtin_trap();
    if (memchr(err.msg, 0, sizeof err.msg) == NULL) __builtin_trap();
    /* Most errors name the file and the field; a bad address or amount currently gives the
     * address/number parser's own message (which names the bad value) without the file. */
  }
  return 0;
}
