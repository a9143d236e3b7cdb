#!/usr/bin/python3
# lab-glucose.py ADAPTER_PATH [PASSKEY] - a glucose meter that requires bonding, for the device lab:
# a GATT server with Glucose (0x1808) and Device Information, an LE advertisement, and a pairing
# agent, registered with bluetoothd on ADAPTER_PATH.
#
# Its Glucose Measurement (notify), Glucose Feature (read) and Record Access Control Point (write,
# indicate) need an encrypted, authenticated link (BlueZ's encrypt-authenticated-* flags), so a
# central must pair with a passkey first. The meter's agent has the capability KeyboardOnly and
# "types" PASSKEY (default 24680), so the central must enter the same one (Core Specification
# Vol 3, Part H, 2.3.5.1: both sides keyboard-only means both enter the passkey).
#
# It stores three records (sequence numbers 1-3, 110, 96 and 131 mg/dL, taken 30, 20 and 10
# minutes ago), and a fourth one (104 mg/dL, taken now) on SIGUSR1. A write of "report stored
# records" to the RACP (01 01 for all, 01 03 01 nn nn for those from sequence number nnnn) sends
# the matching records as notifications, then the response 06 00 01 01 as an indication.
import datetime
import os
import signal
import sys

import dbus
import dbus.service
from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labgatt import (  # noqa: E402
    BLUEZ, PROPERTIES, Advertisement, Application, Characteristic, NotPermitted, Service, serve, system_bus)

ROOT = "/org/healthgate/labglucose"
AGENT = "/org/healthgate/labglucose/agent"
SECURE = ["encrypt-authenticated-read", "encrypt-authenticated-write", "encrypt-authenticated-notify",
          "encrypt-authenticated-indicate"]


def record(sequence, milligrams, ago):
    """Glucose Measurement: flags 0x02 (concentration in kg/L, type and location), the sequence
    number, the base time, milligrams/dL as an SFLOAT with exponent -5 (kg/L), capillary whole
    blood (1) from a finger (1)."""
    t = datetime.datetime.now(datetime.timezone.utc) - ago
    base = t.year.to_bytes(2, "little") + bytes([t.month, t.day, t.hour, t.minute, t.second])
    return (bytes([0x02]) + sequence.to_bytes(2, "little") + base
            + bytes([milligrams & 0xFF, 0xB0 | (milligrams >> 8), 0x11]))


class WritableCharacteristic(Characteristic):
    """A characteristic whose writes go to `written(value)`."""

    def __init__(self, bus, service, index, short, flags, written):
        Characteristic.__init__(self, bus, service, index, short, flags)
        self.written = written

    @dbus.service.method("org.bluez.GattCharacteristic1", in_signature="aya{sv}")
    def WriteValue(self, value, options):
        if "write" not in self.flags:
            raise NotPermitted("not writable")
        self.written(bytes(value))


class Agent(dbus.service.Object):
    """The meter's side of the pairing: it enters the same passkey as the central."""

    def __init__(self, bus, passkey):
        self.passkey = passkey
        dbus.service.Object.__init__(self, bus, AGENT)

    @dbus.service.method("org.bluez.Agent1", in_signature="o", out_signature="u")
    def RequestPasskey(self, device):
        print("passkey requested by %s: entering %06d" % (device, self.passkey), flush=True)
        return dbus.UInt32(self.passkey)

    @dbus.service.method("org.bluez.Agent1", in_signature="ouq")
    def DisplayPasskey(self, device, passkey, entered):
        print("display passkey %06d" % passkey, flush=True)

    @dbus.service.method("org.bluez.Agent1", in_signature="ou")
    def RequestConfirmation(self, device, passkey):
        print("confirmation of %06d" % passkey, flush=True)

    @dbus.service.method("org.bluez.Agent1", in_signature="o")
    def RequestAuthorization(self, device):
        print("authorization for %s" % device, flush=True)

    @dbus.service.method("org.bluez.Agent1", in_signature="os")
    def AuthorizeService(self, device, uuid):
        pass

    @dbus.service.method("org.bluez.Agent1")
    def Cancel(self):
        print("pairing cancelled", flush=True)

    @dbus.service.method("org.bluez.Agent1")
    def Release(self):
        pass


def main():
    adapter = sys.argv[1] if len(sys.argv) > 1 else "/org/bluez/hci0"
    passkey = int(sys.argv[2]) if len(sys.argv) > 2 else 24680
    bus = system_bus()
    agent = Agent(bus, passkey)
    manager = dbus.Interface(bus.get_object(BLUEZ, "/org/bluez"), "org.bluez.AgentManager1")
    manager.RegisterAgent(AGENT, "KeyboardOnly")
    manager.RequestDefaultAgent(AGENT)
    dbus.Interface(bus.get_object(BLUEZ, adapter), PROPERTIES).Set("org.bluez.Adapter1", "Pairable", dbus.Boolean(True))
    print("agent registered (KeyboardOnly, passkey %06d)" % agent.passkey, flush=True)

    records = [record(1, 110, datetime.timedelta(minutes=30)), record(2, 96, datetime.timedelta(minutes=20)),
               record(3, 131, datetime.timedelta(minutes=10))]
    information = Service(bus, ROOT, 0, 0x180A)
    information.add(bus, 0x2A29, ["read"], b"healthgate lab")
    information.add(bus, 0x2A24, ["read"], b"lab glucose meter")
    information.add(bus, 0x2A25, ["read"], b"LAB-GLUCOSE-0001")
    glucose = Service(bus, ROOT, 1, 0x1808)
    measurement = glucose.add(bus, 0x2A18, ["notify"] + SECURE[2:3])
    glucose.add(bus, 0x2A51, ["read"] + SECURE[0:1], bytes([0x00, 0x00]))

    def report(request):
        if request == b"\x01\x01":
            first = 0
        elif len(request) == 5 and request[:3] == b"\x01\x03\x01":
            first = int.from_bytes(request[3:5], "little")
        else:
            GLib.idle_add(lambda: (racp.notify(b"\x06\x00" + request[:1] + b"\x02"), False)[1])
            return
        chosen = [r for r in records if int.from_bytes(r[1:3], "little") >= first]
        print("RACP %s: sending %d record(s)" % (request.hex(), len(chosen)), flush=True)

        def send():
            for r in chosen:
                measurement.notify(r)
            racp.notify(b"\x06\x00\x01\x01")
            return False
        # After the write's reply, as a meter answers once the request is acknowledged.
        GLib.timeout_add(100, send)

    racp = WritableCharacteristic(bus, glucose, len(glucose.characteristics), 0x2A52,
                                  ["write", "indicate"] + SECURE[1:2] + SECURE[3:4], report)
    glucose.characteristics.append(racp)
    application = Application(bus, ROOT, [information, glucose])
    advertisement = Advertisement(bus, ROOT, "lab glucose", [0x1808])

    def add_fourth():
        if len(records) == 3:
            records.append(record(4, 104, datetime.timedelta(0)))
            print("stored record 4", flush=True)
        return True

    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, add_fourth)
    serve(bus, adapter, application, advertisement, [])


if __name__ == "__main__":
    main()
