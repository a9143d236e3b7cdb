#!/bin/bash
# usb-serial.sh - runs INSIDE the lab VM (see run-usb-serial.sh): real udev hotplug of a
# USB serial "pedometer" read by healthgate.
#
# dummy_hcd + g_serial make a software USB CDC-ACM device (0525:a4a7): the host side is
# /dev/ttyACM0 (what healthgate reads), the gadget side /dev/ttyGS0 (where this script plays the
# pedometer, speaking HGP/1). The scenario:
#   1. install OUR rules (udev-rules/70-healthgate-pedometer.rules) in /run/udev/rules.d, start udevd
#   2. plug: the tty is tagged HEALTHGATE_ADAPTER=serial-pedometer, group healthgate, mode 0660,
#      symlink /dev/healthgate/pedometer-0525-a4a7
#   3. `healthgate run` (as the unprivileged user healthgate) with {"udev": true} and a SQLite
#      sink; the device answers ID? and sends readings 100 (baseline), 110, 130
#      plus a wrong-checksum line carrying 4000000000 steps (must be rejected)
#   4. unplug (rmmod g_serial), replug (modprobe g_serial): healthgate stops and restarts the reader
#   5. readings 150 and then 5 (a device reboot)
#   6. SIGTERM; the store must hold exactly 10 + 20 + 20 + 5 = 55 steps in 4 samples for LAB-0001
# usage (guest): usb-serial.sh REPO_ROOT HEALTHGATE_BINARY
set -uo pipefail
ROOT=${1:?repository root}
HG=${2:?healthgate binary}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
PY=/usr/bin/python3
fails=0
source "$ROOT/Tests/DeviceLab/lib/checks.sh"
step() { say "$@"; }
check() { if "$@"; then echo "PASS: $*"; else echo "FAIL: $*"; fails=$((fails+1)); fi; }
wait_for() { local t=$1; shift; local end=$((SECONDS+t)); until "$@"; do
  ((SECONDS >= end)) && return 1; sleep 0.2; done; }
t0=$SECONDS

sentence() {  # HGP/1 sentence with its NMEA-style checksum: $BODY*hh\r\n
  "$PY" -c 'import sys,functools; b=sys.argv[1]; print("$%s*%02X\r" % (b, functools.reduce(lambda x,c: x^c, b.encode(), 0)))' "$1"
}
device_says() { sentence "$1" > /dev/ttyGS0; }
gadget_up() {
  modprobe g_serial || return 1
  wait_for 30 test -c /dev/ttyACM0 && wait_for 10 test -c /dev/ttyGS0 || return 1
  timeout 30 udevadm settle
}
# The gadget side drops what arrives while nobody has /dev/ttyGS0 open, so a reader holds it
# open from the plug on and records what the gateway sends.
gadget_listen() {
  cat /dev/ttyGS0 > "$OUT/gadget-rx.$1" 2>/dev/null &
  LISTENER=$!
  sleep 0.5
  stty -F /dev/ttyGS0 raw -echo
}
has_id_request() { grep -qF 'ID?' "$OUT/gadget-rx.$1" 2>/dev/null; }
await_id_request() {  # the gateway opened ttyACM0 and sent ID? (re-checked on every poll)
  wait_for "$1" has_id_request "$2"
}
log_has() { grep -q -- "$1" "$OUT/healthgate.log"; }

step "our udev rules into /run/udev/rules.d; the healthgate user and group"
getent group healthgate >/dev/null || groupadd --system healthgate
id healthgate >/dev/null 2>&1 || useradd --system --gid healthgate --no-create-home --shell /usr/sbin/nologin healthgate
mkdir -p /run/udev/rules.d
install -m 0644 "$ROOT/udev-rules/70-healthgate-pedometer.rules" /run/udev/rules.d/
grep -v '^#' /run/udev/rules.d/70-healthgate-pedometer.rules | grep -v '^$'

step "systemd-udevd"
/lib/systemd/systemd-udevd --daemon --resolve-names=late 2>&1 | tail -2
wait_for 10 test -S /run/udev/control || { echo "FAIL: udevd"; exit 1; }
udevadm control --reload
udevadm monitor --udev --property --subsystem-match=tty > "$OUT/udev-monitor.log" 2>&1 &
MON=$!

step "plug: dummy_hcd + g_serial"
modprobe dummy_hcd || { echo "FAIL: modprobe dummy_hcd"; exit 1; }
check gadget_up
gadget_listen 1
udevadm info /dev/ttyACM0 | tee "$OUT/udevadm-info.txt"
check grep -q 'E: HEALTHGATE_ADAPTER=serial-pedometer' "$OUT/udevadm-info.txt"
check grep -q 'E: HEALTHGATE_DECODER=hgp1' "$OUT/udevadm-info.txt"
check grep -q 'S: healthgate/pedometer-0525-a4a7' "$OUT/udevadm-info.txt"
check test "$(readlink -f /dev/healthgate/pedometer-0525-a4a7)" = /dev/ttyACM0
check test "$(stat -c '%G %a' /dev/ttyACM0)" = "healthgate 660"
"$HG" devices | tee "$OUT/devices.txt"
check grep -qE '^/dev/ttyACM0 .* yes ' "$OUT/devices.txt"

