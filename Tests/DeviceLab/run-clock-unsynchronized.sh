#!/usr/bin/env bash
# run-clock-unsynchronized.sh [OUTDIR] - a gateway booted with its clock a day behind and no time
# daemon (clock-unsynchronized.sh): it writes no time into a health station whose clock is right,
# stores the station's readings at the station's times, and notices when the clock is stepped and
# synchronised. About 2 minutes under TCG. Artifacts: OUTDIR (default
# /tmp/healthgate-lab-clock-unsynchronized).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
HEALTHGATE_LAB_RTC_OFFSET_SECONDS=-86400 \
  exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" clock-unsynchronized 900 "${1:-/tmp/healthgate-lab-clock-unsynchronized}"
