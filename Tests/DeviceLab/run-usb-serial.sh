#!/usr/bin/env bash
# run-usb-serial.sh - host side of the serial-pedometer device-lab test (~1 min under TCG).
#
# Builds healthgate (debug, unless HEALTHGATE_BIN names a binary), makes sure the devicelab VM
# image exists, and runs usb-serial.sh inside it: a USB CDC-ACM gadget (0525:a4a7) is plugged
# in, tagged by OUR udev rules, read by `healthgate run` with a udev-discovering serial-pedometer
# source, unplugged and replugged, and the steps stored in SQLite are checked exactly.
#
# usage: Tests/DeviceLab/run-usb-serial.sh [OUTDIR]     (default OUTDIR: /tmp/healthgate-usb-serial)
# Exit: the guest's status (0 = pass), 124 timeout, 125 VM failure.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LAB=${DEVICELAB_DIR:-$ROOT/../shared/devicelab}
[[ -d $LAB ]] || LAB=/work/shared/devicelab
OUT=${1:-/tmp/healthgate-usb-serial}

if [[ -z ${HEALTHGATE_BIN:-} ]]; then
  (cd "$ROOT" && swift build --product healthgate)
  HEALTHGATE_BIN="$ROOT/.build/debug/healthgate"
fi
[[ -x $HEALTHGATE_BIN ]] || { echo "run-usb-serial: no healthgate binary at $HEALTHGATE_BIN" >&2; exit 125; }

"$LAB/build-vm.sh"
rm -rf "$OUT"; mkdir -p "$OUT"
# The guest sees the host's filesystem at the same paths: pass the checkout and the binary.
exec "$LAB/run-vm.sh" -t 240 -o "$OUT" "$HERE/usb-serial.sh" "$ROOT" "$HEALTHGATE_BIN"
