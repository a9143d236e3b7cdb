#!/usr/bin/env bash
# run-rfcomm-serial.sh [OUTDIR] - the RFCOMM pedometer scenario (rfcomm-serial.sh) in the
# device-lab VM: a Python RFCOMM server on one btvirt BR/EDR controller, healthgate's own RFCOMM
# socket on the other, a dropped and restored link, the exact step total checked in SQLite.
# About 2 minutes under TCG. Artifacts: OUTDIR (default /tmp/healthgate-lab-rfcomm-serial).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" rfcomm-serial 600 "${1:-/tmp/healthgate-lab-rfcomm-serial}"
