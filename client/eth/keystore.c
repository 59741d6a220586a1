/* Web3 Secret Storage v3 key files over libsodium (scrypt) and OpenSSL's libcrypto. See keystore.h. */
#include "eth/keystore.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"

#define KS_MAX_FILE (64u << 10)
#define KS_MAX_LOG_N 20                /* writing: scrypt n up to 2^20, 1 GiB with r = 8 */
#define KS_MAX_SCRYPT_MEM (2ull << 30) /* reading: scrypt's memory up to 2 GiB */
#define KS_MAX_SCRYPT_LOG_WORK 27      /* reading: n r p up to 2^27, 64 times geth's 2^18 * 8 * 1 */
#define KS_MAX_PBKDF2_C 10000000LL
#define KS_WRITE_LOG_N 18

static void wipe(void *p, size_t n) { OPENSSL_cleanse(p, n); }

/* scrypt's memory in bytes: 128 r n for V, 128 r p for B, 256 r for XY (exact in a double near the
 * limit, and no overflow for any n, r, p). */
static double scrypt_mem(long long n, long long r, long long p) {
  return 128.0 * (double)r * ((double)n + (double)p + 2.0);
}

/* A hex string field of o (with or without 0x) of exactly n bytes into out. */
static int hex_field(const json_t *o, const char *name, uint8_t *out, size_t n, bbvfl_err *err) {
  const char *s = json_string_value(json_object_get(o, name));
  if (!s) return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: \"%s\" is missing or not a string", name);
  bbvfl_err e = {0};
  if (bbvfl_hex_decode_fixed(s, out, n, &e) != 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: \"%s\" is not %zu bytes of hex", name, n);
  return 0;
}

static int int_field(const json_t *o, const char *name, long long lo, long long hi, long long *out, bbvfl_err *err) {
  const json_t *v = json_object_get(o, name);
  if (!json_is_integer(v)) return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: kdfparams \"%s\" is missing or not an integer", name);
  long long x = (long long)json_integer_value(v);
  if (x < lo || x > hi)
    return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: kdfparams \"%s\" = %lld is outside %lld..%lld", name, x, lo, hi);
  *out = x;
  return 0;
}

/* The one scrypt here (reading and writing): libsodium's, which takes any valid n, r, p (OpenSSL's
 * refuses n >= 2^(16 r): r = 1 keystores with n >= 2^16). The parameters are checked first, and
 * the limits keep a hostile keystore from taking the machine's memory or hours of CPU. */
static int scrypt_check(long long n, long long r, long long p, bbvfl_err *err) {
  if (n < 2 || (n & (n - 1)) != 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: scrypt n must be a power of two > 1 (got %lld)", n);
  if (r < 1) return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: scrypt r must be >= 1 (got %lld)", r);
  if (p < 1) return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: scrypt p must be >= 1 (got %lld)", p);
  double mem = scrypt_mem(n, r, p), gib = (double)(1ull << 30);
  if (mem > (double)KS_MAX_SCRYPT_MEM)
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "keystore: scrypt parameters need %.1f GiB of memory (%.0f bytes for n=%lld, r=%lld, p=%lld): "
                      "over the limit of %.1f GiB (%llu bytes)",
                      mem / gib, mem, n, r, p, (double)KS_MAX_SCRYPT_MEM / gib, (unsigned long long)KS_MAX_SCRYPT_MEM);
  double work = (double)n * (double)r * (double)p;
  if (work > (double)(1ull << KS_MAX_SCRYPT_LOG_WORK))
    return bbvfl_fail(err, BBVFL_E_ARG,
                      "keystore: scrypt parameters need n*r*p = %.3g (n=%lld, r=%lld, p=%lld): over the limit of 2^%d "
                      "(%d times geth's n=2^18, r=8, p=1)",
                      work, n, r, p, KS_MAX_SCRYPT_LOG_WORK, 1 << (KS_MAX_SCRYPT_LOG_WORK - 21));
  return 0;
}

