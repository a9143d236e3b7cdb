#!/bin/bash
# ant-stick.sh REPO HEALTHGATE - runs INSIDE the lab VM (see run-ant-stick.sh).
#
# dummy_hcd + g_serial (use_acm=0: the generic serial function, one interface with a bulk pair,
# as an ANT stick has) presented as 0fcf:1009, the ANT USB-m. The host side must be bound by the
# kernel's own usb_serial_simple driver (ttyUSB0), the gadget side is /dev/ttyGS0, where the stick
# emulator answers the host and plays straps. Checks:
#   1. the driver of the tty's USB interface is usb_serial_simple (read from sysfs);
#   2. udev applied OUR rule: HEALTHGATE_ADAPTER=ant-heart-rate, group healthgate, mode 0660,
#      /dev/healthgate/ant-<serial>; a gadget without a serial number gets ant-path-<port>;
#   3. a stand-in host (the emulator's client test, as the service user) sets up scan mode
#      through the link and hears every strap;
#   4. when this healthgate has the ant-heart-rate source: `healthgate run` as the service user
#      reads the stick through the link, the gadget is unbound and bound again (rmmod/modprobe
#      g_serial), and every beat the store holds is one the emulator sent, once, in order, with
#      the emulator's RR; beats from before and after the replug are stored. Without the source
#      this part is reported as NOT RUN.
# usage (guest): ant-stick.sh REPO HEALTHGATE
set -uo pipefail
REPO=${1:?repository root}
HG=${2:?healthgate binary}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/checks.sh"
source "$REPO/Tests/DeviceLab/lib/ant-gadget.sh"
PY=/usr/bin/python3
EMULATOR=$ANT_EMULATOR
CLIENT=$REPO/Tests/Fixtures/ant_stick_emulator_test.py
KEY=$ANT_KEY
SERIAL=LAB0FCF1009
STRAPS=6
t0=$SECONDS

check() { if "$@"; then pass "$*"; else fail "$*"; fi; }
plug() { ant_plug "$@"; }
unplug() { ant_unplug; }

say "our rules into /run/udev/rules.d; the healthgate user and group"
ant_gadget_setup
MONITOR=$UDEV_MONITOR

say "plug without a serial number: the ant-path link"
check plug
udevadm info /dev/ttyUSB0 > "$OUT/udevadm-info-no-serial.txt"
cat "$OUT/udevadm-info-no-serial.txt"
check grep -q 'E: HEALTHGATE_ADAPTER=ant-heart-rate' "$OUT/udevadm-info-no-serial.txt"
path_link=$(ls /dev/healthgate/ 2>/dev/null | grep '^ant-path-' | head -1)
[[ -n $path_link && $(readlink -f "/dev/healthgate/$path_link") == /dev/ttyUSB0 ]] &&
  pass "/dev/healthgate/$path_link -> /dev/ttyUSB0" || fail "no /dev/healthgate/ant-path-* link: $(ls -l /dev/healthgate 2>&1)"
check unplug
check test ! -e "/dev/healthgate/$path_link"

say "plug as ANT USB-m $SERIAL: the driver, the rule"
check plug "$SERIAL"
interface=$(readlink -f /sys/class/tty/ttyUSB0/device/..)
driver=$(basename "$(readlink -f "$interface/driver")")
port_driver=$(basename "$(readlink -f /sys/class/tty/ttyUSB0/device/driver)")
echo "ttyUSB0: interface $interface, driver $driver (usb-serial port driver $port_driver)," \
  "device $(cat "$interface/../idVendor"):$(cat "$interface/../idProduct") serial $(cat "$interface/../serial" 2>/dev/null)"
[[ $driver == usb_serial_simple ]] && pass "the kernel bound usb_serial_simple to 0fcf:1009" ||
  fail "the driver of ttyUSB0's interface is '$driver', not usb_serial_simple"
