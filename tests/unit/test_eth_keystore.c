/* Web3 Secret Storage v3 keystores (eth/keystore.h): a key written and read back (scrypt), a
 * pbkdf2 keystore built here with libcrypto read, scrypt keystores at other valid parameters
 * sealed here by the spec and read (r = 1 with n >= 2^16, which OpenSSL's scrypt refuses; p > 1;
 * RFC 7914's vectors), and each defect refused with its own clear error: a wrong password, a bad
 * MAC, corrupt JSON, an unknown KDF or cipher, an address that is not the key's, scrypt parameters
 * that are invalid (n not a power of two > 1, r or p < 1) or over the memory or work limit, a
 * malformed kdfparams field; the password file's first line; a keystore file never replaced,
 * created 0600.
 * (Files made by the pinned `cast wallet`: tests/cli/test_keystore.sh.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <sodium.h>

#include "common/fsutil.h"
#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/keystore.h"
#include "eth/wallet.h"

#define PW "correct horse"

static void key_of(bbvfl_key *k) {
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_key_from_hex("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318", k, &err), 0);
}

/* A fresh keystore of the test key (scrypt n = 2^10) as JSON. */
static json_t *fresh(void) {
  bbvfl_key k;
  key_of(&k);
  char *text = NULL;
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_keystore_encrypt(&k, PW, strlen(PW), 10, &text, &err), 0);
  json_t *o = json_loads(text, 0, NULL);
  free(text);
  assert_non_null(o);
  return o;
}

/* Decrypts o with pw: the return code, err filled. */
static int open_json(json_t *o, const char *pw, bbvfl_key *k, bbvfl_err *err) {
  char *text = json_dumps(o, 0);
  assert_non_null(text);
  memset(err, 0, sizeof *err);
  int rc = bbvfl_keystore_decrypt(text, strlen(text), pw, strlen(pw), k, err);
  free(text);
  return rc;
}

static void expect_error(json_t *o, const char *pw, bbvfl_errcode code, const char *words) {
  bbvfl_key k;
  bbvfl_err err;
  assert_int_equal(open_json(o, pw, &k, &err), -1);
  print_message("%s\n", err.msg);
  assert_int_equal(err.code, code);
  assert_non_null(strstr(err.msg, words));
  assert_null(strstr(err.msg, "4c0883a6")); /* never the key */
}

static void test_round_trip(void **state) {
  (void)state;
  json_t *o = fresh();
  bbvfl_key want, got;
  key_of(&want);
  bbvfl_err err;
  assert_int_equal(open_json(o, PW, &got, &err), 0);
  assert_memory_equal(got.priv, want.priv, 32);
  assert_memory_equal(got.addr, want.addr, 20);
  json_t *cr = json_object_get(o, "crypto");
  assert_string_equal(json_string_value(json_object_get(cr, "kdf")), "scrypt");
  assert_string_equal(json_string_value(json_object_get(cr, "cipher")), "aes-128-ctr");
  assert_int_equal(json_integer_value(json_object_get(o, "version")), 3);
  /* "Crypto" (geth's old spelling) and no address field are read too */
  json_object_set(o, "Crypto", cr);
  json_object_del(o, "crypto");
  json_object_del(o, "address");
  assert_int_equal(open_json(o, PW, &got, &err), 0);
  assert_memory_equal(got.priv, want.priv, 32);
  json_decref(o);
}

static void test_wrong_password(void **state) {
  (void)state;
  json_t *o = fresh();
  expect_error(o, "correct horsf", BBVFL_E_CRYPTO, "wrong password");
  expect_error(o, "", BBVFL_E_CRYPTO, "wrong password");
  /* without the address field the MAC alone tells */
  json_object_del(o, "address");
  expect_error(o, "battery staple", BBVFL_E_CRYPTO, "wrong password");
  json_decref(o);
}

/* The right password, but the ciphertext or the MAC altered: the MAC check refuses both. */
static void test_bad_mac(void **state) {
  (void)state;
  json_t *o = fresh();
  json_t *cr = json_object_get(o, "crypto");
  char mac[65];
  snprintf(mac, sizeof mac, "%s", json_string_value(json_object_get(cr, "mac")));
  mac[10] = mac[10] == '0' ? '1' : '0';
  json_object_set_new(cr, "mac", json_string(mac));
  json_object_del(o, "address");
  expect_error(o, PW, BBVFL_E_CRYPTO, "MAC does not match");
  json_decref(o);
  o = fresh();
  cr = json_object_get(o, "crypto");
  char ct[65];
  snprintf(ct, sizeof ct, "%s", json_string_value(json_object_get(cr, "ciphertext")));
  ct[0] = ct[0] == 'a' ? 'b' : 'a';
  json_object_set_new(cr, "ciphertext", json_string(ct));
  json_object_del(o, "address");
  expect_error(o, PW, BBVFL_E_CRYPTO, "MAC does not match");
  json_decref(o);
}

