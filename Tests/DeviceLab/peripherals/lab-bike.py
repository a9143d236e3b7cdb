#!/usr/bin/python3
# lab-bike.py ADAPTER_PATH - a bike for the device lab: a GATT server with Cycling Speed and
# Cadence (0x1816) and Cycling Power (0x1818), Device Information and Battery, and an LE
# advertisement of both services, registered with bluetoothd on ADAPTER_PATH (/org/bluez/hci1).
#
# While a client is subscribed, it notifies once a second: a CSC Measurement with cumulative
# wheel and crank revolutions and their event times (1/1024 s), and a Cycling Power Measurement
# with the instantaneous power. The rider holds 8 m/s (a 2.105 m wheel: 3.8 revolutions a
# second), 90 rpm and 180 to 220 W. Written against BlueZ's doc/org.bluez.GattManager.rst,
# GattService, GattCharacteristic and LEAdvertisingManager; uses Debian's python3-dbus and gi.
import math
import sys
import time

import dbus
import dbus.exceptions
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
PROPERTIES = "org.freedesktop.DBus.Properties"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
SERVICE_IFACE = "org.bluez.GattService1"
CHARACTERISTIC_IFACE = "org.bluez.GattCharacteristic1"
ADVERTISEMENT_IFACE = "org.bluez.LEAdvertisement1"
ROOT = "/org/healthgate/labbike"


def uuid16(short):
    return "0000%04x-0000-1000-8000-00805f9b34fb" % short


