#!/usr/bin/env bash
# run-bluetooth-health.sh [OUTDIR] - a blood pressure monitor, thermometer, scale with body
# composition and pulse oximeter on one peripheral through bluetoothd (bluetooth-health.sh):
# indications and notifications, stored readings pushed on connect, body composition records in
# two indications, a device clock 90 s fast. About 2 minutes under TCG. Artifacts: OUTDIR (default /tmp/healthgate-lab-bluetooth-health).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" bluetooth-health 900 "${1:-/tmp/healthgate-lab-bluetooth-health}"
