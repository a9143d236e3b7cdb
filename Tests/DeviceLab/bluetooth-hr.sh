#!/bin/bash
# bluetooth-hr.sh REPO HEALTHGATE [SECONDS] - runs INSIDE the lab VM (see run-bluetooth.sh).
#
# Two virtual controllers from one btvirt process share an emulated radio:
#   hci0 = the heart-rate monitor: BlueZ's example GATT server (Heart Rate service) and
#          example advertisement, pinned to /org/bluez/hci0, repeated while no central is
#          connected (peripherals/repeat-advertisement.py);
#   hci1 = the gateway: healthgate's BlueZ transport.
# Checks, in order:
#   1. `healthgate scan --adapter hci1` lists hci0's address with the heart-rate service;
#   2. `healthgate run` with a ble-heart-rate source on hci1 (transport bluez) and a sqlite
#      sink stores heart-rate samples (count/min) from that device;
#   3. the monitor goes away (hci0 powered off, servers killed) and comes back (new servers,
#      hci0 powered on), samples resume, and bluetoothd is still running;
#   4. healthgate stops cleanly (exit 0) on SIGTERM.
# Exit 0 when every check passed. Artifacts (logs, the SQLite store, an HCI trace) go to
# $LAB_OUT.
set -uo pipefail
REPO=${1:?usage: bluetooth-hr.sh REPO HEALTHGATE [SECONDS]}
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
scenario_arguments 120 "$@"
EXAMPLES=/usr/share/doc/bluez-test-scripts/examples

start_bluetooth 2
MONITOR=$(address hci0)
GATEWAY=$(address hci1)
echo "monitor (hci0) $MONITOR, gateway (hci1) $GATEWAY"

# BlueZ's examples use the first adapter; a tiny loader pins them to hci0, files unchanged.
cat > /tmp/pinned.py <<'EOF'
import importlib.machinery, importlib.util, sys
script, adapter = sys.argv[1], sys.argv[2]
loader = importlib.machinery.SourceFileLoader("pinned_example", script)
module = importlib.util.module_from_spec(importlib.util.spec_from_loader("pinned_example", loader))
loader.exec_module(module)
module.find_adapter = lambda bus: adapter
sys.argv = [script]
module.main()
EOF
PERIPHERAL_PIDS=()
start_monitor() {
  local round=$1
  $PY -u /tmp/pinned.py "$EXAMPLES/example-gatt-server" /org/bluez/hci0 > "$OUT/gatt-server-$round.log" 2>&1 &
  PERIPHERAL_PIDS=($!)
  $PY -u /tmp/pinned.py "$EXAMPLES/example-advertisement" /org/bluez/hci0 > "$OUT/advertisement-$round.log" 2>&1 &
  PERIPHERAL_PIDS+=($!)
  # The example advertises once; a monitor's radio repeats it (see the script).
  $PY -u "$REPO/Tests/DeviceLab/peripherals/repeat-advertisement.py" /org/bluez/hci0 TestAdvertisement 180d 180f \
    > "$OUT/repeat-$round.log" 2>&1 &
  PERIPHERAL_PIDS+=($!)
  poll 120 grep -q 'GATT application registered' "$OUT/gatt-server-$round.log" &&
    poll 120 grep -q 'Advertisement registered' "$OUT/advertisement-$round.log"
}
power_monitor() { power hci0 "$1"; }  # on|off: hci0's Powered property, set through bluetoothd
# The link drops first (hci0 off, as a monitor taken off the chest), and only then do the
# servers go. Killing the GATT server while the gateway's reads were in flight made this
# guest's bluetoothd (5.66, serving both controllers) crash in its GATT server once; and
# registering the new servers before hci0 comes back means the gateway never meets a monitor
# without its heart-rate service.
stop_monitor() {
  power_monitor off
  kill "${PERIPHERAL_PIDS[@]}" 2>/dev/null; wait "${PERIPHERAL_PIDS[@]}" 2>/dev/null
}

say "the monitor starts (hci0)"
start_monitor 1 && pass "heart-rate peripheral up on hci0" || fail "heart-rate peripheral did not start"

say "healthgate scan on hci1"
# What BlueZ tells its clients during the scan, kept as an artifact.
dbus-monitor --system "type='signal',sender='org.bluez'" > "$OUT/scan-signals.log" 2>&1 &
SIGNALS=$!
# 25 s spans two of the kernel's LE discovery cycles (about 10 s each). btvirt answers each
# scan start with a single advertising report, at once; when that report beats the kernel's own
# "discovering" state it is dropped, and only the monitor's repeated advertisement finds it.
"$HG" scan --adapter hci1 --timeout 25 > "$OUT/scan.txt" 2> "$OUT/scan.err"
status=$?
kill "$SIGNALS"
cat "$OUT/scan.txt" "$OUT/scan.err"
[[ $status -eq 0 ]] && pass "scan exits 0" || fail "scan exited $status"
grep -qi "^${MONITOR}.*heart-rate" "$OUT/scan.txt" && pass "scan lists $MONITOR with heart-rate" ||
  fail "scan does not list $MONITOR"

