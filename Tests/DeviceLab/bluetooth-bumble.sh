#!/bin/bash
# bluetooth-bumble.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see run-bluetooth-bumble.sh).
#
# A second, independent Bluetooth stack: Google's Bumble (peripherals/bumble-hr.py) offers the
# kernel a controller over /dev/vhci (hci0, the gateway's, driven by bluetoothd) and runs a
# heart-rate monitor on its own host stack behind a second controller on the same Bumble link.
# The monitor sends a burst of measurements per connection, the first the moment notifications
# are enabled, and drops the link itself after each burst, CONNECTIONS times. Checks:
#   1. healthgate run (ble-heart-rate on hci0, bluetoothd 5.66: StartNotify) reconnects after
#      every drop;
#   2. every measurement the monitor sent is a stored heart-rate sample, in the order sent: none
#      lost at any (re)subscription, none twice;
#   3. the beats of the stored heartbeat series never go back in time, within a series or from
#      one to the next;
#   4. bluetoothd still runs, and healthgate stops cleanly on SIGTERM.
set -uo pipefail
REPO=${1:?usage: bluetooth-bumble.sh REPO HEALTHGATE [SECONDS]}
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
scenario_arguments 480 "$@"
CONNECTIONS=12
PER_CONNECTION=6
MONITOR=F0:F1:F2:F3:F4:F5

start_bumble "$OUT/monitor.log" "$REPO/Tests/DeviceLab/peripherals/bumble-hr.py" "$CONNECTIONS" "$PER_CONNECTION"
MONITOR_PID=$BUMBLE_PID

say "healthgate run: ble-heart-rate on hci0, following the monitor"
cat > "$OUT/healthgate.json" <<JSON
{
  "sources": [
    {"kind": "ble-heart-rate", "name": "monitor", "config": {
      "adapter": "hci0", "devices": ["$MONITOR"],
      "reconnect": {"initialDelaySeconds": 0.5, "maxDelaySeconds": 2, "multiplier": 2}}}
  ],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}],
  "logLevel": "debug"
}
JSON
start_gateway "$OUT/healthgate.json"
poll "$WAIT" grep -q '^all sent' "$OUT/monitor.log" &&
  pass "the monitor sent $(grep -c '^sent ' "$OUT/monitor.log") measurements over $CONNECTIONS connections" ||
  fail "the monitor did not finish its $CONNECTIONS connections within ${WAIT}s ($(grep -c 'link dropped by the monitor' "$OUT/monitor.log") dropped, $(grep -c '^sent ' "$OUT/monitor.log") sent)"
SENT=$(grep -c '^sent ' "$OUT/monitor.log")
heart_rates() { query "SELECT count(*) FROM samples_readable WHERE type = 'heartRate'"; }
all_stored() { [[ $(heart_rates) -ge $SENT ]]; }
poll 20 all_stored
sleep 2
reconnects=$(grep -c 'reconnected (connection' "$OUT/healthgate.log")
[[ $reconnects -ge $((CONNECTIONS - 1)) ]] && pass "the gateway reconnected after every drop ($reconnects reconnections)" ||
  fail "the gateway reconnected $reconnects times for $((CONNECTIONS - 1)) drops"
sent_values=$(awk '/^sent / {print $3}' "$OUT/monitor.log" | paste -sd,)
stored_values=$(query "SELECT group_concat(v, ',') FROM (SELECT CAST(round(value) AS INTEGER) AS v FROM samples_readable WHERE type = 'heartRate' ORDER BY start_us)")
[[ $(heart_rates) -eq $SENT ]] && pass "every measurement sent is stored once: $SENT sent, $(heart_rates) stored" ||
  fail "$SENT measurements sent, $(heart_rates) stored"
[[ $sent_values == "$stored_values" ]] && pass "the stored heart rates are the ones sent, in order" ||
  { fail "the stored heart rates differ from the ones sent"; echo "sent:   $sent_values"; echo "stored: $stored_values"; }
XDG_STATE_HOME=$STORE "$HG" query changes --db "$DB" --format json > "$OUT/changes.jsonl" 2> "$OUT/changes.err" ||
  fail "healthgate query changes: $(cat "$OUT/changes.err")"
beats=$("$PY" - "$OUT/changes.jsonl" <<'PYTHON'
import json, sys
from datetime import datetime
series = []
for change in json.load(open(sys.argv[1])).get("added", []):
    record = change.get("record") or {}
    for value in record.values():
        if isinstance(value, dict) and "beats" in value:
            start = datetime.fromisoformat(value["start"].replace("Z", "+00:00")).timestamp()
            series.append([start + beat["timeSinceSeriesStart"] for beat in value["beats"]])
series.sort(key=lambda times: times[0] if times else 0)
times = [time for one in series for time in one]
backwards = sum(1 for earlier, later in zip(times, times[1:]) if later < earlier)
print(len(series), len(times), backwards)
PYTHON
)
read -r series_count beat_count backwards <<< "$beats"
[[ ${series_count:-0} -gt 0 && ${backwards:-1} -eq 0 ]] &&
  pass "$beat_count beats in $series_count heartbeat series, none before the one stored before it" ||
  fail "heartbeat series: ${beats:-none read} (series, beats, beats out of order)"
kill "$MONITOR_PID" 2> /dev/null
finish
