# receivers.sh - sourced by the host side of the power-cut scenarios (run-power-cut.sh,
# run-flush-points.sh): the receivers a gateway in the VM follows its store to, on this machine's
# loopback only, and the directory the guest shares with them (run-vm.sh -s).
#
# start_receivers DIR: in DIR (made), the recording repository
# (plugins/HTTPRepository/Fixtures/recording_server.py, answering 200 to every request, each
# logged to DIR/http.jsonl before it is answered), Debian's mosquitto, and a mosquitto_sub on the
# gateway's topics logging every message the broker passed on (QoS 1) to DIR/mqtt.jsonl, each on a
# free port of 127.0.0.1; DIR/settings.env tells the guest where they are as it reaches them
# (qemu's forwards, 10.0.2.100), and RECEIVER_FORWARDS holds run-vm.sh's -f options. Returns 1,
# having said why, when one did not start.
# stop_receivers: stops them.
RECEIVER_PIDS=()
RECEIVER_FORWARDS=()
readonly LAB_REPOSITORY_GUEST_PORT=8080 LAB_BROKER_GUEST_PORT=1883

free_port() {
  /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_receivers() {
  local dir=$1 repository=$2 port broker tries
  mkdir -p "$dir"
  : > "$dir/http.jsonl"
  : > "$dir/mqtt.jsonl"
  /usr/bin/python3 -u "$repository/plugins/HTTPRepository/Fixtures/recording_server.py" --record "$dir/http.jsonl" \
    > "$dir/repository.port" 2> "$dir/repository.log" &
  RECEIVER_PIDS+=($!)
  for tries in {1..100}; do [[ -s $dir/repository.port ]] && break; sleep 0.1; done
  port=$(head -n 1 "$dir/repository.port")
  [[ $port =~ ^[0-9]+$ ]] || { lab_say "the recording repository did not start: $(cat "$dir/repository.log")"; return 1; }
  broker=$(free_port)
  printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$broker" > "$dir/mosquitto.conf"
  mosquitto -c "$dir/mosquitto.conf" > "$dir/mosquitto.log" 2>&1 &
  RECEIVER_PIDS+=($!)
  for tries in {1..100}; do
    mosquitto_pub -h 127.0.0.1 -p "$broker" -V mqttv5 -q 1 -t lab-ready -m ready 2> /dev/null && break
    sleep 0.1
  done
  mosquitto_sub -h 127.0.0.1 -p "$broker" -V mqttv5 -q 1 -t 'lab/#' -F '%j' > "$dir/mqtt.jsonl" 2> "$dir/mosquitto_sub.log" &
  RECEIVER_PIDS+=($!)
  # The subscriber is subscribed once a message published after it reaches it.
  for tries in {1..50}; do
    mosquitto_pub -h 127.0.0.1 -p "$broker" -V mqttv5 -q 1 -t lab/probe -m probe 2> /dev/null &&
      sleep 0.2 && grep -q '"lab/probe"' "$dir/mqtt.jsonl" && break
    sleep 0.2
  done
  grep -q '"lab/probe"' "$dir/mqtt.jsonl" ||
    { lab_say "mosquitto or its subscriber did not start: $(tail -n 5 "$dir/mosquitto.log" "$dir/mosquitto_sub.log")"; return 1; }
  cat > "$dir/settings.env" <<SETTINGS
LAB_REPOSITORY_URL=http://10.0.2.100:$LAB_REPOSITORY_GUEST_PORT/v1/samples
LAB_BROKER_HOST=10.0.2.100
LAB_BROKER_PORT=$LAB_BROKER_GUEST_PORT
SETTINGS
  RECEIVER_FORWARDS=(-f "$LAB_REPOSITORY_GUEST_PORT=$port" -f "$LAB_BROKER_GUEST_PORT=$broker")
  lab_say "receivers: the recording repository on 127.0.0.1:$port, mosquitto on 127.0.0.1:$broker"
}

stop_receivers() {
  ((${#RECEIVER_PIDS[@]})) && kill "${RECEIVER_PIDS[@]}" 2> /dev/null
  wait "${RECEIVER_PIDS[@]}" 2> /dev/null
  RECEIVER_PIDS=()
}
