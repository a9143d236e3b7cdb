#!/bin/bash
# bluetooth-cgm.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see run-bluetooth-cgm.sh).
#
# A continuous glucose monitor on Google's Bumble (bumble-cgm.py: neither BlueZ nor healthgate's
# simulator) behind the gateway's controller hci0, driven by bluetoothd 5.66. The sensor holds
# 40 records when the gateway starts, supports E2E-CRC, has no session start time, and drops the
# link itself after each burst of live records, CONNECTIONS times; on connection BAD one record
# goes out with a broken CRC. During connection 3 the gateway is killed with SIGKILL and started
# again. Checks:
#   1. the gateway writes the session start once (a valid CRC), sets the communication interval
#      through the Specific Ops Control Point, and downloads every stored record;
#   2. after the SIGKILL it asks for the records from exactly one past the last one it had
#      stored (the checkpoint committed with the records);
#   3. every record the sensor sent with a good CRC is stored once, none twice, and the one with
#      a broken CRC is not stored (unless the sensor sent it again good, when asked) but reported
#      as a bad payload naming the device;
#   4. every sample's time is the session start plus its time offset;
#   5. the gateway reconnected after every drop, bluetoothd still runs, healthgate stops cleanly.
set -uo pipefail
REPO=${1:?usage: bluetooth-cgm.sh REPO HEALTHGATE [SECONDS]}
HG=${2:?usage: bluetooth-cgm.sh REPO HEALTHGATE [SECONDS]}
WAIT=${3:-480}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
HERE=$REPO/plugins/ContinuousGlucose/Lab
CONNECTIONS=5
LIVE=8
BAD=2
SENSOR=F0:F1:F2:F3:F4:C6
LOG=$OUT/sensor.log

export HEALTHGATE_REPO=$REPO
start_bumble "$LOG" "$HERE/bumble-cgm.py" "$CONNECTIONS" "$LIVE" "$BAD"

cat > "$OUT/healthgate.json" <<JSON
{
  "sources": [
    {"kind": "ble-cgm", "name": "cgm", "config": {
      "adapter": "hci0", "devices": ["$SENSOR"], "communicationIntervalMinutes": 1,
      "reconnect": {"initialDelaySeconds": 0.5, "maxDelaySeconds": 2, "multiplier": 2}}}
  ],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}],
  "logLevel": "debug"
}
JSON
# The gateway writes a session start only with a synchronised clock: the VM's is the host's UTC
# (qemu's RTC), which no daemon in the VM vouches for; marked synchronized as timesyncd would.
clock_synchronize && pass "the VM's clock is marked synchronized" ||
  fail "cannot mark the VM's clock synchronized ($(kernel_clock))"
# stored: "offset start sessionStart" per stored bloodGlucose sample, from `healthgate query changes`.
stored() {
  XDG_STATE_HOME=$STORE "$HG" query changes --db "$DB" --format json > "$OUT/changes.json" 2> "$OUT/changes.err" || return 1
  "$PY" - "$OUT/changes.json" <<'PYTHON'
import json, sys
for change in json.load(open(sys.argv[1])).get("added", []):
    sample = (change.get("record") or {}).get("sample") or {}
    if sample.get("type") != "bloodGlucose":
        continue
    metadata = sample.get("metadata", {})
    print(metadata.get("healthgate.cgmTimeOffsetMinutes"), sample.get("start"), metadata.get("healthgate.cgmSessionStart"), sample.get("value"))
PYTHON
}
max_stored() { stored | awk 'BEGIN {m = -1} $1 > m {m = $1} END {print m}'; }

say "healthgate run: ble-cgm on hci0, following the sensor"
start_gateway "$OUT/healthgate.json"
third_live() { [[ $(grep -c '^connected' "$LOG") -ge 3 ]] && tail -n 1 "$LOG" | grep -q '^sent '; }
poll "$WAIT" third_live || fail "the sensor did not reach its third connection ($(grep -c '^connected' "$LOG") connections)"
sleep 1.5

say "SIGKILL, and the gateway again"
kill -KILL "$GATEWAY_PID"
wait "$GATEWAY_PID" 2> /dev/null
mv "$OUT/healthgate.log" "$OUT/healthgate-killed.log"
LAST=$(max_stored)
requests_before=$(grep -c '^racp ' "$LOG")
echo "stored up to time offset $LAST when killed; the sensor had $requests_before request(s)"
start_gateway "$OUT/healthgate.json"
asked_again() { [[ $(grep -c '^racp ' "$LOG") -gt $requests_before ]]; }
poll 90 asked_again || fail "the restarted gateway did not ask the sensor for its records"
request=$(grep '^racp ' "$LOG" | tail -n 1)
[[ $request == "racp from $((LAST + 1))" ]] && pass "after the SIGKILL it asks from one past the last stored record ($request; $LAST stored)" ||
  fail "after the SIGKILL it asked '$request', with records up to $LAST stored"

