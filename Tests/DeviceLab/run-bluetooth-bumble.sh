#!/usr/bin/env bash
# run-bluetooth-bumble.sh [OUTDIR] - a heart-rate monitor on Google's Bumble, a Bluetooth stack
# independent of BlueZ and of healthgate's simulator (bluetooth-bumble.sh): twelve connections,
# each ended by the monitor, every measurement sent counted against the stored samples. About 3
# minutes under TCG. Artifacts: OUTDIR (default /tmp/healthgate-lab-bluetooth-bumble).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" bluetooth-bumble 900 "${1:-/tmp/healthgate-lab-bluetooth-bumble}"
