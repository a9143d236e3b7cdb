#!/bin/bash
# upgrade.sh REPO HEALTHGATE PREVIOUS_DEB DEB - runs INSIDE the lab VM (see run-upgrade.sh): the
# upgrade from the previous release (store schema 14) to this one (the schema `status --format
# json` names: quantity series since 15, readings attributed to their person since 19) as a gym
# meets it, the Debian packages under a real systemd (lib/packaged-service.sh):
#   1. dpkg -i of the previous release's package; its configuration replaced by a class: simulated
#      connected straps (ble-heart-rate, RR intervals: heartbeat series) and broadcasting straps
#      (ble-polar-broadcast), a participant wearing each, the store, and an http-repository sink
#      to a recording repository on 127.0.0.1 (plugins/HTTPRepository/Fixtures/recording_server.py);
#   2. the class: `workout start --all`, UPGRADE_CLASS_SECONDS, `workout end --all` (each workout
#      linked to its samples and series in workout_samples, as the previous release stores them),
#      then the straps go on;
#   3. what a user reads with the previous release's binary, for the time before the upgrade:
#      `query samples`, `query stats` by minute and by hour (by device too; the intervals anchored
#      at the range's end, so that none of them still grows), `query changes` of the heartbeat
#      series, `workout list`, `workout show` and `workout export` (FIT) of each workout;
#   4. dpkg -i of this checkout's package over the running service: postinst restarts it, systemd
#      never has to (NRestarts 0), the journal says the background migration started and
#      finished, `status` shows its steps until every one has finished, ingest goes on;
#   5. UPGRADE_AFTER_SECONDS later: every answer of step 3 the same with the new binary
#      (lib/upgrade-compare.py) but for the person schema 19 gave the readings it could attribute:
#      each one its strap's wearer, every reading of a workout its participant's; what the
#      repository received after the upgrade: no object stored before it sent again, the new heart
#      rates as quantity series;
#   6. the store's integrity check, the legacy tables gone, its schema the daemon's, a graceful stop.
# usage (guest): upgrade.sh REPO HEALTHGATE PREVIOUS_DEB DEB
set -uo pipefail
REPO=${1:?usage: upgrade.sh REPO HEALTHGATE PREVIOUS_DEB DEB}
PREVIOUS_DEB=${3:?usage: upgrade.sh REPO HEALTHGATE PREVIOUS_DEB DEB}
DEB=${4:?usage: upgrade.sh REPO HEALTHGATE PREVIOUS_DEB DEB}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/checks.sh"
CONNECTED=${UPGRADE_CONNECTED_STRAPS:-8}
BROADCASTING=${UPGRADE_BROADCASTING_STRAPS:-4}
STRAPS=$((CONNECTED + BROADCASTING))
CLASS_SECONDS=${UPGRADE_CLASS_SECONDS:-120}
AFTER_SECONDS=${UPGRADE_AFTER_SECONDS:-60}
PY=/usr/bin/python3
for deb in "$PREVIOUS_DEB" "$DEB"; do
  [[ -f $deb ]] || { echo "FAIL: no package at $deb"; exit 1; }
  echo "package: $deb (healthgate $(dpkg-deb -f "$deb" Version), $(dpkg-deb -f "$deb" Architecture))"
done
# built COMMIT: the commit a package was built from, as its changelog says (scripts/package).
built() { zcat /usr/share/doc/healthgate/changelog.gz | sed -n 's/.*from git commit \([0-9a-f]*\).*/\1/p'; }

source "$REPO/Tests/DeviceLab/lib/packaged-service.sh"
active() { [[ $(inside systemctl is-active healthgate.service) == active ]]; }

say "the previous release: dpkg -i $(basename "$PREVIOUS_DEB")"
inside env DEBIAN_FRONTEND=noninteractive dpkg -i "$PREVIOUS_DEB" > "$OUT/dpkg-previous.log" 2>&1 ||
  { cat "$OUT/dpkg-previous.log"; abort "dpkg -i of the previous release failed"; }
PREVIOUS_COMMIT=$(built)
pass "the previous release is installed: healthgate $(dpkg-query -W -f='${Version}' healthgate), built from $PREVIOUS_COMMIT"
poll 60 active && pass "postinst started it" || abort "the previous release's service did not start: $(inside systemctl is-active healthgate.service)"
STATE_DIRECTORY=/var/lib/$(unit StateDirectory)
CONFIG=/etc/$(unit ConfigurationDirectory)/config.json
DB=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["store"]["path"])' "$CONFIG")

