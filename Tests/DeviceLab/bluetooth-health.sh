#!/bin/bash
# bluetooth-health.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see run-bluetooth-health.sh).
#
# Two btvirt controllers: hci0 = a home health station (Tests/DeviceLab/peripherals/lab-health.py:
# Blood Pressure, Health Thermometer, Weight Scale, Body Composition, Pulse Oximeter, Current
# Time, Device Information; its clock runs 90 s fast; the cuff pushes two stored readings when
# indications are enabled; every 5 s a new reading, a temperature, a weight, a body composition
# record in two indications and a spot-check and continuous oximetry reading); hci1 = the
# gateway with a ble-health source. Checks:
#   1. the two stored readings arrive as bloodPressure correlations at their true times (10 and 5
#      minutes ago on the device's clock, corrected by the offset read from Current Time), with
#      the pulse as heart rate;
#   2. new readings and body temperatures (36.8 degC) follow, through indications;
#   3. with the VM's clock marked synchronized first (it is qemu's RTC, the host's UTC; nothing
#      in the VM synchronises it), the gateway sets the device's clock (a Current Time write the station honours): the stored
#      readings keep the offset read at connection (-90 s), later samples carry the set clock's (0);
#   4. the scale: bodyMass 72.6 kg (Weight Measurement) and, from each two-part Body Composition
#      record, bodyFatPercentage 22.4 %, leanBodyMass 56.2 kg, bodyMass 72.4 kg, height 1.74 m
#      and bodyMassIndex 23.91; the lone first part sent on subscription is reported, not stored;
#   5. the oximeter: oxygenSaturation 97 % and heartRate 61 (spot-check), 98 % and 63 (continuous);
#   6. bluetoothd still runs, and healthgate stops cleanly on SIGTERM.
set -uo pipefail
REPO=${1:?usage: bluetooth-health.sh REPO HEALTHGATE [SECONDS]}
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
scenario_arguments 150 "$@"

start_bluetooth 2
CUFF=$(address hci0)
echo "cuff (hci0) $CUFF, gateway hci1"
$PY -u "$PERIPHERALS/lab-health.py" /org/bluez/hci0 > "$OUT/cuff.log" 2>&1 &
poll 120 grep -q 'GATT application registered' "$OUT/cuff.log" && poll 120 grep -q 'Advertisement registered' "$OUT/cuff.log" &&
  pass "blood pressure monitor up on hci0" || { fail "the cuff did not start"; cat "$OUT/cuff.log"; }

clock_synchronize &&
  pass "the VM's clock is marked synchronized, as a time daemon would (the gateway sets device clocks only then)" ||
  fail "cannot mark the VM's clock synchronized ($(kernel_clock))"

say "healthgate run: ble-health on hci1 into SQLite"
cat > "$OUT/healthgate.json" <<EOF
{
  "sources": [
    {"kind": "ble-health", "name": "cuff", "config": {
      "adapter": "hci1", "devices": [{"address": "$CUFF"}],
      "reconnect": {"initialDelaySeconds": 1, "maxDelaySeconds": 5, "multiplier": 2}}}
  ],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}]
}
EOF
start_gateway "$OUT/healthgate.json"

pressures() { query "SELECT count(*) FROM correlations WHERE type = 'bloodPressure'"; }
temperatures() { query "SELECT count(*) FROM samples_readable WHERE type = 'bodyTemperature' AND unit = 'degC' AND abs(value - 36.8) < 0.001"; }
at_least() { [[ $($1) -ge $2 ]]; }
poll "$WAIT" at_least pressures 2 && pass "the stored readings arrive ($(pressures) blood pressure readings)" ||
  fail "no stored blood pressure readings within ${WAIT}s"
# The station's clock runs 90 s fast: its first stored reading belongs 90 s before the time it
# says it took it (the offset read from Current Time, to the second, under TCG: 5 s allowed).
oldest_stored_pressure "$OUT/cuff.log" 90 5 &&
  pass "the oldest reading is stored at its true time ($(($(date +%s) - OLDEST)) s ago, $((OLDEST - TAKEN)) s from when the station took it)" ||
  fail "the oldest reading is at ${OLDEST:-none}, not at ${TAKEN:-?}, when the station took it by the true time"
