# lib/power-cut.sh - sourced by the guest scenarios of issue 58 (power-cut.sh, flush-points.sh),
# after lib/checks.sh and lib/systemd.sh: the packaged gateway with simulated devices, its store on
# a disk of its own, followed by an HTTP repository and an MQTT broker on this machine, and a class
# that sends it commands. Expects REPO and OUT.
#
# The host side (vm/receivers.sh) shares a directory with the guest (run-vm.sh -s), mounted at
# $SHARED: settings.env (the receivers' addresses as the guest reaches them, what this boot is
# for), the receivers' logs (http.jsonl, mqtt.jsonl), and what the guest writes for the host:
# commands.jsonl (each command issued to the gateway and its answer), windows and checkpoints.
SHARED=/run/shared
PY=/usr/bin/python3
STORE_DIR=/var/lib/healthgate

# disk SERIAL: the guest's block device whose virtio serial is SERIAL (run-vm.sh -d SERIAL=IMAGE).
disk() {
  local block
  for block in /sys/block/vd*; do
    [[ $(cat "$block/serial" 2> /dev/null) == "$1" ]] && { echo "/dev/${block##*/}"; return 0; }
  done
  return 1
}

# lab_devices SERIAL...: the modules for disks, ext4 and device-mapper, and each disk present.
lab_devices() {
  local serial
  modprobe -a virtio_blk ext4 dm-mod loop || return 1
  for serial; do
    poll 10 disk "$serial" > /dev/null || { echo "FAIL: no disk with serial $serial"; return 1; }
  done
}

# mount_shared: the host's shared directory at $SHARED, and its settings.env (the receivers) and
# boot.env (LAB_BOOT, the boot's number; LAB_ACTION, what it is for) read.
mount_shared() {
  mkdir -p "$SHARED"
  mountpoint -q "$SHARED" || mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 shared "$SHARED" ||
    { echo "FAIL: the shared directory (9p tag shared) does not mount"; return 1; }
  # shellcheck source=/dev/null # written by vm/receivers.sh and the scenario's host side
  source "$SHARED/settings.env" && source "$SHARED/boot.env"
}

# write_gateway_config CONFIG: the packaged configuration with its sources and sinks replaced (the
# store and the control socket stay): six simulated straps worn by participants P1…P6, two foot
# pods, a cuff (blood pressure: correlations) and a glucose meter (records with sync identifiers,
# a source checkpoint); the store, an HTTP repository and an MQTT broker. The followers retry
# within 2 s, so after a boot they resume at once.
write_gateway_config() {
  "$PY" - "$1" "$LAB_REPOSITORY_URL" "$LAB_BROKER_HOST" "$LAB_BROKER_PORT" <<'PYTHON'
import json, sys
path, url, host, port = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
config = json.load(open(path))
config["gatewayName"] = "powercut"
config["sources"] = [
    {"kind": "ble-heart-rate", "name": "straps", "config": {"transport": "simulated", "simulation": {
        "heartRateMonitors": 6, "footPods": 2, "notificationsPerSecond": 2}}},
    {"kind": "ble-health", "name": "meters", "config": {"transport": "simulated", "simulation": {
        "scales": 0, "cuffs": 1, "thermometers": 0, "oximeters": 0, "glucoseMeters": 1,
        "measurementIntervalSeconds": 5}}}]
retry = {"initialDelaySeconds": 0.2, "maxDelaySeconds": 2}
config["sinks"] = [sink for sink in config["sinks"] if sink["kind"] == "sqlite"] + [
    {"kind": "http-repository", "name": "repository", "config": {
        "url": url, "batchIntervalSeconds": 0.5, "timeoutSeconds": 10, "retry": retry}},
    {"kind": "mqtt", "name": "broker", "config": {
        "host": host, "port": port, "topicPrefix": "lab", "ackTimeoutSeconds": 10, "retry": retry}}]
config["participants"] = [{"name": f"P{n}", "devices": [f"healthgate/SIM-HRM-000{n}"]} for n in range(1, 7)]
open(path, "w").write(json.dumps(config, indent=2) + "\n")
PYTHON
}

