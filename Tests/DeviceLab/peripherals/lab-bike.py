#!/usr/bin/python3
# lab-bike.py ADAPTER_PATH - a bike for the device lab: a GATT server with Cycling Speed and
# Cadence (0x1816) and Cycling Power (0x1818), Device Information and Battery, and an LE
# advertisement of both services, registered with bluetoothd on ADAPTER_PATH (/org/bluez/hci1).
#
# While a client is subscribed, it notifies once a second: a CSC Measurement with cumulative
# wheel and crank revolutions and their event times (1/1024 s), and a Cycling Power Measurement
# with the instantaneous power. The rider holds 8 m/s (a 2.105 m wheel: 3.8 revolutions a
# second), 90 rpm and 180 to 220 W.
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labgatt import Advertisement, Application, Service, serve, system_bus  # noqa: E402

ROOT = "/org/healthgate/labbike"


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
    bus = system_bus()
    information = Service(bus, ROOT, 0, 0x180A)
    information.add(bus, 0x2A29, ["read"], b"healthgate lab")
    information.add(bus, 0x2A24, ["read"], b"lab bike")
    information.add(bus, 0x2A25, ["read"], b"LAB-BIKE-0001")
    battery = Service(bus, ROOT, 1, 0x180F)
    battery.add(bus, 0x2A19, ["read"], bytes([88]))
    csc = Service(bus, ROOT, 2, 0x1816)
    csc_measurement = csc.add(bus, 0x2A5B, ["notify"])
    csc.add(bus, 0x2A5C, ["read"], bytes([0x03, 0x00]))
    power = Service(bus, ROOT, 3, 0x1818)
    power_measurement = power.add(bus, 0x2A63, ["notify"])
    power.add(bus, 0x2A65, ["read"], bytes(4))
    power.add(bus, 0x2A5D, ["read"], bytes([12]))  # Sensor Location: rear wheel
    application = Application(bus, ROOT, [information, battery, csc, power])
    advertisement = Advertisement(bus, ROOT, "lab bike", [0x1816, 0x1818])
    rider = Rider()

    def tick():
        rider.advance()
        csc_measurement.notify(rider.csc())
        value = rider.power()
        if power_measurement.notifying:
            # Each power notification handed to bluetoothd while a central is subscribed, for the
            # scenario to count against the stored samples: "sent power <unix time> <watts>".
            print("sent power %.3f %d" % (time.time(), int.from_bytes(value[2:4], "little", signed=True)), flush=True)
        power_measurement.notify(value)

    serve(bus, adapter, application, advertisement, [(1, tick)])


if __name__ == "__main__":
    main()