poll "$WAIT" at_least pressures 4 && pass "new readings follow ($(pressures))" || fail "no new readings ($(pressures))"
poll "$WAIT" at_least temperatures 2 && pass "body temperatures in degC ($(temperatures))" || fail "no body temperatures"
pulses=$(query "SELECT count(*) FROM samples_readable WHERE type = 'heartRate' AND value BETWEEN 60 AND 80")
[[ $pulses -ge 2 ]] && pass "the pulse is stored as heart rate ($pulses)" || fail "no pulse ($pulses)"
# value_count TYPE UNIT VALUE: the samples of TYPE in UNIT within 0.001 of VALUE (count_sql: the
# same count as an SQL expression).
count_sql() { echo "(SELECT count(*) FROM samples_readable WHERE type = '$1' AND unit = '$2' AND abs(value - $3) < 0.001)"; }
value_count() { query "SELECT $(count_sql "$@")"; }
has() { [[ $(value_count "$@") -ge 1 ]]; }
check_value() { poll "$WAIT" has "$1" "$2" "$3" && pass "$1 $3 $2 as sent ($(value_count "$1" "$2" "$3"))" ||
  fail "no $1 of $3 $2 (stored: $(query "SELECT group_concat(DISTINCT value || ' ' || unit) FROM samples_readable WHERE type = '$1'"))"; }
check_value bodyMass kg 72.6
check_value bodyFatPercentage % 22.4
check_value leanBodyMass kg 56.2
check_value bodyMass kg 72.4
check_value height m 1.74
bmi=$(query "SELECT count(*) FROM samples_readable WHERE type = 'bodyMassIndex' AND abs(value - 72.4 / (1.74 * 1.74)) < 0.0001")
[[ $bmi -ge 1 ]] && pass "bodyMassIndex from the record's weight and height ($bmi)" || fail "no bodyMassIndex of 23.91"
# One statement, so one read of the store: counted one query after another, a record committed in
# between (one every 5 s) showed as a record stored in part ("2 fat, 3 lean, 3 weights").
read -r fat lean whole <<<"$(query "SELECT $(count_sql bodyFatPercentage % 22.4) || ' ' || $(count_sql leanBodyMass kg 56.2) || ' ' || $(count_sql bodyMass kg 72.4)")"
[[ $fat -eq $lean && $lean -eq $whole ]] && pass "every stored body composition record is whole ($fat)" ||
  fail "body composition records stored in part: $fat fat, $lean lean, $whole weights"
grep -q 'incomplete Body Composition Measurement record' "$OUT/healthgate.log" &&
  pass "the lone first part is reported as an incomplete record" || fail "no incomplete body composition record reported"
check_value oxygenSaturation % 97
check_value oxygenSaturation % 98
check_value heartRate count/min 61
check_value heartRate count/min 63
grep -q "set the device's clock to" "$OUT/healthgate.log" && grep -q 'clock set to' "$OUT/cuff.log" &&
  pass "the gateway set the device's clock: $(grep -o 'clock set to.*' "$OUT/cuff.log" | head -1)" ||
  fail "the device's clock was not set"
# offset_count TYPE CONDITION: samples of TYPE whose clock offset meets CONDITION.
offset_count() { query "SELECT count(*) FROM samples_readable s JOIN metadata_set_entries m ON m.set_id = s.metadata_set_id
  WHERE s.type = '$1' AND m.key = 'healthgate.deviceClockOffsetSeconds' AND $2"; }
stored=$(offset_count heartRate "s.value IN (70, 72) AND m.value BETWEEN -92 AND -88")
[[ $stored -ge 2 ]] && pass "the stored readings keep the offset read at connection (about -90 s: $stored)" ||
  fail "the stored readings lost the connection's clock offset ($stored)"
after=$(offset_count bodyTemperature "abs(m.value) <= 1")
[[ $after -ge 1 ]] && pass "readings after the set carry the set clock's offset (0: $after)" ||
  fail "no reading with the set clock's offset ($(query "SELECT group_concat(DISTINCT m.value) FROM samples_readable s JOIN metadata_set_entries m ON m.set_id = s.metadata_set_id WHERE m.key = 'healthgate.deviceClockOffsetSeconds'"))"
query "SELECT type, start_us FROM correlations ORDER BY start_us LIMIT 5"

finish
