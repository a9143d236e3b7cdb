# lib/bluetooth-scenario.sh - sourced by the BLE scenarios that run inside the lab VM
# (bluetooth-*.sh, clock-unsynchronized.sh, advertisements.sh, class.sh): lib/checks.sh, the Bluetooth stack with COUNT
# btvirt controllers and bluetoothd, adapters powered through D-Bus, a healthgate run and its stop.
# Expects REPO set by the scenario, and HG and OUT (scenario_arguments sets them).
source "$REPO/Tests/DeviceLab/lib/btvirt.sh"
PY=/usr/bin/python3          # Debian's python3 has dbus and gi; the pyenv one does not
PERIPHERALS=$REPO/Tests/DeviceLab/peripherals

source "$REPO/Tests/DeviceLab/lib/checks.sh"

# scenario_arguments DEFAULT REPO HEALTHGATE [SECONDS]: a scenario's arguments after REPO: HG, the
# healthgate binary; WAIT, SECONDS or else DEFAULT; and OUT, $LAB_OUT (default /tmp/out), made.
scenario_arguments() {
  local usage="usage: ${0##*/} REPO HEALTHGATE [SECONDS]"
  HG=${3:?$usage}
  WAIT=${4:-$1}
  OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
}

# power ADAPTER on|off: Adapter1.Powered through bluetoothd, as an administrator would.
power() {
  local value=false
  [[ $2 == on ]] && value=true
  gdbus call --system -d org.bluez -o /org/bluez/$1 -m org.freedesktop.DBus.Properties.Set \
    org.bluez.Adapter1 Powered "<$value>" > /dev/null
}

# start_system_bus: the kernel's Bluetooth modules and a system bus, with the strict policy when
# STRICT_BUS is set. Exits on failure.
start_system_bus() {
  say "kernel modules, system bus"
  bluetooth_modules || { echo "FAIL: modprobe"; exit 1; }
  mkdir -p /run/dbus
  [[ -n ${STRICT_BUS:-} ]] && strict_bus_policy
  dbus-daemon --system --fork --print-pid > /run/dbus/daemon.pid
  poll 10 test -S /run/dbus/system_bus_socket || { echo "FAIL: no system bus"; exit 1; }
}

# start_bluetooth COUNT: the kernel modules, a system bus, COUNT btvirt controllers (hci0…),
# an HCI trace, bluetoothd, and every adapter powered on. Sets BLUETOOTHD. Exits on failure.
start_bluetooth() {
  local count=$1 hci
  [[ -x $HG ]] || { echo "FAIL: $HG missing (build on the host first)"; exit 1; }
  start_system_bus
  say "btvirt: $count controllers"
  start_btvirt "$count" "$OUT/btvirt.log" || { echo "FAIL: btvirt controllers did not come up"; exit 1; }
  btmon -w "$OUT/hci.btsnoop" > /dev/null 2>&1 &
  say "bluetoothd"
  bluetoothd -n -d > "$OUT/bluetoothd.log" 2>&1 &
  BLUETOOTHD=$!
  adapters_listed() { [[ $(bluetoothctl list 2>/dev/null | grep -c '^Controller') -ge $count ]]; }
  poll 30 adapters_listed || { echo "FAIL: bluetoothd does not show $count adapters"; exit 1; }
  # An adapter bluetoothd is still initializing answers Busy: asked again until it takes it.
  for ((hci = 0; hci < count; hci++)); do
    poll 15 power "hci$hci" on 2> /dev/null || fail "power on hci$hci"
  done
}