step "healthgate run (user healthgate) with udev discovery and a SQLite sink"
# The list is read whole first: grep -q stops reading at its match, and with pipefail the
# writer's SIGPIPE would fail the test whenever it wrote after that.
if ! grep -q '^sqlite ' <<< "$("$HG" plugins)"; then
  echo "FAIL: this healthgate has no 'sqlite' sink compiled in (the SQLite store branch is not merged)"
  fails=$((fails+1))
fi
# $LAB_OUT is a 9p share: fine for the counter state file (write, fsync, rename), but
# SQLite's WAL needs an mmap-able -shm file and the control socket a socket file, and 9p offers
# neither; both live on the guest's tmpfs and the store is copied out at the end.
DB_DIR=/var/lib/healthgate-lab RUN_DIR=/run/healthgate-lab
mkdir -p "$OUT/state" "$DB_DIR" "$RUN_DIR"
chown healthgate:healthgate "$OUT" "$OUT/state" "$DB_DIR" "$RUN_DIR"
cat > "$OUT/config.json" <<JSON
{
  "sources": [{"kind": "serial-pedometer", "name": "pedometers",
               "config": {"udev": true, "identificationTimeoutSeconds": 5}}],
  "store": {"path": "$DB_DIR/samples.sqlite"},
  "sinks": [{"kind": "sqlite"}],
  "logLevel": "debug"
}
JSON
# The guest's umask is strict: let the service user traverse to and read what it needs.
chown healthgate:healthgate "$OUT/config.json"; chmod 0640 "$OUT/config.json"
chmod a+x "$(dirname "$OUT")"
STATE_DIRECTORY=$OUT/state RUNTIME_DIRECTORY=$RUN_DIR HOME=$DB_DIR \
  setpriv --reuid=healthgate --regid=healthgate --init-groups \
  "$HG" run --config "$OUT/config.json" > "$OUT/healthgate.log" 2>&1 &
HGPID=$!
sleep 2
if ! kill -0 $HGPID 2>/dev/null; then
  echo "FAIL: healthgate run exited at start-up:"; cat "$OUT/healthgate.log"; exit 1
fi

step "device: answer ID?, send readings"
check await_id_request 90 1
device_says "ID,healthgate-lab,StepLab,LAB-0001,0.1"
sleep 1; device_says "ST,100,70.0,100"
sleep 1; device_says "ST,110,77.5,104"
printf '$ST,4000000000*00\r\n' > /dev/ttyGS0
printf '\001\377noise\n' > /dev/ttyGS0
sleep 1; device_says "ST,130,92.5,110"
check wait_for 20 log_has "LAB-0001"
sleep 2

step "unplug: rmmod g_serial"
rmmod g_serial
check wait_for 15 test ! -e /dev/ttyACM0
timeout 30 udevadm settle
check test ! -e /dev/healthgate/pedometer-0525-a4a7
check wait_for 20 log_has "ttyACM0 removed"
kill $LISTENER 2>/dev/null

step "replug: modprobe g_serial; the reader restarts"
check gadget_up
gadget_listen 2
check await_id_request 60 2
device_says "ID,healthgate-lab,StepLab,LAB-0001,0.1"
sleep 1; device_says "ST,150,107.5,110"
sleep 1; device_says "ST,5,3.75,100"
check wait_for 20 log_has "device reboot"
sleep 3

step "stop: SIGTERM, then the store"
kill -TERM $HGPID; wait $HGPID; rc=$?
echo "healthgate exit status $rc"
check test $rc -eq 0
kill $MON $LISTENER 2>/dev/null
cat "$OUT/healthgate.log" | tail -40
"$PY" - "$DB_DIR/samples.sqlite" > "$OUT/steps.txt" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("""SELECT s.value, d.local_identifier FROM samples_readable s LEFT JOIN devices d ON d.id = s.device_id
                     WHERE s.type LIKE '%StepCount%' ORDER BY s.start_us""").fetchall()
print("samples", len(rows))
print("steps", int(sum(v for v, _ in rows)))
print("devices", ",".join(sorted({d or "" for _, d in rows})))
print("values", ",".join(str(int(v)) for v, _ in rows))
PY
cat "$OUT/steps.txt"
check grep -qx 'steps 55' "$OUT/steps.txt"
check grep -qx 'samples 4' "$OUT/steps.txt"
check grep -qx 'values 10,20,20,5' "$OUT/steps.txt"
check grep -qx 'devices LAB-0001' "$OUT/steps.txt"
check grep -q 'garbage' "$OUT/healthgate.log"
"$PY" -c 'import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d)' \
  "$DB_DIR/samples.sqlite" /tmp/samples-copy.sqlite && cp /tmp/samples-copy.sqlite "$OUT/samples.sqlite"
# The counter baseline is a source checkpoint, committed with the samples in the store and keyed
# by the device's serial (no side file): the last reading, 5 steps after the reboot.
"$PY" - "$DB_DIR/samples.sqlite" > "$OUT/checkpoints.txt" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for namespace, key, payload in db.execute("SELECT namespace, key, payload FROM source_checkpoints ORDER BY namespace, key"):
    print(namespace, key, bytes(payload).decode("utf-8", "replace"))
PY
cat "$OUT/checkpoints.txt"
check grep -q 'serial-pedometer LAB-0001 .*"steps":5' "$OUT/checkpoints.txt"
check test ! -e "$OUT/state/serial-pedometer/pedometers.json"

step "summary"
echo "failures: $fails, scenario wall $((SECONDS - t0))s"
exit $((fails > 0))
