#include "dp/mech.h"

#include <math.h>
#include <string.h>

int bbvfl_mech_parse(const char *name, bbvfl_mech_kind *out) {
  if (strcmp(name, "npq") == 0) *out = BBVFL_MECH_NPQ;
  else if (strcmp(name, "pbm") == 0) *out = BBVFL_MECH_PBM;
  else if (strcmp(name, "gaussian") == 0) *out = BBVFL_MECH_GAUSSIAN;
  else return -1;
  return 0;
}

const char *bbvfl_mech_name(bbvfl_mech_kind k) {
  switch (k) {
  case BBVFL_MECH_NPQ: return "npq";
  case BBVFL_MECH_PBM: return "pbm";
  case BBVFL_MECH_GAUSSIAN: return "gaussian";
  }
  return "?";
}

int bbvfl_pbm_lanes_fit(long clients, long b) { return clients * b <= BBVFL_MAX_LANE; }

int bbvfl_mech_check(const bbvfl_mech *m, bbvfl_err *err) {
  switch (m->kind) {
  case BBVFL_MECH_NPQ: return 0;
  case BBVFL_MECH_PBM:
    if (m->b < 1 || m->b > 255)
      return bbvfl_fail(err, BBVFL_E_ARG, "PBM b must be in 1..255 (one byte per coordinate), got %d", m->b);
    if (!(m->beta > 0 && m->beta < 0.5))
      return bbvfl_fail(err, BBVFL_E_ARG,
                        "PBM beta must be in (0, 0.5), got %g (at 0.5 an input at +-C is released exactly: "
                        "no privacy, infinite epsilon)",
                        m->beta);
    if (!(m->C > 0 && isfinite(m->C)))
      return bbvfl_fail(err, BBVFL_E_ARG, "PBM bound C must be positive, got %g", m->C);
    return 0;
  case BBVFL_MECH_GAUSSIAN:
    if (!(m->clip > 0 && isfinite(m->clip)))
      return bbvfl_fail(err, BBVFL_E_ARG, "Gaussian clip norm must be positive, got %g", m->clip);
    if (!(m->sigma > 0 && isfinite(m->sigma)))
      return bbvfl_fail(err, BBVFL_E_ARG, "Gaussian sigma must be positive, got %g", m->sigma);
    return 0;
  }
  return bbvfl_fail(err, BBVFL_E_ARG, "unknown mechanism");
}

/* Each value is bbvfl_rng_binomial(r, b, 0.5 + beta x / C), drawing the same words in the same
   order; the words of a chunk of values come from one bbvfl_rng_u64_fill (the per-call cost of
   the key stream dominated the draws) and are wiped afterwards. */
void bbvfl_pbm_quantize(const bbvfl_mech *m, const float *h, size_t n, bbvfl_rng *r, uint8_t *q) {
  enum { WORDS = 2048 };
  uint64_t w[WORDS], t[WORDS];
  uint8_t kind[WORDS]; /* per value: 0 draws b words, 1 is b (p >= 1), 2 is 0 (p <= 0) */
  unsigned b = (unsigned)m->b;
  size_t per = b ? WORDS / b : WORDS; /* values per chunk: b <= 255 words each */
  double k = m->beta / m->C;
  for (size_t i0 = 0; i0 < n; i0 += per) {
    size_t i1 = n - i0 < per ? n : i0 + per, need = 0;
    for (size_t i = i0; i < i1; i++) {
      double x = h[i];
      if (x > m->C) x = m->C;
      if (x < -m->C) x = -m->C;
      if (x != x) x = 0; /* NaN cannot leak as anything but the no-information value */
      int always;
      t[i - i0] = bbvfl_bernoulli_threshold(0.5 + k * x, &always);
      kind[i - i0] = always ? 1 : t[i - i0] == 0 ? 2 : 0;
      if (kind[i - i0] == 0) need += b;
    }
    bbvfl_rng_u64_fill(r, w, need);
    const uint64_t *wp = w;
    for (size_t i = i0; i < i1; i++) {
      unsigned c = 0;
      if (kind[i - i0] == 0) {
        for (unsigned j = 0; j < b; j++) c += wp[j] < t[i - i0];
        wp += b;
      } else if (kind[i - i0] == 1) {
        c = b;
      }
      q[i] = (uint8_t)c;
    }
  }
  bbvfl_secret_wipe(w, sizeof w);
}

void bbvfl_pbm_estimate(const bbvfl_mech *m, int M, const uint32_t *s, size_t n, float *h_hat) {
  double scale = m->C / (m->beta * m->b), center = (double)m->b * M / 2.0;
  for (size_t i = 0; i < n; i++) h_hat[i] = (float)(scale * ((double)s[i] - center));
}

