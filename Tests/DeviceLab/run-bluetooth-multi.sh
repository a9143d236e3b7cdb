#!/usr/bin/env bash
# run-bluetooth-multi.sh [OUTDIR] - several peripherals of different profiles on one gateway
# (bluetooth-multi.sh): a heart-rate monitor and a bike on two btvirt controllers, one healthgate
# reading both on a third, the bike dropping and coming back while heart rate goes on.
# About 3 minutes under TCG. Artifacts: OUTDIR (default /tmp/healthgate-lab-bluetooth-multi).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" bluetooth-multi 1200 "${1:-/tmp/healthgate-lab-bluetooth-multi}"
