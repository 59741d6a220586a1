#!/usr/bin/env bash
# test_masked_session.sh with the ACTIVE client killed: expireRound() excludes it, the contract
# elects a new active client among the survivors and re-opens the round for them; the new active
# client takes the fusion head over from the last GradientPosted and the session finishes with M-1.
set -euo pipefail
BBVFL_TEST_KILL_ACTIVE=1 exec "$(dirname "$0")/test_masked_session.sh"