# json_string TEXT: TEXT as a JSON string.
json_string() {
  local text=$1
  text=${text//\\/\\\\}; text=${text//\"/\\\"}; text=${text//$'\n'/\\n}; text=${text//$'\t'/\\t}; text=${text//$'\r'/\\r}
  printf '"%s"' "$text"
}

# logged COMMAND FIELDS -- ARGUMENT...: `healthgate ARGUMENT...` run inside systemd's namespace;
# once it answered, one JSON line in $SHARED/commands.jsonl (a single append, so lines from
# commands run at once never mix): {"command": COMMAND, FIELDS…, "answered": true when it exited
# 0, "status", "output", "boot"}. FIELDS is JSON members without braces ("" for none).
logged() {
  local command=$1 fields=$2 output status
  shift 3
  output=$(inside /usr/bin/healthgate "$@" 2>&1)
  status=$?
  printf '{"command": %s, %s"answered": %s, "status": %d, "boot": %d, "output": %s}\n' \
    "$(json_string "$command")" "${fields:+$fields, }" "$( ((status == 0)) && echo true || echo false)" \
    "$status" "${LAB_BOOT:-0}" "$(json_string "$output")" >> "$SHARED/commands.jsonl"
  return $status
}

# end_workout PARTICIPANT: `workout end --participant PARTICIPANT`, logged with the workout's uuid.
end_workout() {
  local output status workout
  output=$(inside /usr/bin/healthgate workout end --participant "$1" --format json 2>&1)
  status=$?
  workout=$(sed -n 's/.*"workoutID" *: *"\([0-9A-Fa-f-]*\)".*/\1/p' <<< "$output" | head -n 1)
  printf '{"command": "workout end", "participant": %s, "workout": %s, "answered": %s, "status": %d, "boot": %d, "output": %s}\n' \
    "$(json_string "$1")" "$(json_string "$workout")" "$( ((status == 0)) && [[ -n $workout ]] && echo true || echo false)" \
    "$status" "${LAB_BOOT:-0}" "$(json_string "$output")" >> "$SHARED/commands.jsonl"
}

# assign DEVICE NAME SEQUENCE: `participant assign DEVICE NAME --keep`, logged with SEQUENCE, its
# order of issue across boots (store_check.py: the device's row must be this assignment's or a
# later one's).
assign() {
  local sequence=$3
  logged "participant assign" "\"device\": $(json_string "$1"), \"participant\": $(json_string "$2"), \"sequence\": $sequence" \
    -- participant assign "$1" "$2" --keep > /dev/null
}

# class_start: every participant's workout started (`workout start --all`; one still running from
# before a cut is refused, 65, and the others start).
class_start() {
  logged "workout start" "" -- workout start --all --activity highIntensityIntervalTraining > /dev/null
}

# class_burst: at once, every participant's `workout end` and two `participant assign`s of the
# foot pods to new names; returns once every command answered.
class_burst() {
  local n pids=()
  for n in 1 2 3 4 5 6; do end_workout "P$n" & pids+=($!); done
  assign 02:00:00:00:01:01 "Runner-$LAB_BOOT-a" $((LAB_BOOT * 10 + 1)) & pids+=($!)
  assign 02:00:00:00:01:02 "Runner-$LAB_BOOT-b" $((LAB_BOOT * 10 + 2)) & pids+=($!)
  wait "${pids[@]}"
}

# window NAME: tells the host that the moment for the plug has come (it pulls it at a random
# instant of the window, run-power-cut.sh); flush-points.sh records instead.
window() {
  printf '%s %s %s\n' "$LAB_BOOT" "$1" "$(cut -d' ' -f1 /proc/uptime)" >> "$SHARED/windows"
}

# watch_checkpoints: in the background, a line in $SHARED/checkpoints ("BOOT UPTIME") each time
# SQLite starts writing the store's database file after a second without writes: in WAL mode
# only a checkpoint writes it (pages copied back from the log), so each line is a checkpoint that
# began; $SHARED/watching-BOOT once it watches. Sets WATCHER.
watch_checkpoints() {
  "$PY" - "$STORE_DIR" samples.sqlite "$SHARED/checkpoints" "${LAB_BOOT:-0}" <<'PYTHON' &
import ctypes, os, struct, sys, time
directory, name, out, boot = sys.argv[1], sys.argv[2].encode(), sys.argv[3], sys.argv[4]
libc = ctypes.CDLL(None, use_errno=True)
IN_MODIFY = 0x2
fd = libc.inotify_init1(0)
if fd < 0 or libc.inotify_add_watch(fd, directory.encode(), IN_MODIFY) < 0:
    sys.exit(f"inotify on {directory}: errno {ctypes.get_errno()}")
open(f"{os.path.dirname(out)}/watching-{boot}", "w").close()
last = 0.0
while True:
    data = os.read(fd, 65536)
    now = time.monotonic()
    offset = 0
    while offset < len(data):
        _, mask, _, length = struct.unpack_from("iIII", data, offset)
        event = data[offset + 16:offset + 16 + length].rstrip(b"\0")
        offset += 16 + length
        if event == name:
            if now - last > 1.0:
                with open(out, "a") as file:
                    file.write(f"{boot} {open('/proc/uptime').read().split()[0]}\n")
            last = now
PYTHON
  WATCHER=$!
}
