#!/bin/bash
# power-cut.sh REPO DEB - runs INSIDE the lab VM, once per boot (see run-power-cut.sh,
# which pulls the plug: qemu killed with SIGKILL at a random instant of the window this script
# opens). Issue 58.
#
# The machine keeps two disks across its boots: "system", an ext4 holding the upper layers of
# /etc, /usr and /var (what dpkg -i installed, the enablement, the journal), and "store", an ext4
# mounted at /var/lib/healthgate, the unit's StateDirectory, where the store lives. systemd boots
# to multi-user.target (lib/systemd.sh; lean_systemd masks what the guest does not use), so the packaged
# service starts by itself, as on a gateway switched on again. Each boot:
#   1. the disks: the first boot makes both filesystems; every later one checks them as a boot
#      would (`e2fsck -p`, the journal replayed) and then completely (`e2fsck -fn`: nothing left to
#      repair), and mounts them;
#   2. the store as the gateway will find it (its database and -wal) copied to the shared
#      directory before anything opens it: the host checks it (run-power-cut.sh, lib/store_check.py:
#      integrity, every record the receivers acknowledged, every workout end and participant
#      assign answered);
#   3. systemd boots; the first boot installs the package (dpkg -i) and configures simulated
#      straps, foot pods, a cuff and a glucose meter, the store, an HTTP repository and an MQTT
#      broker on the host (lib/power-cut.sh); later boots check that systemd started the service
#      by itself;
#   4. the followers resume: both remote sinks' cursors reach the anchor the store had at boot;
#   5. the boot's action (settings.env, LAB_ACTION): "steady" opens the window at once;
#      "burst" starts every participant's workout, then opens the window and sends the burst of
#      six `workout end` and two `participant assign`; "checkpoint" opens a window that the host
#      closes with the plug at the next WAL checkpoint (a write to the database file, watched with
#      inotify); "final" stops the service gracefully and copies the store for the host's last
#      check (every object of the store at both receivers).
# usage (guest): power-cut.sh REPO DEB
set -uo pipefail
REPO=${1:?usage: power-cut.sh REPO DEB}
DEB=${2:?usage: power-cut.sh REPO DEB}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/checks.sh"
source "$REPO/Tests/DeviceLab/lib/systemd.sh"
source "$REPO/Tests/DeviceLab/lib/power-cut.sh"

lab_devices store system || exit 1
mount_shared || exit 1
BOOT_DIR=$SHARED/boot-$LAB_BOOT
mkdir -p "$BOOT_DIR"
STORE_DISK=$(disk store) SYSTEM_DISK=$(disk system)
SYSTEM_LAYER=/run/system-layer
echo "boot $LAB_BOOT, action $LAB_ACTION; the store's disk $STORE_DISK, the system's $SYSTEM_DISK; package $DEB"

say "boot $LAB_BOOT: the disks"
FIRST=0
if ! blkid -p "$STORE_DISK" > /dev/null 2>&1; then
  FIRST=1
  mkfs.ext4 -q -L store "$STORE_DISK" && mkfs.ext4 -q -L system "$SYSTEM_DISK" &&
    pass "first boot: ext4 made on $STORE_DISK (store) and $SYSTEM_DISK (system)" || { fail "mkfs.ext4 failed"; exit 1; }
