#!/bin/bash
# bluetooth-health.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see run-bluetooth-health.sh).
#
# Two btvirt controllers: hci0 = a blood pressure monitor with a thermometer
# (Tests/DeviceLab/peripherals/lab-health.py: Blood Pressure, Health Thermometer, Current Time,
# Device Information; its clock runs 90 s fast; it pushes two stored readings when indications
# are enabled, then indicates a new reading and a temperature every 5 s); hci1 = the gateway with a
# ble-health source. Checks:
#   1. the two stored readings arrive as bloodPressure correlations at their true times (10 and 5
#      minutes ago on the device's clock, corrected by the offset read from Current Time), with
#      the pulse as heart rate;
#   2. new readings and body temperatures (36.8 degC) follow, through indications;
#   3. the samples carry the clock offset (-90 s) and the device's own time stamp;
#   4. bluetoothd still runs, and healthgate stops cleanly on SIGTERM.
set -uo pipefail
REPO=${1:?usage: bluetooth-health.sh REPO HEALTHGATE [SECONDS]}
HG=${2:?usage: bluetooth-health.sh REPO HEALTHGATE [SECONDS]}
WAIT=${3:-60}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"

start_bluetooth 2
CUFF=$(address hci0)
echo "cuff (hci0) $CUFF, gateway hci1"
$PY -u "$PERIPHERALS/lab-health.py" /org/bluez/hci0 > "$OUT/cuff.log" 2>&1 &
poll 40 grep -q 'GATT application registered' "$OUT/cuff.log" && poll 40 grep -q 'Advertisement registered' "$OUT/cuff.log" &&
  pass "blood pressure monitor up on hci0" || { fail "the cuff did not start"; cat "$OUT/cuff.log"; }

say "healthgate run: ble-health on hci1 into SQLite"
cat > "$OUT/healthgate.json" <<EOF
{
  "sources": [
    {"kind": "ble-health", "name": "cuff", "config": {
      "adapter": "hci1", "devices": [{"address": "$CUFF"}],
      "reconnect": {"initialDelaySeconds": 1, "maxDelaySeconds": 5, "multiplier": 2}}}
  ],
  "sinks": [{"kind": "sqlite", "name": "store", "config": {"path": "$DB"}}]
}
EOF
start_gateway "$OUT/healthgate.json"

pressures() { query "SELECT count(*) FROM correlations WHERE type = 'bloodPressure'"; }
temperatures() { query "SELECT count(*) FROM samples WHERE type = 'bodyTemperature' AND unit = 'degC' AND abs(value - 36.8) < 0.001"; }
at_least() { [[ $($1) -ge $2 ]]; }
poll "$WAIT" at_least pressures 2 && pass "the stored readings arrive ($(pressures) blood pressure readings)" ||
  fail "no stored blood pressure readings within ${WAIT}s"
now_us=$(($(date +%s) * 1000000))
oldest_minutes=$(query "SELECT ($now_us - min(start_us)) / 60000000.0 FROM correlations WHERE type = 'bloodPressure'")
awk -v m="$oldest_minutes" 'BEGIN { exit !(m > 9.5 && m < 11) }' &&
  pass "the oldest reading is stored at its true time (${oldest_minutes} minutes ago)" ||
  fail "the oldest reading is not 10 minutes old (${oldest_minutes})"
poll "$WAIT" at_least pressures 4 && pass "new readings follow ($(pressures))" || fail "no new readings ($(pressures))"
poll "$WAIT" at_least temperatures 2 && pass "body temperatures in degC ($(temperatures))" || fail "no body temperatures"
pulses=$(query "SELECT count(*) FROM samples WHERE type = 'heartRate' AND value BETWEEN 60 AND 80")
[[ $pulses -ge 2 ]] && pass "the pulse is stored as heart rate ($pulses)" || fail "no pulse ($pulses)"
offsets=$(query "SELECT count(*) FROM samples s JOIN metadata_entries m ON m.set_id = s.metadata_set_id
  WHERE s.type = 'bodyTemperature' AND m.key = 'healthgate.deviceClockOffsetSeconds' AND m.value BETWEEN -92 AND -88")
[[ $offsets -ge 1 ]] && pass "samples carry the device clock's offset (about -90 s)" || fail "no clock offset in the metadata"
query "SELECT type, start_us FROM correlations ORDER BY start_us LIMIT 5"

finish
