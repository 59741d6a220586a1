#include "eth/wallet.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <secp256k1_recovery.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"

static secp256k1_context *g_ctx;
static pthread_once_t g_ctx_once = PTHREAD_ONCE_INIT;

static void wipe(void *p, size_t n) {
  volatile uint8_t *v = p;
  while (n--) *v++ = 0;
}

static void ctx_create(void) {
  secp256k1_context *c = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
  if (!c) return;
  /* blinding against side channels; a failure to get randomness leaves it unblinded but correct */
  uint8_t seed[32];
  if (getrandom(seed, sizeof seed, 0) == (ssize_t)sizeof seed) {
    int ok = secp256k1_context_randomize(c, seed); /* cannot fail for a fresh context */
    (void)ok;
  }
  wipe(seed, sizeof seed);
  g_ctx = c;
}

const secp256k1_context *bbvfl_secp256k1_ctx(void) {
  pthread_once(&g_ctx_once, ctx_create);
  return g_ctx;
}

void bbvfl_pub_to_addr(const uint8_t pub[64], uint8_t addr[20]) {
  uint8_t h[32];
  bbvfl_keccak256(pub, 64, h);
  memcpy(addr, h + 12, 20);
}

void bbvfl_key_wipe(bbvfl_key *k) {
  if (k) wipe(k, sizeof *k);
}

int bbvfl_key_from_bytes(const uint8_t priv[32], bbvfl_key *k, bbvfl_err *err) {
  const secp256k1_context *ctx = bbvfl_secp256k1_ctx();
  if (!ctx) return bbvfl_fail(err, BBVFL_E_NOMEM, "cannot create the secp256k1 context");
  if (!secp256k1_ec_seckey_verify(ctx, priv))
    return bbvfl_fail(err, BBVFL_E_CRYPTO,
                      "invalid private key: it must be a number between 1 and the secp256k1 group order - 1");
  secp256k1_pubkey pk;
  if (!secp256k1_ec_pubkey_create(ctx, &pk, priv))
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "cannot derive the public key");
  uint8_t ser[65];
  size_t n = sizeof ser;
  secp256k1_ec_pubkey_serialize(ctx, ser, &n, &pk, SECP256K1_EC_UNCOMPRESSED);
  memmove(k->priv, priv, 32);
  memcpy(k->pub, ser + 1, 64);
  bbvfl_pub_to_addr(k->pub, k->addr);
  return 0;
}

/* Parses a hex key from a string that may carry surrounding whitespace; never echoes it. */
static int key_from_text(const char *text, size_t len, bbvfl_key *k, const char *where,
                         bbvfl_err *err) {
  size_t a = 0, b = len;
  while (a < b && isspace((unsigned char)text[a])) a++;
  while (b > a && isspace((unsigned char)text[b - 1])) b--;
  if (b - a >= 2 && text[a] == '0' && (text[a + 1] == 'x' || text[a + 1] == 'X')) a += 2;
  if (b - a != 64)
    return bbvfl_fail(err, BBVFL_E_CRYPTO,
                      "%s: expected a private key of 64 hex digits (optionally 0x-prefixed), found %zu characters",
                      where, b - a);
  uint8_t priv[32];
  for (size_t i = 0; i < 32; i++) {
    int hi = bbvfl_hex_digit(text[a + 2 * i]), lo = bbvfl_hex_digit(text[a + 2 * i + 1]);
    if (hi < 0 || lo < 0) {
      wipe(priv, sizeof priv);
      return bbvfl_fail(err, BBVFL_E_CRYPTO, "%s: the private key contains a non-hex character", where);
    }
    priv[i] = (uint8_t)(hi << 4 | lo);
  }
  int rc = bbvfl_key_from_bytes(priv, k, err);
  wipe(priv, sizeof priv);
  if (rc < 0) return bbvfl_wrap(err, "%s", where);
  return 0;
}

