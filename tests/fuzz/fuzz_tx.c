/* Fuzz target: the signed transaction decoder, plus the text parsers for hex, numbers and
 * addresses (which read strings from JSON-RPC answers and user input). Properties: no
 * out-of-bounds access; a decoded transaction's borrowed data lies inside the input; errors have
 * a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eth/hex.h"
#include "eth/tx.h"
#include "eth/u256.h"
#include "eth/wallet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bbvfl_tx_decoded d;
  bbvfl_err err;
  if (bbvfl_tx_decode(data, size, &d, &err) == 0) {
    if (d.tx.data_len && (d.tx.data < data || d.tx.data + d.tx.data_len > data + size)) abort();
    if (d.recid < 0 || d.recid > 1) abort();
  } else if (!err.msg[0]) {
    abort();
  }
  /* the same bytes as text */
  char *s = malloc(size + 1);
  memcpy(s, data, size);
  s[size] = 0;
  uint8_t *out;
  size_t len;
  if (bbvfl_hex_decode_alloc(s, &out, &len, NULL) == 0) free(out);
  uint8_t fixed[32], addr[20];
  (void)bbvfl_hex_decode_fixed(s, fixed, 32, NULL);
  (void)bbvfl_addr_parse(s, addr, NULL);
  bbvfl_u256 u;
  if (bbvfl_u256_from_string(s, &u, NULL) == 0) {
    char dec[80];
    bbvfl_u256_to_dec(&u, dec);
    bbvfl_u256 back;
    if (bbvfl_u256_from_string(dec, &back, NULL) != 0 || bbvfl_u256_cmp(&u, &back) != 0) abort();
  }
  free(s);
  return 0;
}

void bbvfl_fuzz_seeds(void (*add)(const uint8_t *data, size_t len)) {
  bbvfl_key k;
  if (bbvfl_key_from_hex("4646464646464646464646464646464646464646464646464646464646464646", &k, NULL) != 0) return;
  uint8_t payload[40];
  memset(payload, 0xab, sizeof payload);
  uint8_t keys[1][32] = {{1}};
  bbvfl_access_entry al = {{0}, (const uint8_t(*)[32])keys, 1};
  for (int type = 0; type <= 2; type += 2) {
    bbvfl_tx tx;
    memset(&tx, 0, sizeof tx);
    tx.type = (bbvfl_txtype)type;
    tx.chain_id = 31337;
    tx.nonce = 5;
    tx.gas_limit = 100000;
    tx.gas_price = bbvfl_u256_from_u64(1000000000);
    tx.max_fee = tx.gas_price;
    tx.has_to = 1;
    memset(tx.to, 0x35, 20);
    tx.data = payload;
    tx.data_len = sizeof payload;
    if (type == 2) {
      tx.access_list = &al;
      tx.access_len = 1;
    }
    uint8_t *raw, hash[32];
    size_t len;
    if (bbvfl_tx_sign(&tx, &k, &raw, &len, hash, NULL) == 0) {
      add(raw, len);
      free(raw);
    }
  }
  static const char *texts[] = {"0x1234", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "1000000000000000000", "0xff"};
  for (size_t i = 0; i < 4; i++) add((const uint8_t *)texts[i], strlen(texts[i]));
  bbvfl_key_wipe(&k);
}
