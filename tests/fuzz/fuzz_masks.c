/* Fuzz target: masked-mode masking. The input picks a participant set, b, a round and the
 * clients' q vectors (values may exceed b) for six fixed clients, plus an arbitrary 64-byte
 * "public key" for ECDH. Properties: every call either succeeds or fails with a message; when
 * every member's masking succeeds, the lane sum equals the sum of the unmasked q exactly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dp/masks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

enum { M = 6, MAXN = 48 };

static bbvfl_masker g_mk[M];
static int g_ready;

static void setup(void) {
  bbvfl_key k[M];
  uint8_t pubs[M][64], sess[32];
  static const uint8_t contract[20] = {1, 2, 3};
  for (unsigned i = 0; i < M; i++) {
    uint8_t priv[32];
    memset(priv, (int)(0x11 * (i + 1)), sizeof priv);
    if (bbvfl_key_from_bytes(priv, &k[i], NULL)) abort();
    memcpy(pubs[i], k[i].pub, 64);
  }
  bbvfl_mask_session_id(31337, contract, sess);
  for (unsigned i = 0; i < M; i++) {
    if (bbvfl_masker_init(&g_mk[i], &k[i], i, M, (const uint8_t(*)[64])pubs, sess, NULL)) abort();
    bbvfl_key_wipe(&k[i]);
  }
  g_ready = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g_ready) setup();
  if (size < 8) return 0;
  uint64_t set = data[0] & 0xff; /* bits 6, 7 name unregistered clients: must be refused */
  unsigned levels = (unsigned)data[1] | (unsigned)data[2] << 8;
  uint64_t round = (uint64_t)data[3] | (uint64_t)data[4] << 8 | (uint64_t)(data[5] & 0x03) << 32;
  size_t n = data[6] % (MAXN + 1);
  const uint8_t *rest = data + 8;
  size_t rlen = size - 8;

  if (data[7] & 1 && rlen >= 64) { /* ECDH with an arbitrary peer key */
    uint8_t shared[33];
    bbvfl_err err;
    if (bbvfl_mask_ecdh((const uint8_t[32]){1}, rest, shared, &err) != 0 && !err.msg[0]) abort();
  }

  static uint16_t q[M][MAXN];
  static uint8_t y[M][2 * MAXN];
  const uint8_t *subs[M];
  uint32_t want[MAXN] = {0};
  int all_ok = 1, members = 0;
  for (unsigned i = 0; i < M; i++) {
    for (size_t j = 0; j < n; j++) {
      size_t at = (i * MAXN + j) * 2;
      /* values above b only when bit 1 of data[7] is set */
      q[i][j] = (uint16_t)(at + 1 < rlen ? (rest[at] | rest[at + 1] << 8) % (levels + 1 + (data[7] >> 1 & 1)) : 0);
    }
    if (!(set >> i & 1)) continue;
    members++;
    bbvfl_err err;
    err.msg[0] = 0;
    if (bbvfl_masker_mask_u16(&g_mk[i], round, set, levels, q[i], n, y[i], &err) != 0) {
      if (!err.msg[0]) abort();
      all_ok = 0;
      continue;
    }
    for (size_t j = 0; j < n; j++) want[j] += q[i][j];
    subs[members - 1] = y[i];
  }
  if (all_ok && members > 0) {
    /* success implies a valid input: set within the clients, |S| * b < 65536, q <= b */
    if (set >> M) abort();
    if ((unsigned long)members * levels >= 65536) abort();
    uint16_t sum[MAXN];
    bbvfl_mask_lane_sum(subs, (size_t)members, n, sum);
    for (size_t j = 0; j < n; j++)
      if (sum[j] != want[j]) abort();
  }
  return 0;
}

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  static uint8_t s1[8 + 2 * M * MAXN];
  s1[0] = 0x3f; /* all six */
  s1[1] = 16;
  s1[6] = 40;
  for (size_t i = 8; i < sizeof s1; i++) s1[i] = (uint8_t)(i * 7);
  add(s1, sizeof s1);
  static uint8_t s2[8 + 64];
  s2[0] = 0x05;
  s2[1] = 0xff;
  s2[2] = 0x2f;
  s2[6] = 10;
  s2[7] = 1;
  add(s2, sizeof s2);
}
