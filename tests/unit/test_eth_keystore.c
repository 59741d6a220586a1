/* Web3 Secret Storage v3 keystores (eth/keystore.h): a key written and read back (scrypt), a
 * pbkdf2 keystore built here with libcrypto read, and each defect refused with its own clear error:
 * a wrong password, a bad MAC, corrupt JSON, an unknown KDF or cipher, an address that is not the
 * key's; the password file's first line; a keystore file never replaced, created 0600.
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
  expect_error(o, PW, BBVFL_E_PARSE, "not a power of two");
  json_object_set_new(json_object_get(cr, "kdfparams"), "n", json_integer(1LL << 30));
  expect_error(o, PW, BBVFL_E_PARSE, "\"n\"");
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

/* A pbkdf2 keystore made here with libcrypto directly (as geth's "light" writers do). */
static void test_pbkdf2(void **state) {
  (void)state;
  bbvfl_key want;
  key_of(&want);
  uint8_t salt[32], iv[16], dk[32], ct[32], mac[32];
  for (int i = 0; i < 32; i++) salt[i] = (uint8_t)(i * 7 + 1);
  for (int i = 0; i < 16; i++) iv[i] = (uint8_t)(200 - i);
  assert_int_equal(PKCS5_PBKDF2_HMAC(PW, (int)strlen(PW), salt, 32, 4096, EVP_sha256(), 32, dk), 1);
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
  char hs[67], hi[35], hc[67], hm[67];
  bbvfl_hex_encode(salt, 32, hs);
  bbvfl_hex_encode(iv, 16, hi);
  bbvfl_hex_encode(ct, 32, hc);
  bbvfl_hex_encode(mac, 32, hm);
  json_t *o = json_pack("{s:i, s:{s:s, s:{s:s}, s:s, s:s, s:{s:i, s:i, s:s, s:s}, s:s}}", "version", 3, "crypto",
                        "cipher", "aes-128-ctr", "cipherparams", "iv", hi + 2, "ciphertext", hc + 2, "kdf", "pbkdf2",
                        "kdfparams", "c", 4096, "dklen", 32, "prf", "hmac-sha256", "salt", hs + 2, "mac", hm + 2);
  bbvfl_key got;
  bbvfl_err err;
  assert_int_equal(open_json(o, PW, &got, &err), 0);
  assert_memory_equal(got.priv, want.priv, 32);
  expect_error(o, "nope", BBVFL_E_CRYPTO, "wrong password");
  json_object_set_new(json_object_get(json_object_get(o, "crypto"), "kdfparams"), "prf", json_string("hmac-sha512"));
  expect_error(o, PW, BBVFL_E_PARSE, "prf \"hmac-sha512\" is not supported");
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
      cmocka_unit_test(test_round_trip), cmocka_unit_test(test_wrong_password), cmocka_unit_test(test_bad_mac),
      cmocka_unit_test(test_defects),    cmocka_unit_test(test_pbkdf2),         cmocka_unit_test(test_files),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
