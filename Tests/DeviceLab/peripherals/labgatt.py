# labgatt.py - what the lab's GATT servers share: a GATT application, its services and
# characteristics, an LE advertisement, and their registration with bluetoothd (retrying the
# advertisement until the adapter is powered). Written against BlueZ's doc/org.bluez.GattManager.rst,
# GattService, GattCharacteristic and LEAdvertisingManager; uses Debian's python3-dbus and gi.
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


def uuid16(short):
    return "0000%04x-0000-1000-8000-00805f9b34fb" % short


class NotPermitted(dbus.exceptions.DBusException):
    _dbus_error_name = "org.bluez.Error.NotPermitted"


class Characteristic(dbus.service.Object):
    """`read`, when given, makes each read's value; `subscribed` runs when a client starts
    notifications or indications (a device that pushes its stored readings then)."""

    def __init__(self, bus, service, index, short, flags, value=b"", read=None, subscribed=None):
        self.path = "%s/char%d" % (service.path, index)
        self.service = service
        self.uuid = uuid16(short)
        self.flags = flags
        self.value = bytes(value)
        self.read = read
        self.subscribed = subscribed
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
        return dbus.Array(self.read() if self.read else self.value, signature="y")

    @dbus.service.method(CHARACTERISTIC_IFACE)
    def StartNotify(self):
        self.notifying = True
        print("subscribed: %s" % self.uuid, flush=True)
        if self.subscribed:
            # After this call's reply: bluetoothd enables the CCC when StartNotify returns.
            GLib.timeout_add(200, lambda: (self.subscribed(), False)[1])

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
    def __init__(self, bus, root, index, short):
        self.path = "%s/service%d" % (root, index)
        self.uuid = uuid16(short)
        self.characteristics = []
        dbus.service.Object.__init__(self, bus, self.path)

    def add(self, bus, short, flags, value=b"", read=None, subscribed=None):
        characteristic = Characteristic(bus, self, len(self.characteristics), short, flags, value, read, subscribed)
        self.characteristics.append(characteristic)
        return characteristic

    def properties(self):
        return {SERVICE_IFACE: {"UUID": self.uuid, "Primary": True}}


class Application(dbus.service.Object):
    def __init__(self, bus, root, services):
        self.services = services
        dbus.service.Object.__init__(self, bus, root)

    @dbus.service.method(OBJECT_MANAGER, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        objects = {}
        for service in self.services:
            objects[dbus.ObjectPath(service.path)] = service.properties()
            for characteristic in service.characteristics:
                objects[dbus.ObjectPath(characteristic.path)] = characteristic.properties()
        return objects


class Advertisement(dbus.service.Object):
    def __init__(self, bus, root, name, services, index=0):
        self.path = "%s/advertisement%d" % (root, index)
        self.name = name
        self.services = services
        dbus.service.Object.__init__(self, bus, self.path)

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {
            "Type": "peripheral",
            "ServiceUUIDs": dbus.Array([uuid16(short) for short in self.services], signature="s"),
            "LocalName": self.name,
            "Includes": dbus.Array(["tx-power"], signature="s"),
        }

    @dbus.service.method(ADVERTISEMENT_IFACE)
    def Release(self):
        pass




# How often a device that no central is connected to repeats its advertisement
# (see repeat_while_unconnected).
REPEAT_SECONDS = 2


def serve(bus, adapter, application, advertisement, ticks):
    """Registers the application and the advertisement on `adapter`, calls each (seconds,
    function) of `ticks` that often, and runs until a registration fails for good. While no
    central is connected, the advertisement is repeated (see repeat_while_unconnected)."""
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

    # bluetoothd rejects an advertisement while the adapter is powered off (the lab starts a
    # device before powering it, so the gateway never meets it without its services): retried
    # once a second until the adapter takes it.
    attempts = [0]
    advertised = [False]

    def registered():
        advertised[0] = True
        print("Advertisement registered", flush=True)

    def advertise():
        attempts[0] += 1
        advertising.RegisterAdvertisement(advertisement.path, {}, reply_handler=registered, error_handler=retry)
        return False

    def retry(error):
        if attempts[0] >= 60:
            failed("RegisterAdvertisement")(error)
        else:
            GLib.timeout_add(1000, advertise)

    advertise()
    repeat = Advertisement(bus, advertisement.path.rsplit("/", 1)[0], advertisement.name, advertisement.services, index=1)
    repeat_while_unconnected(bus, adapter, repeat, lambda: advertised[0])
    for seconds, tick in ticks:
        GLib.timeout_add(int(seconds * 1000), lambda tick=tick: (tick(), True)[1])
    loop.run()


def repeat_while_unconnected(bus, adapter, repeat, ready=lambda: True, repeated=lambda: None):
    """While no central is connected to `adapter` (and `ready()`), registers the advertisement
    `repeat` with bluetoothd and unregisters it again, every REPEAT_SECONDS, in the caller's
    GLib main loop; `repeated()` runs at each registration bluetoothd took.

    A device whose advertisement is registered once is then also heard again every
    REPEAT_SECONDS. btvirt's controller in the lab's BlueZ (5.66) reports an advertiser to a
    scanner only when the scan or the advertising is enabled, not at every advertising interval
    as a radio does, and the kernel drops a report that arrives before its discovery has started
    (the one at scan enable, in the same instant): a trace of CI's run of 2026-11-26 shows three
    discovery cycles of 10 s on end with the meter's only report dropped that way, and in
    another CI run that day `healthgate scan` missed BlueZ's example monitor in all three of its
    cycles. BlueZ's emulator later sends reports at each interval for that reason
    (linux-bluetooth, "emulator: btdev: send LE meta packets in intervals"); each repeated set's
    enable is such a report."""
    advertising = dbus.Interface(bus.get_object(BLUEZ, adapter), "org.bluez.LEAdvertisingManager1")
    objects = dbus.Interface(bus.get_object(BLUEZ, "/"), OBJECT_MANAGER)
    repeating = [False]

    def connected():
        for path, interfaces in objects.GetManagedObjects().items():
            device = interfaces.get("org.bluez.Device1")
            if device and path.startswith(adapter + "/") and device.get("Connected"):
                return True
        return False

    def repeat_advertisement():
        if repeating[0]:
            advertising.UnregisterAdvertisement(repeat.path, reply_handler=lambda: None, error_handler=lambda error: None)
            repeating[0] = False
        elif ready() and not connected():
            advertising.RegisterAdvertisement(
                repeat.path, {}, reply_handler=lambda: (repeating.__setitem__(0, True), repeated()),
                error_handler=lambda error: None)
        return True

    GLib.timeout_add(REPEAT_SECONDS * 500, repeat_advertisement)


def system_bus():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    return dbus.SystemBus()
