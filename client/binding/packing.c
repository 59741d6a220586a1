/* Bit-sliced packing of values (see packing.h and contract/src/BbvflPackedAggregator.sol). */
#include "binding/packing.h"

#include <string.h>

unsigned bbvfl_pack_bits(uint32_t max) {
  unsigned n = 0;
  while (n < 32 && ((uint64_t)1 << n) <= max) n++;
  return n == 0 ? 1 : n;
}

size_t bbvfl_packed_len(size_t n, unsigned bits) {
  if (bits == 0 || bits > 32) return 0;
  return (size_t)bits * ((n / 256) * 32 + ((n % 256) + 7) / 8);
}

/* Offset of plane k of the block holding value i, and the block's plane size. */
static size_t plane_at(size_t n, unsigned bits, size_t i, unsigned k, size_t *pb) {
  size_t j = i / 256;
  size_t w = n - 256 * j < 256 ? n - 256 * j : 256;
  *pb = (w + 7) / 8;
  return (size_t)bits * 32 * j + (size_t)k * *pb;
}

int bbvfl_pack(const uint32_t *v, size_t n, unsigned bits, uint8_t *out, size_t out_len, bbvfl_err *err) {
  if (bits == 0 || bits > 32) return bbvfl_fail(err, BBVFL_E_ARG, "packing: %u bits per value (1..32)", bits);
  if (out_len != bbvfl_packed_len(n, bits))
    return bbvfl_fail(err, BBVFL_E_ARG, "packing: %zu values at %u bits take %zu bytes, not %zu", n, bits,
                      bbvfl_packed_len(n, bits), out_len);
  memset(out, 0, out_len);
  for (size_t i = 0; i < n; i++) {
    if (bits < 32 && v[i] >> bits)
      return bbvfl_fail(err, BBVFL_E_ARG, "packing: value %zu is %u, above %u bits", i, (unsigned)v[i], bits);
    size_t t = i % 256, pb;
    for (unsigned k = 0; k < bits; k++) {
      if ((v[i] >> k) & 1u) out[plane_at(n, bits, i, k, &pb) + t / 8] |= (uint8_t)(0x80u >> (t % 8));
    }
  }
  return 0;
}

int bbvfl_unpack(const uint8_t *in, size_t len, size_t n, unsigned bits, uint32_t *v, bbvfl_err *err) {
  if (bits == 0 || bits > 32) return bbvfl_fail(err, BBVFL_E_ARG, "packing: %u bits per value (1..32)", bits);
  if (len != bbvfl_packed_len(n, bits))
    return bbvfl_fail(err, BBVFL_E_PARSE, "packed data: %zu bytes for %zu values at %u bits, want %zu", len, n,
                      bits, bbvfl_packed_len(n, bits));
  for (size_t i = 0; i < n; i++) {
    size_t t = i % 256, pb;
    uint32_t x = 0;
    for (unsigned k = 0; k < bits; k++) {
      if (in[plane_at(n, bits, i, k, &pb) + t / 8] & (0x80u >> (t % 8))) x |= (uint32_t)1 << k;
    }
    v[i] = x;
  }
  /* the padding bits of the last, partial block */
  size_t w = n % 256;
  if (w % 8 != 0) {
    size_t pb;
    uint8_t pad = (uint8_t)(0xFFu >> (w % 8));
    for (unsigned k = 0; k < bits; k++) {
      size_t o = plane_at(n, bits, n - 1, k, &pb);
      if (in[o + pb - 1] & pad) return bbvfl_fail(err, BBVFL_E_PARSE, "packed data: padding bit set in plane %u", k);
    }
  }
  return 0;
}

int bbvfl_packed_add(uint8_t *acc, size_t acc_len, const uint8_t *p, size_t p_len, size_t n, unsigned vbits,
                     unsigned sbits, bbvfl_err *err) {
  if (vbits == 0 || sbits < vbits || sbits > 32)
    return bbvfl_fail(err, BBVFL_E_ARG, "packed sum: %u-bit values into %u-bit sums", vbits, sbits);
  if (acc_len != bbvfl_packed_len(n, sbits) || p_len != bbvfl_packed_len(n, vbits))
    return bbvfl_fail(err, BBVFL_E_ARG, "packed sum: lengths %zu and %zu do not hold %zu values", acc_len, p_len, n);
  for (size_t j = 0; j * 256 < n; j++) {
    size_t w = n - 256 * j < 256 ? n - 256 * j : 256, pb = (w + 7) / 8;
    const uint8_t *x = p + (size_t)vbits * 32 * j;
    uint8_t *a = acc + (size_t)sbits * 32 * j;
    for (size_t b = 0; b < pb; b++) {
      uint8_t c = 0;
      for (unsigned k = 0; k < sbits; k++) {
        uint8_t xk = k < vbits ? x[k * pb + b] : 0;
        uint8_t y = a[k * pb + b], t = (uint8_t)(y ^ xk);
        a[k * pb + b] = (uint8_t)(t ^ c);
        c = (uint8_t)((y & xk) | (c & t));
      }
    }
  }
  return 0;
}

const char *bbvfl_wire_contract(int mode) {
  static const char *const names[] = {"BbvflAggregator", "BbvflHashAggregator", "BbvflPackedAggregator",
                                      "BbvflOptimisticAggregator"};
  return mode >= 0 && mode < 4 ? names[mode] : NULL;
}

int bbvfl_wire_cost_of(bbvfl_wire_mode mode, unsigned m, uint32_t levels, size_t n, bbvfl_wire_cost *out,
                       bbvfl_err *err) {
  if (m == 0 || n == 0 || levels == 0)
    return bbvfl_fail(err, BBVFL_E_ARG, "wire cost: M, n and b must be >= 1 (got %u, %zu, %u)", m, n, (unsigned)levels);
  memset(out, 0, sizeof *out);
  unsigned vb = bbvfl_pack_bits(levels);
  switch (mode) {
    case BBVFL_WIRE_LANES: out->submit_bytes = n; break;
    case BBVFL_WIRE_HASHED:
      out->submit_bytes = n;
      out->aggregate_bytes = (size_t)m * n;
      break;
    case BBVFL_WIRE_PACKED:
      out->submit_bytes = bbvfl_packed_len(n, vb);
      out->aggregate_bytes = (size_t)m * out->submit_bytes;
      break;
    case BBVFL_WIRE_OPTIMISTIC:
      out->submit_bytes = bbvfl_packed_len(n, vb);
      out->aggregate_bytes = 32; /* postSum(round, keccak256(sum)): the hash alone */
      break;
    default: return bbvfl_fail(err, BBVFL_E_ARG, "wire cost: unknown aggregation mode %d", (int)mode);
  }
  double bytes = (double)m * (double)out->submit_bytes + (double)out->aggregate_bytes;
  double values = (double)m * (double)n;
  out->calldata_gas_per_value_cancun = 16.0 * bytes / values;
  out->calldata_gas_per_value_prague = 40.0 * bytes / values;
  return 0;
}
