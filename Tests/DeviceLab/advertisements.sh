#!/bin/bash
# advertisements.sh REPO HEALTHGATE [WINDOW [FILTER]] - runs INSIDE the lab VM (see run-advertisements.sh).
#
# Devices that only advertise (issue 47), on Google's Bumble (peripherals/bumble-advertisers.py):
# three Polar-like straps whose manufacturer data (heart rate, frame counter) changes every second
# (two legacy non-connectable, one of them not discoverable (flags 0x04); one connectable), a Mi Scale 2
# (0x181D) and a Mi Body Composition Scale 2 (0x181B) weighing every 16 s. The gateway's controller
# applies a duplicate filter as a real controller does when the host asks for one
# (FILTER: address, the default, as many controllers do; data; none).
# Per receiving path, WINDOW seconds each (default 20), each on a fresh bluetoothd, the changes
# each advertiser advertised are counted against the changes bluetoothd reported over D-Bus
# (peripherals/adv-reader.py, counted by peripherals/count-advertisements.py):
#   1. bluetoothd as Debian ships it (no -E; the Advertisement Monitor manager is not offered):
#      discovery without a filter, with {Transport le, DuplicateData}, and with an RSSI as well;
#   2. bluetoothd -E (experimental): discovery with an RSSI filter, an Advertisement Monitor alone
#      (passive scanning), a monitor and then discovery;
#   3. as the service user on a system bus with only healthgate's shipped policy
#      (udev-rules/dbus-healthgate.conf): discovery, and a monitor (refused while the policy does
#      not grant RegisterMonitor: a NOTE, not a failure);
#   4. healthgate run, as the service user with the shipped policy, on a fresh bluetoothd -E, with
#      the advertisement sources (which then take the Advertisement Monitor path): from the moment
#      the gateway's monitors were active (its log) to SIGTERM, stored samples counted against
#      advertised changes per strap, and stabilised weighings against stored bodyMass samples
#      (peripherals/count-stored.py). The unit's systemd sandbox is not applied here: package.sh
#      runs the packaged service, sandbox and all, on both paths against the same advertisers.
#   5. healthgate run as the service user holding CAP_NET_ADMIN (what the packaged drop-in
#      grants), on a fresh bluetoothd WITHOUT -E, with the straps' source: it must take the
#      management-socket path (discovery over D-Bus, Device Found events read from the kernel,
#      a kernel advertisement monitor lifting the duplicate filter); stored samples counted against
#      advertised changes per strap from the moment it scanned so, each rate at least 0.9.
# Checks: every advertiser heard on every path except the two without discoverable flags on a
# discovery without filter; on the monitor paths at least 90 % of every strap's changes and every
# weighing reported; the gateway on the monitor path (its log says so), each strap stored at a
# rate of at least 0.9 and no more samples than changes advertised, each weighing stored once.
set -uo pipefail
REPO=${1:?usage: advertisements.sh REPO HEALTHGATE [WINDOW]}
HG=${2:?usage: advertisements.sh REPO HEALTHGATE [WINDOW]}
WINDOW=${3:-20}
FILTER=${4:-address}
OUT=${LAB_OUT:-/tmp/out}; mkdir -p "$OUT"
source "$REPO/Tests/DeviceLab/lib/bluetooth-scenario.sh"
# bluetoothd's debug logs go to the guest's tmpfs, copied to $OUT at the end, as class.sh's: written
# line by line to the 9p share they can stall bluetoothd's main loop (here: a local run in which
# bluetoothd -E stopped reporting advertisements to the gateway's monitor after 5 s, and the
# gateway's sources did not stop within its 10 s on SIGTERM).
BLUETOOTHD_LOG=/tmp/bluetoothd.log
trap 'cp -f /tmp/bluetoothd*.log "$OUT/" 2> /dev/null' EXIT
ADVERTISED=$OUT/advertisers.log
RATES=$OUT/rates.jsonl
: > "$RATES"

