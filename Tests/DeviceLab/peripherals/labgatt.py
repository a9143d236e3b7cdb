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
    def __init__(self, bus, root, name, services):
        self.path = root + "/advertisement0"
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




def serve(bus, adapter, application, advertisement, ticks):
    """Registers the application and the advertisement on `adapter`, calls each (seconds,
    function) of `ticks` that often, and runs until a registration fails for good."""
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
    for seconds, tick in ticks:
        GLib.timeout_add(int(seconds * 1000), lambda tick=tick: (tick(), True)[1])
    loop.run()


def system_bus():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    return dbus.SystemBus()