else
  for device in "$STORE_DISK" "$SYSTEM_DISK"; do
    # e2fsck -p as systemd-fsck runs it at boot: 0 clean, 1 errors corrected, 2 and more failed.
    e2fsck -p "$device" > "$BOOT_DIR/fsck-p-${device##*/}.txt" 2>&1
    preen=$?
    e2fsck -fn "$device" > "$BOOT_DIR/fsck-fn-${device##*/}.txt" 2>&1
    full=$?
    ((preen == 0 && full == 0)) && pass "e2fsck $device after the cut: -p exit 0 ($(tail -n 1 "$BOOT_DIR/fsck-p-${device##*/}.txt")), -fn exit 0" ||
      { fail "e2fsck $device after the cut: -p exit $preen, -fn exit $full"; tail -n 5 "$BOOT_DIR"/fsck-*-"${device##*/}".txt; }
  done
fi
mkdir -p "$SYSTEM_LAYER"
mount "$SYSTEM_DISK" "$SYSTEM_LAYER" || { fail "cannot mount the system disk"; exit 1; }
for directory in etc usr var; do
  mkdir -p "$SYSTEM_LAYER/$directory/upper" "$SYSTEM_LAYER/$directory/work"
  mount -t overlay -o "lowerdir=/$directory,upperdir=$SYSTEM_LAYER/$directory/upper,workdir=$SYSTEM_LAYER/$directory/work" \
    "system-$directory" "/$directory" || { fail "cannot overlay /$directory"; exit 1; }
done
mkdir -p "$STORE_DIR"
mount "$STORE_DISK" "$STORE_DIR" && pass "the store's disk is mounted at $STORE_DIR, the system's layers over /etc, /usr, /var" ||
  { fail "cannot mount the store's disk"; exit 1; }

if ((!FIRST)); then
  say "the store as the gateway will find it, copied for the host's check"
  found=$(cd "$STORE_DIR" && ls samples.sqlite samples.sqlite-wal 2> /dev/null | paste -sd' ')
  copy=$(mktemp -d /dev/shm/store-copy.XXXXXX)
  for file in samples.sqlite samples.sqlite-wal; do
    [[ -f $STORE_DIR/$file ]] && cp "$STORE_DIR/$file" "$copy/$file" && cp "$copy/$file" "$BOOT_DIR/$file"
  done
  [[ -f $copy/samples.sqlite ]] && pass "copied: $found" || fail "no store in $STORE_DIR: $(ls -la "$STORE_DIR")"
  # The anchor the store had at boot, read from the copy (SQLite recovers its log there, on the
  # guest's tmpfs: a 9p share cannot hold a WAL database's shared memory).
  BOOT_ANCHOR=$(sqlite3 "$copy/samples.sqlite" 'SELECT latest FROM anchors' 2> /dev/null) || BOOT_ANCHOR=
  rm -rf "$copy"
fi

say "systemd boots to multi-user.target"
lean_systemd
start_systemd multi-user.target || { echo "failures: $((failures + 1))" > "$BOOT_DIR/failures"; exit 1; }
CONFIG=/etc/healthgate/config.json
active() { [[ $(unit ActiveState) == active ]]; }
if ((FIRST)); then
  say "dpkg -i"
  # As Debian's dpkg installs: each file synced before it is renamed into place. The guest runs
  # this machine's dpkg with its configuration, and a container's (Docker's apt speedup) says
  # force-unsafe-io: then a plug pulled within the guest's writeback delay of the install left
  # /usr/bin/healthgate cut short (8 of its 20 MB), and every later start died of SIGBUS.
  inside env DEBIAN_FRONTEND=noninteractive dpkg --no-force-unsafe-io -i "$DEB" > "$OUT/dpkg-install.log" 2>&1 &&
    pass "dpkg -i $(basename "$DEB")" || { fail "dpkg -i failed"; cat "$OUT/dpkg-install.log"; }
  write_gateway_config "$CONFIG" && inside /usr/bin/healthgate config check "$CONFIG" > /dev/null &&
    pass "the configuration: simulated straps, foot pods, a cuff and a glucose meter; the store; $LAB_REPOSITORY_URL; mqtt://$LAB_BROKER_HOST:$LAB_BROKER_PORT" ||
    fail "the test configuration is invalid"
  cp "$CONFIG" "$OUT/config.json"
  inside systemctl restart healthgate.service && poll 30 active && pass "systemctl restart healthgate: active" ||
    { fail "healthgate.service did not start"; service_report; }
else
  # Nothing here starts it: multi-user.target wants it, as postinst enabled it on the first boot.
  if poll 60 active; then
    pass "systemd started healthgate.service at boot by itself (MainPID $(unit MainPID), NRestarts $(unit NRestarts))"
  else
    fail "healthgate.service is not active 60 s after systemd booted"; service_report
  fi
fi
DB=$STORE_DIR/samples.sqlite
status_answers() { inside /usr/bin/healthgate status > "$BOOT_DIR/status.txt" 2>&1; }
poll 60 status_answers && pass "healthgate status answers" || { fail "healthgate status does not answer"; cat "$BOOT_DIR/status.txt"; }

say "the followers resume"
# cursors: "name anchor" per follower, read as the service user.
cursors() { as_service sqlite3 -cmd '.timeout 5000' "file:$DB?mode=ro" 'SELECT name, anchor FROM followers ORDER BY name' 2> /dev/null | tr '|\n' ' ,'; }
passed_boot_anchor() {
  local rows
  rows=$(as_service sqlite3 -cmd '.timeout 5000' "file:$DB?mode=ro" \
    "SELECT count(*) FROM followers WHERE anchor >= ${BOOT_ANCHOR:-1}" 2> /dev/null)
  [[ $rows == 2 ]]
}
began=$SECONDS
if poll 180 passed_boot_anchor; then
  pass "both followers' cursors passed the anchor the store had at boot (${BOOT_ANCHOR:-the first}) in $((SECONDS - began)) s: $(cursors)"
else
  fail "the followers did not pass the anchor ${BOOT_ANCHOR:-1} within 180 s: $(cursors)"
  service_report
fi
echo "$failures" > "$BOOT_DIR/failures"

say "boot $LAB_BOOT: $LAB_ACTION"
case $LAB_ACTION in
  steady) window steady ;;
  burst)
    class_start
    sleep 4
    window burst
    class_burst ;;
  checkpoint)
    watch_checkpoints
    poll 60 test -e "$SHARED/watching-$LAB_BOOT" || fail "the checkpoint watcher did not start"
    window checkpoint ;;
  final)
    inside systemctl stop healthgate.service && [[ $(unit Result) == success ]] &&
      pass "systemctl stop: a graceful stop" || { fail "the service's stop: $(unit Result)"; service_report; }
    for file in samples.sqlite samples.sqlite-wal; do
      [[ -f $STORE_DIR/$file ]] && cp "$STORE_DIR/$file" "$BOOT_DIR/final-$file"
    done
    inside journalctl --no-pager -o short-monotonic > "$OUT/journal.txt" 2>&1
    inside journalctl --list-boots --no-pager > "$OUT/boots.txt" 2>&1
    cp "$DB" "$OUT/samples.sqlite" 2> /dev/null
    stop_systemd
    echo "$failures" > "$BOOT_DIR/failures"
    echo "failures: $failures"
    exit $((failures > 0)) ;;
esac
# The plug is pulled during what follows; a boot that lives on to here was not cut.
sleep 600
fail "the host did not pull the plug within 600 s of the $LAB_ACTION window"
echo "$failures" > "$BOOT_DIR/failures"
exit 1
