#!/usr/bin/env bash
# run-bluetooth-cgm.sh [OUTDIR] - the ble-cgm source against a continuous glucose monitor on
# Google's Bumble (bluetooth-cgm.sh, bumble-cgm.py), in the device lab's VM (Tests/DeviceLab):
# the sensor's history through the Record Access Control Point, live records, a record with a
# broken E2E-CRC, link drops and a gateway killed with SIGKILL, every record the sensor sent
# counted against the store. About 3 minutes under TCG. Artifacts: OUTDIR (default
# /tmp/healthgate-lab-bluetooth-cgm).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../../Tests/DeviceLab/vm/run-scenario.sh" "$here/bluetooth-cgm.sh" 1200 "${1:-/tmp/healthgate-lab-bluetooth-cgm}"
