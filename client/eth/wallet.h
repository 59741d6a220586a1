/* Ethereum keys (secp256k1 via libsecp256k1) and addresses.
 *
 * A bbvfl_key is caller-owned plain data holding the private key: wipe it with bbvfl_key_wipe
 * when done. Keys are read from a file (which must not be readable by group/other) or from an
 * environment variable, never from the command line, and no function here ever puts key material
 * in an error message. Signatures are RFC 6979 deterministic and low-S (what libsecp256k1
 * produces), with the recovery id. */
#ifndef BBVFL_ETH_WALLET_H
#define BBVFL_ETH_WALLET_H

#include <secp256k1.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef struct {
  uint8_t priv[32];
  uint8_t pub[64]; /* uncompressed X || Y, without the 0x04 prefix */
  uint8_t addr[20];
} bbvfl_key; /* caller-owned */

/* anvil's well-known development account 0: a public test key, funded on every anvil started
 * with its default accounts (chain id 31337). The one copy in the project (the devnet commands
 * and tests take it from here); meaningful only on such a devnet. */
#define BBVFL_ANVIL_CHAIN_ID 31337ULL
#define BBVFL_ANVIL_DEV_KEY0 "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"

int bbvfl_key_from_bytes(const uint8_t priv[32], bbvfl_key *k, bbvfl_err *err);
int bbvfl_key_from_hex(const char *hex, bbvfl_key *k, bbvfl_err *err);
/* The file holds the key as hex (optional 0x, surrounding whitespace allowed). */
int bbvfl_key_load_file(const char *path, bbvfl_key *k, bbvfl_err *err); /* refuses group/other-readable files, never echoes content */
int bbvfl_key_load_env(const char *var, bbvfl_key *k, bbvfl_err *err);
int bbvfl_key_generate(bbvfl_key *k, bbvfl_err *err);                    /* getrandom */
int bbvfl_key_save_file(const char *path, const bbvfl_key *k, bbvfl_err *err); /* 0600, atomic */
void bbvfl_key_wipe(bbvfl_key *k);
void bbvfl_addr_checksum(const uint8_t addr[20], char out[43]);          /* EIP-55 "0x..." */
int bbvfl_addr_parse(const char *s, uint8_t addr[20], bbvfl_err *err);   /* checks EIP-55 when mixed case */

/* Added. */
/* The process-wide libsecp256k1 context (created and randomized once, thread-safe), or NULL if
 * it could not be created. Owned by the library: do not destroy. */
const secp256k1_context *bbvfl_secp256k1_ctx(void);
/* Address of a 64-byte uncompressed public key: last 20 bytes of keccak256(pub). */
void bbvfl_pub_to_addr(const uint8_t pub[64], uint8_t addr[20]);
/* Signs a 32-byte hash: sig = r (32) || s (32, low-S) || recovery id (0 or 1). */
int bbvfl_sign_hash(const bbvfl_key *k, const uint8_t hash[32], uint8_t sig[65], bbvfl_err *err);
/* Recovers the signer's address from a hash and r || s || recid; rejects high-S signatures. */
int bbvfl_recover_addr(const uint8_t hash[32], const uint8_t sig[65], uint8_t addr[20],
                       bbvfl_err *err);

#endif
