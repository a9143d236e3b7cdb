#!/usr/bin/env bash
# run-bluetooth.sh [OUTDIR] - the BLE heart-rate scenario (bluetooth-hr.sh) in the device-lab VM:
# BlueZ's example heart-rate server on one btvirt controller, `healthgate scan` and `healthgate
# run` on the other, a monitor that goes away and comes back, samples checked in SQLite.
# About 2 minutes under TCG. Artifacts: OUTDIR (default /tmp/healthgate-lab-bluetooth).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" bluetooth-hr 900 "${1:-/tmp/healthgate-lab-bluetooth}"
