/* Encrypted key files: the Web3 Secret Storage v3 format ("keystore" of geth, `cast wallet new`,
 * `cast wallet import`), read and written with libsodium (scrypt) and OpenSSL's libcrypto
 * (PBKDF2-HMAC-SHA256, AES-128-CTR); the MAC is keccak256(derived_key[16:32] || ciphertext)
 * (eth/keccak.h). No cryptographic primitive is written here.
 *
 * Reading accepts kdf "scrypt" with any valid parameters (n a power of two > 1, r >= 1, p >= 1:
 * r = 1 with n >= 2^16 too, which OpenSSL's scrypt refuses) within two limits against a hostile
 * file: its memory, 128 r (n + p + 2) bytes, up to 2 GiB, and n r p up to 2^27 (64 times geth's
 * n = 2^18, r = 8, p = 1), each checked before anything is allocated. An invalid parameter is
 * BBVFL_E_PARSE, one over a limit BBVFL_E_ARG, both naming the parameters. Also kdf "pbkdf2"
 * (prf hmac-sha256, c up to 10^7), cipher "aes-128-ctr", dklen 32, and the "crypto" object
 * spelled "crypto" or "Crypto". The MAC is checked (in constant time) before anything is
 * decrypted: a wrong password is BBVFL_E_CRYPTO "wrong password (the keystore's MAC does not
 * match)". A file whose "address" field disagrees with the decrypted key is refused. Other
 * defects (not JSON, an unknown kdf or cipher, a missing field, a bad hex string) are
 * BBVFL_E_PARSE naming the field.
 *
 * Writing uses scrypt n = 2^18, r = 8, p = 1 (geth's standard parameters), a fresh random salt,
 * IV and UUID; the file is created with mode 0600 through a temporary file and link(2), so it
 * appears whole or not at all and an existing file is never replaced.
 *
 * Passwords are caller-owned bytes (not NUL-terminated necessarily); functions here never put a
 * password or key material in an error message, and wipe their temporaries. */
#ifndef BBVFL_ETH_KEYSTORE_H
#define BBVFL_ETH_KEYSTORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "eth/wallet.h"

/* Decrypts the keystore JSON text (len bytes) with the password into *k. */
int bbvfl_keystore_decrypt(const char *json, size_t len, const char *password, size_t pwlen, bbvfl_key *k,
                           bbvfl_err *err);
/* Reads the keystore file at path and decrypts it (errors name the file). */
int bbvfl_keystore_load(const char *path, const char *password, size_t pwlen, bbvfl_key *k, bbvfl_err *err);

/* Encrypts k into keystore JSON (scrypt with log2 n = log_n; 0: 18). *out is malloc'd text the
 * caller frees. */
int bbvfl_keystore_encrypt(const bbvfl_key *k, const char *password, size_t pwlen, unsigned log_n, char **out,
                           bbvfl_err *err);
/* Encrypts and writes a new file at path (mode 0600, atomic); BBVFL_E_IO when path exists. */
int bbvfl_keystore_save(const char *path, const bbvfl_key *k, const char *password, size_t pwlen, unsigned log_n,
                        bbvfl_err *err);

/* A password from a file (its first line, without the line end; the file must not be readable by
 * group or others) or from an environment variable (its whole value): exactly one of file, env is
 * non-NULL. *pw is malloc'd (NUL-terminated, *len bytes); free it with bbvfl_password_free. */
int bbvfl_password_load(const char *file, const char *env, char **pw, size_t *len, bbvfl_err *err);
void bbvfl_password_free(char *pw, size_t len);

/* The key of a command: exactly one of key_file (hex, eth/wallet.h), key_env (hex in a variable)
 * or keystore (with exactly one of password_file, password_env). The flag names appear in the
 * errors (--key-file, --key-env, --keystore, --password-file, --password-env). */
typedef struct {
  const char *key_file, *key_env, *keystore, *password_file, *password_env;
} bbvfl_key_source;
/* 1 when any of the three key sources is set. */
int bbvfl_key_source_given(const bbvfl_key_source *s);
int bbvfl_key_source_load(const bbvfl_key_source *s, bbvfl_key *k, bbvfl_err *err);

#endif