double bbvfl_pbm_variance(const bbvfl_mech *m, int M) {
  return m->C * m->C * M / (4.0 * m->beta * m->beta * m->b);
}

void bbvfl_gauss_clip_noise(const bbvfl_mech *m, float *h, size_t rows, size_t P, bbvfl_rng *r,
                            float *scale) {
  for (size_t i = 0; i < rows; i++) {
    float *row = h + i * P;
    double nrm = 0;
    for (size_t j = 0; j < P; j++) nrm += (double)row[j] * row[j];
    nrm = sqrt(nrm);
    double s = nrm > m->clip ? m->clip / nrm : 1.0;
    if (scale) scale[i] = (float)s;
    for (size_t j = 0; j < P; j++) row[j] = (float)(row[j] * s + m->sigma * bbvfl_rng_normal(r));
  }
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Sixteen bytes at a time in GCC/Clang vector registers: viewed as eight 16-bit lanes, the low
 * byte of each lane is element 2k, the high byte element 2k+1; both are accumulated over up to
 * 257 clients (257 * 255 < 65536) before widening into the uint32 sums. */
typedef uint16_t bbvfl_v8u16 __attribute__((vector_size(16)));

void bbvfl_sum_u8(const uint8_t *const *q, size_t M, size_t n, uint32_t *s) {
  memset(s, 0, n * sizeof *s);
  size_t nv = n / 16;
  for (size_t m0 = 0; m0 < M; m0 += 257) {
    size_t m1 = M - m0 < 257 ? M : m0 + 257;
    for (size_t w = 0; w < nv; w++) {
      bbvfl_v8u16 ev = {0}, od = {0};
      for (size_t m = m0; m < m1; m++) {
        bbvfl_v8u16 x;
        memcpy(&x, q[m] + 16 * w, 16);
        ev += x & 0xFF;
        od += x >> 8;
      }
      uint16_t E[8], O[8];
      memcpy(E, &ev, 16);
      memcpy(O, &od, 16);
      uint32_t *o = s + 16 * w;
      for (int k = 0; k < 8; k++) {
        o[2 * k] += E[k];
        o[2 * k + 1] += O[k];
      }
    }
    for (size_t m = m0; m < m1; m++)
      for (size_t i = 16 * nv; i < n; i++) s[i] += q[m][i];
  }
}
#else
/* SWAR: eight bytes at a time, spread into two words of four 16-bit lanes (even and odd bytes),
 * accumulated over up to 257 clients (257 * 255 < 65536) before widening into the uint32 sums. */
void bbvfl_sum_u8(const uint8_t *const *q, size_t M, size_t n, uint32_t *s) {
  const uint64_t LANES = UINT64_C(0x00FF00FF00FF00FF);
  memset(s, 0, n * sizeof *s);
  size_t nw = n / 8;
  for (size_t m0 = 0; m0 < M; m0 += 257) {
    size_t m1 = M - m0 < 257 ? M : m0 + 257;
    for (size_t w = 0; w < nw; w++) {
      uint64_t ev = 0, od = 0;
      for (size_t m = m0; m < m1; m++) {
        uint64_t x;
        memcpy(&x, q[m] + 8 * w, 8);
        ev += x & LANES;
        od += (x >> 8) & LANES;
      }
      uint32_t *o = s + 8 * w;
      /* little-endian byte k of the word is element 8w+k */
      uint8_t tmp[8];
      uint64_t one = 1;
      memcpy(tmp, &one, 8);
      if (tmp[0] == 1) {
        o[0] += (uint32_t)(ev & 0xFFFF);
        o[2] += (uint32_t)((ev >> 16) & 0xFFFF);
        o[4] += (uint32_t)((ev >> 32) & 0xFFFF);
        o[6] += (uint32_t)(ev >> 48);
        o[1] += (uint32_t)(od & 0xFFFF);
        o[3] += (uint32_t)((od >> 16) & 0xFFFF);
        o[5] += (uint32_t)((od >> 32) & 0xFFFF);
        o[7] += (uint32_t)(od >> 48);
      } else { /* big-endian host: byte k is bits 56-8k */
        o[7] += (uint32_t)(ev & 0xFFFF);
        o[5] += (uint32_t)((ev >> 16) & 0xFFFF);
        o[3] += (uint32_t)((ev >> 32) & 0xFFFF);
        o[1] += (uint32_t)(ev >> 48);
        o[6] += (uint32_t)(od & 0xFFFF);
        o[4] += (uint32_t)((od >> 16) & 0xFFFF);
        o[2] += (uint32_t)((od >> 32) & 0xFFFF);
        o[0] += (uint32_t)(od >> 48);
      }
    }
    for (size_t m = m0; m < m1; m++)
      for (size_t i = 8 * nw; i < n; i++) s[i] += q[m][i];
  }
}
#endif