static void test_defects(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_err err = {0};
  const char *bad[] = {"", "{", "[1,2]", "{\"version\":3,\"crypto\":", "\x01\x02"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(bbvfl_keystore_decrypt(bad[i], strlen(bad[i]), PW, strlen(PW), &k, &err), -1);
    assert_int_equal(err.code, BBVFL_E_PARSE);
    assert_non_null(strstr(err.msg, "not a JSON object"));
  }
  json_t *o = fresh();
  json_t *cr = json_object_get(o, "crypto");
  json_object_set_new(cr, "kdf", json_string("argon2id"));
  expect_error(o, PW, BBVFL_E_PARSE, "kdf \"argon2id\" is not supported");
  json_object_set_new(cr, "kdf", json_string("scrypt"));
  json_object_set_new(cr, "cipher", json_string("aes-128-cbc"));
  expect_error(o, PW, BBVFL_E_PARSE, "cipher \"aes-128-cbc\" is not supported");
  json_object_set_new(cr, "cipher", json_string("aes-128-ctr"));
  json_object_set_new(json_object_get(cr, "kdfparams"), "n", json_integer(1000));
  expect_error(o, PW, BBVFL_E_PARSE, "scrypt n must be a power of two > 1 (got 1000)");
  json_object_set_new(json_object_get(cr, "kdfparams"), "n", json_integer(1LL << 30));
  expect_error(o, PW, BBVFL_E_ARG, "need 1024.0 GiB of memory");
  json_object_set_new(json_object_get(cr, "kdfparams"), "n", json_integer(1024));
  json_object_set_new(json_object_get(cr, "cipherparams"), "iv", json_string("abcd"));
  expect_error(o, PW, BBVFL_E_PARSE, "\"iv\" is not 16 bytes of hex");
  json_decref(o);
  o = fresh();
  json_object_set_new(o, "version", json_integer(1));
  expect_error(o, PW, BBVFL_E_PARSE, "\"version\" is not 3");
  json_decref(o);
  o = fresh();
  json_object_set_new(o, "address", json_string("0000000000000000000000000000000000000001"));
  expect_error(o, PW, BBVFL_E_CRYPTO, "\"address\" field is not the address");
  json_decref(o);
}

/* A keystore of the test key sealed here by the spec with the derived key dk: the ciphertext is
 * AES-128-CTR of the key with dk[0:16] and the iv, the MAC keccak256(dk[16:32] || ciphertext).
 * kdfparams is taken (owned by the result); the address field is the key's. */
static json_t *seal(const uint8_t dk[32], const char *kdf, json_t *kdfparams) {
  bbvfl_key want;
  key_of(&want);
  uint8_t iv[16], ct[32], mac[32];
  for (int i = 0; i < 16; i++) iv[i] = (uint8_t)(200 - i);
  EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
  int l = 0, l2 = 0;
  assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_ctr(), NULL, dk, iv), 1);
  assert_int_equal(EVP_EncryptUpdate(c, ct, &l, want.priv, 32), 1);
  assert_int_equal(EVP_EncryptFinal_ex(c, ct + l, &l2), 1);
  EVP_CIPHER_CTX_free(c);
  uint8_t buf[48];
  memcpy(buf, dk + 16, 16);
  memcpy(buf + 16, ct, 32);
  bbvfl_keccak256(buf, 48, mac);
  char hi[35], hc[67], hm[67], ha[43];
  bbvfl_hex_encode(iv, 16, hi);
  bbvfl_hex_encode(ct, 32, hc);
  bbvfl_hex_encode(mac, 32, hm);
  bbvfl_hex_encode(want.addr, 20, ha);
  json_t *o = json_pack("{s:i, s:s, s:{s:s, s:{s:s}, s:s, s:s, s:o, s:s}}", "version", 3, "address", ha + 2, "crypto",
                        "cipher", "aes-128-ctr", "cipherparams", "iv", hi + 2, "ciphertext", hc + 2, "kdf", kdf,
                        "kdfparams", kdfparams, "mac", hm + 2);
  assert_non_null(o);
  return o;
}

