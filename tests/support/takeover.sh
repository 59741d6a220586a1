# Sourced (after session.sh) by the take-over tests, test_onchain_reelect.sh and
# test_onchain_slow_active.sh: their common session up to the point each acts on the active client.
#   takeover_session EPOCHS
# deploys a 3-client session of EPOCHS epochs (seed 5, --active-blocks 4 --round-timeout-blocks 4,
# the window variant of session_variant), runs three `bbvfl client` processes (columns 0-9, 10-19,
# 20-29, --takeover-after 3) that all freeze themselves right after submitting round 8
# (--pause-after-submit 9: a whole session takes seconds, too fast to catch by polling on a loaded
# machine), waits until they have, and names the active client: victim. The clients stay frozen.
takeover_session() {
  session_variant
  session_deploy --clients 3 --epochs "$1" --seed 5 --active-blocks 4 --round-timeout-blocks 4 ${variant[@]+"${variant[@]}"}
  session_keys 3
  cols=("0-9" "10-19" "20-29")
  client_flags=(--labels --seed 5 --round-timeout 90 --takeover-after 3)
  clients_start 3 --pause-after-submit 9
  wait_paused "$run" "${pids[@]}" || fail "the clients did not all reach round 8"
  pick_victim active
}
