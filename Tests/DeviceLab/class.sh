#!/bin/bash
# class.sh REPO HEALTHGATE - runs INSIDE the lab VM (see run-class.sh).
#
# A class on one gateway, every strap worn by a participant who is assigned it by its radio
# identity, whatever the radio:
#   * 6 ANT+ straps behind an ANT USB-m: the USB gadget bound by the kernel's usb_serial_simple
#     (lib/ant-gadget.sh) and the stick emulator (Tests/Fixtures/ant_stick_emulator.py) on its
#     gadget side; participants ANT-1..ANT-6 list `ant:120:NUMBER`;
#   * 3 broadcasting Polar-like straps and 2 connected heart-rate straps on Bumble
#     (peripherals/bumble-class.py, the gateway's controller hci0 over /dev/vhci, bluetoothd -E so
#     that the broadcasts take the Advertisement Monitor path); participants Polar-1..Polar-3 list
#     the Polar device id, HR-1 and HR-2 the address.
# healthgate run as it would run (the real executable, the SQLite store, the board on
# 127.0.0.1:8080), the board's event stream read throughout (curl). The class:
#   1. every tile live (GET /api/board), then `workout start --all`;
#   2. one ANT+ strap switched off (the emulator's SIGUSR1): its tile goes lost with no heart
#      rate (GET), then it is switched on again and its tile shows a heart rate again;
#   3. ANT-3 leaves: `workout end --participant ANT-3`, `participant assign ant:120:N Newcomer`,
#      `workout start --participant Newcomer`: the new member's workout gets the beats that follow;
#   4. every tile's heart rate (GET) equals the last its strap sent, at one moment;
#   5. `workout end --all`, then lib/class-counts.py: per participant, the heart rates the strap
#      sent while the workout ran against the samples stored in it, every value one that was sent;
#      the board's stream against the same; the lost tile; the hand-over;
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
PHASE=${CLASS_PHASE_SECONDS:-15}  # how long the class runs between the steps
t0=$SECONDS

BLUETOOTHD_START_FLAGS=-E
start_bumble "$OUT/bumble.jsonl" "$PERIPHERALS/bumble-class.py" "$BROADCASTING" "$CONNECTED"

say "the ANT USB-m gadget and the stick emulator with $ANT_STRAPS straps"
ant_gadget_setup
ant_plug "$SERIAL" || { fail "the ANT gadget did not come up"; exit 1; }
"$PY" "$ANT_EMULATOR" --device /dev/ttyGS0 --straps "$ANT_STRAPS" --network-key "$ANT_KEY" --log "$OUT/ant.jsonl" \
  --leave-on-signal "$LOST_INDEX" > "$OUT/ant-emulator.out" 2>&1 &