start_bumble "$ADVERTISED" "$PERIPHERALS/bumble-advertisers.py" "$FILTER"
echo "the gateway controller's duplicate filter: $FILTER"

# restart_bluetoothd [FLAG...]: bluetoothd stopped and started again, hci0 powered on.
restart_bluetoothd() {
  kill "$BLUETOOTHD"
  wait "$BLUETOOTHD" 2> /dev/null
  bluetoothd -n -d "$@" >> "/tmp/bluetoothd$*.log" 2>&1 &
  BLUETOOTHD=$!
  adapter_listed() { bluetoothctl list 2> /dev/null | grep -q '^Controller'; }
  poll 30 adapter_listed || { fail "bluetoothd $* does not show the adapter"; return 1; }
  poll 15 power hci0 on 2> /dev/null || fail "power on hci0 (bluetoothd $*)"
}

# measure LABEL MODE [USER...]: a fresh bluetoothd (with BLUETOOTHD_FLAGS), adv-reader.py for
# WINDOW seconds, then the per-device counts. bluetoothd 5.66 kept calling DeviceFound on the
# monitors of a reader that had left the bus without UnregisterMonitor, and a later
# StartDiscovery then got no reply: every path starts from a new bluetoothd.
BLUETOOTHD_FLAGS=()
measure() {
  local label=$1 mode=$2
  shift 2
  restart_bluetoothd "${BLUETOOTHD_FLAGS[@]}"
  say "$label: $mode for ${WINDOW}s"
  local log=$OUT/reported-$label.jsonl
  rm -f "$log"
  # The reader may be the service user, who cannot create files in $OUT.
  : > "$log"
  [[ -n ${STRICT_BUS:-} ]] && chown healthgate "$log"
  "$@" "$PY" -u "$PERIPHERALS/adv-reader.py" "$mode" "$WINDOW" "$log" > "$OUT/reader-$label.out" 2>&1
  READER_STATUS=$?
  grep '"error"' "$log" | head -n 3
  "$PY" "$PERIPHERALS/count-advertisements.py" "$ADVERTISED" "$log" "$label" > "$OUT/count-$label.txt" 2>&1 ||
    { fail "$label: cannot count ($(cat "$OUT/count-$label.txt"))"; return 1; }
  grep -v '^{' "$OUT/count-$label.txt"
  tail -n 1 "$OUT/count-$label.txt" >> "$RATES"
}

