#!/bin/bash
# rfcomm-serial.sh - runs INSIDE the lab VM (see run-rfcomm-serial.sh): healthgate's own
# RFCOMM socket (RFCOMMSocket: AF_BLUETOOTH/BTPROTO_RFCOMM, its own sockaddr_rc, no libbluetooth)
# against the kernel's real Bluetooth stack.
#
# One btvirt process emulates two BR/EDR controllers on one emulated radio:
#   hci0 = the pedometer: a Python RFCOMM server bound to hci0's address, channel 3, speaking
#          HGP/1 (waits for ID?, answers with its identity, then sends $ST lines with checksums);
#   hci1 = the gateway: `healthgate run` with a serial-pedometer source {"rfcomm": {hci0, 3}}.
# No bluetoothd: raw RFCOMM sockets are kernel-only, and without a management client the kernel
# leaves Secure Simple Pairing off, so a BT_SECURITY_LOW link needs no pairing and no agent.
# The scenario:
#   1. the server answers ID? with ID,healthgate-lab,RFStep,RF-0042,0.3 and sends readings
#      100 (baseline), 110, a wrong-checksum line carrying 4000000000 (rejected), 130
#   2. the server is killed (the RFCOMM link drops); healthgate fails to reconnect while nothing
#      listens, the server comes back, healthgate reconnects and sends ID? again
#   3. readings 150 and 175
#   4. SIGTERM; the store must hold exactly 10 + 20 + 20 + 25 = 75 steps in 4 samples, all from
#      the device RF-0042 (manufacturer healthgate-lab, model RFStep)
# usage (guest): rfcomm-serial.sh REPO_ROOT HEALTHGATE_BINARY
set -uo pipefail
ROOT=${1:?repository root}
HG=${2:?healthgate binary}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$ROOT/Tests/DeviceLab/lib/btvirt.sh"
PY=/usr/bin/python3          # Debian's python3 has AF_BLUETOOTH; the pyenv one does not
CHANNEL=3
fails=0
source "$ROOT/Tests/DeviceLab/lib/checks.sh"
step() { say "$@"; }
check() { if "$@"; then echo "PASS: $*"; else echo "FAIL: $*"; fails=$((fails+1)); fi; }
wait_for() { local t=$1; shift; local end=$((SECONDS+t)); until "$@"; do
  ((SECONDS >= end)) && return 1; sleep 0.25; done; }
log_has() { grep -q -- "$1" "$OUT/healthgate.log"; }
t0=$SECONDS
[[ -x $HG ]] || { echo "FAIL: no healthgate binary at $HG"; exit 1; }

step "kernel modules"
bluetooth_modules rfcomm || { echo "FAIL: modprobe"; exit 1; }

step "btvirt: two controllers"
start_btvirt 2 "$OUT/btvirt.log" || { echo "FAIL: btvirt controllers did not come up"; hciconfig -a; exit 1; }
# hci0 (the pedometer) must accept pages; hci1 (the gateway) only initiates.
hciconfig hci0 up piscan || { echo "FAIL: hciconfig hci0 up piscan"; exit 1; }
hciconfig hci1 up || { echo "FAIL: hciconfig hci1 up"; exit 1; }
hciconfig -a | tee "$OUT/hciconfig.txt"
PEDOMETER=$(hciconfig hci0 | awk '/BD Address/ {print $3}')
GATEWAY=$(hciconfig hci1 | awk '/BD Address/ {print $3}')
echo "pedometer (hci0) $PEDOMETER, gateway (hci1) $GATEWAY"
btmon -w "$OUT/hci.btsnoop" > /dev/null 2>&1 &
BTMON=$!

# The pedometer: an RFCOMM server on hci0, channel $CHANNEL. It waits (up to 60 s) for the
# gateway's ID?, answers, then sends each reading of its script one second apart and keeps the
# link open until it is killed. Everything it receives is logged.
cat > /tmp/pedometer.py <<'EOF'
import functools, socket, sys, time
address, channel, readings = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def sentence(body):
    return ("$%s*%02X\r\n" % (body, functools.reduce(lambda x, c: x ^ c, body.encode(), 0))).encode()
server = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_STREAM, socket.BTPROTO_RFCOMM)
server.bind((address, channel))
server.listen(1)
print("listening", address, channel, flush=True)
link, peer = server.accept()
print("accepted", peer, flush=True)
link.settimeout(60)
received = b""
while b"ID?" not in received:
    chunk = link.recv(64)
    if not chunk:
        sys.exit("peer closed before ID?")
    received += chunk
print("received", received, flush=True)
link.sendall(sentence("ID,healthgate-lab,RFStep,RF-0042,0.3"))
for reading in readings:
    time.sleep(1)
    if reading.startswith("raw:"):
        link.sendall(reading[4:].encode() + b"\r\n")
    else:
        link.sendall(sentence("ST," + reading))
    print("sent", reading, flush=True)
print("done", flush=True)
try:
    while True:
        chunk = link.recv(64)
        if not chunk:
            break
        print("received", chunk, flush=True)
except OSError:
    pass  # the gateway stopped: a reset is how the link ends then
print("link closed", flush=True)
EOF
SERVER=
start_pedometer() {  # round, readings...
  local round=$1; shift
  "$PY" -u /tmp/pedometer.py "$PEDOMETER" "$CHANNEL" "$@" > "$OUT/pedometer-$round.log" 2>&1 &
  SERVER=$!
  wait_for 20 grep -q '^listening' "$OUT/pedometer-$round.log"
}
pedometer_done() { grep -q '^done' "$OUT/pedometer-$1.log"; }

step "the pedometer listens on $PEDOMETER channel $CHANNEL"
check start_pedometer 1 "100,75.0,100" "110,82.5,104" 'raw:$ST,4000000000*00' "130,97.5,110"