# start_bumble LOG SCRIPT ARGS...: the kernel modules, a system bus, a Bumble peripheral (SCRIPT,
# run by the checkout's Bumble with ARGS, its output in LOG) whose gateway-side controller the
# kernel sees as hci0, an HCI trace, bluetoothd, and hci0 powered on. Sets BUMBLE_PID and
# BLUETOOTHD. Exits on failure. The peripheral prints "advertising as ..." once it advertises.
# bluetoothd gets the flags in BLUETOOTHD_START_FLAGS (e.g. -E), if any, and logs (-d) to
# BLUETOOTHD_LOG (default $OUT/bluetoothd.log, on the host's 9p share).
BUMBLE=$REPO/.build/lab-bumble/bin/python
start_bumble() {
  local log=$1
  shift
  [[ -x $HG ]] || { echo "FAIL: $HG missing (build on the host first)"; exit 1; }
  [[ -x $BUMBLE ]] || { echo "FAIL: no Bumble at $BUMBLE (vm/build-vm.sh installs it)"; exit 1; }
  start_system_bus
  say "Bumble: the gateway's controller over /dev/vhci and $(basename "$1") behind it"
  "$BUMBLE" -u "$@" > "$log" 2>&1 &
  BUMBLE_PID=$!
  # Python and Bumble load over 9p under TCG: tens of seconds when the host is busy.
  poll 120 controller_up hci0 || { echo "FAIL: Bumble's controller did not come up as hci0"; cat "$log"; exit 1; }
  btmon -w "$OUT/hci.btsnoop" > /dev/null 2>&1 &
  say "bluetoothd ${BLUETOOTHD_START_FLAGS:-}"
  # shellcheck disable=SC2086 # the flags are words
  bluetoothd -n -d ${BLUETOOTHD_START_FLAGS:-} > "${BLUETOOTHD_LOG:-$OUT/bluetoothd.log}" 2>&1 &
  BLUETOOTHD=$!
  adapter_listed() { bluetoothctl list 2> /dev/null | grep -q '^Controller'; }
  poll 30 adapter_listed || { echo "FAIL: bluetoothd does not show Bumble's controller"; exit 1; }
  poll 15 power hci0 on 2> /dev/null || fail "power on hci0"
  poll 30 grep -q '^advertising as' "$log" && pass "the Bumble peripheral advertises ($(grep '^advertising as' "$log"))" ||
    { fail "the Bumble peripheral did not start"; cat "$log"; }
}

# kernel_clock: "synchronized" or "unsynchronized", as adjtimex(2) says (STA_UNSYNC, TIME_ERROR),
# read through python's ctypes (struct timex: status is the int at byte 40 on x86-64).
kernel_clock() {
  "$PY" -c 'import ctypes, struct
b = ctypes.create_string_buffer(256)
r = ctypes.CDLL(None).adjtimex(b)
print("unsynchronized" if r == 5 or struct.unpack_from("i", b, 40)[0] & 0x40 else "synchronized")'
}

# clock_synchronize [EPOCH]: what a time daemon (systemd-timesyncd) does when it synchronises:
# steps the wall clock to EPOCH when given, then tells the kernel the clock is synchronised
# (adjtimex: ADJ_STATUS clearing STA_UNSYNC, ADJ_MAXERROR and ADJ_ESTERROR small), and succeeds
# only when the kernel then says so. The lab VM's
# clock comes from qemu's RTC, the host's UTC: right, but no daemon ever says so.
clock_synchronize() {
  [[ -n ${1:-} ]] && date -u -s "@$1" > /dev/null
  "$PY" -c 'import ctypes, struct
b = ctypes.create_string_buffer(256)
struct.pack_into("I", b, 0, 0x0010 | 0x0004 | 0x0008)  # ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR
struct.pack_into("q", b, 24, 20000)                     # maxerror: 20 ms
struct.pack_into("q", b, 32, 1000)                      # esterror: 1 ms
struct.pack_into("i", b, 40, 0)                         # status: STA_UNSYNC clear
r = ctypes.CDLL(None, use_errno=True).adjtimex(b)
raise SystemExit(0 if r != -1 else "adjtimex: errno %d" % ctypes.get_errno())' && [[ $(kernel_clock) == synchronized ]]
}

# strict_bus_policy: the system bus of a distribution without Debian's grant of org.bluez to
# every local user: BlueZ's bluetooth.conf keeps only its root policy, and healthgate's shipped
# policy (udev-rules/dbus-healthgate.conf) is installed. Creates the service user `healthgate`
# (not in the bluetooth group), so only that policy's user rules let it reach bluetoothd.
strict_bus_policy() {
  bluez_policy_strict || { echo "FAIL: cannot take BlueZ's grants to every user out of its policy"; exit 1; }
  install -m 0644 "$REPO/udev-rules/dbus-healthgate.conf" /etc/dbus-1/system.d/healthgate.conf
  getent group healthgate > /dev/null || groupadd --system healthgate
  id healthgate > /dev/null 2>&1 || useradd --system --gid healthgate --no-create-home --shell /usr/sbin/nologin healthgate
  chown healthgate:healthgate "$STORE"
  chmod a+rx "$OUT" "$(dirname "$OUT")"
  SERVICE_USER=(setpriv --reuid=healthgate --regid=healthgate --init-groups)
  echo "system bus: BlueZ's policy without its default grant, healthgate's policy installed"
}

