#!/usr/bin/python3
# lab-health.py ADAPTER_PATH - a blood pressure monitor with a thermometer for the device lab: a
# GATT server with Blood Pressure (0x1810), Health Thermometer (0x1809), Current Time (0x1805),
# Device Information, and an LE advertisement, registered with bluetoothd on ADAPTER_PATH.
#
# Its clock runs 90 s fast (Current Time and every time stamp). When a client enables
# indications of Blood Pressure Measurement it first pushes the two readings it stored, taken
# 10 and 5 minutes earlier, then indicates a new reading every 5 s: about 124/81 mmHg with a
# pulse of 68 (IEEE-11073 SFLOAT). The thermometer indicates 36.8 degC taken in the mouth every
# 5 s (IEEE-11073 FLOAT).
import datetime
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labgatt import Advertisement, Application, Service, serve, system_bus  # noqa: E402

ROOT = "/org/healthgate/labhealth"
CLOCK_ERROR = datetime.timedelta(seconds=90)


def device_time(ago=datetime.timedelta(0)):
    """Date Time (0x2A08) of the device's fast clock, `ago` before now."""
    t = datetime.datetime.now(datetime.timezone.utc) + CLOCK_ERROR - ago
    return t.year.to_bytes(2, "little") + bytes([t.month, t.day, t.hour, t.minute, t.second])


def sfloat(value):
    return (int(value) & 0x0FFF).to_bytes(2, "little")


def pressure(systolic, diastolic, pulse, ago=datetime.timedelta(0)):
    """flags 0x06: time stamp, pulse rate; mmHg."""
    mean = (systolic + 2 * diastolic) // 3
    return bytes([0x06]) + sfloat(systolic) + sfloat(diastolic) + sfloat(mean) + device_time(ago) + sfloat(pulse)


def temperature():
    """flags 0x06: time stamp, temperature type; 36.8 degC as FLOAT (368 x 10^-1), mouth (6)."""
    return bytes([0x06, 0x70, 0x01, 0x00, 0xFF]) + device_time() + bytes([6])


def main():
    adapter = sys.argv[1] if len(sys.argv) > 1 else "/org/bluez/hci0"
    bus = system_bus()
    information = Service(bus, ROOT, 0, 0x180A)
    information.add(bus, 0x2A29, ["read"], b"healthgate lab")
    information.add(bus, 0x2A24, ["read"], b"lab cuff")
    information.add(bus, 0x2A25, ["read"], b"LAB-CUFF-0001")
    clock = Service(bus, ROOT, 1, 0x1805)
    clock.add(bus, 0x2A2B, ["read"], read=lambda: device_time() + bytes([0, 0, 0]))
    cuff = Service(bus, ROOT, 2, 0x1810)
    stored = [pressure(131, 86, 72, datetime.timedelta(minutes=10)), pressure(127, 84, 70, datetime.timedelta(minutes=5))]
    measurement = cuff.add(bus, 0x2A35, ["indicate"], subscribed=lambda: [measurement.notify(r) for r in stored])
    cuff.add(bus, 0x2A49, ["read"], bytes([0x00, 0x00]))
    thermometer = Service(bus, ROOT, 3, 0x1809)
    reading = thermometer.add(bus, 0x2A1C, ["indicate"])
    application = Application(bus, ROOT, [information, clock, cuff, thermometer])
    advertisement = Advertisement(bus, ROOT, "lab cuff", [0x1810, 0x1809])

    def tick():
        measurement.notify(pressure(124, 81, 68))
        reading.notify(temperature())

    serve(bus, adapter, application, advertisement, [(5, tick)])


if __name__ == "__main__":
    main()
