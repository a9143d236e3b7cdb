#!/bin/bash
# clock-unsynchronized.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see
# run-clock-unsynchronized.sh), which boots with its real-time clock LAB_RTC_OFFSET_SECONDS
# (-86400: a day) behind the true time, as a Raspberry Pi without a battery-backed clock boots
# with the time of its last shutdown, and with no time daemon: the kernel says "unsynchronized".
#
# Two btvirt controllers: hci0 = the home health station (peripherals/lab-health.py) whose clock
# is RIGHT (the true time: the VM's plus a day); hci1 = the gateway, ble-health. Checks:
#   1. the VM's clock is a day behind and the kernel says it is not synchronized;
#   2. the gateway logs its clock as not synchronized, and writes no Current Time into the
#      station (whose clock is right and a day "ahead" of the gateway's);
#   3. the station's readings are stored at the station's times: the first of its two stored
#      readings at the time it says it took it (10 minutes before it started), every reading with
#      a device time stamp within minutes of the true time, none a day back;
#   4. readings without a device time stamp (PLX continuous) are dated by the gateway's clock, a
#      day back, each with the clock's base;
#   5. the clock is stepped to the true time and marked synchronized (as timesyncd does): the
#      gateway logs the change and the step's size, moves the readings it dated before the step
#      to the true time (healthgate.clockCorrectedSeconds), leaves those with device time stamps
#      alone, later readings are stored at the true time, and the station's clock was never
#      written.
set -uo pipefail
REPO=${1:?usage: clock-unsynchronized.sh REPO HEALTHGATE [SECONDS]}
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
scenario_arguments 150 "$@"
OFFSET=${LAB_RTC_OFFSET_SECONDS:-0}
true_now() { echo $(($(date +%s) - OFFSET)); }

say "the VM's clock"
[[ $OFFSET -le -3600 ]] && pass "the VM booted ${OFFSET#-} s behind: it says $(date -u +%FT%TZ), the true time is $(date -u -d "@$(true_now)" +%FT%TZ)" ||
  fail "the VM was not booted behind the true time (LAB_RTC_OFFSET_SECONDS=$OFFSET)"
[[ $(kernel_clock) == unsynchronized ]] && pass "the kernel says its clock is not synchronized" ||
  fail "the kernel says $(kernel_clock)"

start_bluetooth 2
STATION=$(address hci0)
LAB_DEVICE_CLOCK_ERROR_SECONDS=$((-OFFSET)) $PY -u "$PERIPHERALS/lab-health.py" /org/bluez/hci0 > "$OUT/station.log" 2>&1 &
poll 120 grep -q 'Advertisement registered' "$OUT/station.log" && pass "the station (clock right) is up on hci0" ||
  { fail "the station did not start"; cat "$OUT/station.log"; }

say "healthgate run: ble-health on hci1, the clock unsynchronized"
cat > "$OUT/healthgate.json" <<JSON
{
  "sources": [
    {"kind": "ble-health", "name": "station", "config": {
      "adapter": "hci1", "devices": [{"address": "$STATION"}],
      "reconnect": {"initialDelaySeconds": 1, "maxDelaySeconds": 5, "multiplier": 2}}}
  ],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}]
}
JSON
# Every property change on the bus, for a failure's evidence: which side a reading got to.
dbus-monitor --system "type='signal',interface='org.freedesktop.DBus.Properties'" > "$OUT/dbus.log" 2>&1 &
start_gateway "$OUT/healthgate.json"
pressures() { query "SELECT count(*) FROM correlations WHERE type = 'bloodPressure'"; }
at_least() { [[ $($1) -ge $2 ]]; }
poll "$WAIT" at_least pressures 3 && pass "readings arrive ($(pressures) blood pressure readings)" ||
  fail "no blood pressure readings within ${WAIT}s"
grep -q 'clock: not synchronized since boot' "$OUT/healthgate.log" && pass "the gateway logs: $(grep -o 'clock: not synchronized since boot.*' "$OUT/healthgate.log" | head -1)" ||
  fail "the gateway did not log its clock as not synchronized"
grep -q "the gateway's clock is not synchronized: the device's clock is left as it is" "$OUT/healthgate.log" &&
  pass "it leaves the station's clock alone" || fail "no word of leaving the station's clock alone"
# The oldest reading is the station's first stored one, at the time the station took it by its
# clock, which is right; and no reading with a device time stamp is more than 15 minutes away from
# the true time (a day back, if the gateway's clock had been used).
now_us=$(($(true_now) * 1000000))
if oldest_stored_pressure "$OUT/station.log" 0 2; then
  pass "the oldest stored reading is at the station's time: $(((now_us / 1000000 - OLDEST) / 60)) minutes before the true time, as the station took it"