# devices_heard LABEL [UNHEARD]: every advertiser reported at least once in the window (a path that
# reports once per discovery cycle may report no change first advertised in it), except those
# named in UNHEARD (names separated by |), which must not be: bluetoothd makes no device of an
# advertiser whose flags are absent or say it is not discoverable, unless a discovery filter is
# set or a monitor matched it.
devices_heard() {
  local heard
  heard=$(tail -n 1 "$OUT/count-$1.txt" | "$PY" -c 'import json, sys
d = json.load(sys.stdin)["devices"]
unheard = sys.argv[1].split("|")
wrong = [v["name"] + (" heard" if v["name"] in unheard else " not heard") for v in d.values()
         if (v["heard"] == 0) != (v["name"] in unheard)]
print("; ".join(wrong) or "ok")' "${2:-}")
  [[ $heard == ok ]] && pass "$1: every advertiser heard${2:+ except $2 (not discoverable)}" || fail "$1: $heard"
}

# full_rate LABEL: every strap's rate at least 0.9 and every weighing reported.
full_rate() {
  local verdict
  verdict=$(tail -n 1 "$OUT/count-$1.txt" | "$PY" -c 'import json, sys
d = json.load(sys.stdin)["devices"]
low = ["%s rate %s" % (v["name"], v["rate"]) for v in d.values() if v["weighings"] == 0 and v["rate"] < 0.9]
lost = ["%s weighings %d/%d" % (v["name"], v["weighingsReported"], v["weighings"]) for v in d.values() if v["weighingsReported"] < v["weighings"]]
print("; ".join(low + lost) or "ok")')
  [[ $verdict == ok ]] && pass "$1: every strap change (>= 90 %) and every weighing reported" || fail "$1: $verdict"
}

monitor_manager() {
  gdbus introspect --system -d org.bluez -o /org/bluez/hci0 2> /dev/null | grep -q AdvertisementMonitorManager1
}

say "bluetoothd $(bluetoothd --version) as shipped (no -E)"
monitor_manager && fail "the Advertisement Monitor manager is offered without -E" ||
  pass "without -E bluetoothd offers no Advertisement Monitor manager"
measure plain-bare bare
devices_heard plain-bare "Polar H10 1A2B3C4D|Polar H10 5E6F7A8B"
measure plain-discovery discovery
devices_heard plain-discovery
measure plain-filtered filtered
devices_heard plain-filtered

say "bluetoothd -E (experimental interfaces)"
BLUETOOTHD_FLAGS=(-E)
restart_bluetoothd -E
poll 10 monitor_manager && pass "with -E bluetoothd offers org.bluez.AdvertisementMonitorManager1" ||
  fail "no Advertisement Monitor manager with -E"
measure experimental-filtered filtered
devices_heard experimental-filtered
measure experimental-monitor monitor
devices_heard experimental-monitor
full_rate experimental-monitor
measure experimental-both both
devices_heard experimental-both
full_rate experimental-both

say "the service user on a bus with only healthgate's shipped policy (bluetoothd -E)"
STRICT_BUS=1
strict_bus_policy
dbus-send --system --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.ReloadConfig > /dev/null ||
  fail "the system bus did not reload its policy"
measure service-user-discovery discovery "${SERVICE_USER[@]}"
[[ $READER_STATUS -eq 0 ]] && devices_heard service-user-discovery || fail "the service user may not discover with the shipped policy"
measure service-user-both both "${SERVICE_USER[@]}"
if grep -q 'RegisterMonitor' "$REPO/udev-rules/dbus-healthgate.conf"; then
  [[ $READER_STATUS -eq 0 ]] && full_rate service-user-both || fail "the shipped policy names RegisterMonitor, yet it was refused"
else
  grep -q 'RegisterMonitor.*AccessDenied' "$OUT/reported-service-user-both.jsonl" &&
    echo "NOTE: the shipped policy does not grant AdvertisementMonitorManager1.RegisterMonitor: the service user gets discovery only (AccessDenied)" ||
    fail "RegisterMonitor was not refused, yet the shipped policy does not name it"
fi

say "healthgate run with the advertisement sources"
cat > "$OUT/healthgate.json" <<JSON
{
  "sources": [{"kind": "ble-polar-broadcast", "name": "straps", "config": {}},
              {"kind": "ble-mi-scale", "name": "scales", "config": {}}],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}],
  "logLevel": "debug"
}
JSON
# A fresh bluetoothd -E: the readers above may have left monitors behind (see measure).
restart_bluetoothd -E
poll 10 monitor_manager || fail "no Advertisement Monitor manager for the gateway"
GATEWAY_START=$(date +%s.%N)
start_gateway "$OUT/healthgate.json"
# Twice the window: the gateway finds its path and the first weighing is complete within it.
sleep $((2 * WINDOW))
kill -TERM "$GATEWAY_PID"
wait "$GATEWAY_PID"
status=$?
GATEWAY_END=$(date +%s.%N)
[[ $status -eq 0 ]] && pass "healthgate run (as the service user) exits 0 on SIGTERM" || fail "healthgate run exited $status"
grep -i -E 'advertisement|path|monitor|discovery' "$OUT/healthgate.log" | head -n 20
grep -q 'by an Advertisement Monitor' "$OUT/healthgate.log" && ! grep -q 'scanning advertisements on .* by discovery' "$OUT/healthgate.log" &&
  pass "gateway: every advertisement source scans by the Advertisement Monitor (bluetoothd -E, the shipped policy)" ||
  fail "gateway: not every advertisement source took the Advertisement Monitor path (see the log above)"
