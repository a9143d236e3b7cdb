#!/bin/bash
# strap-between-classes.sh REPO HEALTHGATE - runs INSIDE the lab VM (see run-strap-between-classes.sh).
#
# A strap changes hands between two classes (issue 65), read by the gateway through the kernel's
# USB path: 2 ANT+ straps behind an emulated ANT USB-m (lib/ant-gadget.sh: a g_serial gadget the
# kernel's usb_serial_simple binds, Tests/Fixtures/ant_stick_emulator.py on its gadget side), the
# configuration's Ana wearing the first, Ben the second. healthgate run as it would run (the real
# executable, the SQLite store):
#   1. class 1: `workout start --all`, then `workout end --all`: Ana's and Ben's workouts stored;
#   2. the gateway restarted (SIGTERM, run again): nothing of who wears what changes;
#   3. between the classes `participant assign STRAP Cleo` gives Ana's strap to a new member;
#   4. class 2: Cleo's and Ben's workouts, `workout end --all`;
#   5. lib/between-classes.py: the strap's readings are Ana's until the assignment and Cleo's from
#      it, none unattributed, through a restart; Ana's workout holds only what her strap sent
#      before, Cleo's what it sent in her workout, Ben's two what his strap sent in each;
#   6. healthgate exits 0 on SIGTERM.
set -uo pipefail
REPO=${1:?usage: strap-between-classes.sh REPO HEALTHGATE}
HG=${2:?usage: strap-between-classes.sh REPO HEALTHGATE}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
source "$REPO/Tests/DeviceLab/lib/ant-gadget.sh"
SERIAL=LABCLASS0002
PHASE=${CLASS_PHASE_SECONDS:-15}  # how long each class runs
t0=$SECONDS

say "the ANT USB-m gadget and the stick emulator with 2 straps"
ant_gadget_setup
ant_plug "$SERIAL" || { fail "the ANT gadget did not come up"; exit 1; }
"$PY" "$ANT_EMULATOR" --device /dev/ttyGS0 --straps 2 --network-key "$ANT_KEY" --log "$OUT/ant.jsonl" \
  > "$OUT/ant-emulator.out" 2>&1 &