else
  fail "the oldest stored reading is at ${OLDEST:-none}, the station took its first at ${TAKEN:-?} (the true time is $((now_us / 1000000)))"
  query "SELECT start_us FROM correlations WHERE type = 'bloodPressure' ORDER BY start_us LIMIT 5"
  # Where the first stored reading (131/86 mmHg: 06 83 00 56 00) went: the station's Value
  # changes on its own objects, bluetoothd's on the gateway's (hci1).
  awk '/^signal /{path = $0; sub(/.*path=/, "", path); sub(/;.*/, "", path)}
    /06 83 00 56 00/{if (path ~ /^\/org\/bluez\/hci1\//) gateway++; else station++}
    END {printf "the first stored reading on D-Bus: %d Value changes by the station, %d by bluetoothd for the gateway\n", station, gateway}' "$OUT/dbus.log"
fi
stamped="s.type IN ('bloodPressureSystolic', 'bloodPressureDiastolic', 'bodyTemperature', 'bodyMass', 'bodyFatPercentage', 'leanBodyMass', 'height', 'bodyMassIndex')"
far=$(query "SELECT count(*) FROM samples_readable s WHERE $stamped AND abs(s.start_us - $now_us) > 900000000")
total=$(query "SELECT count(*) FROM samples_readable s WHERE $stamped")
[[ $total -ge 4 && $far -eq 0 ]] && pass "all $total readings with a device time stamp are within 15 minutes of the true time" ||
  fail "$far of $total readings with a device time stamp are more than 15 minutes from the true time"
# Readings without a device time stamp (PLX continuous: SpO2 and pulse) can only be dated by the
# gateway's clock: a day back for now, each with the clock's base beside it.
# They come with the station's ticks, every 5 s, after its stored readings: waited for.
dayback="abs(s.start_us - ($now_us - 86400000000)) < 900000000"
dated_a_day_back() { query "SELECT count(*) FROM samples_readable s WHERE NOT ($stamped) AND $dayback"; }
poll 20 at_least dated_a_day_back 2
# Both counts in one query: the station's ticks go on arriving, so two queries count two stores.
# (A here-string, not process substitution: the guest has no /dev/fd.)
IFS='|' read -r unstamped based <<< "$(query "SELECT count(*), coalesce(sum(EXISTS (SELECT 1 FROM metadata_set_entries e
  WHERE e.set_id = s.metadata_set_id AND e.key = 'healthgate.clockBaseMilliseconds')), 0)
  FROM samples_readable s WHERE NOT ($stamped) AND $dayback")"
[[ $unstamped -ge 2 && $based -eq $unstamped ]] &&
  pass "$unstamped readings without a device time stamp (PLX continuous) are dated by the unsynchronized gateway clock, a day back, each with its clock base" ||
  fail "$based of $unstamped readings without a device time stamp carry the clock base (need at least 2)"

say "the clock steps to the true time and is synchronized"
before_sync=$(query "SELECT count(*) FROM correlations WHERE type = 'bloodPressure'")
clock_synchronize "$(true_now)" &&
  pass "stepped to $(date -u +%FT%TZ) and marked synchronized" || fail "cannot step and synchronize the clock ($(kernel_clock))"
OFFSET=0
poll 20 grep -q 'clock: synchronized' "$OUT/healthgate.log" && pass "the gateway logs: $(grep -o 'clock: synchronized.*' "$OUT/healthgate.log" | head -1)" ||
  fail "the gateway did not notice the synchronization"
step=$(grep -o 'clock: the wall clock stepped by [+-][0-9.]* s' "$OUT/healthgate.log" | head -1)
awk -v s="${step##*by }" 'BEGIN { s += 0; exit !(s > 86390 && s < 86410) }' && pass "the gateway logs the step: $step" ||
  fail "the step of about +86400 s is not logged (${step:-no step logged})"
poll 20 grep -q 'clock: moved' "$OUT/healthgate.log" && pass "the gateway logs: $(grep -o 'clock: moved.*' "$OUT/healthgate.log" | head -1)" ||
  fail "the gateway did not move the readings dated before the step"
now_us=$(($(date +%s) * 1000000))
left=$(query "SELECT count(*) FROM samples_readable s WHERE NOT ($stamped) AND s.start_us < $now_us - 3600000000")
moved=$(query "SELECT count(*) FROM samples_readable s JOIN metadata_set_entries e ON e.set_id = s.metadata_set_id AND e.key = 'healthgate.clockCorrectedSeconds' WHERE NOT ($stamped) AND abs(e.value - 86400) < 30 AND abs(s.start_us - $now_us) < 1800000000")
[[ $left -eq 0 && $moved -ge $unstamped ]] &&
  pass "the $unstamped readings dated by the gateway before the step are at the true time now ($moved with healthgate.clockCorrectedSeconds ≈ 86400; none left a day back)" ||
  fail "$left readings without a device time stamp are still a day back; $moved moved of $unstamped"
far=$(query "SELECT count(*) FROM samples_readable s WHERE $stamped AND abs(s.start_us - $now_us) > 1800000000")
[[ $far -eq 0 ]] && pass "readings with a device time stamp kept the station's times (none moved by the step)" ||
  fail "$far readings with a device time stamp are more than 30 minutes from the true time after the step"
after() { [[ $(query "SELECT count(*) FROM correlations WHERE type = 'bloodPressure'") -ge $((before_sync + 2)) ]]; }
poll "$WAIT" after && pass "readings continue after the step" || fail "no readings after the step"
now_us=$(($(date +%s) * 1000000))
latest=$(query "SELECT ($now_us - max(start_us)) / 1000000.0 FROM correlations WHERE type = 'bloodPressure'")
awk -v s="$latest" 'BEGIN { exit !(s > -5 && s < 30) }' && pass "the latest reading is at the true time (${latest} s ago)" ||
  fail "the latest reading is ${latest} s from now"
! grep -q 'clock set to' "$OUT/station.log" && ! grep -q "set the device's clock to" "$OUT/healthgate.log" &&
  pass "the station's clock was never written" || fail "the station's clock was written: $(grep 'clock set to' "$OUT/station.log")"
finish