int bbvfl_key_from_hex(const char *hex, bbvfl_key *k, bbvfl_err *err) {
  if (!hex) return bbvfl_fail(err, BBVFL_E_ARG, "missing private key");
  return key_from_text(hex, strlen(hex), k, "private key", err);
}

int bbvfl_key_load_file(const char *path, bbvfl_key *k, bbvfl_err *err) {
  /* open once and check the opened file, so the checked file is the one that is read */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return bbvfl_fail(err, BBVFL_E_IO, "key file %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return bbvfl_fail(err, BBVFL_E_IO, "key file %s: %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return bbvfl_fail(err, BBVFL_E_IO, "key file %s is not a regular file", path);
  }
  if (st.st_mode & 077) {
    close(fd);
    return bbvfl_fail(err, BBVFL_E_CRYPTO,
                      "key file %s is readable by group or others (mode %03o): run chmod 600 %s",
                      path, (unsigned)(st.st_mode & 0777), path);
  }
  char text[512];
  size_t len = 0;
  for (;;) {
    ssize_t r = read(fd, text + len, sizeof text - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      close(fd);
      wipe(text, sizeof text);
      return bbvfl_fail(err, BBVFL_E_IO, "key file %s: %s", path, strerror(e));
    }
    if (r == 0) break;
    len += (size_t)r;
    if (len == sizeof text) {
      close(fd);
      wipe(text, sizeof text);
      return bbvfl_fail(err, BBVFL_E_CRYPTO, "key file %s is too large to be a key file", path);
    }
  }
  close(fd);
  char where[300];
  snprintf(where, sizeof where, "key file %s", path);
  int rc = key_from_text(text, len, k, where, err);
  wipe(text, sizeof text);
  return rc;
}

int bbvfl_key_load_env(const char *var, bbvfl_key *k, bbvfl_err *err) {
  const char *v = getenv(var);
  if (!v || !*v) return bbvfl_fail(err, BBVFL_E_ARG, "environment variable %s is not set", var);
  char where[160];
  snprintf(where, sizeof where, "environment variable %.100s", var);
  return key_from_text(v, strlen(v), k, where, err);
}

int bbvfl_key_generate(bbvfl_key *k, bbvfl_err *err) {
  const secp256k1_context *ctx = bbvfl_secp256k1_ctx();
  if (!ctx) return bbvfl_fail(err, BBVFL_E_NOMEM, "cannot create the secp256k1 context");
  uint8_t priv[32];
  for (int attempt = 0; attempt < 16; attempt++) {
    ssize_t got = getrandom(priv, sizeof priv, 0);
    if (got != (ssize_t)sizeof priv) {
      wipe(priv, sizeof priv);
      return bbvfl_fail(err, BBVFL_E_CRYPTO, "getrandom failed: %s", strerror(errno));
    }
    if (secp256k1_ec_seckey_verify(ctx, priv)) {
      int rc = bbvfl_key_from_bytes(priv, k, err);
      wipe(priv, sizeof priv);
      return rc;
    }
  }
  wipe(priv, sizeof priv);
  return bbvfl_fail(err, BBVFL_E_CRYPTO, "the random source produced no valid key in 16 attempts");
}

int bbvfl_key_save_file(const char *path, const bbvfl_key *k, bbvfl_err *err) {
  char text[2 * 32 + 4];
  bbvfl_hex_encode(k->priv, 32, text);
  size_t n = strlen(text);
  text[n++] = '\n';
  int rc = bbvfl_write_file_atomic(path, text, n, 0600, err);
  wipe(text, sizeof text);
  if (rc < 0) return bbvfl_wrap(err, "saving key file");
  return 0;
}

void bbvfl_addr_checksum(const uint8_t addr[20], char out[43]) {
  char lower[43];
  bbvfl_hex_encode(addr, 20, lower);
  uint8_t h[32];
  bbvfl_keccak256(lower + 2, 40, h);
  out[0] = '0';
  out[1] = 'x';
  for (int i = 0; i < 40; i++) {
    char c = lower[2 + i];
    int nib = (h[i / 2] >> (i % 2 ? 0 : 4)) & 15;
    out[2 + i] = (c >= 'a' && nib >= 8) ? (char)(c - 'a' + 'A') : c;
  }
  out[42] = '\0';
}

