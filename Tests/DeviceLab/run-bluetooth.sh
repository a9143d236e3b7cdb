#!/bin/bash
# run-bluetooth.sh [OUTDIR] - the BlueZ device-lab test, from the host.
#
# Builds healthgate (debug) if needed, prepares the VM with ../shared/devicelab/build-vm.sh
# (idempotent), and runs bluetooth-hr.sh inside it. Artifacts land in OUTDIR (default
# /tmp/healthgate-devicelab-bt). Exits with the guest script's status (0 = pass; 124 timeout;
# 125 VM failure). Takes about 2 minutes under software emulation.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB=${DEVICELAB_DIR:-$REPO/../shared/devicelab}
OUTDIR=${1:-/tmp/healthgate-devicelab-bt}

[[ -x $LAB/run-vm.sh ]] || { echo "run-bluetooth: no device lab at $LAB (set DEVICELAB_DIR)" >&2; exit 125; }
if [[ ! -x $REPO/.build/debug/healthgate || -n $(find "$REPO/Sources" "$REPO/plugins" -newer "$REPO/.build/debug/healthgate" -name '*.swift' -print -quit) ]]; then
  (cd "$REPO" && swift build --product healthgate)
fi
"$LAB/build-vm.sh"
rm -rf "$OUTDIR"
set +e
"$LAB/run-vm.sh" -t 420 -o "$OUTDIR" "$REPO/Tests/DeviceLab/bluetooth-hr.sh" "$REPO" 40
status=$?
set -e
echo "run-bluetooth: guest status $status; artifacts in $OUTDIR"
exit $status
