# lib/btvirt.sh - sourced by the Bluetooth scenarios inside the lab VM (bluetooth-hr.sh,
# bluetooth-multi.sh, rfcomm-serial.sh, package.sh): the kernel modules, emulated controllers on
# one radio, and BlueZ's D-Bus policy without its grants to every user.

# bluetooth_modules [MODULE...]: the Bluetooth core, the virtual HCI driver and the extra
# modules named. The crypto modules load here too, before any controller exists: the kernel
# otherwise loads them while btvirt's first controller is being reset, which makes that reset
# miss its deadline under TCG (see start_btvirt).
bluetooth_modules() {
  modprobe -a bluetooth hci_vhci algif_hash algif_skcipher cmac ecb ecdh_generic "$@"
}

# btvirt_up COUNT: all COUNT of btvirt's controllers (addresses 00:AA:...) are registered and
# initialized.
btvirt_up() {
  [[ $(hciconfig 2> /dev/null | grep -c 'BD Address: 00:AA') -eq $1 ]]
}

# start_btvirt COUNT LOG: starts `btvirt -lCOUNT` (controllers hci0, hci1, ...) with its output in
# LOG and sets BTVIRT to its pid. btvirt opens /dev/vhci, and so makes the kernel send HCI_Reset
# with a 2 s deadline, before its first emulated controller is ready to answer; under TCG that
# readiness takes 1.5 to 3 s. A controller that misses the reset keeps the address
# 00:00:00:00:00:00 and bluetoothd never sees it, and `hciconfig hci0 up` does not repair it:
# only a new btvirt does. So btvirt is restarted until every controller is up (once, usually).
start_btvirt() {
  local count=$1 log=$2 attempt deadline
  for attempt in 1 2 3 4 5; do
    btvirt -l"$count" > "$log" 2>&1 &
    BTVIRT=$!
    deadline=$((SECONDS + 8))
    until btvirt_up "$count"; do
      ((SECONDS < deadline)) || break
      sleep 0.25
    done
    btvirt_up "$count" && return 0
    echo "note: btvirt attempt $attempt lost the HCI_Reset race; starting a new one"
    kill "$BTVIRT" 2> /dev/null
    wait "$BTVIRT" 2> /dev/null
    sleep 1
  done
  return 1
}

# controller_up ADAPTER: the controller is registered and has its address (one that missed its
# reset keeps 00:00:00:00:00:00, see start_btvirt).
controller_up() {
  hciconfig "$1" 2> /dev/null | grep -q 'BD Address: [0-9A-F:]*' && ! hciconfig "$1" | grep -q 'BD Address: 00:00:00:00:00:00'
}

# bluez_policy_strict: BlueZ's D-Bus policy (bluetooth.conf, in /etc or /usr/share) keeps only its
# root policy: Debian's grants to the bluetooth group and to every user (context "default") go, as
# on a distribution without them, so that only healthgate's own policy lets its user reach
# bluetoothd. The bus reads the change when told to reload.
bluez_policy_strict() {
  local conf
  for conf in /etc/dbus-1/system.d/bluetooth.conf /usr/share/dbus-1/system.d/bluetooth.conf; do
    [[ -f $conf ]] || continue
    /usr/bin/python3 - "$conf" <<'PYTHON' || return 1
import re, sys
path = sys.argv[1]
text = open(path).read()
strict = re.sub(r'<policy (group="bluetooth"|context="default")>.*?</policy>', '', text, flags=re.S)
open(path, 'w').write(strict)
PYTHON
  done
}
