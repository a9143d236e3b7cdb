#!/usr/bin/env bash
# run-strap-between-classes.sh [OUTDIR] - a strap that changes hands between two classes
# (strap-between-classes.sh): 2 ANT+ straps through an emulated USB ANT stick (a gadget bound by
# usb_serial_simple), two classes with a gateway restart and an assignment between them; every
# reading attributed to whoever wore the strap then, every workout holding its wearer's readings.
# About 2 to 3 minutes under TCG.
# Artifacts: OUTDIR (default /tmp/healthgate-lab-strap-between-classes).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" strap-between-classes 600 "${1:-/tmp/healthgate-lab-strap-between-classes}"
