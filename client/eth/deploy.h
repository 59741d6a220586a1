/* Contract deployment from the committed artifacts in abi/ (one JSON file per contract with the
 * fields "abi" and "bytecode", written by devnet/gen-abi.sh). */
#ifndef BBVFL_ETH_DEPLOY_H
#define BBVFL_ETH_DEPLOY_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/rpc.h"
#include "eth/sender.h"

/* Folder holding the artifacts: common/rundirs.h's abi folder ($BBVFL_ABI_DIR, the source tree's
 * abi/ or the installed share/bbvfl/abi). */
const char *bbvfl_abi_dir(void);

/* Reads the creation bytecode of abi/<name>.json into a malloc'd buffer (caller frees). name is
 * a plain contract name ([A-Za-z0-9_]). */
int bbvfl_artifact_bytecode(const char *contract_name, uint8_t **code, size_t *len,
                            bbvfl_err *err);

/* Loads abi/<name>.json (dir: bbvfl_abi_dir()), appends the already
 * ABI-encoded constructor args, sends the creation tx, waits, returns the address. rc, when
 * given, receives the receipt (caller clears it). */
int bbvfl_deploy(bbvfl_sender *s, const char *contract_name, const uint8_t *ctor_args,
                 size_t ctor_len, double timeout_s, uint8_t address[20],
                 bbvfl_receipt *rc /*nullable*/, bbvfl_err *err);

/* The same from creation bytecode in memory. */
int bbvfl_deploy_code(bbvfl_sender *s, const uint8_t *code, size_t code_len,
                      const uint8_t *ctor_args, size_t ctor_len, double timeout_s,
                      uint8_t address[20], bbvfl_receipt *rc, bbvfl_err *err);

#endif
