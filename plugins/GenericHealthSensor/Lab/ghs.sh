#!/bin/bash
# ghs.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see run-ghs.sh).
#
# Three Generic Health Sensors (service 0x1840) on Google's Bumble (bumble-ghs.py: neither BlueZ
# nor healthgate's simulator, written from the wire format alone) behind the gateway's controller
# hci0, driven by bluetoothd 5.66, all three followed by one `ble-ghs` source:
#   * a pulse oximeter holding 12 stored bundles (SpO2 and pulse rate) when the gateway starts; it
#     sends live bundles once the gateway starts them (GHS Control Point 0x01), drops the link
#     itself after each burst, CONNECTIONS times, and stores 3 more bundles while disconnected;
#   * a blood pressure monitor: compound observations (systolic, diastolic, mean), 2 stored, 3 live,
#     a message and its settings, then what issue #78 found mishandled: an SpO2 code and a bundle's
#     SpO2 of one time, two SpO2 of one identity and different values, and eight faults (lost,
#     swapped and missing first segments, an interrupted observation, invalid, not available, NaN,
#     a bad length) among two valid SpO2;
#   * an ECG: 3 sample arrays of 240 samples at 250 Hz, each in 28 segments (ATT MTU 23), so the
#     6-bit rolling segment counter wraps.
# Checks (ghs-check.py reads the sensors' log and `healthgate query` JSON):
#   1. on every connection the gateway asks the oximeter for its stored records, the first time
#      for all of them, after a reconnect from one past the last record it has (its checkpoint),
#      also after it was killed (SIGKILL, while the oximeter was off air) and started again, when
#      it asks the cuff and the ECG again too;
#   2. every stored and every live SpO2 and pulse rate is stored once, at its time, with its value;
#   3. each compound is a bloodPressure correlation with its systolic and diastolic, the mean kept;
#   4. the ECG lead is a quantity series of type mdc.131329.4274 holding exactly the samples sent;
#   5. with deleteStoredObservations, the oximeter and the cuff are asked to erase their records
#      up to a bound (at most), never past the last record they had sent the gateway;
#   6. the cuff's pair is three records, its twin one (the second refused with a warning), no
#      fault stored, each lost observation dropped once by its first reason, 5 bad payloads (the
#      cuff's 4 drops and its bad length, none of the other sensors), the 3 values not stored
#      logged;
#   7. the gateway reconnected after every drop, bluetoothd still runs, healthgate stops cleanly.
set -uo pipefail
REPO=${1:?usage: ghs.sh REPO HEALTHGATE [SECONDS]}
HG=${2:?usage: ghs.sh REPO HEALTHGATE [SECONDS]}
WAIT=${3:-300}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
HERE=$REPO/plugins/GenericHealthSensor/Lab
CONNECTIONS=4
LIVE=5
OFF_AIR_AFTER=2      # the oximeter's connection after whose drop it stays off air, and the gateway is killed
OFF_AIR_SECONDS=15
OXIMETER=F0:47:48:53:00:01 CUFF=F0:47:48:53:00:02 ECG=F0:47:48:53:00:03
LOG=$OUT/sensors.log

export HEALTHGATE_REPO=$REPO
start_bumble "$LOG" "$HERE/bumble-ghs.py" "$CONNECTIONS" "$LIVE" "$OFF_AIR_AFTER" "$OFF_AIR_SECONDS"

cat > "$OUT/healthgate.json" <<JSON
{
  "sources": [
    {"kind": "ble-ghs", "name": "ghs", "config": {
      "adapter": "hci0", "devices": ["$OXIMETER", "$CUFF", "$ECG"], "deleteStoredObservations": true,
      "reconnect": {"initialDelaySeconds": 0.5, "maxDelaySeconds": 2, "multiplier": 2}}}
  ],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}],
  "logLevel": "debug"
}
JSON
# The sensors stamp their observations with UTC; the VM's clock is the host's UTC (qemu's RTC),
# which no daemon in the VM vouches for: marked synchronized as timesyncd would.
clock_synchronize && pass "the VM's clock is marked synchronized" ||
  fail "cannot mark the VM's clock synchronized ($(kernel_clock))"