udevadm info /dev/ttyUSB0 | tee "$OUT/udevadm-info.txt"
check grep -q 'E: HEALTHGATE_ADAPTER=ant-heart-rate' "$OUT/udevadm-info.txt"
check grep -q 'E: HEALTHGATE_MODEL=ant-usb-m' "$OUT/udevadm-info.txt"
check grep -q 'E: ID_MM_DEVICE_IGNORE=1' "$OUT/udevadm-info.txt"
check grep -q "S: healthgate/ant-$SERIAL" "$OUT/udevadm-info.txt"
check test "$(readlink -f /dev/healthgate/ant-$SERIAL)" = /dev/ttyUSB0
check test "$(stat -c '%G %a' /dev/ttyUSB0)" = "healthgate 660"
udevadm test --action=add /sys/class/tty/ttyUSB0 > "$OUT/udevadm-test.txt" 2>&1
grep -E '71-healthgate-ant.rules' "$OUT/udevadm-test.txt" | head -20
check grep -q '71-healthgate-ant.rules' "$OUT/udevadm-test.txt"
if grep -iE 'invalid|unknown key|failed to parse' "$OUT/udevadm-test.txt" | grep -q '71-healthgate-ant'; then
  fail "udevadm test reports a problem in 71-healthgate-ant.rules"
else
  pass "udevadm test parses 71-healthgate-ant.rules without complaint"
fi

say "the stick emulator on /dev/ttyGS0, a stand-in host on /dev/healthgate/ant-$SERIAL as the service user"
# The gadget drops what arrives while nobody holds ttyGS0 open: the emulator holds it from now on,
# and waits for it to come back after each unplug.
"$PY" "$EMULATOR" --device /dev/ttyGS0 --straps "$STRAPS" --network-key "$KEY" --log "$OUT/emulator.jsonl" \
  --replug-wait 120 > "$OUT/emulator.out" 2>&1 &
EMULATOR_PID=$!
poll 30 grep -qs '"event":"plug"' "$OUT/emulator.jsonl" || fail "the emulator did not open /dev/ttyGS0"
chmod a+rx "$REPO" 2>/dev/null
setpriv --reuid=healthgate --regid=healthgate --init-groups \
  "$PY" "$CLIENT" stream "/dev/healthgate/ant-$SERIAL" 6 "$KEY" | tee "$OUT/stand-in.json"
heard=$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$OUT/stand-in.json" 2>/dev/null)
[[ $heard == "$STRAPS" ]] && pass "the stand-in host heard all $STRAPS straps through usb_serial_simple" ||
  fail "the stand-in host heard ${heard:-no} straps of $STRAPS"

say "the gateway: healthgate run with an ant-heart-rate source"
plugins=$("$HG" plugins)
if ! grep -q '^ant-heart-rate ' <<< "$plugins"; then
  echo "NOT RUN: this healthgate has no ant-heart-rate source (the plugin's branch is not merged);"
  echo "NOT RUN: the gateway part (run, unplug/replug, beats against the emulator's log) was skipped."
  kill "$EMULATOR_PID" "$MONITOR" 2>/dev/null
  say "summary"
  echo "failures: $failures, scenario wall $((SECONDS - t0))s (gateway part NOT RUN)"
  exit $((failures > 0))
fi
DB_DIR=/var/lib/healthgate-lab RUN_DIR=/run/healthgate-lab
mkdir -p "$OUT/state" "$DB_DIR" "$RUN_DIR"
printf '%s\n' "$KEY" > "$DB_DIR/ant-network.key"
chown healthgate:healthgate "$OUT" "$OUT/state" "$DB_DIR" "$RUN_DIR" "$DB_DIR/ant-network.key"
chmod 0600 "$DB_DIR/ant-network.key"
cat > "$OUT/config.json" <<JSON
{
  "sources": [{"kind": "ant-heart-rate", "name": "class",
               "config": {"transport": "stick", "path": "/dev/healthgate/ant-$SERIAL",
                          "networkKeyFile": "$DB_DIR/ant-network.key", "lostAfterSeconds": 5}}],
  "store": {"path": "$DB_DIR/samples.sqlite"},
  "sinks": [{"kind": "sqlite"}],
  "logLevel": "debug"
}
JSON
chown healthgate:healthgate "$OUT/config.json"; chmod 0640 "$OUT/config.json"
chmod a+x "$(dirname "$OUT")"
# Beats the emulator logs from here on were sent while the gateway ran (or in the unplug).
log_start=$(wc -l < "$OUT/emulator.jsonl")
STATE_DIRECTORY=$OUT/state RUNTIME_DIRECTORY=$RUN_DIR HOME=$DB_DIR \
  setpriv --reuid=healthgate --regid=healthgate --init-groups \
  "$HG" run --config "$OUT/config.json" > "$OUT/healthgate.log" 2>&1 &
HGPID=$!

