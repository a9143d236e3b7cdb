# lib/btvirt.sh - sourced by the Bluetooth scenarios inside the lab VM (bluetooth-hr.sh,
# rfcomm-serial.sh): the kernel modules and two emulated controllers on one radio.

# bluetooth_modules [MODULE...]: the Bluetooth core, the virtual HCI driver and the extra
# modules named. The crypto modules load here too, before any controller exists: the kernel
# otherwise loads them while btvirt's first controller is being reset, which makes that reset
# miss its deadline under TCG (see start_btvirt_pair).
bluetooth_modules() {
  modprobe -a bluetooth hci_vhci algif_hash algif_skcipher cmac ecb ecdh_generic "$@"
}

# Both of btvirt's controllers (addresses 00:AA:...) are registered and initialized.
btvirt_pair_up() {
  [[ $(hciconfig 2> /dev/null | grep -c 'BD Address: 00:AA') -eq 2 ]]
}

# start_btvirt_pair LOG: starts `btvirt -l2` (two controllers, hci0 and hci1) with its output in
# LOG and sets BTVIRT to its pid. btvirt opens /dev/vhci, and so makes the kernel send HCI_Reset
# with a 2 s deadline, before its first emulated controller is ready to answer; under TCG that
# readiness takes 1.5 to 3 s. A controller that misses the reset keeps the address
# 00:00:00:00:00:00 and bluetoothd never sees it, and `hciconfig hci0 up` does not repair it:
# only a new btvirt does. So btvirt is restarted until both controllers are up (once, usually).
start_btvirt_pair() {
  local log=$1 attempt deadline
  for attempt in 1 2 3 4 5; do
    btvirt -l2 > "$log" 2>&1 &
    BTVIRT=$!
    deadline=$((SECONDS + 8))
    until btvirt_pair_up; do
      ((SECONDS < deadline)) || break
      sleep 0.25
    done
    btvirt_pair_up && return 0
    echo "note: btvirt attempt $attempt lost the HCI_Reset race; starting a new one"
    kill "$BTVIRT" 2> /dev/null
    wait "$BTVIRT" 2> /dev/null
    sleep 1
  done
  return 1
}