# The counts start when the gateway's monitor of each kind was active (its log's own time, on the
# guest's clock, as the advertisers': the straps' monitor has pattern ff:6b00, the scales' 16:1d18):
# the changes advertised while the gateway was starting are not a path's to lose.
STRAPS_START=$("$PY" "$PERIPHERALS/log-time.py" "$OUT/healthgate.log" "$GATEWAY_START" "Advertisement Monitor on" "is active" ff:6b00)
SCALES_START=$("$PY" "$PERIPHERALS/log-time.py" "$OUT/healthgate.log" "$GATEWAY_START" "Advertisement Monitor on" "is active" 16:1d18)
echo "gateway: counted from its monitors' activation, $(awk -v a="$STRAPS_START" -v b="$SCALES_START" -v g="$GATEWAY_START" 'BEGIN {printf "straps %.1f s, scales %.1f s", a - g, b - g}') after its start"
sqlite3 "$DB" ".backup '$OUT/healthgate.sqlite'" || fail "cannot copy the store to $OUT"
# The count ends when the gateway was told to stop (count-stored.py: STOP), for the straps and the scales.
STOPPED=$("$PY" "$PERIPHERALS/log-time.py" "$OUT/healthgate.log" "$GATEWAY_END" "received SIGTERM")
"$PY" "$PERIPHERALS/count-stored.py" "$ADVERTISED" "$OUT/healthgate.sqlite" gateway "$STRAPS_START" "$SCALES_START" "$GATEWAY_END" \
  "$STOPPED" > "$OUT/gateway-counts.txt" 2>&1
verdicts "$OUT/gateway-counts.txt"

