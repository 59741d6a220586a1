/* Bit-packed values on the wire (contract/src/BbvflPackedAggregator.sol, "packing bits"): the
 * encoder/decoder of the contract's layout, the contract's bit-sliced sum, and the wire size and
 * calldata gas per value of each aggregation mode (for window sizing and benches).
 *
 * Layout: n values of `bits` bits each, in blocks of 256 values; block j holds values
 * 256j .. 256j+w-1 (w = min(256, n-256j)) as `bits` planes of pb = ceil(w/8) bytes, plane k
 * (k = 0 the least significant bit) first; in a plane value 256j+t is bit 7-(t%8) of byte t/8;
 * bits past w in a plane's last byte are 0. Length: bits*(32*floor(n/256) + ceil((n%256)/8)).
 * Payloads use bits = ceil(log2(b+1)) (bbvfl_pack_bits(b)), sums bbvfl_pack_bits(M*b).
 * Every buffer is the caller's. No function here allocates or prints. */
#ifndef BBVFL_VFL_PACKING_H
#define BBVFL_VFL_PACKING_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* Bits needed for values 0..max (1 for max 0 or 1, 5 for 16, 7 for 80). */
unsigned bbvfl_pack_bits(uint32_t max);

/* Bytes of n values at `bits` bits (0 when bits is 0 or above 32). */
size_t bbvfl_packed_len(size_t n, unsigned bits);

/* Packs v[n] (each < 2^bits) into out[out_len]; out_len must be bbvfl_packed_len(n, bits).
 * BBVFL_E_ARG on a wrong length, bits outside 1..32 or a value too wide (named by index). */
int bbvfl_pack(const uint32_t *v, size_t n, unsigned bits, uint8_t *out, size_t out_len, bbvfl_err *err);

/* Unpacks in[len] into v[n]. BBVFL_E_PARSE on a wrong length or a set padding bit. */
int bbvfl_unpack(const uint8_t *in, size_t len, size_t n, unsigned bits, uint32_t *v, bbvfl_err *err);

/* The contract's sum: adds the packed payload p (n values at vbits) into the packed sum acc
 * (n values at sbits, sbits >= vbits) with the bit-sliced ripple carry of
 * BbvflPacked._sum (carries out of the top plane are lost, as on chain). */
int bbvfl_packed_add(uint8_t *acc, size_t acc_len, const uint8_t *p, size_t p_len, size_t n, unsigned vbits,
                     unsigned sbits, bbvfl_err *err);

/* Aggregation modes of a session (bbvfl deploy --aggregation ... [--packing bits]). */
typedef enum {
  BBVFL_WIRE_LANES = 0,      /* BbvflAggregator: one byte per value, no aggregate() */
  BBVFL_WIRE_HASHED = 1,     /* BbvflHashAggregator: one byte per value, twice (submit + aggregate) */
  BBVFL_WIRE_PACKED = 2,     /* BbvflPackedAggregator: packed values, twice */
  BBVFL_WIRE_OPTIMISTIC = 3  /* BbvflOptimisticAggregator: packed values once + keccak256 of the sum */
} bbvfl_wire_mode;

/* Wire size of one round of n values per client with m clients and levels b. */
typedef struct {
  size_t submit_bytes;    /* payload bytes of one submission */
  size_t aggregate_bytes; /* payload bytes of the round's aggregate() or postSum() (0: lanes; 32: the
                             optimistic claim, keccak256 of the sum) */
  double calldata_gas_per_value_cancun; /* 16 gas per payload byte (all bytes non-zero), / (m*n) */
  double calldata_gas_per_value_prague; /* the EIP-7623 floor, 40 gas per non-zero byte, / (m*n) */
} bbvfl_wire_cost;

/* Fills *out for the mode (plain values; masked rounds are 2 bytes per value in the hashed
 * mode and not packed). BBVFL_E_ARG for m, n or b of 0 or an unknown mode. The per-value figures
 * count the payload calldata only (no 21,000 base, ABI words or execution): a lower bound of the
 * measured gas per coordinate in contract/GAS.md. */
int bbvfl_wire_cost_of(bbvfl_wire_mode mode, unsigned m, uint32_t levels, size_t n, bbvfl_wire_cost *out,
                       bbvfl_err *err);

/* The contract of a mode: BbvflAggregator, BbvflHashAggregator, BbvflPackedAggregator,
 * BbvflOptimisticAggregator (NULL for an unknown mode). */
const char *bbvfl_wire_contract(int mode);

#endif