say "healthgate run: ble-heart-rate on hci1 into SQLite"
# The store lives on the guest's own filesystem: SQLite's WAL needs an mmap-able -shm file that the
# output directory's filesystem does not offer ("disk I/O error"); it is copied to $OUT at the end.
STORE=$(mktemp -d /tmp/healthgate-store.XXXXXX)
DB=$STORE/healthgate.sqlite
cat > "$OUT/healthgate.json" <<EOF
{
  "sources": [
    {"kind": "ble-heart-rate", "name": "chest", "config": {
      "transport": "bluez", "adapter": "hci1",
      "devices": [{"address": "$MONITOR"}],
      "reconnect": {"initialDelaySeconds": 1, "maxDelaySeconds": 5, "multiplier": 2}}}
  ],
  "store": {"path": "$DB"},
  "sinks": [
    {"kind": "sqlite", "name": "store"}
  ]
}
EOF
# The list is read whole first: grep -q stops reading at its match, and with pipefail the
# writer's SIGPIPE would fail the test whenever it wrote after that.
if ! grep -q '^sqlite ' <<< "$("$HG" plugins)"; then
  fail "this healthgate has no sqlite sink ('healthgate plugins'); steps 2-4 cannot run"
  echo "failures: $failures"
  exit 1
fi
STATE=$(mktemp -d)
XDG_STATE_HOME=$STATE XDG_DATA_HOME=$STATE XDG_RUNTIME_DIR=$STATE \
  "$HG" run --config "$OUT/healthgate.json" > "$OUT/healthgate.log" 2>&1 &
GATEWAY_PID=$!

# Queries the store (schema: plugins/SQLiteStore/Sources/Schema/StoreSchema.swift) while the gateway
# writes to it; WAL mode lets this reader run alongside.
# Heart rates are in quantity series: lib/store_readings.py reads each quantity as a sample.
query() { /usr/bin/python3 "$REPO/Tests/DeviceLab/lib/store_readings.py" "$DB" "$1" 2>/dev/null || echo 0; }
heart_rates() { query "SELECT count(*) FROM samples_readable WHERE type = 'heartRate'"; }
at_least() { [[ $(heart_rates) -ge $1 ]]; }

poll "$WAIT" at_least 3 && pass "heart-rate samples stored ($(heart_rates))" || fail "no heart-rate samples within ${WAIT}s"
repeats=$(grep -c 'advertised again' "$OUT/repeat-1.log")
[[ $repeats -ge 1 ]] && pass "the monitor advertised again $repeats times before the gateway connected" ||
  fail "the monitor's advertisement was never repeated (repeat-1.log: $(tail -n 1 "$OUT/repeat-1.log"))"
in_bpm=$(query "SELECT count(*) FROM samples_readable WHERE type = 'heartRate' AND unit = 'count/min' AND value BETWEEN 20 AND 250")
[[ $in_bpm -ge 3 ]] && pass "samples are in count/min ($in_bpm)" || fail "no plausible count/min samples ($in_bpm)"
from_monitor=$(query "SELECT count(*) FROM samples_readable s JOIN devices d ON d.id = s.device_id
  WHERE s.type = 'heartRate' AND upper(d.local_identifier) = upper('$MONITOR')")
[[ $from_monitor -ge 3 ]] && pass "samples name the device $MONITOR ($from_monitor)" || fail "samples do not name $MONITOR"
query "SELECT s.type, s.value, s.unit, d.name, d.local_identifier FROM samples_readable s LEFT JOIN devices d ON d.id = s.device_id ORDER BY s.start_us DESC LIMIT 5"

say "the monitor goes away and comes back"
before=$(heart_rates)
stop_monitor
echo "stored before the restart: $before"
start_monitor 2 && power_monitor on && pass "peripheral restarted" || fail "peripheral did not restart"
# The reconnect time: from the monitor advertising again (hci0 powered with its servers
# registered) to its first new sample in the store, in steps of the poll's 0.25 s. It includes
# the wait for the gateway's next reconnect attempt (backoff 1 s doubling to 5 s).
back=$(date +%s%N)
if poll "$WAIT" at_least $((before + 1)); then
  reconnect_ms=$((($(date +%s%N) - back) / 1000000))
  echo "reconnect: ${reconnect_ms} ms from advertising again to the first new sample stored" | tee "$OUT/reconnect.txt"
fi
poll "$WAIT" at_least $((before + 3)) && pass "samples resumed ($(heart_rates) stored)" ||
  fail "samples did not resume after the restart ($(heart_rates) stored)"

kill -0 "$BLUETOOTHD" 2> /dev/null && pass "bluetoothd still runs" ||
  fail "bluetoothd died (a BlueZ crash; see bluetoothd.log): healthgate could not reach it"

say "graceful stop"
kill -TERM "$GATEWAY_PID"
wait "$GATEWAY_PID"
status=$?
[[ $status -eq 0 ]] && pass "healthgate run exits 0 on SIGTERM" || fail "healthgate run exited $status"
tail -n 30 "$OUT/healthgate.log"
sqlite3 "$DB" ".backup '$OUT/healthgate.sqlite'" || fail "cannot copy the store to $OUT"

echo "failures: $failures"
exit $((failures > 0))