/* The scrypt key of password and salt into dk, after scrypt_check. */
static int scrypt_dk(const char *password, size_t pwlen, const uint8_t *salt, size_t salt_len, long long n, long long r,
                     long long p, uint8_t dk[32], bbvfl_err *err) {
  if (scrypt_check(n, r, p, err) < 0) return -1;
  if (sodium_init() < 0) return bbvfl_fail(err, BBVFL_E_CRYPTO, "keystore: libsodium could not be initialised");
  static const uint8_t none = 0; /* libsodium wants pointers, even to 0 bytes */
  errno = 0;
  if (crypto_pwhash_scryptsalsa208sha256_ll(pwlen ? (const uint8_t *)password : &none, pwlen, salt_len ? salt : &none,
                                            salt_len, (uint64_t)n, (uint32_t)r, (uint32_t)p, dk, 32) == 0)
    return 0;
  int e = errno;
  wipe(dk, 32);
  if (e == ENOMEM)
    return bbvfl_fail(err, BBVFL_E_NOMEM,
                      "keystore: scrypt (n=%lld, r=%lld, p=%lld) could not get its %.0f MiB of memory", n, r, p,
                      scrypt_mem(n, r, p) / (double)(1u << 20));
  return bbvfl_fail(err, BBVFL_E_CRYPTO, "keystore: scrypt (n=%lld, r=%lld, p=%lld) failed in libsodium: %s", n, r, p,
                    e ? strerror(e) : "no reason given");
}

/* Derives the 32-byte key from the kdf and its parameters. */
static int derive(const char *kdf, const json_t *kp, const char *password, size_t pwlen, uint8_t dk[32],
                  bbvfl_err *err) {
  if (!json_is_object(kp)) return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: \"kdfparams\" is missing or not an object");
  long long dklen = 0;
  if (int_field(kp, "dklen", LLONG_MIN, LLONG_MAX, &dklen, err) < 0) return -1;
  if (dklen != 32) return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: kdfparams \"dklen\" must be 32 (got %lld)", dklen);
  const char *salt_hex = json_string_value(json_object_get(kp, "salt"));
  if (!salt_hex) return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: kdfparams \"salt\" is missing or not a string");
  uint8_t *salt = NULL;
  size_t salt_len = 0;
  bbvfl_err e = {0};
  if (bbvfl_hex_decode_alloc(salt_hex, &salt, &salt_len, &e) != 0)
    return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: kdfparams \"salt\" is not hex");
  int rc = -1;
  if (strcmp(kdf, "scrypt") == 0) {
    long long n, r, p; /* any integers: scrypt_check names what is wrong with them */
    if (int_field(kp, "n", LLONG_MIN, LLONG_MAX, &n, err) < 0 ||
        int_field(kp, "r", LLONG_MIN, LLONG_MAX, &r, err) < 0 || int_field(kp, "p", LLONG_MIN, LLONG_MAX, &p, err) < 0)
      goto out;
    if (scrypt_dk(password, pwlen, salt, salt_len, n, r, p, dk, err) < 0) goto out;
  } else if (strcmp(kdf, "pbkdf2") == 0) {
    const char *prf = json_string_value(json_object_get(kp, "prf"));
    if (!prf || strcmp(prf, "hmac-sha256") != 0) {
      bbvfl_fail(err, BBVFL_E_PARSE, "keystore: pbkdf2 prf \"%.40s\" is not supported (only hmac-sha256)",
                 prf ? prf : "(missing)");
      goto out;
    }
    long long c;
    if (int_field(kp, "c", 1, KS_MAX_PBKDF2_C, &c, err) < 0) goto out;
    if (PKCS5_PBKDF2_HMAC(password, (int)pwlen, salt, (int)salt_len, (int)c, EVP_sha256(), 32, dk) != 1) {
      bbvfl_fail(err, BBVFL_E_CRYPTO, "keystore: PBKDF2 failed in libcrypto");
      goto out;
    }
  } else {
    bbvfl_fail(err, BBVFL_E_PARSE, "keystore: kdf \"%.40s\" is not supported (scrypt or pbkdf2)", kdf);
    goto out;
  }
  rc = 0;
out:
  free(salt);
  return rc;
}

static void mac_of(const uint8_t dk[32], const uint8_t *ct, size_t ct_len, uint8_t mac[32]) {
  bbvfl_keccak_ctx c;
  bbvfl_keccak_init(&c);
  bbvfl_keccak_update(&c, dk + 16, 16);
  bbvfl_keccak_update(&c, ct, ct_len);
  bbvfl_keccak_final(&c, mac);
}

