/* Contract deployment from abi/<Name>.json. See deploy.h. */
#include "eth/deploy.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fsutil.h"
#include "common/rundirs.h"
#include "eth/hex.h"

#define MAX_ARTIFACT ((size_t)64 << 20)

const char *bbvfl_abi_dir(void) { return bbvfl_rundir_path(BBVFL_RUNDIR_ABI); }

static int valid_name(const char *n) {
  if (!n || !*n || strlen(n) > 128) return 0;
  for (const char *p = n; *p; p++)
    if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
          *p == '_'))
      return 0;
  return 1;
}

int bbvfl_artifact_bytecode(const char *contract_name, uint8_t **code, size_t *len,
                            bbvfl_err *err) {
  *code = NULL;
  *len = 0;
  if (!valid_name(contract_name))
    return bbvfl_fail(err, BBVFL_E_ARG, "'%.100s' is not a contract name (letters, digits, _)",
                      contract_name ? contract_name : "(null)");
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/%s.json", bbvfl_abi_dir(), contract_name);
  if (n < 0 || (size_t)n >= sizeof path)
    return bbvfl_fail(err, BBVFL_E_ARG, "artifact path too long (check BBVFL_ABI_DIR)");
  char *text;
  size_t tlen;
  if (bbvfl_read_file(path, MAX_ARTIFACT, &text, &tlen, err) != 0)
    return bbvfl_rundir_in_build_tree() || getenv("BBVFL_ABI_DIR")
               ? bbvfl_wrap(err, "loading the artifact of %s (regenerate with devnet/gen-abi.sh?)",
                            contract_name)
               : bbvfl_wrap(err, "loading the artifact of %s (the installed abi/ folder; "
                            "set BBVFL_SHARE_DIR or BBVFL_ABI_DIR to use another)", contract_name);
  json_error_t je;
  json_t *root = json_loadb(text, tlen, 0, &je);
  free(text);
  if (!root)
    return bbvfl_fail(err, BBVFL_E_PARSE, "%s: malformed JSON (line %d: %s)", path, je.line,
                      je.text);
  json_t *bc = json_object_get(root, "bytecode");
  if (json_is_object(bc)) bc = json_object_get(bc, "object"); /* forge's nested form */
  const char *hex = json_string_value(bc);
  int rc = 0;
  if (!hex || !json_is_array(json_object_get(root, "abi"))) {
    rc = bbvfl_fail(err, BBVFL_E_PARSE, "%s: needs the fields \"abi\" (array) and \"bytecode\" (hex)",
                    path);
  } else if (bbvfl_hex_decode_alloc(hex, code, len, err) != 0) {
    rc = bbvfl_wrap(err, "%s: bytecode", path);
  } else if (*len == 0) {
    free(*code);
    *code = NULL;
    rc = bbvfl_fail(err, BBVFL_E_PARSE,
                    "%s: empty bytecode (an interface or abstract contract cannot be deployed)",
                    path);
  }
  json_decref(root);
  return rc;
}

int bbvfl_deploy_code(bbvfl_sender *s, const uint8_t *code, size_t code_len,
                      const uint8_t *ctor_args, size_t ctor_len, double timeout_s,
                      uint8_t address[20], bbvfl_receipt *rc, bbvfl_err *err) {
  if (rc) memset(rc, 0, sizeof *rc);
  if (!code || !code_len) return bbvfl_fail(err, BBVFL_E_ARG, "deploy: no bytecode");
  if (ctor_len && !ctor_args) return bbvfl_fail(err, BBVFL_E_ARG, "deploy: constructor args NULL");
  uint8_t *init = malloc(code_len + ctor_len);
  if (!init) return bbvfl_fail(err, BBVFL_E_NOMEM, "deploy: out of memory");
  memcpy(init, code, code_len);
  if (ctor_len) memcpy(init + code_len, ctor_args, ctor_len);
  bbvfl_receipt r;
  int st = bbvfl_sender_transact(s, NULL, NULL, init, code_len + ctor_len, 0, timeout_s, &r, err);
  free(init);
  if (st != 0) {
    bbvfl_receipt_clear(&r);
    return bbvfl_wrap(err, "deploying");
  }
  if (!r.has_contract) {
    bbvfl_receipt_clear(&r);
    return bbvfl_fail(err, BBVFL_E_RPC, "deploying: the receipt names no contract address");
  }
  memcpy(address, r.contract, 20);
  if (rc) *rc = r;
  else bbvfl_receipt_clear(&r);
  return 0;
}

int bbvfl_deploy(bbvfl_sender *s, const char *contract_name, const uint8_t *ctor_args,
                 size_t ctor_len, double timeout_s, uint8_t address[20], bbvfl_receipt *rc,
                 bbvfl_err *err) {
  uint8_t *code;
  size_t len;
  if (bbvfl_artifact_bytecode(contract_name, &code, &len, err) != 0) return -1;
  int st = bbvfl_deploy_code(s, code, len, ctor_args, ctor_len, timeout_s, address, rc, err);
  free(code);
  if (st != 0) return bbvfl_wrap(err, "%s", contract_name);
  return 0;
}