say "the recording repository on 127.0.0.1 and the class in $CONFIG"
REPOSITORY_LOG=$OUT/repository.jsonl
"$PY" "$REPO/plugins/HTTPRepository/Fixtures/recording_server.py" --record "$REPOSITORY_LOG" > "$OUT/repository.port" 2> "$OUT/repository.err" &
REPOSITORY_PID=$!
poll 30 test -s "$OUT/repository.port" || abort "the recording repository did not start: $(cat "$OUT/repository.err")"
PORT=$(head -n 1 "$OUT/repository.port")
pass "the recording repository listens on 127.0.0.1:$PORT"
# The packaged configuration's store and socket, with the class's sources, participants and sinks.
"$PY" - "$CONFIG" "$PORT" "$CONNECTED" "$BROADCASTING" <<'PYTHON' || abort "cannot write the class into $CONFIG"
import json, sys
path, port, connected, broadcasting = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
config = json.load(open(path))
# As `healthgate demo --class` names its straps: a connected monitor by its address, a
# broadcasting strap by its Polar device id.
straps = ["02:00:00:00:00:%02X" % (n + 1) for n in range(connected)] + ["%08X" % n for n in range(broadcasting)]
config["profile"] = {"maximumHeartRate": 190}
config["participants"] = [{"name": "Member %d" % (n + 1), "devices": [strap]} for n, strap in enumerate(straps)]
config["sources"] = [
    {"kind": "ble-heart-rate", "name": "connected", "config": {
        "transport": "simulated", "simulation": {"heartRateMonitors": connected, "notificationsPerSecond": 1}}},
    {"kind": "ble-polar-broadcast", "name": "broadcasting", "config": {
        "transport": "simulated", "simulation": {"devices": broadcasting, "advertisementsPerSecond": 1}}},
]
config["sinks"] = [
    {"kind": "sqlite", "name": "store"},
    {"kind": "http-repository", "name": "repository", "config": {
        "url": "http://127.0.0.1:%s/samples" % port, "format": "native", "batchSize": 500, "batchIntervalSeconds": 1}},
]
open(path, "w").write(json.dumps(config, indent=2) + "\n")
PYTHON
cp "$CONFIG" "$OUT/config.json"
inside /usr/bin/healthgate config check "$CONFIG" > /dev/null && pass "the previous release's config check accepts it" ||
  abort "the previous release refuses the class's configuration"
inside systemctl restart healthgate.service || abort "systemctl restart healthgate failed"
# sql QUERY: the store read by the sqlite3 shell as the service user.
sql() { as_service sqlite3 -cmd '.timeout 5000' "$DB" "$1" 2> /dev/null; }
every_strap() { [[ $(sql "SELECT count(DISTINCT device) FROM samples_readable WHERE type = 'heartRate'") -ge $STRAPS ]]; }
poll 120 every_strap && pass "every strap's heart rates arrive: $STRAPS straps" ||
  { fail "heart rates of $(sql "SELECT count(DISTINCT device) FROM samples_readable WHERE type = 'heartRate'") of $STRAPS straps"; service_report; }

say "the class: workout start --all, $CLASS_SECONDS s, workout end --all"
CLASS_START=$(date -u +%Y-%m-%dT%H:%M:%SZ)
inside /usr/bin/healthgate workout start --all --activity highIntensityIntervalTraining > "$OUT/workout-start.txt" 2>&1 &&
  pass "workout start --all: $(grep -c . "$OUT/workout-start.txt") lines" || { fail "workout start --all"; cat "$OUT/workout-start.txt"; }
sleep "$CLASS_SECONDS"
inside /usr/bin/healthgate workout end --all > "$OUT/workout-end.txt" 2>&1 && pass "workout end --all" ||
  { fail "workout end --all"; cat "$OUT/workout-end.txt"; }
workouts_stored() { [[ $(sql "SELECT count(*) FROM workouts") -ge $STRAPS ]]; }
poll 60 workouts_stored && pass "the store holds the class's $(sql "SELECT count(*) FROM workouts") workouts," \
  "linked to $(sql "SELECT count(*) FROM workout_samples") samples and series" || fail "the class's workouts are not stored"
# The straps go on after the class: the time before the upgrade ends a little later.
sleep 20