static json_t *scrypt_params(const uint8_t *salt, size_t salt_len, long long n, long long r, long long p) {
  char hs[2 * 64 + 3];
  assert_true(salt_len <= 64);
  bbvfl_hex_encode(salt, salt_len, hs);
  return json_pack("{s:i, s:I, s:I, s:I, s:s}", "dklen", 32, "n", (json_int_t)n, "r", (json_int_t)r, "p", (json_int_t)p,
                   "salt", hs + 2);
}

/* o opens with pw to the test key. */
static void expect_key(json_t *o, const char *pw) {
  bbvfl_key want, got;
  key_of(&want);
  bbvfl_err err;
  assert_int_equal(open_json(o, pw, &got, &err), 0);
  assert_memory_equal(got.priv, want.priv, 32);
  assert_memory_equal(got.addr, want.addr, 20);
}

/* A pbkdf2 keystore made here with libcrypto directly (as geth's "light" writers do). */
static void test_pbkdf2(void **state) {
  (void)state;
  uint8_t salt[32], dk[32];
  char hs[67];
  for (int i = 0; i < 32; i++) salt[i] = (uint8_t)(i * 7 + 1);
  assert_int_equal(PKCS5_PBKDF2_HMAC(PW, (int)strlen(PW), salt, 32, 4096, EVP_sha256(), 32, dk), 1);
  bbvfl_hex_encode(salt, 32, hs);
  json_t *o = seal(dk, "pbkdf2",
                   json_pack("{s:i, s:i, s:s, s:s}", "c", 4096, "dklen", 32, "prf", "hmac-sha256", "salt", hs + 2));
  json_object_del(o, "address");
  expect_key(o, PW);
  expect_error(o, "nope", BBVFL_E_CRYPTO, "wrong password");
  json_object_set_new(json_object_get(json_object_get(o, "crypto"), "kdfparams"), "prf", json_string("hmac-sha512"));
  expect_error(o, PW, BBVFL_E_PARSE, "prf \"hmac-sha512\" is not supported");
  json_decref(o);
}

/* scrypt keystores at parameters other than the writer's (r = 8, p = 1), sealed here with a key
 * derived by libsodium's scrypt; where OpenSSL's scrypt takes the parameters too it must derive
 * the same key (an independent check). r = 1 with n >= 2^16 is what OpenSSL refuses (it wants
 * n < 2^(16 r)) and what keystores of some tools use. */
static void test_scrypt_params(void **state) {
  (void)state;
  static const struct {
    long long n, r, p;
    int openssl; /* 1 when OpenSSL's scrypt takes these */
  } sets[] = {
      {1LL << 14, 1, 1, 1}, {1LL << 16, 1, 1, 0}, {1LL << 17, 1, 1, 0}, {1024, 8, 1, 1},
      {16, 1, 2, 1},        {2, 1, 1, 1},         {8, 3, 5, 1},         {256, 2, 3, 1},
  };
  uint8_t salt[32];
  for (int i = 0; i < 32; i++) salt[i] = (uint8_t)(0xa5 ^ i);
  for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
    long long n = sets[i].n, r = sets[i].r, p = sets[i].p;
    print_message("scrypt n=%lld r=%lld p=%lld\n", n, r, p);
    uint8_t dk[32], dk2[32];
    assert_int_equal(crypto_pwhash_scryptsalsa208sha256_ll((const uint8_t *)PW, strlen(PW), salt, sizeof salt,
                                                           (uint64_t)n, (uint32_t)r, (uint32_t)p, dk, 32),
                     0);
    int ossl = EVP_PBE_scrypt(PW, strlen(PW), salt, sizeof salt, (uint64_t)n, (uint64_t)r, (uint64_t)p, 0, dk2, 32);
    assert_int_equal(ossl, sets[i].openssl);
    if (ossl == 1) assert_memory_equal(dk, dk2, 32);
    json_t *o = seal(dk, "scrypt", scrypt_params(salt, sizeof salt, n, r, p));
    expect_key(o, PW);
    expect_error(o, "correct horsf", BBVFL_E_CRYPTO, "wrong password");
    json_decref(o);
  }
}

/* RFC 7914's scrypt vectors (section 12; the first 32 bytes of each, which is scrypt's output at
 * dklen 32): keystores sealed with these known keys, no scrypt run by the test. The first has an
 * empty password and an empty salt. */
