#!/bin/bash
# class.sh REPO HEALTHGATE - runs INSIDE the lab VM (see run-class.sh).
#
# A class on one gateway, every strap worn by a participant who is assigned it by its radio
# identity, whatever the radio:
#   * 6 ANT+ straps behind an ANT USB-m: the USB gadget bound by the kernel's usb_serial_simple
#     (lib/ant-gadget.sh) and the stick emulator (Tests/Fixtures/ant_stick_emulator.py) on its
#     gadget side; participants ANT-1..ANT-6 list `ant:120:NUMBER`;
#   * 3 broadcasting Polar-like straps and 2 connected heart-rate straps on Bumble
#     (peripherals/bumble-class.py, the gateway's controller hci0 over /dev/vhci, its duplicate
#     filter by address and data; bluetoothd -E, so the broadcasts are read through an
#     Advertisement Monitor while the connected straps connect on the same adapter); participants
#     Polar-1..Polar-3 list the Polar device id, HR-1 and HR-2 the address (each one's RR intervals
#     checked in the store).
# healthgate run as it would run (the real executable, the SQLite store, the board on
# 127.0.0.1:8080), the board's event stream read throughout (curl). The class:
#   1. every tile live (GET /api/board), then `workout start --all`;
#   2. one ANT+ strap switched off (the emulator's SIGUSR1): its tile goes lost with no heart
#      rate (GET), then it is switched on again and its tile shows a heart rate again;
#   3. ANT-3 leaves: `workout end --participant ANT-3`, `participant assign ant:120:N Newcomer`,
#      (the assignment during the class signs the member in and starts their workout): the new member's workout gets the beats that follow;
#   4. `workout end --all`; every strap switched off (the emulators stopped): every tile lost;
#   5. lib/class-counts.py: per participant, the heart rates the strap sent while the workout ran
#      against the samples stored in it, every value one that was sent; the board's stream against
#      the same, each tile's last heart rate the last its strap sent; the lost tile; the hand-over,
#      the handed strap's readings attributed to ANT-3 before it and to Newcomer after (issue 65);
#   6. bluetoothd alive, healthgate exits 0 on SIGTERM.
set -uo pipefail
REPO=${1:?usage: class.sh REPO HEALTHGATE}
HG=${2:?usage: class.sh REPO HEALTHGATE}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
source "$REPO/Tests/DeviceLab/lib/ant-gadget.sh"
ANT_STRAPS=6 BROADCASTING=3 CONNECTED=2
SERIAL=LABCLASS0001
LOST_INDEX=1                      # ANT-2 is switched off and on
BOARD=http://127.0.0.1:8080
PHASE=${CLASS_PHASE_SECONDS:-10}  # how long the class runs between the steps
t0=$SECONDS

# CLASS_BLUETOOTHD_EXPERIMENTAL=1: bluetoothd -E, as a gym reading broadcasts through an
# Advertisement Monitor runs it, the connected straps on the same adapter (not yet passed twice
# under TCG on a loaded host: README.md, "A class"); by default bluetoothd as Debian ships it.
# Its debug log goes to the guest's tmpfs (copied to $OUT at the end): written line by line to the
# 9p share it kept bluetoothd's main loop so busy that its D-Bus dispatch, a GLib idle source,
# never ran beside a monitor.
MONITOR=${CLASS_BLUETOOTHD_EXPERIMENTAL:-0}
[[ $MONITOR == 1 ]] && BLUETOOTHD_START_FLAGS=-E
BLUETOOTHD_LOG=/tmp/bluetoothd.log
trap 'cp -f "$BLUETOOTHD_LOG" "$OUT/bluetoothd.log" 2> /dev/null' EXIT
start_bumble "$OUT/bumble.jsonl" "$PERIPHERALS/bumble-class.py" "$BROADCASTING" "$CONNECTED"

say "the ANT USB-m gadget and the stick emulator with $ANT_STRAPS straps"
ant_gadget_setup
ant_plug "$SERIAL" || { fail "the ANT gadget did not come up"; exit 1; }
"$PY" "$ANT_EMULATOR" --device /dev/ttyGS0 --straps "$ANT_STRAPS" --network-key "$ANT_KEY" --log "$OUT/ant.jsonl" \
  --leave-on-signal "$LOST_INDEX" > "$OUT/ant-emulator.out" 2>&1 &
