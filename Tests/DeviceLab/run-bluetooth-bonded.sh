#!/usr/bin/env bash
# run-bluetooth-bonded.sh [OUTDIR] - a glucose meter that requires bonding, through
# bluetoothd (bluetooth-bonded.sh): pairing with a passkey by healthgate's own agent, stored records
# downloaded after a checkpoint, healthgate pair. About 3 minutes under TCG. Artifacts: OUTDIR (default /tmp/healthgate-lab-bluetooth-bonded).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" bluetooth-bonded 900 "${1:-/tmp/healthgate-lab-bluetooth-bonded}"
