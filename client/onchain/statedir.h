/* A client's state dir (--state-dir) and the one session it belongs to.
 *
 * The state dir holds a client's secrets (election-secret.hex, its election secret, revealed on
 * chain once the election runs; noise.key, the private noise key every DP draw of the client
 * comes from) and its checkpoints (progress.ckpt, party-{0,1}.ckpt, head-{0,1}.ckpt). They belong
 * to one session, the aggregator `contract` on chain `chain_id`, recorded in the state dir's
 * session binding (BBVFL_STATEDIR_BINDING: {"chain_id": N, "contract": "0x..."}), written before
 * any secret. A restart of the same session reuses them; a second session must not: its noise
 * would repeat the first session's draws (the privacy of both composes, unreported) and its
 * election secret is public once revealed. docs/ONCHAIN.md "The state dir".
 *
 * bbvfl_statedir_check runs before anything is sent (no transaction, no file written); the
 * caller (onchain/onchain.c) creates the folder and calls bbvfl_statedir_bind before it writes
 * the first secret. Errors are bbvfl_err codes (never printed). Nothing here allocates what the
 * caller must free. */
#ifndef BBVFL_ONCHAIN_STATEDIR_H
#define BBVFL_ONCHAIN_STATEDIR_H

#include <stdint.h>

#include "common/err.h"

#define BBVFL_STATEDIR_BINDING "session-binding.json"
/* The checkpoint kind of progress.ckpt, whose first field is the aggregator's address
   (onchain/onchain_ckpt.c). */
#define BBVFL_STATEDIR_PROGRESS_KIND "PROGRES2"

/* dir against the session (chain_id, contract), reading only:
 *  - 0: dir absent, or holding none of the client's files, or bound to this session with its
 *    files private;
 *  - -1 BBVFL_E_STATE: the binding names another session (the message names dir, the session it
 *    belongs to, and says to use a fresh --state-dir or delete dir); secrets or checkpoints
 *    without a binding (a state dir of an older bbvfl, or copied: whose session cannot be told);
 *    a secret file or checkpoint with any mode bit for group or others (mode & 077: the message
 *    names the file and its mode and says chmod 600); progress.ckpt naming another aggregator;
 *  - -1 BBVFL_E_PARSE: a binding that is not one; BBVFL_E_IO: a file that cannot be looked at. */
int bbvfl_statedir_check(const char *dir, uint64_t chain_id, const uint8_t contract[20], bbvfl_err *err);

/* Records in dir (which exists) that it belongs to the session (chain_id, contract): the binding
 * written atomically, mode 0600, when it is not there yet (a binding already there is the
 * session's: bbvfl_statedir_check said so). 0 or -1 (BBVFL_E_IO). */
int bbvfl_statedir_bind(const char *dir, uint64_t chain_id, const uint8_t contract[20], bbvfl_err *err);

#endif
