/* Keccak-256 as used by Ethereum: Keccak-f[1600], rate 136 bytes, ORIGINAL Keccak padding
 * (domain byte 0x01), not FIPS-202 SHA3-256 (0x06). keccak256("") = c5d2460186f7233c...
 *
 * One-shot: bbvfl_keccak256. Streaming: init, update (any number of times), final. The context
 * is caller-owned plain data; final wipes it. No allocation, no failure modes. */
#ifndef BBVFL_ETH_KECCAK_H
#define BBVFL_ETH_KECCAK_H

#include <stddef.h>
#include <stdint.h>

void bbvfl_keccak256(const void *data, size_t len, uint8_t out[32]);

typedef struct {
  uint64_t s[25];
  uint8_t buf[136];
  size_t n;
} bbvfl_keccak_ctx;

void bbvfl_keccak_init(bbvfl_keccak_ctx *c);
void bbvfl_keccak_update(bbvfl_keccak_ctx *c, const void *data, size_t len);
void bbvfl_keccak_final(bbvfl_keccak_ctx *c, uint8_t out[32]);

#endif