# store_json: what the checks read, as `healthgate query` answers it.
store_json() {
  local q=(env XDG_STATE_HOME="$STORE" "$HG" query)
  "${q[@]}" samples --type oxygenSaturation --since 2000-01-01T00:00:00Z --until 2100-01-01T00:00:00Z --format json --db "$DB" > "$OUT/spo2.json" 2> "$OUT/query.err" &&
    "${q[@]}" samples --type heartRate --since 2000-01-01T00:00:00Z --until 2100-01-01T00:00:00Z --format json --db "$DB" > "$OUT/pulse.json" 2>> "$OUT/query.err" &&
    "${q[@]}" changes --format json --db "$DB" > "$OUT/changes.json" 2>> "$OUT/query.err"
}
stored_spo2() { [[ -f $DB ]] && store_json && "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(len(d if isinstance(d, list) else d.get("samples", [])))' "$OUT/spo2.json" || echo 0; }

say "healthgate run: ble-ghs on hci0, following the oximeter, the cuff and the ECG"
start_gateway "$OUT/healthgate.json"
# While the oximeter is off air after its drop, the gateway dies (SIGKILL) and starts again: what
# it asks the sensors for next must come from the checkpoint it committed, not from its memory.
# The cuff and the ECG send their live readings once, early: they must be through by then.
kill_time() { grep -q '^oximeter off air' "$LOG" && grep -q '^cuff: all readings sent' "$LOG" && grep -q '^ecg: all arrays sent' "$LOG"; }
poll "$WAIT" kill_time || fail "the oximeter never went off air, or the cuff or the ECG did not finish ($(grep -c '^connected oximeter' "$LOG") oximeter connections)"
grep -q '^oximeter on air again' "$LOG" && echo "NOTE: the oximeter is on air again already: the gateway dies during its next connection"
say "SIGKILL while the oximeter is off air, and the gateway again"
kill -KILL "$GATEWAY_PID"
wait "$GATEWAY_PID" 2> /dev/null
mv "$OUT/healthgate.log" "$OUT/healthgate-killed.log"
echo "the sensors had $(grep -c '^racp .* \(all\|from\)' "$LOG") report requests"
start_gateway "$OUT/healthgate.json"
all_done() { grep -q '^oximeter: all connections done' "$LOG" && grep -q '^cuff: all readings sent' "$LOG" && grep -q '^ecg: all arrays sent' "$LOG"; }
poll "$WAIT" all_done && pass "the sensors finished: the oximeter its $CONNECTIONS connections, the cuff and the ECG their readings" ||
  fail "the sensors did not finish within ${WAIT}s: $(grep -c '^connected oximeter' "$LOG") oximeter connections, cuff done: $(grep -c '^cuff: all' "$LOG"), ECG done: $(grep -c '^ecg: all' "$LOG")"

say "the store against what the sensors sent"
live=$(grep -c '^sent live oximeter ' "$LOG")
records=$(grep '^sent stored oximeter ' "$LOG" | awk '{print $4}' | sort -u | wc -l)
expected=$((live + records))
everything_stored() { [[ $(stored_spo2) -ge $expected ]]; }
poll 30 everything_stored
sleep 2
store_json || fail "healthgate query failed: $(head -c 300 "$OUT/query.err")"
"$PY" "$HERE/ghs-check.py" "$LOG" "$OUT" "$CONNECTIONS" > "$OUT/verdicts.txt" 2>&1
verdicts "$OUT/verdicts.txt"

connections=$(grep -c '^connected oximeter ' "$LOG")
drops=$(grep -c 'link dropped by the sensor' "$LOG")
reconnects=$(cat "$OUT"/healthgate*.log | grep -c "$OXIMETER.*reconnected")
[[ $drops -eq $((CONNECTIONS - 1)) && $connections -eq $CONNECTIONS ]] &&
  pass "the gateway reconnected after every drop: $drops drops, $connections connections ($reconnects reconnections in its two logs)" ||
  fail "$drops drops by the oximeter, $connections connections, $reconnects reconnections in the gateway's two logs"
for role in oximeter cuff ecg; do
  grep -q "^ghs-cp $role answered 0x80" "$LOG" && pass "the gateway started the $role's live observations (GHS Control Point 0x01, answered 0x80)" ||
    fail "the $role's live observations were not started: $(grep "^ghs-cp $role" "$LOG" | head -n 3 | tr '\n' ';')"
done
refused=$(grep -c 'refused' "$LOG")
[[ $refused -eq 0 ]] && pass "no control point write was refused (indications enabled first, one RACP procedure at a time)" ||
  fail "$refused control point writes refused: $(grep 'refused' "$LOG" | head -n 3 | tr '\n' ';')"
echo "segments: $(awk '$1 == "sent" {for (i = 1; i <= NF; i++) if ($i ~ /^segments=/) {split($i, a, "="); n[$3] += a[2]}} END {for (r in n) printf "%s %d; ", r, n[r]}' "$LOG")"
kill "$BUMBLE_PID" 2> /dev/null
finish
