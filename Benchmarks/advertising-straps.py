#!/usr/bin/env python3
"""Broadcasting Polar straps (and connectable heart-rate monitors) on a private D-Bus, for the
`advertisements` and `class` benchmarks.

Starts a private dbus-daemon (the tests' policy, Tests/Fixtures/private-bus.conf) and
bluetoothd's stand-in on it (python3-dbusmock with the BlueZ tests' template,
Tests/Fixtures/bluez_gatt.py, and one adapter hci0), prints the bus's address on one line, then obeys commands read from stdin, one per line:

  run STRAPS RATE SECONDS   STRAPS straps advertise RATE times a second each for SECONDS: each
                            advertisement is one Advertise call, which sets the strap's Device1
                            ManufacturerData with one PropertiesChanged signal (the first adds
                            the device: InterfacesAdded). The fast average changes with every
                            advertisement, the frame counter and slow average every 4th (one new
                            heart rate a second at 4/s, as a strap), running on across phases.
                            Paced to a fixed schedule;
                            answers `sent N LATE` (advertisements sent, and how many of them went
                            out more than 100 ms behind their slot).
  connect N                 adds N connectable heart-rate monitors (the template's
                            AddHeartRateMonitor: GATT 180d with 2A37 notify) at
                            02:00:00:00:01:01 … on hci0, named "HRM 1" …; answers `added N`.
  class BROADCASTING CONNECTED SECONDS LOG
                            a class's Bluetooth straps for SECONDS: BROADCASTING Polar straps
                            (A0:9E:1A:00:01:NN, "Polar H10 B00000NN", NN from 01) advertising 4
                            times a second, and the first CONNECTED monitors notifying once a
                            second (flags 0x10: heart rate and one RR interval) while the gateway
                            is subscribed. Every strap's heart rate is a new value each second,
                            70 + (second + 3 × index) mod 100 (as the ANT stick emulator's
                            --stepped-rates), so each value a board shows names the reading it
                            came from. Each new value is appended to LOG as one line: `broadcast
                            INDEX BPM MONOTONIC` (its first advertisement) or `connected INDEX BPM
                            MONOTONIC` (its notification), MONOTONIC being CLOCK_MONOTONIC just
                            before the D-Bus call. Answers `sent ADVERTISEMENTS NOTIFICATIONS LATE
                            UNSUBSCRIBED` (notifications not sent because nobody was subscribed).
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
# The tests' private bus policy (GatewayTesting's PrivateDBusDaemon uses it too); the address is
# given on the command line.
BUS_CONFIG = os.path.join(ROOT, 'Tests', 'Fixtures', 'private-bus.conf')


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


def class_rate(second, index):
    """The class's heart rate of strap `index` in `second`: a new value each second, none
    repeated within 100 s."""
    return 70 + (second + 3 * index) % 100


def connect_monitors(bus, count):
    """Adds `count` connectable heart-rate monitors; returns their 2A37 characteristics' paths
    (the template exports the heart-rate service first, its measurement first)."""
    control = dbus.Interface(bus.get_object('org.bluez', '/'), 'org.healthgate.Test')
    paths = []
    for index in range(1, count + 1):
        device = control.AddHeartRateMonitor('hci0', f'02:00:00:00:01:{index:02X}', f'HRM {index}', True)
        paths.append(f'{device}/service0000/char0000')
    return paths


def play_class(bus, broadcasting, characteristics, seconds, log_path, first_second):
    """One class phase (see `class` above); returns (advertisements, notifications, late,
    unsubscribed, the next phase's first second)."""
    control = dbus.Interface(bus.get_object('org.bluez', '/'), 'org.healthgate.Test')
    # Each second: every broadcasting strap advertises 4 times, spread over the second, and
    # every connected one notifies once, between them.
    slots = sorted([((repeat * broadcasting + strap) / (4 * broadcasting), 'broadcast', strap, repeat)
                    for repeat in range(4) for strap in range(broadcasting)]
                   + [((strap + 0.5) / max(1, len(characteristics)), 'connected', strap, 0)
                      for strap in range(len(characteristics))])
    advertisements = notifications = late = unsubscribed = 0
    start = time.monotonic()
    with open(log_path, 'a', encoding='utf-8') as log:
        for offset in range(int(seconds)):
            second = first_second + offset
            for at, kind, strap, repeat in slots:
                slot = start + offset + at
                now = time.monotonic()
                if now < slot:
                    time.sleep(slot - now)
                elif now - slot > 0.1:
                    late += 1
                bpm = class_rate(second, strap)
                if kind == 'broadcast':
                    # Status: battery ok, contact, the frame counter advancing with each new value.
                    status = 0x03 | ((second % 8) << 2)
                    manufacturer = dbus.Dictionary({dbus.UInt16(0x006B): dbus.ByteArray(bytes([status, 0, bpm, bpm]))},
                                                   signature='qay')
                    sent_at = time.monotonic()
                    control.Advertise('hci0', f'A0:9E:1A:00:01:{strap + 1:02X}', f'Polar H10 {0xB0000001 + strap:08X}',
                                      manufacturer, dbus.Dictionary({}, signature='say'))
                    advertisements += 1
                    if repeat == 0:
                        log.write(f'broadcast {strap} {bpm} {sent_at:.6f}\n')
                else:
                    rr = round(61440 / bpm)  # 1/1024 s
                    sent_at = time.monotonic()
                    try:
                        control.Notify(characteristics[strap], dbus.ByteArray(bytes([0x10, bpm, rr & 0xFF, rr >> 8])))
                    except dbus.exceptions.DBusException:
                        unsubscribed += 1  # not connected or not subscribed (yet)
                        continue
                    notifications += 1
                    log.write(f'connected {strap} {bpm} {sent_at:.6f}\n')
    return advertisements, notifications, late, unsubscribed, first_second + int(seconds)


def main():
    directory = tempfile.mkdtemp(prefix='healthgate-bench-dbus-')
    path = os.path.join(directory, 'bus')
    address = f'unix:path={path}'
    daemon = subprocess.Popen(['dbus-daemon', f'--config-file={BUS_CONFIG}', f'--address={address}', '--nofork', '--nopidfile'],
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
        characteristics = []
        second = 0
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ['run'] and len(words) == 4:
                sent, late, tick = run(bus, int(words[1]), float(words[2]), float(words[3]), tick)
                print(f'sent {sent} {late}', flush=True)
            elif words[:1] == ['connect'] and len(words) == 2:
                characteristics += connect_monitors(bus, int(words[1]))
                print(f'added {len(characteristics)}', flush=True)
            elif words[:1] == ['class'] and len(words) == 5:
                advertisements, notifications, late, unsubscribed, second = play_class(
                    bus, int(words[1]), characteristics[:int(words[2])], float(words[3]), words[4], second)
                print(f'sent {advertisements} {notifications} {late} {unsubscribed}', flush=True)
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