ANT_PID=$!
poll 30 grep -qs '"event":"plug"' "$OUT/ant.jsonl" || { fail "the emulator did not open /dev/ttyGS0"; exit 1; }
mapfile -t ANT_IDS < <(grep '"event":"strap"' "$OUT/ant.jsonl" | "$PY" -c 'import json, sys
for line in sys.stdin: print(json.loads(line)["identifier"])')
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
# cli ARGUMENT...: the CLI against this gateway (its control socket, its configuration).
cli() { gateway_cli "$@" --config "$OUT/healthgate.json"; }
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
all_live() { [[ $(tile_count 't.get("sensor") == "live" and t.get("heartRate") is not None') -eq $((ANT_STRAPS + BROADCASTING + CONNECTED)) ]]; }
poll 120 all_live && pass "every participant's tile is live: $((ANT_STRAPS + BROADCASTING + CONNECTED)) straps over three radios" ||
  fail "tiles not live after 120 s: $(tiles 't.get("sensor") != "live"' | paste -sd' ')"

say "the class: workout start --all"
cli workout start --all --activity highIntensityIntervalTraining > "$OUT/start.txt" 2>&1 &&
  pass "workout start --all" || fail "workout start --all: $(cat "$OUT/start.txt")"
sleep "$PHASE"

LOST=ANT-$((LOST_INDEX + 1))
say "$LOST's strap switched off, then on again"
kill -USR1 "$ANT_PID"
LOST_AT=$(date +%s.%N)
tile_lost() { [[ $(tile_count "t[\"name\"] == \"$LOST\" and t.get(\"sensor\") == \"lost\" and t.get(\"heartRate\") is None and t.get(\"zone\") is None") -eq 1 ]]; }
poll 20 tile_lost && pass "$LOST's tile is lost and shows no heart rate ($(awk -v a="$(date +%s.%N)" -v b="$LOST_AT" 'BEGIN {printf "%.1f", a - b}') s after the strap went silent)" ||
  fail "$LOST's tile did not turn lost without a heart rate"
kill -USR2 "$ANT_PID"
RETURNED_AT=$(date +%s.%N)
tile_back() { [[ $(tile_count "t[\"name\"] == \"$LOST\" and t.get(\"sensor\") == \"live\" and t.get(\"heartRate\") is not None") -eq 1 ]]; }
poll 20 tile_back && pass "$LOST's tile shows a heart rate again ($(awk -v a="$(date +%s.%N)" -v b="$RETURNED_AT" 'BEGIN {printf "%.1f", a - b}') s after the strap came back)" ||
  fail "$LOST's tile did not come back"

HANDED=${ANT_IDS[2]}
say "ANT-3 leaves; the strap $HANDED goes to a new member, Newcomer"
cli workout end --participant ANT-3 > "$OUT/end-ant3.txt" 2>&1 && pass "workout end --participant ANT-3" ||
  fail "workout end --participant ANT-3: $(cat "$OUT/end-ant3.txt")"
HANDOVER_AT=$(date +%s.%N)
cli participant assign "$HANDED" Newcomer > "$OUT/assign.txt" 2>&1 && pass "participant assign $HANDED Newcomer" ||
  fail "participant assign: $(cat "$OUT/assign.txt")"
cli workout start --participant Newcomer --activity highIntensityIntervalTraining > "$OUT/start-newcomer.txt" 2>&1 &&
  pass "workout start --participant Newcomer" || fail "workout start --participant Newcomer: $(cat "$OUT/start-newcomer.txt")"
newcomer_live() { [[ $(tile_count 't["name"] == "Newcomer" and t.get("sensor") == "live" and t.get("heartRate") is not None') -eq 1 ]]; }
poll 20 newcomer_live && pass "Newcomer's tile shows the strap's heart rate" || fail "Newcomer has no live tile"
sleep "$PHASE"

say "every tile against the last heart rate its strap sent"
"$PY" - "$OUT/class.json" "$ANT_STRAPS" <<'PYTHON'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["participants"].append({"name": "Newcomer", "strap": spec["participants"][2]["strap"], "kind": "ant"})
json.dump(spec, open(sys.argv[1], "w"))
PYTHON
# tile_matches NAME KIND STRAP: the tile's heart rate (GET) is the last one the strap sent.
tile_matches() {
  local board
  board=$(curl -sf "$BOARD/api/board") || return 1
  "$PY" - "$1" "$2" "$3" "$OUT/ant.jsonl" "$OUT/bumble.jsonl" "$board" <<'PYTHON'
import json, sys
name, kind, strap, ant_log, bumble_log, board = sys.argv[1:7]
if kind == "ant":
    lines = [json.loads(l) for l in open(ant_log) if l.startswith("{")]
    device = next(e["device"] for e in lines if e["event"] == "strap" and e["identifier"] == strap)
    sent = [e["heartRate"] for e in lines if e["event"] == "beat" and e["device"] == device]
else:
    lines = [json.loads(l) for l in open(bumble_log) if l.startswith("{")]
    sent = [e["heartRate"] for e in lines if (e["event"] == "advertised" and e["device"].endswith(strap))
            or (e["event"] == "notified" and e["address"] == strap)]
tile = next(t for t in json.loads(board)["tiles"] if t["name"] == name)
sys.exit(0 if sent and tile.get("heartRate") is not None and round(tile["heartRate"]) == sent[-1] else 1)
PYTHON
}
matched=0
while read -r name kind strap; do
  [[ $name == ANT-3 ]] && continue
  if poll 15 tile_matches "$name" "$kind" "$strap"; then matched=$((matched + 1)); else fail "$name's tile never showed the last heart rate its strap sent"; fi
done < <("$PY" -c 'import json, sys
for p in json.load(open(sys.argv[1]))["participants"]: print(p["name"], p["kind"], p["strap"])' "$OUT/class.json")
echo "tiles showing their strap's last heart rate: $matched of $((ANT_STRAPS + BROADCASTING + CONNECTED))"
[[ $matched -eq $((ANT_STRAPS + BROADCASTING + CONNECTED)) ]] && pass "every tile showed the last heart rate its strap sent"

say "workout end --all; the store and the board against what the emulators sent"
cli workout end --all > "$OUT/end.txt" 2>&1 && pass "workout end --all" || fail "workout end --all: $(cat "$OUT/end.txt")"
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
  "$OUT/board-events.txt" > "$OUT/class-counts.txt" 2>&1
counts_status=$?
cat "$OUT/class-counts.txt"
[[ $counts_status -eq 0 ]] && pass "every participant's workout and tile hold what their strap sent" ||
  fail "the class's counts (see above)"
kill "$ANT_PID" "$BUMBLE_PID" "$UDEV_MONITOR" 2> /dev/null
echo "scenario wall $((SECONDS - t0))s"
finish
