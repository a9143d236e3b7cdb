#!/usr/bin/env python3
# adv-reader.py MODE SECONDS OUT [ADAPTER] - what bluetoothd reports of advertisements over D-Bus,
# as a receiver without its own HCI access sees them (Debian's python3-dbus and GLib).
#
# MODE:
#   bare       StartDiscovery without a discovery filter;
#   discovery  SetDiscoveryFilter({Transport: le, DuplicateData: true}) and StartDiscovery;
#   filtered   the same with RSSI -120 in the filter: bluetoothd then runs a filtered discovery
#              (the kernel's Start Service Discovery), and creates devices whose flags say they
#              are not discoverable;
#   monitor    an Advertisement Monitor (org.bluez.AdvertisementMonitorManager1, experimental:
#              bluetoothd -E) with or_patterns for Polar's manufacturer data (0xFF, 6B 00) and the
#              Xiaomi scales' service data (0x16, 1D 18 and 1B 18), no discovery: passive scanning;
#   both       the monitor and the discovery together.
# Every ManufacturerData or ServiceData value bluetoothd announces for a Device1 (InterfacesAdded,
# PropertiesChanged) is written to OUT as one JSON object per line:
#   {"event": "reported", "t": …, "address": …, "path": "manufacturer"|"service", "key": "006b"|…,
#    "data": HEX}
# plus {"event": "mode", …} at the start, {"event": "monitor", "state": "registered"} and
# {"event": "discovery", "state": "started"} when the receiving path is in place (the counts start
# there), and {"event": "error", "what": …, "error": …} when a call
# is refused (the monitor manager missing without -E, or a bus policy refusing the caller).
# Exits after SECONDS; 0 when the mode's calls succeeded, 2 when one was refused.
import json
import sys
import time

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

MODE, SECONDS, OUT = sys.argv[1], float(sys.argv[2]), sys.argv[3]
ADAPTER = "/org/bluez/" + (sys.argv[4] if len(sys.argv) > 4 else "hci0")
APP = "/org/healthgate/lab/monitor"
MONITOR = "org.bluez.AdvertisementMonitor1"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
out = open(OUT, "a", buffering=1)
status = {"code": 0}


def emit(event, **fields):
    out.write(json.dumps({"event": event, "t": round(time.time(), 3), **fields}) + "\n")


def address_of(path):
    return path.rsplit("/dev_", 1)[-1].replace("_", ":") if "/dev_" in path else None


def report(path, properties):
    address = address_of(path)
    if address is None or not path.startswith(ADAPTER + "/"):
        return
    for company, value in dict(properties.get("ManufacturerData", {})).items():
        emit("reported", address=address, path="manufacturer", key=f"{int(company):04x}", data=bytes(value).hex())
    for uuid, value in dict(properties.get("ServiceData", {})).items():
        emit("reported", address=address, path="service", key=str(uuid)[4:8], data=bytes(value).hex())


def on_added(path, interfaces):
    if "org.bluez.Device1" in interfaces:
        report(str(path), interfaces["org.bluez.Device1"])


def on_changed(interface, changed, invalidated, path=None):
    if interface == "org.bluez.Device1":
        report(str(path), changed)


bus.add_signal_receiver(on_added, dbus_interface="org.freedesktop.DBus.ObjectManager", signal_name="InterfacesAdded")
bus.add_signal_receiver(on_changed, dbus_interface="org.freedesktop.DBus.Properties", signal_name="PropertiesChanged",
                        path_keyword="path")


def refused(what, error):
    emit("error", what=what, error=str(error))
    status["code"] = 2


class Monitor(dbus.service.Object):
    """One or_patterns monitor without RSSI thresholds (BlueZ's adv-monitor-api.txt)."""

    def __init__(self, index, patterns):
        self.path = f"{APP}/monitor{index}"
        self.patterns = dbus.Array([dbus.Struct((dbus.Byte(start), dbus.Byte(kind), dbus.Array(
            [dbus.Byte(b) for b in content], signature="y")), signature="yyay") for start, kind, content in patterns],
            signature="(yyay)")
        super().__init__(bus, self.path)

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Type": dbus.String("or_patterns"), "Patterns": self.patterns}

    @dbus.service.method(MONITOR, in_signature="", out_signature="")
    def Activate(self):
        emit("monitor", state="activated", monitor=self.path)

    @dbus.service.method(MONITOR, in_signature="", out_signature="")
    def Release(self):
        emit("monitor", state="released", monitor=self.path)

    @dbus.service.method(MONITOR, in_signature="o", out_signature="")
    def DeviceFound(self, device):
        emit("monitor", state="found", address=address_of(str(device)))

    @dbus.service.method(MONITOR, in_signature="o", out_signature="")
    def DeviceLost(self, device):
        emit("monitor", state="lost", address=address_of(str(device)))


class Application(dbus.service.Object):
    def __init__(self, monitors):
        self.monitors = monitors
        super().__init__(bus, APP)

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {monitor.path: {MONITOR: monitor.GetAll(MONITOR)} for monitor in self.monitors}


emit("mode", mode=MODE, adapter=ADAPTER)
# No introspection: the shipped policy grants the service user no Introspect, so every call
# names its signature.
adapter = bus.get_object("org.bluez", ADAPTER, introspect=False)


def start_discovery():
    if MODE == "bare":
        try:
            dbus.Interface(adapter, "org.bluez.Adapter1").StartDiscovery()
            emit("discovery", state="started")
        except dbus.exceptions.DBusException as error:
            refused("StartDiscovery", error)
        return
    discovery_filter = {"Transport": "le", "DuplicateData": dbus.Boolean(True)}
    if MODE == "filtered":
        discovery_filter["RSSI"] = dbus.Int16(-120)
    try:
        dbus.Interface(adapter, "org.bluez.Adapter1").SetDiscoveryFilter(discovery_filter, signature="a{sv}")
        dbus.Interface(adapter, "org.bluez.Adapter1").StartDiscovery()
        emit("discovery", state="started")
    except dbus.exceptions.DBusException as error:
        refused("StartDiscovery", error)


def registered():
    emit("monitor", state="registered")
    # In `both`, discovery starts once the monitor is registered: the kernel then scans without
    # the duplicate filter from the start.
    if MODE == "both":
        start_discovery()


def not_registered(error):
    refused("RegisterMonitor", error)
    if MODE == "both":
        start_discovery()


if MODE in ("monitor", "both"):
    application = Application([Monitor(0, [(0, 0xFF, b"\x6b\x00")]),
                               Monitor(1, [(0, 0x16, b"\x1d\x18"), (0, 0x16, b"\x1b\x18")])])
    # Asynchronous: bluetoothd reads the application's objects (GetManagedObjects) before it
    # answers, and this process must be in its main loop to serve that call.
    dbus.Interface(adapter, "org.bluez.AdvertisementMonitorManager1").RegisterMonitor(
        dbus.ObjectPath(APP), signature="o", reply_handler=registered, error_handler=not_registered)
if MODE in ("bare", "discovery", "filtered"):
    start_discovery()

loop = GLib.MainLoop()
GLib.timeout_add(int(SECONDS * 1000), loop.quit)
loop.run()
emit("done")
# No StopDiscovery or UnregisterMonitor: bluetoothd calls the monitors' Release before it answers
# UnregisterMonitor, which a process waiting for that answer cannot serve (a 25 s timeout each).
# bluetoothd ends a client's discovery and drops its monitors when the client leaves the bus.
sys.exit(status["code"])