/* AES-128-CTR of n bytes with key dk[0:16] (encryption and decryption are the same). */
static int aes_ctr(const uint8_t key[16], const uint8_t iv[16], const uint8_t *in, size_t n, uint8_t *out,
                   bbvfl_err *err) {
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
  int l1 = 0, l2 = 0;
  int ok = c && EVP_EncryptInit_ex(c, EVP_aes_128_ctr(), NULL, key, iv) == 1 &&
           EVP_EncryptUpdate(c, out, &l1, in, (int)n) == 1 && EVP_EncryptFinal_ex(c, out + l1, &l2) == 1 &&
           (size_t)(l1 + l2) == n;
  EVP_CIPHER_CTX_free(c);
  return ok ? 0 : bbvfl_fail(err, BBVFL_E_CRYPTO, "keystore: AES-128-CTR failed in libcrypto");
}

int bbvfl_keystore_decrypt(const char *text, size_t len, const char *password, size_t pwlen, bbvfl_key *k,
                           bbvfl_err *err) {
  memset(k, 0, sizeof *k);
  json_error_t je;
  json_t *root = json_loadb(text, len, 0, &je);
  if (!json_is_object(root)) {
    json_decref(root);
    return bbvfl_fail(err, BBVFL_E_PARSE, "keystore: not a JSON object (line %d: %s)", je.line,
                      root ? "another JSON value" : je.text);
  }
  int rc = -1;
  uint8_t dk[32], mac[32], want[32], iv[16], ct[32], priv[32];
  json_t *version = json_object_get(root, "version");
  json_t *cr = json_object_get(root, "crypto");
  if (!cr) cr = json_object_get(root, "Crypto");
  if (!json_is_integer(version) || json_integer_value(version) != 3) {
    bbvfl_fail(err, BBVFL_E_PARSE, "keystore: \"version\" is not 3 (only Web3 Secret Storage v3 is read)");
    goto out;
  }
  if (!json_is_object(cr)) {
    bbvfl_fail(err, BBVFL_E_PARSE, "keystore: \"crypto\" is missing or not an object");
    goto out;
  }
  const char *cipher = json_string_value(json_object_get(cr, "cipher"));
  const char *kdf = json_string_value(json_object_get(cr, "kdf"));
  if (!cipher || strcmp(cipher, "aes-128-ctr") != 0) {
    bbvfl_fail(err, BBVFL_E_PARSE, "keystore: cipher \"%.40s\" is not supported (only aes-128-ctr)",
               cipher ? cipher : "(missing)");
    goto out;
  }
  if (!kdf) {
    bbvfl_fail(err, BBVFL_E_PARSE, "keystore: \"kdf\" is missing or not a string");
    goto out;
  }
  if (hex_field(json_object_get(cr, "cipherparams"), "iv", iv, 16, err) < 0 ||
      hex_field(cr, "ciphertext", ct, 32, err) < 0 || hex_field(cr, "mac", want, 32, err) < 0)
    goto out;
  if (derive(kdf, json_object_get(cr, "kdfparams"), password, pwlen, dk, err) < 0) goto out;
  mac_of(dk, ct, sizeof ct, mac);
  if (CRYPTO_memcmp(mac, want, 32) != 0) {
    bbvfl_fail(err, BBVFL_E_CRYPTO, "keystore: wrong password (the keystore's MAC does not match)");
    goto out;
  }
  if (aes_ctr(dk, iv, ct, sizeof ct, priv, err) < 0) goto out;
  if (bbvfl_key_from_bytes(priv, k, err) < 0) {
    bbvfl_wrap(err, "keystore: the decrypted key");
    goto out;
  }
  const char *addr = json_string_value(json_object_get(root, "address"));
  if (addr) {
    uint8_t a[20];
    bbvfl_err e = {0};
    if (bbvfl_hex_decode_fixed(addr, a, 20, &e) != 0 || memcmp(a, k->addr, 20) != 0) {
      bbvfl_key_wipe(k);
      bbvfl_fail(err, BBVFL_E_CRYPTO, "keystore: the \"address\" field is not the address of the key it holds");
      goto out;
    }
  }
  rc = 0;
out:
  wipe(dk, sizeof dk);
  wipe(priv, sizeof priv);
  json_decref(root);
  return rc;
}

