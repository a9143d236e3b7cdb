#!/usr/bin/env bash
# run-usb-serial.sh [OUTDIR] - the USB serial pedometer scenario (usb-serial.sh) in the
# device-lab VM: a CDC-ACM gadget (dummy_hcd + g_serial) tagged by our udev rules, read by
# `healthgate run` with udev discovery, unplugged and plugged again, steps checked in SQLite.
# About 1 minute under TCG. Artifacts: OUTDIR (default /tmp/healthgate-lab-usb-serial).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" usb-serial 600 "${1:-/tmp/healthgate-lab-usb-serial}"