ANT_PID=$!
poll 30 grep -qs '"event":"plug"' "$OUT/ant.jsonl" || { fail "the emulator did not open /dev/ttyGS0"; exit 1; }
# Files, not process substitutions: the guest has no /dev/fd.
grep '"event":"strap"' "$OUT/ant.jsonl" | "$PY" -c 'import json, sys
for line in sys.stdin: print(json.loads(line)["identifier"])' > "$OUT/ant-straps.txt"
mapfile -t ANT_IDS < "$OUT/ant-straps.txt"
[[ ${#ANT_IDS[@]} -eq $ANT_STRAPS ]] || { fail "the emulator described ${#ANT_IDS[@]} straps"; exit 1; }

say "healthgate run: the class's participants, three sources, the board on $BOARD"
mkdir -p "$STORE/ant"
printf '%s\n' "$ANT_KEY" > "$STORE/ant/network.key"
chmod 0600 "$STORE/ant/network.key"
"$PY" - "$OUT/class.json" "$OUT/healthgate.json" "$DB" "/dev/healthgate/ant-$SERIAL" "$STORE/ant/network.key" \
  "$BROADCASTING" "$CONNECTED" "${ANT_IDS[@]}" <<'PYTHON'
import json, sys
class_file, config_file, db, stick, key = sys.argv[1:6]
broadcasting, connected = int(sys.argv[6]), int(sys.argv[7])
participants = [{"name": "ANT-%d" % (n + 1), "strap": ident, "kind": "ant"} for n, ident in enumerate(sys.argv[8:])]
participants += [{"name": "Polar-%d" % n, "strap": "C1A550%02X" % n, "kind": "broadcast"} for n in range(1, broadcasting + 1)]
participants += [{"name": "HR-%d" % n, "strap": "F0:C1:A5:00:00:%02X" % n, "kind": "connected"} for n in range(1, connected + 1)]
json.dump({"participants": participants}, open(class_file, "w"))
config = {
    "profile": {"maximumHeartRate": 190},
    "participants": [{"name": p["name"], "devices": [p["strap"]]} for p in participants],
    "sources": [
        {"kind": "ant-heart-rate", "name": "stick",
         "config": {"transport": "stick", "path": stick, "networkKeyFile": key, "lostAfterSeconds": 5}},
        {"kind": "ble-polar-broadcast", "name": "broadcasting", "config": {"adapter": "hci0"}},
        {"kind": "ble-heart-rate", "name": "connected", "config": {
            "adapter": "hci0", "devices": [p["strap"] for p in participants if p["kind"] == "connected"],
            "maxDevices": connected,
            "reconnect": {"initialDelaySeconds": 0.5, "maxDelaySeconds": 2, "multiplier": 2}}},
    ],
    "store": {"path": db},
    "sinks": [{"kind": "sqlite", "name": "store"}],
    "web": {"listen": "127.0.0.1:8080"},
    "logLevel": "debug",
}
json.dump(config, open(config_file, "w"), indent=2)
PYTHON
"$HG" config check "$OUT/healthgate.json" > "$OUT/config-check.txt" 2>&1 ||
  { fail "config check: $(cat "$OUT/config-check.txt")"; exit 1; }
start_gateway "$OUT/healthgate.json"
# How long bluetoothd takes to answer a D-Bus call beside the monitor (Adapter1.Discovering, every
# 5 s while the class runs): a call it left unanswered for gdbus's 25 s is what stalled the
# connected straps while its debug log went to the 9p share.
( while :; do
    asked=$(date +%s.%N)
    if timeout 30 gdbus call --system -d org.bluez -o /org/bluez/hci0 -m org.freedesktop.DBus.Properties.Get \
      org.bluez.Adapter1 Discovering > /dev/null 2>&1; then
      awk -v a="$(date +%s.%N)" -v b="$asked" 'BEGIN {printf "%.2f\n", a - b}'
    else
      echo unanswered
    fi
    sleep 5
  done ) > "$OUT/bluetoothd-answers.txt" 2>&1 &
PROBE_PID=$!
# cli ARGUMENT...: the CLI against this gateway (its control socket, its configuration).
cli() { gateway_cli "$@" --config "$OUT/healthgate.json"; }
# control LOG ARGUMENT...: a CLI command whose effect the scenario then waits for on the board:
# its answer is logged, and a command the daemon did not answer within the CLI's 10 s (a debug
# build in a VM under TCG on a loaded host) is a NOTE, not a failure, as the board says whether it
# took effect.
control() {
  local log=$1
  shift
  cli "$@" > "$log" 2>&1 && return 0
  grep -q 'did not answer within' "$log" && { echo "NOTE: healthgate $*: no answer within the CLI's time: $(cat "$log")"; return 0; }
  fail "healthgate $*: $(cat "$log")"
}
board_up() { curl -sf "$BOARD/api/board" > /dev/null; }
poll 60 board_up && pass "the board answers on $BOARD" || { fail "no board on $BOARD"; tail -n 30 "$OUT/healthgate.log"; exit 1; }
curl -sN "$BOARD/events" > "$OUT/board-events.txt" 2> /dev/null &
EVENTS_PID=$!

# tiles FILTER: the participants' tiles that FILTER (python, over `t`) picks, as "NAME" lines,
# read from GET /api/board.
tiles() {
  curl -sf "$BOARD/api/board" | "$PY" -c 'import json, sys
for t in json.load(sys.stdin)["tiles"]:
    if not t["guest"] and ('"$1"'): print(t["name"])' 2> /dev/null
}
tile_count() { tiles "$1" | wc -l; }
# watch SECONDS COMMAND...: poll, every 2 s: each look at the board starts a python, which under
# TCG takes CPU the gateway needs.
watch() { local limit=$((SECONDS + $1)); shift
  until "$@"; do ((SECONDS >= limit)) && return 1; sleep 2; done; }
all_live() { [[ $(tile_count 't.get("sensor") == "live" and t.get("heartRate") is not None') -eq $((ANT_STRAPS + BROADCASTING + CONNECTED)) ]]; }
watch 240 all_live && pass "every participant's tile is live: $((ANT_STRAPS + BROADCASTING + CONNECTED)) straps over three radios" ||
  fail "tiles not live after 120 s: $(tiles 't.get("sensor") != "live"' | paste -sd' ')"
if [[ $MONITOR == 1 ]]; then
  grep -q 'Polar heart-rate broadcast: scanning by advertisement-monitor' "$OUT/healthgate.log" &&
    pass "the broadcasting straps are read through the Advertisement Monitor (bluetoothd -E)" ||
    fail "the broadcasting straps are not read through the Advertisement Monitor: $(grep -m1 'scanning advertisements' "$OUT/healthgate.log")"
else
  say "the broadcasting straps' path: $(grep -m1 -o 'scanning advertisements on .*' "$OUT/healthgate.log")"
fi

say "the class: workout start --all"
control "$OUT/start.txt" workout start --all --activity highIntensityIntervalTraining
all_running() { [[ $(tile_count 't.get("workoutState") == "running"') -eq $((ANT_STRAPS + BROADCASTING + CONNECTED)) ]]; }
watch 240 all_running && pass "workout start --all: every tile's workout runs" ||
  fail "workout start --all: $(tile_count 't.get("workoutState") == "running"') workouts run"
sleep "$PHASE"

LOST=ANT-$((LOST_INDEX + 1))
say "$LOST's strap switched off, then on again"
kill -USR1 "$ANT_PID"
LOST_AT=$(date +%s.%N)
tile_lost() { [[ $(tile_count "t[\"name\"] == \"$LOST\" and t.get(\"sensor\") == \"lost\" and t.get(\"heartRate\") is None and t.get(\"zone\") is None") -eq 1 ]]; }
watch 40 tile_lost && pass "$LOST's tile is lost and shows no heart rate ($(awk -v a="$(date +%s.%N)" -v b="$LOST_AT" 'BEGIN {printf "%.1f", a - b}') s after the strap went silent)" ||
  fail "$LOST's tile did not turn lost without a heart rate"
# The board's tile goes lost on its own clock; the stick's machine declares the strap lost on its
# next tick after the timeout. The strap stays off until it has, or its return races the notice.
strap_declared_lost() { grep -q "lost strap ${ANT_IDS[LOST_INDEX]}:" "$OUT/healthgate.log"; }
watch 40 strap_declared_lost && pass "the gateway logged $LOST's strap lost ($(awk -v a="$(date +%s.%N)" -v b="$LOST_AT" 'BEGIN {printf "%.1f", a - b}') s after it went silent)" ||
  fail "the gateway did not log $LOST's strap (${ANT_IDS[LOST_INDEX]}) lost within 40 s"
kill -USR2 "$ANT_PID"
RETURNED_AT=$(date +%s.%N)
tile_back() { [[ $(tile_count "t[\"name\"] == \"$LOST\" and t.get(\"sensor\") == \"live\" and t.get(\"heartRate\") is not None") -eq 1 ]]; }
watch 90 tile_back && pass "$LOST's tile shows a heart rate again ($(awk -v a="$(date +%s.%N)" -v b="$RETURNED_AT" 'BEGIN {printf "%.1f", a - b}') s after the strap came back)" ||
  fail "$LOST's tile did not come back"

HANDED=${ANT_IDS[2]}
say "ANT-3 leaves; the strap $HANDED goes to a new member, Newcomer"
control "$OUT/end-ant3.txt" workout end --participant ANT-3
ant3_ended() { [[ $(tile_count 't["name"] == "ANT-3" and t.get("workoutState") == "ended"') -eq 1 ]]; }
watch 120 ant3_ended && pass "workout end --participant ANT-3: ended" || fail "ANT-3's workout did not end"
HANDOVER_AT=$(date +%s.%N)
control "$OUT/assign.txt" participant assign "$HANDED" Newcomer
newcomer_live() { [[ $(tile_count 't["name"] == "Newcomer" and t.get("sensor") == "live" and t.get("heartRate") is not None') -eq 1 ]]; }
watch 120 newcomer_live && pass "participant assign $HANDED Newcomer: Newcomer's tile shows the strap's heart rate" ||
  fail "Newcomer has no live tile"
# An assignment while the class runs signs the member in: their workout starts with the strap.
newcomer_running() { [[ $(tile_count 't["name"] == "Newcomer" and t.get("workoutState") == "running"') -eq 1 ]]; }
watch 120 newcomer_running && pass "the assignment during the class started Newcomer's workout" || fail "Newcomer's workout does not run"
sleep "$PHASE"

"$PY" - "$OUT/class.json" <<'PYTHON'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["participants"].append({"name": "Newcomer", "strap": spec["participants"][2]["strap"], "kind": "ant"})
json.dump(spec, open(sys.argv[1], "w"))
PYTHON

say "workout end --all; the store and the board against what the emulators sent"
# ANT-3 left before: --all ends every workout in progress and lists ANT-3 as having none, exit 0.
if cli workout end --all > "$OUT/end.txt" 2>&1; then
  grep -qx 'ANT-3: no workout in progress' "$OUT/end.txt" && pass "workout end --all: exit 0, ANT-3 listed without a workout in progress" ||
    fail "workout end --all does not list ANT-3 as without a workout in progress: $(cat "$OUT/end.txt")"
elif grep -q 'did not answer within' "$OUT/end.txt"; then
  echo "NOTE: healthgate workout end --all: no answer within the CLI's time: $(cat "$OUT/end.txt")"
else
  fail "healthgate workout end --all: $(cat "$OUT/end.txt")"
fi
workouts_stored() { [[ $(query "SELECT count(*) FROM metadata_readable WHERE record = 'workout' AND key = 'healthgate.participant'") -eq $((ANT_STRAPS + BROADCASTING + CONNECTED + 1)) ]]; }
watch 240 workouts_stored && pass "workout end --all: $((ANT_STRAPS + BROADCASTING + CONNECTED + 1)) participants' workouts stored" ||
  fail "workout end --all: $(query "SELECT count(*) FROM metadata_readable WHERE record = 'workout' AND key = 'healthgate.participant'") participants' workouts stored"
for ((n = 1; n <= CONNECTED; n++)); do
  strap=$(printf 'F0:C1:A5:00:00:%02X' "$n")
  beats=$(query "SELECT coalesce(sum(beat_count), 0) FROM heartbeat_series WHERE sync_identifier LIKE 'heartbeat-series:$strap:%'")
  [[ ${beats:-0} -gt 0 ]] && pass "HR-$n ($strap) connected: $beats RR intervals stored" ||
    fail "HR-$n ($strap): no RR interval stored"
done
kill "$PROBE_PID" 2> /dev/null
sort -g "$OUT/bluetoothd-answers.txt" | awk '$1 == "unanswered" {u++; next} {n++; v[n] = $1} END {
  printf "bluetoothd beside the monitor: %d D-Bus probes answered (median %.2f s, slowest %.2f s), %d unanswered within 25 s\n",
    n, n ? v[int((n + 1) / 2)] : 0, n ? v[n] : 0, u}'
# A strap is lost only when it is: until the emulators stop, the emulator sent every beat of every
# ANT+ strap but the one switched off, so that one is the only one lost (a starved guest that did
# not read the stick for the timeout logged 311 to 349 false losses in one class).
LOG_LINES=$(wc -l < "$OUT/healthgate.log")
say "every strap switched off: each tile's last heart rate against the last its strap sent"
kill "$ANT_PID" "$BUMBLE_PID" 2> /dev/null
wait "$ANT_PID" 2> /dev/null
# Newcomer signed in without --keep: the class's end took them off the roster, and their tile.
newcomer_gone() { [[ $(tile_count 't["name"] == "Newcomer"') -eq 0 ]]; }
watch 60 newcomer_gone && pass "the class's end freed Newcomer's strap (signed in without --keep)" || fail "Newcomer's tile is still on the board after the class"
all_lost() { [[ $(tile_count 't.get("sensor") != "live" and t.get("heartRate") is None') -eq $((ANT_STRAPS + BROADCASTING + CONNECTED)) ]]; }
watch 60 all_lost && pass "every tile is lost and shows no heart rate" || fail "tiles not lost: $(tiles 't.get("sensor") != "lost"' | paste -sd' ')"
kill "$EVENTS_PID" 2> /dev/null
"$PY" - "$OUT/class.json" "$LOST" "$LOST_AT" "$RETURNED_AT" "$HANDED" "$HANDOVER_AT" <<'PYTHON'
import json, sys
path, lost, lost_at, returned_at, handed, handover_at = sys.argv[1:7]
spec = json.load(open(path))
spec.update({"lost": lost, "lostAt": float(lost_at), "returnedAt": float(returned_at),
             "handover": {"from": "ANT-3", "to": "Newcomer", "strap": handed, "at": float(handover_at)}})
json.dump(spec, open(path, "w"), indent=1)
PYTHON
"$PY" "$REPO/Tests/DeviceLab/lib/class-counts.py" "$OUT/class.json" "$OUT/ant.jsonl" "$OUT/bumble.jsonl" "$DB" \
  "$OUT/board-events.txt" "$HG" > "$OUT/class-counts.txt" 2>&1
counts_status=$?
cat "$OUT/class-counts.txt"
[[ $counts_status -eq 0 ]] && pass "every participant's workout and tile hold what their strap sent" ||
  fail "the class's counts (see above)"
head -n "$LOG_LINES" "$OUT/healthgate.log" | grep -o 'lost strap ant:[0-9]*:[0-9]*' | sort | uniq -c > "$OUT/lost-straps.txt"
switched_off=$(grep "lost strap ${ANT_IDS[LOST_INDEX]}\$" "$OUT/lost-straps.txt" | awk '{n += $1} END {print n + 0}')
false_lost=$(grep -v "lost strap ${ANT_IDS[LOST_INDEX]}\$" "$OUT/lost-straps.txt" | awk '{n += $1} END {print n + 0}')
asked=$(head -n "$LOG_LINES" "$OUT/healthgate.log" | grep -c 'asking the stick before declaring any lost')
[[ $false_lost -eq 0 && $switched_off -eq 1 ]] &&
  pass "a strap is lost only when it is: $LOST's strap lost, no other ANT+ strap ($asked channel status requests when all fell silent at once)" ||
  fail "lost notices during the class: $(paste -sd, "$OUT/lost-straps.txt") (only ${ANT_IDS[LOST_INDEX]} was switched off; $asked channel status requests)"
kill "$UDEV_MONITOR" 2> /dev/null
echo "scenario wall $((SECONDS - t0))s"
finish