ANT_PID=$!
poll 30 grep -qs '"event":"plug"' "$OUT/ant.jsonl" || { fail "the emulator did not open /dev/ttyGS0"; exit 1; }
grep '"event":"strap"' "$OUT/ant.jsonl" | "$PY" -c 'import json, sys
for line in sys.stdin: print(json.loads(line)["identifier"])' > "$OUT/ant-straps.txt"
mapfile -t STRAPS < "$OUT/ant-straps.txt"
[[ ${#STRAPS[@]} -eq 2 ]] || { fail "the emulator described ${#STRAPS[@]} straps"; exit 1; }
HANDED=${STRAPS[0]}

mkdir -p "$STORE/ant"
printf '%s\n' "$ANT_KEY" > "$STORE/ant/network.key"
chmod 0600 "$STORE/ant/network.key"
cat > "$OUT/healthgate.json" <<JSON
{
  "profile": {"maximumHeartRate": 190},
  "participants": [{"name": "Ana", "devices": ["${STRAPS[0]}"]}, {"name": "Ben", "devices": ["${STRAPS[1]}"]}],
  "sources": [{"kind": "ant-heart-rate", "name": "stick",
               "config": {"transport": "stick", "path": "/dev/healthgate/ant-$SERIAL",
                          "networkKeyFile": "$STORE/ant/network.key", "lostAfterSeconds": 5}}],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}],
  "logLevel": "debug"
}
JSON
"$HG" config check "$OUT/healthgate.json" > "$OUT/config-check.txt" 2>&1 ||
  { fail "config check: $(cat "$OUT/config-check.txt")"; exit 1; }
cli() { gateway_cli "$@" --config "$OUT/healthgate.json"; }
# readings NAME: how many heart rates `query samples --participant NAME` lists (the store, read-only).
readings() { "$HG" query samples --type heartRate --participant "$1" --format json --db "$DB" 2> /dev/null |
  "$PY" -c 'import json, sys; print(len(json.load(sys.stdin)))' 2> /dev/null || echo 0; }
participant_workouts() { query "SELECT count(*) FROM metadata_readable WHERE record = 'workout' AND key = 'healthgate.participant'"; }
# gateway_up: the gateway answers on its control socket.
gateway_up() { cli participant list > /dev/null 2>&1; }
# more_readings NAME COUNT: NAME has more than COUNT heart rates stored.
more_readings() { (($(readings "$1") > $2)); }
# stop_gateway: SIGTERM, exit 0 expected.
stop_gateway() {
  kill -TERM "$GATEWAY_PID"
  wait "$GATEWAY_PID"
  local status=$?
  [[ $status -eq 0 ]] && pass "healthgate run exits 0 on SIGTERM" || fail "healthgate run exited $status: $(tail -n 20 "$OUT/healthgate.log")"
  cat "$OUT/healthgate.log" >> "$OUT/healthgate-all.log"
}

say "healthgate run: Ana wears $HANDED, Ben ${STRAPS[1]}"
start_gateway "$OUT/healthgate.json"
poll 120 gateway_up && poll 120 more_readings Ana 3 && poll 60 more_readings Ben 3 &&
  pass "both straps' heart rates are stored as their wearers'" || { fail "no heart rates of Ana's and Ben's"; tail -n 30 "$OUT/healthgate.log"; exit 1; }

say "class 1: workout start --all, $PHASE s, workout end --all"
cli workout start --all --activity cycling > "$OUT/start-1.txt" 2>&1 || fail "workout start --all: $(cat "$OUT/start-1.txt")"
sleep "$PHASE"
cli workout end --all > "$OUT/end-1.txt" 2>&1 || fail "workout end --all: $(cat "$OUT/end-1.txt")"
two_workouts() { [[ $(participant_workouts) -eq 2 ]]; }
poll 120 two_workouts && pass "class 1: Ana's and Ben's workouts stored" || fail "class 1: $(participant_workouts) workouts stored"

say "the gateway restarted between the classes"
stop_gateway
start_gateway "$OUT/healthgate.json"
before_restart=$(readings Ana)
poll 120 gateway_up && poll 120 more_readings Ana "$before_restart" &&
  pass "after the restart Ana's strap is still hers" || fail "no reading of Ana's after the restart"

say "between the classes: $HANDED goes to a new member, Cleo"
HANDOVER_AT=$(date +%s.%N)
cli participant assign "$HANDED" Cleo > "$OUT/assign.txt" 2>&1 && pass "participant assign: $(cat "$OUT/assign.txt")" ||
  fail "participant assign $HANDED Cleo: $(cat "$OUT/assign.txt")"
poll 60 more_readings Cleo 3 && pass "the strap's heart rates are stored as Cleo's" || fail "no heart rate of Cleo's"

say "class 2: Cleo's and Ben's workouts, $PHASE s, workout end --all"
cli workout start --participant Cleo --activity cycling > "$OUT/start-cleo.txt" 2>&1 || fail "Cleo's workout: $(cat "$OUT/start-cleo.txt")"
cli workout start --participant Ben --activity cycling > "$OUT/start-ben.txt" 2>&1 || fail "Ben's workout: $(cat "$OUT/start-ben.txt")"
sleep "$PHASE"
cli workout end --all > "$OUT/end-2.txt" 2>&1 || fail "workout end --all: $(cat "$OUT/end-2.txt")"
grep -qx 'Ana: no workout in progress' "$OUT/end-2.txt" && pass "Ana, who wears nothing now, has no workout in class 2" ||
  fail "workout end --all does not list Ana without a workout: $(cat "$OUT/end-2.txt")"
four_workouts() { [[ $(participant_workouts) -eq 4 ]]; }
poll 120 four_workouts && pass "class 2: Cleo's and Ben's workouts stored" || fail "$(participant_workouts) workouts stored, 4 expected"

say "stop; the store against what the emulator sent"
stop_gateway
kill "$ANT_PID" 2> /dev/null
wait "$ANT_PID" 2> /dev/null
"$PY" - "$OUT/between.json" "$HANDED" "${STRAPS[1]}" "$HANDOVER_AT" <<'PYTHON'
import json, sys
path, handed, bens, at = sys.argv[1:5]
json.dump({"straps": {"Ana": handed, "Ben": bens, "Cleo": handed},
           "handover": {"strap": handed, "from": "Ana", "to": "Cleo", "at": float(at)}}, open(path, "w"))
PYTHON
"$PY" "$REPO/Tests/DeviceLab/lib/between-classes.py" "$OUT/between.json" "$OUT/ant.jsonl" "$DB" "$HG" > "$OUT/between.txt" 2>&1
status=$?
cat "$OUT/between.txt"
[[ $status -eq 0 ]] && pass "each reading and each workout is its wearer's of the moment" || fail "the hand-over between the classes (see above)"
sqlite3 "$DB" ".backup '$OUT/healthgate.sqlite'" || fail "cannot copy the store to $OUT"
kill "$UDEV_MONITOR" 2> /dev/null
echo "scenario wall $((SECONDS - t0))s"
echo "failures: $failures"
exit $((failures > 0))