# The store's beats are in its heartbeat series' blobs: lib/store_readings.py reads them as rows.
READINGS=$REPO/Tests/DeviceLab/lib
beats() {  # heartbeats in the store
  "$PY" -c 'import sys; sys.path.insert(0, sys.argv[2]); import store_readings
try: print(store_readings.connect(sys.argv[1]).execute("SELECT count(*) FROM heartbeats").fetchone()[0])
except Exception: print(0)' "$DB_DIR/samples.sqlite" "$READINGS"
}
more_beats_than() { (( $(beats) > $1 )); }
check poll 90 more_beats_than 20
before=$(beats); echo "beats stored before the unplug: $before"

say "unplug (rmmod g_serial) and replug: the gateway reads the stick again"
check unplug
check test ! -e "/dev/healthgate/ant-$SERIAL"
sleep 2
check plug "$SERIAL"
check poll 60 more_beats_than $((before + 40))
grep -E '"event":"(unplug|plug|reopenFailed)"' "$OUT/emulator.jsonl" | tail -5
sleep 5
kill -0 "$HGPID" 2>/dev/null && pass "healthgate still runs" || fail "healthgate exited: $(tail -20 "$OUT/healthgate.log")"

say "stop: SIGTERM, then the store against the emulator's log"
kill -TERM "$HGPID"; wait "$HGPID"; rc=$?
echo "healthgate exit status $rc"
check test "$rc" -eq 0
kill "$EMULATOR_PID" "$MONITOR" 2>/dev/null
wait "$EMULATOR_PID" 2>/dev/null
tail -30 "$OUT/healthgate.log"
"$PY" - "$DB_DIR/samples.sqlite" "$OUT/emulator.jsonl" "$log_start" "$READINGS" > "$OUT/comparison.txt" 2>&1 <<'PY'
import json, sys
sys.path.insert(0, sys.argv[4])
import store_readings
db = store_readings.connect(sys.argv[1])
whole = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
straps = [r for r in whole if r["event"] == "strap"]
log = whole[int(sys.argv[3]):]
problems = []
checked = 0
for strap in straps:
    sent = [r for r in log if r["event"] == "beat" and r["device"] == strap["device"]]
    rows = db.execute("""SELECT h.start_us, b.time_since_start, b.preceded_by_gap, b.beat_index
        FROM heartbeats b JOIN heartbeat_series h ON h.uuid = b.series_uuid JOIN devices d ON d.id = h.device_id
        WHERE d.local_identifier = ? ORDER BY h.start_us, b.beat_index""", (strap["identifier"],)).fetchall()
    stored = [(start / 1e6 + offset, gap, index) for start, offset, gap, index in rows]
    times = [t for t, _, _ in stored]
    if any(b <= a for a, b in zip(times, times[1:])):
        problems.append("%s: stored beats out of order or twice" % strap["identifier"])
    # Stored beats are a subsequence of the sent ones: match each stored interval with the RR
    # of a sent beat after the previous match (exact to 1/1024 s).
    rrs = [(b["rr"], b["afterGap"]) for b in sent]
    position = 0
    for (a, _, _), (b, gap, index) in zip(stored, stored[1:]):
        if gap or index == 0:
            continue
        interval = round((b - a) * 1024)
        while position < len(rrs) and abs(rrs[position][0] - interval) > 1:
            position += 1
        if position == len(rrs):
            problems.append("%s: a stored interval of %d/1024 s the emulator never sent" % (strap["identifier"], interval))
            break
        position += 1
        checked += 1
    print("%s sent %d stored %d" % (strap["identifier"], len(sent), len(stored)))
    if len(stored) > len(sent):
        problems.append("%s: %d beats stored, %d sent" % (strap["identifier"], len(stored), len(sent)))
    if len(stored) < len(sent) // 2:
        problems.append("%s: only %d of %d beats stored" % (strap["identifier"], len(stored), len(sent)))
print("intervals checked", checked)
print("problems", len(problems))
for p in problems:
    print("PROBLEM", p)
PY
cat "$OUT/comparison.txt"
check grep -qx 'problems 0' "$OUT/comparison.txt"
"$PY" -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d)' \
  "$DB_DIR/samples.sqlite" /tmp/samples-copy.sqlite && cp /tmp/samples-copy.sqlite "$OUT/samples.sqlite"

dmesg > "$OUT/dmesg.txt" 2>&1

say "summary"
echo "failures: $failures, scenario wall $((SECONDS - t0))s"
exit $((failures > 0))