# as_service COMMAND...: COMMAND as the service user when the scenario set STRICT_BUS, else as
# root. SERVICE_USER is the prefix that does it, for a command started in the background, whose
# PID must be the command's own (a backgrounded function would be a subshell).
SERVICE_USER=()
as_service() { "${SERVICE_USER[@]}" "$@"; }

# address ADAPTER: the controller's Bluetooth address.
address() { hciconfig "$1" | awk '/BD Address/ {print $3}'; }

# start_gateway CONFIG: healthgate run with CONFIG, private XDG directories; sets GATEWAY_PID and
# GATEWAY_STATE (those directories: `gateway_cli` reaches the daemon's control socket there).
start_gateway() {
  local state
  state=$(mktemp -d)
  GATEWAY_STATE=$state
  [[ -n ${STRICT_BUS:-} ]] && chown healthgate:healthgate "$state" && chmod a+r "$1"
  XDG_STATE_HOME=$state XDG_DATA_HOME=$state XDG_RUNTIME_DIR=$state \
    "${SERVICE_USER[@]}" "$HG" run --config "$1" > "$OUT/healthgate.log" 2>&1 &
  GATEWAY_PID=$!
}

# gateway_cli ARGUMENT...: the healthgate CLI (workout, participant) talking to the gateway that
# start_gateway started.
gateway_cli() { XDG_STATE_HOME=$GATEWAY_STATE XDG_DATA_HOME=$GATEWAY_STATE XDG_RUNTIME_DIR=$GATEWAY_STATE "${SERVICE_USER[@]}" "$HG" "$@"; }

# oldest_stored_pressure STATION_LOG CLOCK_ERROR TOLERANCE: whether the oldest stored blood
# pressure reading is the first of the two lab-health.py keeps, stored at the time the station
# printed it took it ("stored reading taken at EPOCH", by its clock) less CLOCK_ERROR seconds,
# within TOLERANCE seconds. Compared with that time, not with now: on a loaded host the station
# starts minutes before the check. Sets TAKEN and OLDEST (seconds since the epoch) for messages.
oldest_stored_pressure() {
  TAKEN=$(grep -o '^stored reading taken at [0-9]*' "$1" | awk -v error="$2" '{print $5 - error}' | sort -n | head -1)
  OLDEST=$(query "SELECT min(start_us) / 1000000 FROM correlations WHERE type = 'bloodPressure'")
  [[ -n $TAKEN && -n $OLDEST ]] && ((OLDEST - TAKEN <= $3 && TAKEN - OLDEST <= $3))
}

# A store on the guest's own filesystem (WAL needs an mmap-able -shm file); copied to $OUT at the end.
STORE=$(mktemp -d /tmp/healthgate-store.XXXXXX)
DB=$STORE/healthgate.sqlite
# Read as the gateway's user, and only once the gateway made the file: sqlite3 run as root would
# create the file, or its -wal and -shm, owned by root, which the service user cannot write.
# A stream's readings (heart rate, power, …) are in quantity series: lib/store_readings.py reads
# each quantity as a row of samples and samples_readable.
query() {
  [[ -f $DB ]] || { echo 0; return; }
  as_service /usr/bin/python3 "$REPO/Tests/DeviceLab/lib/store_readings.py" "$DB" "$1" 2>/dev/null || echo 0
}

# finish: bluetoothd alive, healthgate stops cleanly on SIGTERM, the store copied; exits with
# the scenario's status.
finish() {
  kill -0 "$BLUETOOTHD" 2> /dev/null && pass "bluetoothd still runs" || fail "bluetoothd died (see bluetoothd.log)"
  say "graceful stop"
  kill -TERM "$GATEWAY_PID"
  wait "$GATEWAY_PID"
  local status=$?
  [[ $status -eq 0 ]] && pass "healthgate run exits 0 on SIGTERM" || fail "healthgate run exited $status"
  tail -n 40 "$OUT/healthgate.log"
  sqlite3 "$DB" ".backup '$OUT/healthgate.sqlite'" || fail "cannot copy the store to $OUT"
  echo "failures: $failures"
  exit $((failures > 0))
}