poll "$WAIT" grep -q '^all connections done' "$LOG" && pass "the sensor finished its $CONNECTIONS connections" ||
  fail "the sensor did not finish within ${WAIT}s ($(grep -c '^connected' "$LOG") connections)"
sent_offsets=$(awk '$1 == "sent" {print $2}' "$LOG" | sort -n | uniq)
sent_count=$(echo "$sent_offsets" | wc -l)
all_stored() { [[ $(stored | wc -l) -ge $sent_count ]]; }
poll 30 all_stored
sleep 2
stored > "$OUT/stored.txt"
stored_offsets=$(awk '{print $1}' "$OUT/stored.txt" | sort -n)
[[ $(wc -l < "$OUT/stored.txt") -eq $sent_count && "$stored_offsets" == "$sent_offsets" ]] &&
  pass "every record sent with a good CRC is stored once: $sent_count distinct offsets sent, $(wc -l < "$OUT/stored.txt") samples stored" ||
  { fail "$sent_count distinct offsets sent, $(wc -l < "$OUT/stored.txt") samples stored"; diff <(echo "$sent_offsets") <(echo "$stored_offsets") | head; }
bad=$(awk '$1 == "sent-bad" {print $2}' "$LOG")
# The sensor keeps the good record and sends it when asked again: a download that began before
# the broken copy went out live (its checkpoint behind it) stores that good copy, once (the check
# above), and rightly. Only a record never sent good must not be stored.
resent=$(awk -v bad="$bad" '$1 == "sent-bad" && $2 == bad {seen = 1} seen && $1 == "sent" && $2 == bad {print "yes"; exit}' "$LOG")
if [[ -z $bad ]]; then
  fail "no record was sent with a broken CRC"
elif [[ -n $resent ]]; then
  grep -q "^$bad " "$OUT/stored.txt" && pass "the record with a broken CRC (time offset $bad) was sent again good, and that copy is stored" ||
    fail "the record with a broken CRC (time offset $bad) was sent again good, and is not stored"
else
  ! grep -q "^$bad " "$OUT/stored.txt" && pass "the record with a broken CRC (time offset $bad) is not stored" ||
    fail "the record with a broken CRC (time offset $bad) is stored, and no good copy was sent"
fi
grep -h 'bad payload' "$OUT"/healthgate*.log | grep -q "time offset $bad min: E2E-CRC mismatch" &&
  pass "it is reported: $(grep -h 'bad payload' "$OUT"/healthgate*.log | grep "time offset $bad " | head -n 1 | cut -c1-200)" ||
  fail "no bad-payload report of the record at time offset $bad"
[[ $(grep -c '^session start written' "$LOG") -eq 1 ]] && pass "the gateway set the session start once ($(grep '^session start written' "$LOG"))" ||
  fail "the session start was written $(grep -c '^session start written' "$LOG") times"
grep -q '^specific ops 0x1$' "$LOG" && pass "the communication interval was set through the Specific Ops Control Point, with its CRC" ||
  fail "no Specific Ops request with a valid CRC"
times_ok=$("$PY" - "$OUT/stored.txt" <<'PYTHON'
import sys
from datetime import datetime, timedelta
def parse(text): return datetime.fromisoformat(text.replace("Z", "+00:00"))
rows = [line.split() for line in open(sys.argv[1])]
starts = {row[2] for row in rows}
wrong = [row for row in rows if parse(row[1]) != parse(row[2]) + timedelta(minutes=int(row[0]))]
print(len(starts), len(wrong))
PYTHON
)
[[ $times_ok == "1 0" ]] && pass "every sample is at the session start plus its time offset (one session start)" ||
  fail "sample times: $times_ok (session starts, samples off)"
reconnects=$(cat "$OUT"/healthgate*.log | grep -c 'reconnected (connection')
[[ $reconnects -ge $((CONNECTIONS - 2)) ]] && pass "the gateway reconnected after the drops ($reconnects reconnections over two runs)" ||
  fail "the gateway reconnected $reconnects times"
kill "$BUMBLE_PID" 2> /dev/null
finish