int bbvfl_keystore_load(const char *path, const char *password, size_t pwlen, bbvfl_key *k, bbvfl_err *err) {
  char *text = NULL;
  size_t len = 0;
  memset(k, 0, sizeof *k);
  if (bbvfl_read_file(path, KS_MAX_FILE, &text, &len, err) < 0) return bbvfl_wrap(err, "keystore %s", path);
  int rc = bbvfl_keystore_decrypt(text, len, password, pwlen, k, err);
  free(text);
  return rc < 0 ? bbvfl_wrap(err, "%s", path) : 0;
}

static void hex_plain(const uint8_t *b, size_t n, char *out) {
  char tmp[2 * 64 + 3];
  bbvfl_hex_encode(b, n, tmp);
  memcpy(out, tmp + 2, 2 * n + 1);
}

int bbvfl_keystore_encrypt(const bbvfl_key *k, const char *password, size_t pwlen, unsigned log_n, char **out,
                           bbvfl_err *err) {
  *out = NULL;
  if (log_n == 0) log_n = KS_WRITE_LOG_N;
  if (log_n > KS_MAX_LOG_N) return bbvfl_fail(err, BBVFL_E_ARG, "keystore: scrypt log2 n %u is above %d", log_n, KS_MAX_LOG_N);
  uint8_t salt[32], iv[16], uuid[16], dk[32], ct[32], mac[32];
  if (RAND_bytes(salt, sizeof salt) != 1 || RAND_bytes(iv, sizeof iv) != 1 || RAND_bytes(uuid, sizeof uuid) != 1)
    return bbvfl_fail(err, BBVFL_E_CRYPTO, "keystore: no random bytes from libcrypto");
  uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40); /* version 4 */
  uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80); /* RFC 4122 variant */
  uint64_t n = 1ull << log_n;
  if (scrypt_dk(password, pwlen, salt, sizeof salt, (long long)n, 8, 1, dk, err) < 0) return -1;
  int rc = -1;
  if (aes_ctr(dk, iv, k->priv, 32, ct, err) < 0) goto done;
  mac_of(dk, ct, sizeof ct, mac);
  char s_addr[41], s_salt[65], s_iv[33], s_ct[65], s_mac[65], s_id[37], u[33];
  hex_plain(k->addr, 20, s_addr);
  hex_plain(salt, 32, s_salt);
  hex_plain(iv, 16, s_iv);
  hex_plain(ct, 32, s_ct);
  hex_plain(mac, 32, s_mac);
  hex_plain(uuid, 16, u);
  snprintf(s_id, sizeof s_id, "%.8s-%.4s-%.4s-%.4s-%.12s", u, u + 8, u + 12, u + 16, u + 20);
  json_t *o = json_pack("{s:s, s:{s:s, s:{s:s}, s:s, s:s, s:{s:i, s:I, s:i, s:i, s:s}, s:s}, s:s, s:i}", "address",
                        s_addr, "crypto", "cipher", "aes-128-ctr", "cipherparams", "iv", s_iv, "ciphertext", s_ct,
                        "kdf", "scrypt", "kdfparams", "dklen", 32, "n", (json_int_t)n, "p", 1, "r", 8, "salt",
                        s_salt, "mac", s_mac, "id", s_id, "version", 3);
  char *text = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
  json_decref(o);
  if (!text) {
    bbvfl_fail(err, BBVFL_E_NOMEM, "keystore: out of memory");
    goto done;
  }
  *out = text;
  rc = 0;
done:
  wipe(dk, sizeof dk);
  return rc;
}