say "healthgate run on bluetoothd as shipped (no -E), holding CAP_NET_ADMIN: the management socket"
# The service user with the capability the packaged drop-in grants (AmbientCapabilities=CAP_NET_ADMIN,
# udev-rules/healthgate-management-socket.conf), the straps' source only (the scales' weighings
# were counted above). Part 4's log is kept as healthgate.log, this part's is healthgate-mgmt.log.
cp "$OUT/healthgate.log" "$OUT/healthgate-monitor.log"
cat > "$OUT/healthgate-mgmt.json" <<JSON
{
  "sources": [{"kind": "ble-polar-broadcast", "name": "straps", "config": {}}],
  "store": {"path": "$DB"},
  "sinks": [{"kind": "sqlite", "name": "store"}],
  "logLevel": "debug"
}
JSON
restart_bluetoothd
monitor_manager && fail "bluetoothd without -E offers the Advertisement Monitor manager"
# The kernel's advertisement monitors on hci0 before the gateway (count, then handles): the
# gateway's kernel monitor must be gone again after its stop (issue 47: it leaked at each stop).
MONITORS_BEFORE=$("$PY" "$REPO/Tests/DeviceLab/lib/kernel-monitors.py" 0 2>&1) || fail "kernel monitors before the gateway: $MONITORS_BEFORE"
SHIPPED_USER=("${SERVICE_USER[@]}")
SERVICE_USER=(setpriv --reuid=healthgate --regid=healthgate --init-groups --inh-caps=+net_admin --ambient-caps=+net_admin)
GATEWAY_START=$(date +%s.%N)
start_gateway "$OUT/healthgate-mgmt.json"
SERVICE_USER=("${SHIPPED_USER[@]}")
sleep "$WINDOW"
capabilities=$(awk '/^CapEff/ {print $2}' "/proc/$GATEWAY_PID/status" 2> /dev/null)
gateway_user=$(awk '/^Uid/ {print $2}' "/proc/$GATEWAY_PID/status" 2> /dev/null)
(( (16#${capabilities:-0} >> 12) & 1 )) && [[ $gateway_user == "$(id -u healthgate)" ]] &&
  pass "gateway: runs as the service user (uid $gateway_user) holding CAP_NET_ADMIN (CapEff $capabilities)" ||
  fail "gateway: uid ${gateway_user:-?}, CapEff ${capabilities:-?}: not the service user with CAP_NET_ADMIN"
sleep "$WINDOW"
kill -TERM "$GATEWAY_PID"
wait "$GATEWAY_PID"
status=$?
GATEWAY_END=$(date +%s.%N)
mv "$OUT/healthgate.log" "$OUT/healthgate-mgmt.log"
mv "$OUT/healthgate-monitor.log" "$OUT/healthgate.log"
[[ $status -eq 0 ]] && pass "healthgate run (management socket) exits 0 on SIGTERM" || fail "healthgate run (management socket) exited $status"
MONITORS_AFTER=$("$PY" "$REPO/Tests/DeviceLab/lib/kernel-monitors.py" 0 2>&1) || fail "kernel monitors after the gateway: $MONITORS_AFTER"
added=$(sed -n 's/.*kernel advertisement monitor \([0-9]*\) added on hci0.*/\1/p' "$OUT/healthgate-mgmt.log" | tail -n 1)
say "kernel advertisement monitors on hci0 (count, handles): before the gateway '$MONITORS_BEFORE', after its stop '$MONITORS_AFTER'; the gateway's: ${added:-none}"
[[ -n $added ]] && grep -q "kernel advertisement monitor $added removed on hci0" "$OUT/healthgate-mgmt.log" &&
  [[ ${MONITORS_AFTER%% *} == "${MONITORS_BEFORE%% *}" && " $MONITORS_AFTER " != *" $added "* ]] &&
  pass "gateway: its kernel advertisement monitor $added was removed at its stop (the kernel holds ${MONITORS_AFTER%% *} monitor(s), as before it started)" ||
  fail "gateway: its kernel advertisement monitor ${added:-?} was not removed at its stop (kernel monitors before '$MONITORS_BEFORE', after '$MONITORS_AFTER'; see $OUT/healthgate-mgmt.log)"
grep -i -E 'management|kernel advertisement monitor|scanning advertisements|scanning by' "$OUT/healthgate-mgmt.log" | head -n 10
grep -q 'by the management socket' "$OUT/healthgate-mgmt.log" && ! grep -q 'scanning advertisements on .* by discovery\|scanning by discovery instead' "$OUT/healthgate-mgmt.log" &&
  pass "gateway: the straps' source scans by the management socket (bluetoothd without -E, CAP_NET_ADMIN)" ||
  fail "gateway: the straps' source did not take (or keep) the management-socket path (see $OUT/healthgate-mgmt.log)"
sqlite3 "$DB" ".backup '$OUT/healthgate-mgmt.sqlite'" || fail "cannot copy the store to $OUT"
# Counted from the moment the gateway scanned by the management socket (its log's time) to SIGTERM,
# as part 4 counts: advertised changes against stored samples per strap.
MGMT_START=$("$PY" "$PERIPHERALS/log-time.py" "$OUT/healthgate-mgmt.log" "$GATEWAY_START" "by the management socket")
MGMT_END=$("$PY" "$PERIPHERALS/log-time.py" "$OUT/healthgate-mgmt.log" "$GATEWAY_END" "received SIGTERM")
"$PY" "$PERIPHERALS/count-stored.py" "$ADVERTISED" "$OUT/healthgate-mgmt.sqlite" "gateway (management socket)" \
  "$MGMT_START" - "$GATEWAY_END" "$MGMT_END" > "$OUT/gateway-mgmt-counts.txt" 2>&1
verdicts "$OUT/gateway-mgmt-counts.txt"
kill "$BUMBLE_PID" 2> /dev/null
kill -0 "$BLUETOOTHD" 2> /dev/null && pass "bluetoothd still runs" || fail "bluetoothd died (see its log)"
echo "failures: $failures"
exit $((failures > 0))