step "healthgate run: serial-pedometer over RFCOMM into SQLite"
# The list is read whole first: grep -q stops reading at its match, and with pipefail the
# writer's SIGPIPE would fail the test whenever it wrote after that.
if ! grep -q '^sqlite ' <<< "$("$HG" plugins)"; then
  echo "FAIL: this healthgate has no 'sqlite' sink compiled in"; exit 1
fi
# SQLite's WAL needs an mmap-able -shm file that the 9p output share does not offer: the store lives on
# the guest's tmpfs and is copied to $OUT at the end.
WORK=$(mktemp -d /tmp/healthgate-rfcomm.XXXXXX)
DB=$WORK/samples.sqlite
mkdir -p "$WORK/state" "$WORK/run"
cat > "$OUT/config.json" <<JSON
{
  "sources": [{"kind": "serial-pedometer", "name": "bt-pedometer",
               "config": {"rfcomm": {"address": "$PEDOMETER", "channel": $CHANNEL},
                          "reconnectIntervalSeconds": 1, "identificationTimeoutSeconds": 10}}],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}],
  "logLevel": "debug"
}
JSON
cat "$OUT/config.json"
STATE_DIRECTORY=$WORK/state RUNTIME_DIRECTORY=$WORK/run HOME=$WORK \
  XDG_STATE_HOME=$WORK/state XDG_DATA_HOME=$WORK XDG_RUNTIME_DIR=$WORK/run \
  "$HG" run --config "$OUT/config.json" > "$OUT/healthgate.log" 2>&1 &
HGPID=$!

query() { sqlite3 -cmd '.timeout 5000' "$DB" "$1" 2>/dev/null; }
step_samples() { query "SELECT count(*) FROM samples_readable WHERE type = 'stepCount'"; }
samples_at_least() { [[ $(step_samples) -ge $1 ]] 2>/dev/null; }

step "round 1: connect, ID exchange, readings"
check wait_for 60 grep -q '^accepted' "$OUT/pedometer-1.log"
# The kernel routed healthgate's unbound socket through the other controller, hci1.
check grep -qF "accepted ('$GATEWAY', " "$OUT/pedometer-1.log"
check wait_for 30 grep -q "^received b'ID?" "$OUT/pedometer-1.log"
check wait_for 30 pedometer_done 1
check wait_for 30 samples_at_least 2
check wait_for 10 log_has "connected rfcomm://$PEDOMETER/$CHANNEL"
sleep 1
query "SELECT type, value, unit FROM samples_readable ORDER BY start_us"

step "the link drops: the pedometer is killed"
kill "$SERVER"; wait "$SERVER" 2>/dev/null
check wait_for 30 log_has "rfcomm://$PEDOMETER/$CHANNEL: .*reopening"
# While nothing listens, every reconnect attempt fails (logged once).
check wait_for 30 log_has "connect $PEDOMETER channel $CHANNEL"

step "round 2: the pedometer comes back; healthgate reconnects"
check start_pedometer 2 "150,112.5,110" "175,131.25,112"
check wait_for 60 grep -q '^accepted' "$OUT/pedometer-2.log"
check grep -qF "accepted ('$GATEWAY', " "$OUT/pedometer-2.log"
check wait_for 30 grep -q "^received b'ID?" "$OUT/pedometer-2.log"
check wait_for 30 pedometer_done 2
check wait_for 30 samples_at_least 4
sleep 2

step "stop: SIGTERM, then the store"
kill -TERM "$HGPID"; wait "$HGPID"; rc=$?
echo "healthgate exit status $rc"
check test "$rc" -eq 0
kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null
tail -n 40 "$OUT/healthgate.log"
query "SELECT s.type, s.value, s.unit, d.manufacturer, d.model, d.firmware_version, d.local_identifier
       FROM samples_readable s LEFT JOIN devices d ON d.id = s.device_id ORDER BY s.start_us" | tee "$OUT/samples.txt"
{
  echo "samples $(query "SELECT count(*) FROM samples_readable WHERE type = 'stepCount'")"
  echo "steps $(query "SELECT CAST(total(value) AS INTEGER) FROM samples_readable WHERE type = 'stepCount'")"
  echo "values $(query "SELECT group_concat(v, ',') FROM (SELECT CAST(value AS INTEGER) AS v FROM samples_readable
                        WHERE type = 'stepCount' ORDER BY start_us)")"
  echo "devices $(query "SELECT group_concat(x, ',') FROM (SELECT DISTINCT d.manufacturer || '/' || d.model || '/'
                         || d.local_identifier AS x FROM samples_readable s LEFT JOIN devices d ON d.id = s.device_id
                         WHERE s.type = 'stepCount')")"
  echo "distance $(query "SELECT printf('%.2f', total(value)) FROM samples_readable WHERE type = 'distanceWalkingRunning'")"
} | tee "$OUT/steps.txt"
check grep -qx 'steps 75' "$OUT/steps.txt"
check grep -qx 'samples 4' "$OUT/steps.txt"
check grep -qx 'values 10,20,20,25' "$OUT/steps.txt"
check grep -qx 'devices healthgate-lab/RFStep/RF-0042' "$OUT/steps.txt"
check grep -qx 'distance 56.25' "$OUT/steps.txt"
check log_has "checksum"
sqlite3 "$DB" ".backup '$OUT/samples.sqlite'" || { echo "FAIL: cannot copy the store"; fails=$((fails+1)); }
kill "$BTMON" "$BTVIRT" 2>/dev/null

step "summary"
echo "failures: $fails, scenario wall $((SECONDS - t0))s"
exit $((fails > 0))