static void test_scrypt_rfc7914(void **state) {
  (void)state;
  static const struct {
    const char *pw, *salt;
    long long n, r, p;
    const char *dk;
  } v[] = {
      {"", "", 16, 1, 1, "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"},
      {"password", "NaCl", 1024, 8, 16, "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"},
      {"pleaseletmein", "SodiumChloride", 16384, 8, 1,
       "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"},
  };
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
    uint8_t dk[32];
    bbvfl_err err = {0};
    assert_int_equal(bbvfl_hex_decode_fixed(v[i].dk, dk, 32, &err), 0);
    json_t *o =
        seal(dk, "scrypt", scrypt_params((const uint8_t *)v[i].salt, strlen(v[i].salt), v[i].n, v[i].r, v[i].p));
    expect_key(o, v[i].pw);
    expect_error(o, "passwore", BBVFL_E_CRYPTO, "wrong password");
    json_decref(o);
  }
}

/* Parameters refused before any derivation (so never allocated), each error naming its cause;
 * malformed fields. */
static void test_scrypt_refusals(void **state) {
  (void)state;
  uint8_t dk[32] = {1}, salt[16] = {2};
  static const struct {
    long long n, r, p;
    bbvfl_errcode code;
    const char *words;
  } bad[] = {
      {1000, 1, 1, BBVFL_E_PARSE, "keystore: scrypt n must be a power of two > 1 (got 1000)"},
      {1, 1, 1, BBVFL_E_PARSE, "scrypt n must be a power of two > 1 (got 1)"},
      {0, 8, 1, BBVFL_E_PARSE, "scrypt n must be a power of two > 1 (got 0)"},
      {-1024, 8, 1, BBVFL_E_PARSE, "scrypt n must be a power of two > 1 (got -1024)"},
      {(1LL << 14) + 1, 1, 1, BBVFL_E_PARSE, "scrypt n must be a power of two > 1 (got 16385)"},
      {3LL << 14, 8, 1, BBVFL_E_PARSE, "scrypt n must be a power of two > 1 (got 49152)"},
      {1024, 0, 1, BBVFL_E_PARSE, "keystore: scrypt r must be >= 1 (got 0)"},
      {1024, -8, 1, BBVFL_E_PARSE, "scrypt r must be >= 1 (got -8)"},
      {1024, 8, 0, BBVFL_E_PARSE, "keystore: scrypt p must be >= 1 (got 0)"},
      {1024, 8, -1, BBVFL_E_PARSE, "scrypt p must be >= 1 (got -1)"},
      /* 128 r (n + p + 2) bytes: 8 GiB; just over 2 GiB; overflow-proof at absurd sizes */
      {1LL << 23, 8, 1, BBVFL_E_ARG,
       "keystore: scrypt parameters need 8.0 GiB of memory (8589937664 bytes for n=8388608, r=8, p=1): over the limit "
       "of 2.0 GiB (2147483648 bytes)"},
      {1LL << 24, 1, 1, BBVFL_E_ARG, "(2147484032 bytes for n=16777216, r=1, p=1): over the limit of 2.0 GiB"},
      {1LL << 62, 1LL << 40, 1, BBVFL_E_ARG, "GiB of memory"},
      {2, 1LL << 24, 1, BBVFL_E_ARG, "GiB of memory (10737418240 bytes for n=2, r=16777216, p=1)"},
      {2, 1, 1LL << 40, BBVFL_E_ARG, "GiB of memory"},
      /* little memory, hours of CPU */
      {1024, 8, 1LL << 20, BBVFL_E_ARG,
       "scrypt parameters need n*r*p = 8.59e+09 (n=1024, r=8, p=1048576): over the limit of 2^27"},
      {1LL << 20, 8, 17, BBVFL_E_ARG, "n*r*p"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    json_t *o = seal(dk, "scrypt", scrypt_params(salt, sizeof salt, bad[i].n, bad[i].r, bad[i].p));
    expect_error(o, PW, bad[i].code, bad[i].words);
    json_decref(o);
  }
  json_t *o = seal(dk, "scrypt", scrypt_params(salt, sizeof salt, 1024, 8, 1));
  json_t *kp = json_object_get(json_object_get(o, "crypto"), "kdfparams");
  json_object_set_new(kp, "r", json_string("8"));
  expect_error(o, PW, BBVFL_E_PARSE, "kdfparams \"r\" is missing or not an integer");
  json_object_set_new(kp, "r", json_real(8.0));
  expect_error(o, PW, BBVFL_E_PARSE, "kdfparams \"r\" is missing or not an integer");
  json_object_set_new(kp, "r", json_integer(8));
  json_object_del(kp, "p");
  expect_error(o, PW, BBVFL_E_PARSE, "kdfparams \"p\" is missing or not an integer");
  json_object_set_new(kp, "p", json_integer(1));
  json_object_set_new(kp, "n", json_null());
  expect_error(o, PW, BBVFL_E_PARSE, "kdfparams \"n\" is missing or not an integer");
  json_object_set_new(kp, "n", json_integer(1024));
  json_object_set_new(kp, "dklen", json_integer(16));
  expect_error(o, PW, BBVFL_E_PARSE, "kdfparams \"dklen\" must be 32 (got 16)");
  json_object_set_new(kp, "dklen", json_integer(32));
  json_object_set_new(kp, "salt", json_string("0xzz"));
  expect_error(o, PW, BBVFL_E_PARSE, "kdfparams \"salt\" is not hex");
  json_object_set_new(kp, "salt", json_integer(5));
  expect_error(o, PW, BBVFL_E_PARSE, "kdfparams \"salt\" is missing or not a string");
  /* well formed and within the limits: the MAC speaks (dk was not derived from PW) */
  json_object_set_new(kp, "salt", json_string("00"));
  expect_error(o, PW, BBVFL_E_CRYPTO, "wrong password (the keystore's MAC does not match)");
  json_decref(o);
}

static void test_files(void **state) {
  (void)state;
  char dir[] = "/tmp/bbvfl-test-keystore-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256], pwf[256], cmd[300];
  snprintf(path, sizeof path, "%s/ks.json", dir);
  snprintf(pwf, sizeof pwf, "%s/pw", dir);
  bbvfl_key k, got;
  key_of(&k);
  bbvfl_err err = {0};
  assert_int_equal(bbvfl_keystore_save(path, &k, PW, strlen(PW), 10, &err), 0);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  /* never replaced */
  assert_int_equal(bbvfl_keystore_save(path, &k, "other", 5, 10, &err), -1);
  assert_int_equal(err.code, BBVFL_E_IO);
  assert_non_null(strstr(err.msg, "already exists"));
  /* the password file's first line, its line end (LF or CRLF) cut; 0600 required */
  FILE *f = fopen(pwf, "w");
  assert_non_null(f);
  fputs(PW "\r\nsecond line\n", f);
  fclose(f);
  chmod(pwf, 0644);
  bbvfl_key_source src = {.keystore = path, .password_file = pwf};
  assert_int_equal(bbvfl_key_source_load(&src, &got, &err), -1);
  assert_non_null(strstr(err.msg, "readable by group or others"));
  chmod(pwf, 0600);
  assert_int_equal(bbvfl_key_source_load(&src, &got, &err), 0);
  assert_memory_equal(got.priv, k.priv, 32);
  setenv("BBVFL_TEST_KS_PW", PW, 1);
  bbvfl_key_source src2 = {.keystore = path, .password_env = "BBVFL_TEST_KS_PW"};
  assert_int_equal(bbvfl_key_source_load(&src2, &got, &err), 0);
  setenv("BBVFL_TEST_KS_PW", PW " ", 1);
  assert_int_equal(bbvfl_key_source_load(&src2, &got, &err), -1);
  assert_non_null(strstr(err.msg, "wrong password"));
  assert_non_null(strstr(err.msg, "--keystore"));
  /* exactly one key source, one password */
  bbvfl_key_source two = {.keystore = path, .key_file = pwf, .password_env = "BBVFL_TEST_KS_PW"};
  assert_int_equal(bbvfl_key_source_load(&two, &got, &err), -1);
  assert_int_equal(err.code, BBVFL_E_ARG);
  bbvfl_key_source nopw = {.keystore = path};
  assert_int_equal(bbvfl_key_source_load(&nopw, &got, &err), -1);
  assert_non_null(strstr(err.msg, "--password-file"));
  unsetenv("BBVFL_TEST_KS_PW");
  assert_int_equal(bbvfl_key_source_load(&src2, &got, &err), -1);
  assert_non_null(strstr(err.msg, "not set"));
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trip),     cmocka_unit_test(test_wrong_password),
      cmocka_unit_test(test_bad_mac),        cmocka_unit_test(test_defects),
      cmocka_unit_test(test_pbkdf2),         cmocka_unit_test(test_scrypt_params),
      cmocka_unit_test(test_scrypt_rfc7914), cmocka_unit_test(test_scrypt_refusals),
      cmocka_unit_test(test_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
