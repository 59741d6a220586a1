# Sourced (after session.sh) by the dropout tests, test_masked_session.sh and
# test_plain_dropout.sh: their common session up to the checks.
#   dropout_session DEPLOY_FLAGS...
# deploys a 4-client, 3-epoch session (seed 5, --round-timeout-blocks 12, DEPLOY_FLAGS), runs four
# `bbvfl client` processes with --expire --round-timeout 10 (columns 0-7, 8-15, 16-23, 24-29; each writes its q per
# round to $work/q through the test hook BBVFL_TEST_DUMP_Q, never through the chain), all frozen
# right after submitting round 6 (--pause-after-submit 7: a known point however fast or slow the
# session runs); then SIGKILLs one passive client (BBVFL_TEST_KILL_ACTIVE=1: the active one), which
# is never restarted, resumes the others and waits for them (each must exit 0). Checks that the
# clients warn about the test hook and that no client log holds a 32-byte hex value. Sets M=4,
# contract, addrs and victim.
dropout_session() {
  M=4
  session_deploy --clients $M --epochs 3 --seed 5 --round-timeout-blocks 12 "$@"
  session_keys $M
  cols=("0-7" "8-15" "16-23" "24-29")
  # Patience well above a loaded machine's round (ASan, tests side by side): every expireRound()
  # attempt on the automining devnet mines a block, so a survivor that is merely slow would be
  # excluded once round_timeout_blocks of attempts pile up; only the killed client must be.
  client_flags=(--labels --round-timeout 10 --expire --takeover-after 12)
  client_env=(BBVFL_TEST_DUMP_Q="$work/q")
  client_party=0
  clients_start $M --pause-after-submit 7
  wait_paused "$run" "${pids[@]}" || fail "the clients did not all reach round 6"
  if [ -n "${BBVFL_TEST_KILL_ACTIVE:-}" ]; then pick_victim active; else pick_victim passive; fi
  kill_client "$victim"
  resume_clients "$victim"
  wait_clients "$victim"
  grep -q "WARNING: BBVFL_TEST_DUMP_Q is set" "$run/c0.out" || fail "no warning about the test hook in the client log"
  logs_hold_no_secret
}
