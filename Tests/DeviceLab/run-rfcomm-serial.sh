#!/usr/bin/env bash
# run-rfcomm-serial.sh - host side of the RFCOMM serial-pedometer device-lab test (~2 min under TCG).
#
# Builds healthgate (debug, unless HEALTHGATE_BIN names a binary), makes sure the devicelab VM
# image exists, and runs rfcomm-serial.sh inside it: two btvirt BR/EDR controllers, a Python
# RFCOMM server on hci0 playing an HGP/1 pedometer, `healthgate run` connecting to it with its
# own RFCOMM socket, a dropped and restored link, and the exact step total checked in SQLite.
#
# usage: Tests/DeviceLab/run-rfcomm-serial.sh [OUTDIR]     (default OUTDIR: /tmp/healthgate-rfcomm-serial)
# Exit: the guest's status (0 = pass), 124 timeout, 125 VM failure.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
LAB=${DEVICELAB_DIR:-$ROOT/../shared/devicelab}
[[ -d $LAB ]] || LAB=/work/shared/devicelab
OUT=${1:-/tmp/healthgate-rfcomm-serial}

if [[ -z ${HEALTHGATE_BIN:-} ]]; then
  (cd "$ROOT" && swift build --product healthgate)
  HEALTHGATE_BIN="$ROOT/.build/debug/healthgate"
fi
[[ -x $HEALTHGATE_BIN ]] || { echo "run-rfcomm-serial: no healthgate binary at $HEALTHGATE_BIN" >&2; exit 125; }

"$LAB/build-vm.sh"
rm -rf "$OUT"; mkdir -p "$OUT"
# The guest sees the host's filesystem at the same paths: pass the checkout and the binary.
exec "$LAB/run-vm.sh" -t 240 -o "$OUT" "$HERE/rfcomm-serial.sh" "$ROOT" "$HEALTHGATE_BIN"
