#!/usr/bin/env python3
"""Broadcasting Polar straps on a private D-Bus, for the `advertisements` benchmark.

Starts a private dbus-daemon and bluetoothd's stand-in on it (python3-dbusmock with the BlueZ
tests' template, Tests/Fixtures/bluez_gatt.py, and one adapter hci0), prints the bus's address
on one line, then obeys commands read from stdin, one per line:

  run STRAPS RATE SECONDS   STRAPS straps advertise RATE times a second each for SECONDS: each
                            advertisement is one Advertise call, which sets the strap's Device1
                            ManufacturerData with one PropertiesChanged signal (the first adds
                            the device: InterfacesAdded). The fast average changes with every
                            advertisement, the frame counter and slow average every 4th (one new
                            heart rate a second at 4/s, as a strap), running on across phases.
                            Paced to a fixed schedule;
                            answers `sent N LATE` (advertisements sent, and how many of them went
                            out more than 100 ms behind their slot).
  quit                      stops both daemons and exits.

Run from the repository root: usage: advertising-straps.py
"""

import os
import socket
import subprocess
import sys
import tempfile
import time

import dbus

ROOT = os.getcwd()
TEMPLATE = os.path.join(ROOT, 'Tests', 'Fixtures', 'bluez_gatt.py')


def wait(what, condition, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except Exception:  # noqa: BLE001 (not up yet)
            pass
        time.sleep(0.02)
    raise SystemExit(f'advertising-straps: timed out waiting for {what}')


def accepts(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.connect(path)
    return True


def strap_advertisement(strap, tick):
    """Strap `strap`'s advertisement number `tick`: address, name, Polar manufacturer data."""
    value = tick // 4
    slow = 60 + strap % 60 + value % 10
    # Status: battery ok (bit 0), contact (bit 1), frame counter (bits 2-4).
    status = 0x03 | ((value % 8) << 2)
    data = [status, 0x00, min(255, slow + tick % 4), slow]
    return (f'A0:9E:1A:00:{strap // 256:02X}:{strap % 256:02X}', f'Polar H10 {strap:08X}', {0x006B: data})


def run(bus, straps, rate, seconds, first_tick):
    """Sends the phase; each strap's advertisements continue from `first_tick` (so that its
    frame counter runs on across phases, as a strap's does)."""
    control = dbus.Interface(bus.get_object('org.bluez', '/'), 'org.healthgate.Test')
    total = int(straps * rate * seconds)
    interval = 1.0 / (straps * rate)
    start = time.monotonic()
    late = 0
    for index in range(total):
        slot = start + index * interval
        now = time.monotonic()
        if now < slot:
            time.sleep(slot - now)
        elif now - slot > 0.1:
            late += 1
        strap, tick = index % straps, first_tick + index // straps
        address, name, manufacturer = strap_advertisement(strap, tick)
        control.Advertise('hci0', address, name,
                          dbus.Dictionary({dbus.UInt16(k): dbus.ByteArray(bytes(v)) for k, v in manufacturer.items()},
                                          signature='qay'),
                          dbus.Dictionary({}, signature='say'))
    return total, late, first_tick + (total + straps - 1) // straps


def main():
    directory = tempfile.mkdtemp(prefix='healthgate-bench-dbus-')
    path = os.path.join(directory, 'bus')
    address = f'unix:path={path}'
    config = os.path.join(directory, 'bus.conf')
    with open(config, 'w', encoding='utf-8') as file:
        file.write(f'''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
  "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>{address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
''')
    daemon = subprocess.Popen(['dbus-daemon', f'--config-file={config}', '--nofork', '--nopidfile'],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mock = None
    try:
        wait('the private bus', lambda: accepts(path))
        environment = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
        mock = subprocess.Popen([sys.executable, '-m', 'dbusmock', '--template', TEMPLATE,
                                 '-l', os.path.join(directory, 'mock.log')],
                                env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bus = dbus.bus.BusConnection(address)
        wait('dbusmock owning org.bluez', lambda: bus.name_has_owner('org.bluez'))
        mock_manager = dbus.Interface(bus.get_object('org.bluez', '/org/bluez'), 'org.bluez.Mock')
        mock_manager.AddAdapter('hci0', 'healthgate-bench')
        print(address, flush=True)
        tick = 0
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ['run'] and len(words) == 4:
                sent, late, tick = run(bus, int(words[1]), float(words[2]), float(words[3]), tick)
                print(f'sent {sent} {late}', flush=True)
            elif words[:1] == ['quit']:
                break
            else:
                print(f'error unknown command {line.strip()}', flush=True)
    finally:
        for process in (mock, daemon):
            if process is not None:
                process.kill()
                process.wait()
        subprocess.run(['rm', '-rf', directory], check=False)


if __name__ == '__main__':
    main()