say "what the previous release answers for the time before the upgrade"
# The range ends on a whole second a few seconds back, so every reading in it is committed.
UNTIL=$(date -u -d @$(($(date +%s) - 5)) +%Y-%m-%dT%H:%M:%SZ)
SINCE=$(sql "SELECT strftime('%Y-%m-%dT%H:%M:%SZ', min(start_us) / 1000000, 'unixepoch') FROM samples")
echo "the range: $SINCE to $UNTIL; the class began at $CLASS_START"
# answers DIRECTORY: every answer of the installed binary for the range, into DIRECTORY.
answers() {
  local dir=$1 range=(--since "$SINCE" --until "$UNTIL") id
  mkdir -p "$dir"
  as_service /usr/bin/healthgate query samples --type heartRate "${range[@]}" --format json > "$dir/samples.json" 2>&1 || return 1
  for interval in minute hour; do
    # Anchored at the range's end: an interval (a calendar hour) that held UNTIL would take the
    # readings stored after it as well, which the previous release was still storing.
    as_service /usr/bin/healthgate query stats --type heartRate --interval "$interval" --anchor "$UNTIL" --time-zone UTC \
      --format json "${range[@]}" > "$dir/stats-$interval.json" 2>&1 || return 1
    as_service /usr/bin/healthgate query stats --type heartRate --interval "$interval" --anchor "$UNTIL" --time-zone UTC \
      --by-device --format json "${range[@]}" > "$dir/stats-$interval-by-device.json" 2>&1 || return 1
  done
  as_service /usr/bin/healthgate query changes --type heartbeatSeries --format json > "$dir/heartbeat-series.json" 2>&1 || return 1
  as_service /usr/bin/healthgate workout list --format json > "$dir/workouts.json" 2>&1 || return 1
  for id in $("$PY" -c 'import json, sys; print(" ".join(w["id"] for w in json.load(open(sys.argv[1]))))' "$dir/workouts.json"); do
    as_service /usr/bin/healthgate workout show "$id" --format json > "$dir/workout-$id.json" 2>&1 || return 1
    # As a file the service user may write: its home is the state directory.
    as_service /usr/bin/healthgate workout export "$id" --format fit --output "$STATE_DIRECTORY/export.fit" > "$dir/export-$id.txt" 2>&1 || return 1
    cp "$STATE_DIRECTORY/export.fit" "$dir/workout-$id.fit"
  done
}
began=$SECONDS
answers "$OUT/before" && pass "the previous release answered every query ($((SECONDS - began)) s):" \
  "$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$OUT/before/samples.json") heart rates," \
  "$(ls "$OUT/before"/workout-*.fit | wc -l) workouts exported" || { fail "a query of the previous release failed"; tail -n 5 "$OUT"/before/*; }

say "this release over the running service: dpkg -i $(basename "$DEB")"
OLD_PID=$(unit MainPID)
OLD_INVOCATION=$(unit InvocationID)
began=$SECONDS
inside env DEBIAN_FRONTEND=noninteractive dpkg -i "$DEB" > "$OUT/dpkg-upgrade.log" 2>&1 && pass "dpkg -i succeeds ($((SECONDS - began)) s)" ||
  { cat "$OUT/dpkg-upgrade.log"; abort "dpkg -i of this release over the previous one failed"; }
cat "$OUT/dpkg-upgrade.log"
[[ $(built) != "$PREVIOUS_COMMIT" ]] && pass "this release is installed, built from $(built)" ||
  fail "the changelog still names the previous release's commit $PREVIOUS_COMMIT"
restarted() { active && [[ $(unit MainPID) != "$OLD_PID" && $(unit MainPID) != 0 ]]; }
poll 60 restarted && pass "postinst restarted the service by itself (pid $OLD_PID, now $(unit MainPID))" ||
  { fail "the service was not restarted by the upgrade"; service_report; }
[[ $(unit NRestarts) == 0 ]] && pass "systemd never had to restart it (NRestarts 0)" || fail "systemd restarted it $(unit NRestarts) times"
NEW_INVOCATION=$(unit InvocationID)
# journal INVOCATION FILE: one run of the service's journal, each line with its time (short-unix).
journal() { inside journalctl "_SYSTEMD_INVOCATION_ID=$1" --no-pager -o short-unix > "$2"; }
journal "$OLD_INVOCATION" "$OUT/journal-previous.txt"
# Its last line, logged once its sinks drained: what the repository received before it is the
# previous release's.
STOPPED=$(grep -m1 ' stopped (records' "$OUT/journal-previous.txt")
[[ -n $STOPPED ]] && pass "the previous release stopped gracefully: ${STOPPED#* }" ||
  fail "the previous release's journal has no graceful stop (journal-previous.txt)"
