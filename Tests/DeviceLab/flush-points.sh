#!/bin/bash
# flush-points.sh REPO DEB - runs INSIDE the lab VM (see run-flush-points.sh): one run of the
# packaged gateway whose every flush point run-flush-points.sh then replays and checks (issue 58).
#
# The store's disk ("store") is logged by dm-log-writes onto a second disk ("log") from the moment
# it is new: every write in the order it reached the disk, every FLUSH and FUA, and marks. The
# filesystem is made through the log (mark "formatted"); the packaged service (dpkg -i, systemd)
# runs with its store there and the same simulated devices and receivers as power-cut.sh
# (lib/power-cut.sh) for FLUSH_RUN_SECONDS (default 20): a class starts, and a burst of `workout
# end` and `participant assign` comes in the middle. Every FLUSH_MARK_SECONDS (0.2) a mark ties
# the log to what had been acknowledged (lib/log-marks.py): the sizes of the receivers' logs and of
# the answered commands' log are read first, then the mark is made, and the mark's name with those
# sizes goes to $SHARED/marks.jsonl. So any state of the disk after a mark must hold everything
# those sizes cover. The log ends with the mark "end"; the service is then killed and the device
# removed.
# usage (guest): flush-points.sh REPO DEB
set -uo pipefail
REPO=${1:?usage: flush-points.sh REPO DEB}
DEB=${2:?usage: flush-points.sh REPO DEB}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/checks.sh"
source "$REPO/Tests/DeviceLab/lib/systemd.sh"
source "$REPO/Tests/DeviceLab/lib/power-cut.sh"
export DM_DISABLE_UDEV=1   # dmsetup makes its /dev/mapper nodes itself: no udev in the guest here

lab_devices store log || exit 1
mount_shared || exit 1
STORE_DISK=$(disk store) LOG_DISK=$(disk log)
SIZE=$(blockdev --getsize64 "$STORE_DISK")
echo "the store's disk $STORE_DISK ($SIZE bytes), logged onto $LOG_DISK; package $DEB;" \
  "a run of ${FLUSH_RUN_SECONDS}s, a mark every ${FLUSH_MARK_SECONDS}s"
: > "$SHARED/marks.jsonl"

say "dm-log-writes: the store's disk logged from new"
modprobe dm-log-writes || { fail "modprobe dm-log-writes"; exit 1; }
dmsetup create storelog --table "0 $(blockdev --getsz "$STORE_DISK") log-writes $STORE_DISK $LOG_DISK" &&
  pass "dmsetup create storelog: log-writes $STORE_DISK $LOG_DISK" || { fail "dmsetup create storelog"; exit 1; }
# mark NAME: a dm-log-writes mark, described in marks.jsonl with the sizes read before it.
mark() {
  local sizes
  sizes=($(stat -c %s "$SHARED/http.jsonl" "$SHARED/mqtt.jsonl" "$SHARED/commands.jsonl"))
  dmsetup message storelog 0 mark "$1" &&
    printf '{"mark": "%s", "http": %d, "mqtt": %d, "commands": %d}\n' "$1" "${sizes[@]}" >> "$SHARED/marks.jsonl"
}
# The inode tables and the journal written now, not by ext4's lazy initialisation during the run.
mkfs.ext4 -q -L store -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/storelog &&
  mkdir -p "$STORE_DIR" && mount /dev/mapper/storelog "$STORE_DIR" && mark formatted &&
  pass "ext4 made and mounted at $STORE_DIR through the log (mark: formatted)" || { fail "mkfs or mount through the log"; exit 1; }

say "the packaged service, its store on the logged disk"
lean_systemd
start_systemd basic.target || exit 1
CONFIG=/etc/healthgate/config.json
say "dpkg -i"
inside env DEBIAN_FRONTEND=noninteractive dpkg -i "$DEB" > "$OUT/dpkg-install.log" 2>&1 &&
  pass "dpkg -i $(basename "$DEB")" || { fail "dpkg -i failed"; cat "$OUT/dpkg-install.log"; }
write_gateway_config "$CONFIG" && cp "$CONFIG" "$OUT/config.json" || fail "cannot write $CONFIG"
active() { [[ $(unit ActiveState) == active ]]; }
inside systemctl restart healthgate.service && poll 30 active && pass "healthgate.service runs the test configuration" ||
  { fail "healthgate.service did not start"; service_report; }
DB=$STORE_DIR/samples.sqlite
acknowledged() { [[ $(stat -c %s "$SHARED/http.jsonl") -gt 0 && $(grep -c '"lab/powercut' "$SHARED/mqtt.jsonl") -gt 0 ]]; }
poll 120 acknowledged && pass "both receivers acknowledge records" || { fail "no acknowledgements within 120 s"; service_report; }

say "the run: ${FLUSH_RUN_SECONDS}s, a mark every ${FLUSH_MARK_SECONDS}s"
LAB_BOOT=1
"$PY" "$REPO/Tests/DeviceLab/lib/log-marks.py" storelog "$SHARED/marks.jsonl" "$FLUSH_MARK_SECONDS" /run/flush-points.stop \
  "$SHARED/http.jsonl" "$SHARED/mqtt.jsonl" "$SHARED/commands.jsonl" > "$OUT/log-marks.txt" 2>&1 &
MARKER=$!
began=$SECONDS
class_start
sleep $((FLUSH_RUN_SECONDS / 3))
burst=$SECONDS
class_burst
echo "the burst of six workout ends and two participant assigns took $((SECONDS - burst)) s"
while ((SECONDS - began < FLUSH_RUN_SECONDS)); do sleep 1; done
touch /run/flush-points.stop
wait "$MARKER" || { fail "lib/log-marks.py failed"; cat "$OUT/log-marks.txt"; }
mark end
pass "$(grep -c '"mark": "a' "$SHARED/marks.jsonl") marks in $((SECONDS - began)) s;" \
  "$(grep -c '"answered": true' "$SHARED/commands.jsonl") commands answered"

say "the log closed"
# What happens after the mark "end" is not checked: the service is killed and the disk let go.
inside systemctl kill --signal=KILL healthgate.service
stop_systemd
umount "$STORE_DIR" || fail "umount $STORE_DIR"
dmsetup remove storelog && pass "dmsetup remove storelog" || fail "dmsetup remove storelog"

echo "failures: $failures"
exit $((failures > 0))
