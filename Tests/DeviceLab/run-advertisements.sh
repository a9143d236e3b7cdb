#!/usr/bin/env bash
# run-advertisements.sh [OUTDIR] - devices that only advertise (issue 47): Polar-like heart-rate
# straps and Xiaomi scales on Google's Bumble, what bluetoothd reports of their advertisements per
# path (discovery, with and without -E, an Advertisement Monitor, as the service user with the
# shipped policy), and healthgate's advertisement sources (advertisements.sh): on the Advertisement
# Monitor, and on the management socket (bluetoothd without -E, the gateway holding CAP_NET_ADMIN).
# About 6 minutes under TCG on an idle host. Artifacts: OUTDIR (default /tmp/healthgate-lab-advertisements).
# HEALTHGATE_LAB_DUPLICATE_FILTER=address|data|none chooses the emulated controller's duplicate
# filter (default address); HEALTHGATE_LAB_ADV_WINDOW the seconds measured per path (default 20).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
exec "$(dirname "${BASH_SOURCE[0]}")/vm/run-scenario.sh" advertisements 900 "${1:-/tmp/healthgate-lab-advertisements}" \
  "${HEALTHGATE_LAB_ADV_WINDOW:-20}" "${HEALTHGATE_LAB_DUPLICATE_FILTER:-address}"