class NotPermitted(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.NotPermitted"


class Characteristic(dbus.service.Object):
    def __init__(self, bus, service, index, short, flags, value=b""):
        self.path = "%s/char%d" % (service.path, index)
        self.service = service
        self.uuid = uuid16(short)
        self.flags = flags
        self.value = bytes(value)
        self.notifying = False
        dbus.service.Object.__init__(self, bus, self.path)

    def properties(self):
        return {CHARACTERISTIC_IFACE: {
            "Service": dbus.ObjectPath(self.service.path),
            "UUID": self.uuid,
            "Flags": dbus.Array(self.flags, signature="s"),
        }}

    @dbus.service.method(CHARACTERISTIC_IFACE, in_signature="a{sv}", out_signature="ay")
    def ReadValue(self, options):
        if "read" not in self.flags:
            raise NotPermitted("not readable")
        return dbus.Array(self.value, signature="y")

    @dbus.service.method(CHARACTERISTIC_IFACE)
    def StartNotify(self):
        self.notifying = True
        print("subscribed: %s" % self.uuid, flush=True)

    @dbus.service.method(CHARACTERISTIC_IFACE)
    def StopNotify(self):
        self.notifying = False

    def notify(self, value):
        self.value = bytes(value)
        if self.notifying:
            self.PropertiesChanged(CHARACTERISTIC_IFACE, {"Value": dbus.Array(self.value, signature="y")}, [])

    @dbus.service.signal(PROPERTIES, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Service(dbus.service.Object):
    def __init__(self, bus, index, short):
        self.path = "%s/service%d" % (ROOT, index)
        self.uuid = uuid16(short)
        self.characteristics = []
        dbus.service.Object.__init__(self, bus, self.path)

    def add(self, bus, short, flags, value=b""):
        characteristic = Characteristic(bus, self, len(self.characteristics), short, flags, value)
        self.characteristics.append(characteristic)
        return characteristic

    def properties(self):
        return {SERVICE_IFACE: {"UUID": self.uuid, "Primary": True}}


class Application(dbus.service.Object):
    def __init__(self, bus, services):
        self.services = services
        dbus.service.Object.__init__(self, bus, ROOT)

    @dbus.service.method(OBJECT_MANAGER, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        objects = {}
        for service in self.services:
            objects[dbus.ObjectPath(service.path)] = service.properties()
            for characteristic in service.characteristics:
                objects[dbus.ObjectPath(characteristic.path)] = characteristic.properties()
        return objects


class Advertisement(dbus.service.Object):
    def __init__(self, bus):
        self.path = ROOT + "/advertisement0"
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "Type": "peripheral",
            "ServiceUUIDs": dbus.Array([uuid16(0x1816), uuid16(0x1818)], signature="s"),
            "LocalName": "lab bike",
            "Includes": dbus.Array(["tx-power"], signature="s"),
        }

    @dbus.service.method(ADVERTISEMENT_IFACE)
    def Release(self):
        pass


class Rider:
    """Continuous wheel and crank revolutions; the payloads carry the whole ones and the time of
    the last, as a magnet and reed switch report them."""

    def __init__(self):
        self.start = time.monotonic()
        self.time = 0.0
        self.wheel = 0.0
        self.crank = 0.0
        self.wheel_event = 0.0
        self.crank_event = 0.0

    def advance(self):
        now = time.monotonic() - self.start
        wheel_rate, crank_rate = 8.0 / 2.105, 90.0 / 60.0
        wheel = self.wheel + wheel_rate * (now - self.time)
        crank = self.crank + crank_rate * (now - self.time)
        if math.floor(wheel) > math.floor(self.wheel):
            self.wheel_event = now - (wheel - math.floor(wheel)) / wheel_rate
        if math.floor(crank) > math.floor(self.crank):
            self.crank_event = now - (crank - math.floor(crank)) / crank_rate
        self.wheel, self.crank, self.time = wheel, crank, now

    def csc(self):
        wheels = int(self.wheel) & 0xFFFFFFFF
        wheel_time = int(self.wheel_event * 1024) & 0xFFFF
        cranks = int(self.crank) & 0xFFFF
        crank_time = int(self.crank_event * 1024) & 0xFFFF
        return (bytes([0x03]) + wheels.to_bytes(4, "little") + wheel_time.to_bytes(2, "little")
                + cranks.to_bytes(2, "little") + crank_time.to_bytes(2, "little"))

    def power(self):
        watts = int(round(200 + 20 * math.sin(self.time / 10)))
        return bytes([0x00, 0x00]) + watts.to_bytes(2, "little", signed=True)


def main():
    adapter = sys.argv[1] if len(sys.argv) > 1 else "/org/bluez/hci0"
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    information = Service(bus, 0, 0x180A)
    information.add(bus, 0x2A29, ["read"], b"healthgate lab")
    information.add(bus, 0x2A24, ["read"], b"lab bike")
    information.add(bus, 0x2A25, ["read"], b"LAB-BIKE-0001")
    battery = Service(bus, 1, 0x180F)
    battery.add(bus, 0x2A19, ["read"], bytes([88]))
    csc = Service(bus, 2, 0x1816)
    csc_measurement = csc.add(bus, 0x2A5B, ["notify"])
    csc.add(bus, 0x2A5C, ["read"], bytes([0x03, 0x00]))
    power = Service(bus, 3, 0x1818)
    power_measurement = power.add(bus, 0x2A63, ["notify"])
    power.add(bus, 0x2A65, ["read"], bytes(4))
    power.add(bus, 0x2A5D, ["read"], bytes([12]))  # Sensor Location: rear wheel
    application = Application(bus, [information, battery, csc, power])
    advertisement = Advertisement(bus)

    rider = Rider()

    def tick():
        rider.advance()
        csc_measurement.notify(rider.csc())
        power_measurement.notify(rider.power())
        return True

    loop = GLib.MainLoop()

    def failed(what):
        def report(error):
            print("%s failed: %s" % (what, error), flush=True)
            loop.quit()
        return report

    gatt = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.GattManager1")
    advertising = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.LEAdvertisingManager1")
    gatt.RegisterApplication(application, {}, reply_handler=lambda: print("GATT application registered", flush=True),
                             error_handler=failed("RegisterApplication"))

    # bluetoothd rejects an advertisement while the adapter is powered off (the lab starts the
    # bike before powering it, so the gateway never meets it without its services): retried
    # once a second until the adapter takes it.
    attempts = [0]

    def advertise():
        attempts[0] += 1
        advertising.RegisterAdvertisement(
            advertisement.path, {}, reply_handler=lambda: print("Advertisement registered", flush=True),
            error_handler=retry)
        return False

    def retry(error):
        if attempts[0] >= 60:
            failed("RegisterAdvertisement")(error)
        else:
            GLib.timeout_add(1000, advertise)

    advertise()
    GLib.timeout_add(1000, tick)
    loop.run()


if __name__ == "__main__":
    main()
