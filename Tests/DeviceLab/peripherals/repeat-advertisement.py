#!/usr/bin/python3
# repeat-advertisement.py ADAPTER_PATH NAME UUID16... - makes a device that advertises once
# (BlueZ's example-advertisement, in bluetooth-hr.sh) be heard again and again, as a radio is:
# while no central is connected to ADAPTER_PATH (/org/bluez/hci0), an advertisement of NAME with
# the services UUID16 (hex: 180d) is registered with bluetoothd and unregistered again every
# labgatt.REPEAT_SECONDS (labgatt.repeat_while_unconnected says why btvirt needs it). Prints
# "advertised again" at each registration bluetoothd took, and runs until killed.
import os
import sys

from gi.repository import GLib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labgatt import Advertisement, repeat_while_unconnected, system_bus  # noqa: E402

ROOT = "/org/healthgate/labrepeat"


def main():
    if len(sys.argv) < 4:
        raise SystemExit("usage: repeat-advertisement.py ADAPTER_PATH NAME UUID16...")
    adapter, name = sys.argv[1], sys.argv[2]
    services = [int(uuid, 16) for uuid in sys.argv[3:]]
    bus = system_bus()
    repeat = Advertisement(bus, ROOT, name, services)
    repeat_while_unconnected(bus, adapter, repeat, repeated=lambda: print("advertised again", flush=True))
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()