int bbvfl_keystore_save(const char *path, const bbvfl_key *k, const char *password, size_t pwlen, unsigned log_n,
                        bbvfl_err *err) {
  struct stat st;
  if (lstat(path, &st) == 0)
    return bbvfl_fail(err, BBVFL_E_IO, "keystore %s already exists: it is never replaced (choose another file)", path);
  char *text;
  if (bbvfl_keystore_encrypt(k, password, pwlen, log_n, &text, err) < 0) return -1;
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 32);
  if (!tmp) {
    free(text);
    return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory writing %s", path);
  }
  snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
  int rc = -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    bbvfl_fail(err, BBVFL_E_IO, "cannot write keystore %s: %s", path, strerror(errno));
    goto out;
  }
  size_t len = strlen(text), off = 0;
  int bad = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      bad = errno ? errno : EIO;
      break;
    }
    off += (size_t)w;
  }
  if (!bad && write(fd, "\n", 1) != 1) bad = errno ? errno : EIO;
  if (!bad && fsync(fd) != 0) bad = errno;
  if (close(fd) != 0 && !bad) bad = errno;
  /* link(2) never replaces an existing file: the keystore appears whole, or not at all */
  if (!bad && link(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    if (e == EEXIST)
      bbvfl_fail(err, BBVFL_E_IO, "keystore %s already exists: it is never replaced (choose another file)", path);
    else
      bbvfl_fail(err, BBVFL_E_IO, "cannot write keystore %s: %s", path, strerror(e));
    goto out;
  }
  unlink(tmp);
  if (bad) {
    bbvfl_fail(err, BBVFL_E_IO, "cannot write keystore %s: %s (nothing was written)", path, strerror(bad));
    goto out;
  }
  rc = 0;
out:
  free(tmp);
  free(text);
  return rc;
}

int bbvfl_password_load(const char *file, const char *env, char **pw, size_t *len, bbvfl_err *err) {
  *pw = NULL;
  *len = 0;
  if ((file != NULL) == (env != NULL))
    return bbvfl_fail(err, BBVFL_E_ARG, "a keystore needs exactly one of --password-file FILE or --password-env VAR");
  const char *src;
  size_t n;
  char *text = NULL;
  if (env) {
    src = getenv(env);
    if (!src) return bbvfl_fail(err, BBVFL_E_ARG, "--password-env %s: the environment variable is not set", env);
    n = strlen(src);
  } else {
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0) return bbvfl_fail(err, BBVFL_E_IO, "--password-file %s: %s", file, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return bbvfl_fail(err, BBVFL_E_IO, "--password-file %s is not a regular file", file);
    }
    if (st.st_mode & 077) {
      close(fd);
      return bbvfl_fail(err, BBVFL_E_CRYPTO, "--password-file %s is readable by group or others (mode %03o): run chmod 600 %s",
                        file, (unsigned)(st.st_mode & 0777), file);
    }
    close(fd);
    if (bbvfl_read_file(file, 4096, &text, &n, err) < 0) return bbvfl_wrap(err, "--password-file");
    src = text;
    const char *nl = memchr(text, '\n', n);
    if (nl) n = (size_t)(nl - text);
    if (n > 0 && text[n - 1] == '\r') n--;
  }
  char *p = malloc(n + 1);
  if (p) {
    memcpy(p, src, n);
    p[n] = 0;
  }
  if (text) {
    wipe(text, strlen(text));
    free(text);
  }
  if (!p) return bbvfl_fail(err, BBVFL_E_NOMEM, "out of memory reading the password");
  *pw = p;
  *len = n;
  return 0;
}

void bbvfl_password_free(char *pw, size_t len) {
  if (!pw) return;
  wipe(pw, len);
  free(pw);
}

int bbvfl_key_source_given(const bbvfl_key_source *s) { return s->key_file || s->key_env || s->keystore; }

int bbvfl_key_source_load(const bbvfl_key_source *s, bbvfl_key *k, bbvfl_err *err) {
  memset(k, 0, sizeof *k);
  int given = (s->key_file != NULL) + (s->key_env != NULL) + (s->keystore != NULL);
  if (given != 1)
    return bbvfl_fail(err, BBVFL_E_ARG, "give exactly one of --key-file FILE, --key-env VAR or --keystore FILE");
  if (!s->keystore && (s->password_file || s->password_env))
    return bbvfl_fail(err, BBVFL_E_ARG, "--password-file / --password-env go with --keystore FILE only");
  if (s->key_file) return bbvfl_key_load_file(s->key_file, k, err);
  if (s->key_env) return bbvfl_key_load_env(s->key_env, k, err);
  char *pw;
  size_t pwlen;
  if (bbvfl_password_load(s->password_file, s->password_env, &pw, &pwlen, err) < 0)
    return bbvfl_wrap(err, "--keystore %s", s->keystore);
  int rc = bbvfl_keystore_load(s->keystore, pw, pwlen, k, err);
  bbvfl_password_free(pw, pwlen);
  return rc < 0 ? bbvfl_wrap(err, "--keystore") : 0;
}
