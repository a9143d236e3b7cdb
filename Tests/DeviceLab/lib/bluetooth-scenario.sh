# lib/bluetooth-scenario.sh - sourced by the BLE scenarios that run inside the lab VM
# (bluetooth-multi.sh, bluetooth-health.sh): checks and polling, the Bluetooth stack with COUNT
# btvirt controllers and bluetoothd, adapters powered through D-Bus, a healthgate run and its stop.
# Expects REPO, HG and OUT set by the scenario.
source "$REPO/Tests/DeviceLab/lib/btvirt.sh"
PY=/usr/bin/python3          # Debian's python3 has dbus and gi; the pyenv one does not
PERIPHERALS=$REPO/Tests/DeviceLab/peripherals
failures=0

say() { printf '\n--- [%6.1fs] %s\n' "$(cut -d' ' -f1 /proc/uptime)" "$*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# poll SECONDS COMMAND...: re-run COMMAND every 0.25 s until it succeeds or time runs out.
poll() { local limit=$((SECONDS + $1)); shift
  until "$@"; do ((SECONDS >= limit)) && return 1; sleep 0.25; done; }

# power ADAPTER on|off: Adapter1.Powered through bluetoothd, as an administrator would.
power() {
  local value=false
  [[ $2 == on ]] && value=true
  gdbus call --system -d org.bluez -o /org/bluez/$1 -m org.freedesktop.DBus.Properties.Set \
    org.bluez.Adapter1 Powered "<$value>" > /dev/null
}

# start_bluetooth COUNT: the kernel modules, a system bus, COUNT btvirt controllers (hci0…),
# an HCI trace, bluetoothd, and every adapter powered on. Sets BLUETOOTHD. Exits on failure.
start_bluetooth() {
  local count=$1 hci
  [[ -x $HG ]] || { echo "FAIL: $HG missing (build on the host first)"; exit 1; }
  say "kernel modules, system bus"
  bluetooth_modules || { echo "FAIL: modprobe"; exit 1; }
  mkdir -p /run/dbus
  dbus-daemon --system --fork --print-pid > /run/dbus/daemon.pid
  poll 10 test -S /run/dbus/system_bus_socket || { echo "FAIL: no system bus"; exit 1; }
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

# address ADAPTER: the controller's Bluetooth address.
address() { hciconfig "$1" | awk '/BD Address/ {print $3}'; }

# start_gateway CONFIG: healthgate run with CONFIG, private XDG directories; sets GATEWAY_PID.
start_gateway() {
  local state
  state=$(mktemp -d)
  XDG_STATE_HOME=$state XDG_DATA_HOME=$state XDG_RUNTIME_DIR=$state \
    "$HG" run --config "$1" > "$OUT/healthgate.log" 2>&1 &
  GATEWAY_PID=$!
}

# A store on the guest's own filesystem (WAL needs an mmap-able -shm file); copied to $OUT at the end.
STORE=$(mktemp -d /tmp/healthgate-store.XXXXXX)
DB=$STORE/healthgate.sqlite
query() { sqlite3 -cmd '.timeout 5000' "$DB" "$1" 2>/dev/null || echo 0; }

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
