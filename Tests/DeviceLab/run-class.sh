#!/usr/bin/env bash
# run-class.sh [OUTDIR] - a class on one gateway (class.sh): 6 ANT+ straps through an emulated USB
# ANT stick (a gadget bound by usb_serial_simple), 3 broadcasting and 2 connected straps on Bumble,
# each worn by a participant assigned by its radio identity; a group workout, the board's tiles and
# event stream and every workout against what the emulators sent, one strap switched off and on,
# one strap handed to a new member. About 3 to 4 minutes under TCG.
# Artifacts: OUTDIR (default /tmp/healthgate-lab-class).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" class 900 "${1:-/tmp/healthgate-lab-class}"
