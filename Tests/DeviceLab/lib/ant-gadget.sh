# lib/ant-gadget.sh - sourced by the scenarios that plug an emulated USB ANT stick into the lab VM
# (plugins/ANTHeartRate/Lab/ant-stick.sh, class.sh), after lib/checks.sh: the service user,
# udevd with healthgate's ANT rule, dummy_hcd, and a g_serial gadget presented as the ANT USB-m
# (0fcf:1009, use_acm=0: the generic serial function, one interface with a bulk pair, as an ANT
# stick has), which the guest kernel's own usb_serial_simple driver binds (host side
# /dev/ttyUSB0, gadget side /dev/ttyGS0, where Tests/Fixtures/ant_stick_emulator.py answers).
# Expects REPO and OUT set by the scenario.
ANT_EMULATOR=$REPO/Tests/Fixtures/ant_stick_emulator.py
ANT_KEY=4c41422d4b455921   # the lab's own network key ("LAB-KEY!"), not the ANT+ key

# ant_gadget_setup: the healthgate user and group, our rules under /run/udev/rules.d, udevd
# (its tty events logged to $OUT/udev-monitor.log, UDEV_MONITOR its PID), dummy_hcd. Exits on failure.
ant_gadget_setup() {
  getent group healthgate >/dev/null || groupadd --system healthgate
  id healthgate >/dev/null 2>&1 || useradd --system --gid healthgate --no-create-home --shell /usr/sbin/nologin healthgate
  mkdir -p /run/udev/rules.d
  install -m 0644 "$REPO/udev-rules/71-healthgate-ant.rules" /run/udev/rules.d/
  /lib/systemd/systemd-udevd --daemon --resolve-names=late 2>&1 | tail -2
  poll 10 test -S /run/udev/control || { fail "udevd did not start"; exit 1; }
  udevadm control --reload
  udevadm monitor --udev --property --subsystem-match=tty > "$OUT/udev-monitor.log" 2>&1 &
  UDEV_MONITOR=$!
  modprobe dummy_hcd || { fail "modprobe dummy_hcd"; exit 1; }
}

# ant_plug [SERIAL]: the gadget as an ANT USB-m (with SERIAL as its serial number); the host's
# tty there and udev's work done.
ant_plug() {
  local options=(use_acm=0 idVendor=0x0fcf idProduct=0x1009 iManufacturer=Dynastream iProduct="ANT USBStick2")
  [[ -n ${1:-} ]] && options+=(iSerialNumber="$1")
  modprobe g_serial "${options[@]}" || return 1
  poll 30 test -c /dev/ttyUSB0 && poll 10 test -c /dev/ttyGS0 || return 1
  timeout 30 udevadm settle
}

# ant_unplug: the gadget removed, the host's tty gone.
ant_unplug() {
  rmmod g_serial
  poll 15 test ! -e /dev/ttyUSB0
  timeout 30 udevadm settle
}