int bbvfl_addr_parse(const char *s, uint8_t addr[20], bbvfl_err *err) {
  if (!s) return bbvfl_fail(err, BBVFL_E_PARSE, "missing address");
  const char *h = s;
  if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) h += 2;
  if (strlen(h) != 40)
    return bbvfl_fail(err, BBVFL_E_PARSE, "address \"%.60s\" must have 40 hex digits", s);
  int lower = 0, upper = 0;
  for (int i = 0; i < 40; i++) {
    if (bbvfl_hex_digit(h[i]) < 0)
      return bbvfl_fail(err, BBVFL_E_PARSE, "address \"%.60s\" has a non-hex character", s);
    if (h[i] >= 'a' && h[i] <= 'f') lower = 1;
    if (h[i] >= 'A' && h[i] <= 'F') upper = 1;
  }
  uint8_t a[20];
  if (bbvfl_hex_decode_fixed(h, a, 20, err) < 0) return -1;
  if (lower && upper) {
    char want[43];
    bbvfl_addr_checksum(a, want);
    if (strcmp(want + 2, h) != 0)
      return bbvfl_fail(err, BBVFL_E_PARSE,
                        "address \"%s\" has a wrong EIP-55 checksum (expected %s): check for a typo",
                        s, want);
  }
  memcpy(addr, a, 20);
  return 0;
}

int bbvfl_sign_hash(const bbvfl_key *k, const uint8_t hash[32], uint8_t sig[65], bbvfl_err *err) {
  const secp256k1_context *ctx = bbvfl_secp256k1_ctx();
  if (!ctx) return bbvfl_fail(err, BBVFL_E_NOMEM, "cannot create the secp256k1 context");
  secp256k1_ecdsa_recoverable_signature rs;
  if (!secp256k1_ecdsa_sign_recoverable(ctx, &rs, hash, k->priv, NULL, NULL))
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "signing failed (invalid private key?)");
  int recid = 0;
  secp256k1_ecdsa_recoverable_signature_serialize_compact(ctx, sig, &recid, &rs);
  sig[64] = (uint8_t)recid;
  return 0;
}

int bbvfl_recover_addr(const uint8_t hash[32], const uint8_t sig[65], uint8_t addr[20],
                       bbvfl_err *err) {
  const secp256k1_context *ctx = bbvfl_secp256k1_ctx();
  if (!ctx) return bbvfl_fail(err, BBVFL_E_NOMEM, "cannot create the secp256k1 context");
  if (sig[64] > 1) return bbvfl_fail(err, BBVFL_E_CRYPTO, "signature recovery id %u is not 0 or 1", sig[64]);
  secp256k1_ecdsa_recoverable_signature rs;
  if (!secp256k1_ecdsa_recoverable_signature_parse_compact(ctx, &rs, sig, sig[64]))
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "malformed signature (r or s out of range)");
  /* reject high S (EIP-2): normalize and compare */
  secp256k1_ecdsa_signature plain, norm;
  secp256k1_ecdsa_recoverable_signature_convert(ctx, &plain, &rs);
  if (secp256k1_ecdsa_signature_normalize(ctx, &norm, &plain))
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "signature has a high S value (not allowed since EIP-2)");
  secp256k1_pubkey pk;
  if (!secp256k1_ecdsa_recover(ctx, &pk, &rs, hash))
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "cannot recover a public key from the signature");
  uint8_t ser[65];
  size_t n = sizeof ser;
  secp256k1_ec_pubkey_serialize(ctx, ser, &n, &pk, SECP256K1_EC_UNCOMPRESSED);
  bbvfl_pub_to_addr(ser + 1, addr);
  return 0;
}
