#!/usr/bin/env bash
# run-ghs.sh [OUTDIR] - the ble-ghs source against three Generic Health Sensors on Google's Bumble
# (ghs.sh, bumble-ghs.py), in the device lab's VM (Tests/DeviceLab): a pulse oximeter's stored
# bundles through the Record Access Control Point and its live ones across link drops (each
# reconnect asking from its checkpoint, also after a SIGKILL), a cuff's compound blood pressures,
# an ECG's sample arrays in 28 segments each, every observation the sensors sent counted against
# the store. About 1.5 minutes under TCG (87 to 100 s from qemu's start to its exit). Artifacts:
# OUTDIR (default /tmp/healthgate-lab-ghs).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../../Tests/DeviceLab/vm/run-scenario.sh" "$here/ghs.sh" 900 "${1:-/tmp/healthgate-lab-ghs}"