migration_logged() { journal "$NEW_INVOCATION" "$OUT/journal.txt" && grep -q 'store migration: finished' "$OUT/journal.txt"; }
# status every second until every step has finished: what an operator sees meanwhile (each
# answer whole in the file; its migration line checked in that answer alone).
: > "$OUT/status-during-migration.txt"
finished() {
  local answer
  answer=$(inside /usr/bin/healthgate status 2>&1)
  printf '%s\n' "$answer" >> "$OUT/status-during-migration.txt"
  grep -q '^store migration: .*, finished$' <<< "$answer"
}
poll 120 finished && pass "status: $(grep '^store migration:' "$OUT/status-during-migration.txt" | tail -n 1)" ||
  { fail "status does not show the migration finished"; tail -n 20 "$OUT/status-during-migration.txt"; }
echo "status's migration lines, in order: $(grep '^store migration:' "$OUT/status-during-migration.txt" | uniq -c | sed 's/^ *//' | paste -sd';')"
# The schema this release's daemon migrated the store to, as it says (StatusReport.storeSchema).
SCHEMA=$(inside /usr/bin/healthgate status --format json 2> /dev/null | "$PY" -c 'import json, sys; print(json.load(sys.stdin).get("storeSchema", ""))')
echo "this release's daemon: store schema ${SCHEMA:-unknown}"
poll 60 migration_logged && pass "the journal: $(grep -o 'store migration: started.*' "$OUT/journal.txt")" &&
  pass "the journal: $(grep -o 'store migration: finished.*' "$OUT/journal.txt")" || { fail "the journal does not say the migration finished"; tail -n 20 "$OUT/journal.txt"; }
grep -o 'store migration: [0-9]* % done.*' "$OUT/journal.txt"
series_readings() { sql "SELECT ifnull(sum(count), 0) FROM quantity_series"; }
grows() { [[ $(series_readings) -gt $1 ]]; }
count=$(series_readings)
poll 30 grows "$count" && pass "ingest goes on: heart rates arrive as quantity series ($count readings, then $(series_readings))" ||
  { fail "no heart rate stored after the upgrade"; service_report; }

say "$AFTER_SECONDS s later: what this release answers for the time before the upgrade"
sleep "$AFTER_SECONDS"
began=$SECONDS
answers "$OUT/after" && pass "this release answered every query ($((SECONDS - began)) s)" || { fail "a query of this release failed"; tail -n 5 "$OUT"/after/*; }
# Split at the time of the previous release's stop line (without one, the checker fails).
"$PY" "$REPO/Tests/DeviceLab/lib/upgrade-compare.py" "$OUT/before" "$OUT/after" "$REPOSITORY_LOG" "${STOPPED%% *}" "$OUT/config.json" \
  > "$OUT/verdicts.txt" 2>&1
verdicts "$OUT/verdicts.txt"

say "the store after the migration; systemctl stop"
inside systemctl stop healthgate.service && [[ $(unit Result) == success ]] && pass "systemctl stop: a graceful stop" ||
  fail "systemctl stop: $(unit Result)"
[[ $(sql 'PRAGMA integrity_check') == ok ]] && pass "PRAGMA integrity_check: ok" || fail "PRAGMA integrity_check: $(sql 'PRAGMA integrity_check')"
legacy=$(sql "SELECT group_concat(name, ' ') FROM sqlite_schema WHERE name IN ('heartbeats', 'workout_samples')")
[[ -z $legacy ]] && pass "the legacy tables heartbeats and workout_samples are gone" || fail "still in the store: $legacy"
[[ -n $SCHEMA && $(sql 'PRAGMA user_version') == "$SCHEMA" ]] && pass "the store's schema is $SCHEMA, the one this release's daemon said" ||
  fail "the store's schema is $(sql 'PRAGMA user_version'), this release's daemon said '$SCHEMA' (status --format json: storeSchema)"
sql "SELECT step, total, done, (finished_us - started_us) / 1e6 FROM store_migrations" | sed 's/^/store_migrations: /'
copy=$(mktemp -d /dev/shm/store-copy.XXXXXX)
chown healthgate:healthgate "$copy"
as_service sqlite3 -cmd '.timeout 5000' "$DB" ".backup '$copy/samples.sqlite'" && cp "$copy/samples.sqlite" "$OUT/samples.sqlite"
rm -rf "$copy"
inside journalctl -u healthgate.service --no-pager -o short-monotonic > "$OUT/healthgate.journal" 2>&1
kill "$REPOSITORY_PID" 2> /dev/null
finish
