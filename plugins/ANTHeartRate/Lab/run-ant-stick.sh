#!/usr/bin/env bash
# run-ant-stick.sh [OUTDIR] - a USB ANT stick in the device lab's VM (Tests/DeviceLab): a gadget
# with the ANT USB-m's vendor and product (0fcf:1009) and a bulk serial function, bound by the
# guest kernel's real usb_serial_simple driver, tagged by udev-rules/71-healthgate-ant.rules, with
# the stick emulator (Tests/Fixtures/ant_stick_emulator.py) playing straps on the gadget side; then
# `healthgate run` with an ant-heart-rate source as the service user, an unplug and a replug, and
# the stored beats against the emulator's log (ant-stick.sh). About 2 minutes under TCG.
# Artifacts: OUTDIR (default /tmp/healthgate-lab-ant-stick).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../../Tests/DeviceLab/vm/run-scenario.sh" "$here/ant-stick.sh" 900 "${1:-/tmp/healthgate-lab-ant-stick}"
