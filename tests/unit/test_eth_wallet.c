/* Keys and addresses: EIP-55 examples, ethers.js accounts vectors, key files (permissions,
 * atomic save, no echo of content), environment variables, generation, sign + recover. */
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

#include "test_skip.h"

#include "eth/hex.h"
#include "eth/keccak.h"
#include "eth/wallet.h"
#include "eth_vectors.h"

static void test_eip55_examples(void **state) {
  (void)state;
  /* the examples of EIP-55 itself */
  /* mixed case: the checksum is exactly the example; all one case (the last four): the same
     letters, whatever their case */
  static const char *ex[] = {"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
                             "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
                             "0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
                             "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26"};
  for (size_t i = 0; i < 8; i++) {
    uint8_t a[20];
    char out[43];
    assert_int_equal(bbvfl_addr_parse(ex[i], a, NULL), 0);
    bbvfl_addr_checksum(a, out);
    if (i < 4) assert_string_equal(out, ex[i]);
    else assert_int_equal(strcasecmp(out, ex[i]), 0);
  }
  /* a flipped case letter must be caught */
  uint8_t a[20];
  bbvfl_err err;
  assert_int_equal(bbvfl_addr_parse("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", a, &err), -1);
  assert_non_null(strstr(err.msg, "checksum"));
  assert_int_equal(bbvfl_addr_parse("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA", a, &err), -1);
  assert_int_equal(bbvfl_addr_parse("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", a, &err), -1);
}

static void test_ethers_accounts(void **state) {
  (void)state;
  json_t *root = bbvfl_test_vectors_or_skip("accounts.json.gz");
  size_t i, n = 0;
  json_t *tc;
  json_array_foreach(root, i, tc) {
    const char *priv = json_string_value(json_object_get(tc, "privateKey"));
    const char *addr = json_string_value(json_object_get(tc, "address"));
    assert_non_null(priv);
    assert_non_null(addr);
    bbvfl_key k;
    bbvfl_err err;
    if (bbvfl_key_from_hex(priv, &k, &err) != 0) fail_msg("case %zu: %s", i, err.msg);
    char out[43];
    bbvfl_addr_checksum(k.addr, out);
    assert_string_equal(out, addr);
    uint8_t parsed[20];
    assert_int_equal(bbvfl_addr_parse(addr, parsed, NULL), 0);
    assert_memory_equal(parsed, k.addr, 20);
    bbvfl_key_wipe(&k);
    n++;
  }
  print_message("checked %zu account vectors\n", n);
  assert_true(n >= 250);
  json_decref(root);
}

static void test_bad_keys(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_err err;
  /* zero and the group order are invalid */
  assert_int_equal(bbvfl_key_from_hex("0x0000000000000000000000000000000000000000000000000000000000000000", &k, &err), -1);
  assert_int_equal(err.code, BBVFL_E_CRYPTO);
  assert_int_equal(bbvfl_key_from_hex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141", &k, &err), -1);
  assert_int_equal(bbvfl_key_from_hex("0x1234", &k, &err), -1);
  assert_non_null(strstr(err.msg, "64 hex digits"));
  const char *secretish = "zz46464646464646464646464646464646464646464646464646464646464646";
  assert_int_equal(bbvfl_key_from_hex(secretish, &k, &err), -1);
  assert_null(strstr(err.msg, "4646")); /* never echoes the key */
}

static void test_key_files(void **state) {
  (void)state;
  char dir[] = "/tmp/bbvfl-test-wallet-XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/key", dir);
  bbvfl_key k, back;
  bbvfl_err err;
  assert_int_equal(bbvfl_key_generate(&k, &err), 0);
  assert_int_equal(bbvfl_key_save_file(path, &k, &err), 0);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(bbvfl_key_load_file(path, &back, &err), 0);
  assert_memory_equal(&k, &back, sizeof k);
  /* group-readable: refused, with the fix in the message */
  assert_int_equal(chmod(path, 0640), 0);
  assert_int_equal(bbvfl_key_load_file(path, &back, &err), -1);
  assert_non_null(strstr(err.msg, "chmod 600"));
  /* malformed content: refused without echoing it */
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("0x4646464646464646464646464646464646464646464646464646464646464646464646\n", f);
  fclose(f);
  assert_int_equal(chmod(path, 0600), 0);
  assert_int_equal(bbvfl_key_load_file(path, &back, &err), -1);
  assert_null(strstr(err.msg, "4646"));
  /* missing file */
  unlink(path);
  assert_int_equal(bbvfl_key_load_file(path, &back, &err), -1);
  assert_int_equal(err.code, BBVFL_E_IO);
  rmdir(dir);
  /* two generated keys differ */
  bbvfl_key k2;
  assert_int_equal(bbvfl_key_generate(&k2, &err), 0);
  assert_memory_not_equal(k.priv, k2.priv, 32);
  bbvfl_key_wipe(&k);
  for (size_t i = 0; i < sizeof k; i++) assert_int_equal(((uint8_t *)&k)[i], 0);
}

static void test_env(void **state) {
  (void)state;
  bbvfl_key k;
  bbvfl_err err;
  setenv("BBVFL_TEST_KEY", " 0x0000000000000000000000000000000000000000000000000000000000000001\n", 1);
  assert_int_equal(bbvfl_key_load_env("BBVFL_TEST_KEY", &k, &err), 0);
  char out[43];
  bbvfl_addr_checksum(k.addr, out);
  assert_string_equal(out, "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf");
  unsetenv("BBVFL_TEST_KEY");
  assert_int_equal(bbvfl_key_load_env("BBVFL_TEST_KEY", &k, &err), -1);
  assert_non_null(strstr(err.msg, "not set"));
}

static void test_sign_recover(void **state) {
  (void)state;
  bbvfl_key k;
  assert_int_equal(bbvfl_key_generate(&k, NULL), 0);
  for (int i = 0; i < 50; i++) {
    uint8_t h[32], sig[65], who[20];
    bbvfl_keccak256(&i, sizeof i, h);
    assert_int_equal(bbvfl_sign_hash(&k, h, sig, NULL), 0);
    assert_true(sig[64] <= 1);
    /* low S: s <= n/2 (7fffffff ffffffff ffffffff ffffffff 5d576e73 57a4501d dfe92f46 681b20a0) */
    uint8_t half[32];
    assert_int_equal(bbvfl_hex_decode_fixed(
        "7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0", half, 32, NULL), 0);
    assert_true(memcmp(sig + 32, half, 32) <= 0);
    assert_int_equal(bbvfl_recover_addr(h, sig, who, NULL), 0);
    assert_memory_equal(who, k.addr, 20);
    sig[64] ^= 1; /* the other recovery id gives another address */
    if (bbvfl_recover_addr(h, sig, who, NULL) == 0) assert_memory_not_equal(who, k.addr, 20);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eip55_examples), cmocka_unit_test(test_ethers_accounts),
      cmocka_unit_test(test_bad_keys),       cmocka_unit_test(test_key_files),
      cmocka_unit_test(test_env),            cmocka_unit_test(test_sign_recover),
  };
  return bbvfl_test_exit(cmocka_run_group_tests(tests, NULL, NULL));
}
