#!/usr/bin/python3
# lab-health.py ADAPTER_PATH - a home health station for the device lab: one GATT server with a
# blood pressure monitor (0x1810), a thermometer (0x1809), a weight scale (0x181D) with body
# composition (0x181B), a pulse oximeter (0x1822), Current Time (0x1805) and Device Information,
# and an LE advertisement, registered with bluetoothd on ADAPTER_PATH. (One peripheral: a btvirt
# controller holds one central link, and the gateway follows every profile a device has.)
#
# Its clock runs 90 s fast (Current Time and every time stamp) until a client writes Current Time
# (Exact Time 256), which sets it: the readings it stored keep the time stamps of the old clock,
# later ones carry the new clock's. When a client enables
# indications of Blood Pressure Measurement it first pushes the two readings it stored, taken
# 10 and 5 minutes earlier, then indicates a new reading every 5 s: about 124/81 mmHg with a
# pulse of 68 (IEEE-11073 SFLOAT). Every 5 s as well:
# - the thermometer indicates 36.8 degC taken in the mouth (IEEE-11073 FLOAT);
# - the scale indicates a Weight Measurement of 72.6 kg (user 1, no height) and a Body
#   Composition record split across two indications (Multiple Packet Measurement flag): body fat
#   22.4 %, fat free mass 56.2 kg, then weight 72.4 kg and height 1.74 m (BMI 23.91). When a
#   client enables its indications the scale first sends a first part alone, whose second part
#   never comes (the gateway reports it and stores none of it);
# - the oximeter indicates a PLX Spot-check (SpO2 97 %, pulse 61, time stamp) and notifies a PLX
#   Continuous Measurement (SpO2 98 %, pulse 63).
import datetime
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dbus  # noqa: E402
import dbus.service  # noqa: E402
from labgatt import (  # noqa: E402
    CHARACTERISTIC_IFACE, Advertisement, Application, Characteristic, Service, serve, system_bus)

ROOT = "/org/healthgate/labhealth"
# The device's clock is its own: set once from this machine's clock plus an error (90 s fast, or
# LAB_DEVICE_CLOCK_ERROR_SECONDS: the clock scenario boots the VM a day behind and gives the
# station the true time), then it runs on the monotonic clock, so a step of this machine's wall
# clock does not move it, as a real device's clock is not moved by the gateway's. A Current Time
# write sets it.
clock_base = [datetime.datetime.now(datetime.timezone.utc)
              + datetime.timedelta(seconds=float(os.environ.get("LAB_DEVICE_CLOCK_ERROR_SECONDS", "90"))),
              time.monotonic()]


def device_now():
    return clock_base[0] + datetime.timedelta(seconds=time.monotonic() - clock_base[1])


def device_time(ago=datetime.timedelta(0)):
    """Date Time (0x2A08) of the device's clock, `ago` before now."""
    t = device_now() - ago
    return t.year.to_bytes(2, "little") + bytes([t.month, t.day, t.hour, t.minute, t.second])


class CurrentTime(Characteristic):
    """Current Time (0x2A2B), readable and writable: a write of an Exact Time 256 (Date Time, day
    of the week, 1/256 s, adjust reason) sets the clock."""

    @dbus.service.method(CHARACTERISTIC_IFACE, in_signature="aya{sv}")
    def WriteValue(self, value, options):
        v = bytes(value)
        written = datetime.datetime(int.from_bytes(v[0:2], "little"), v[2], v[3], v[4], v[5], v[6],
                                    tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=v[8] / 256)
        clock_base[:] = [written, time.monotonic()]
        error = written - datetime.datetime.now(datetime.timezone.utc)
        print("clock set to %s (adjust reason %d): now %+.1f s off" % (written.isoformat(), v[9],
              error.total_seconds()), flush=True)


def sfloat(value):
    return (int(value) & 0x0FFF).to_bytes(2, "little")


def pressure(systolic, diastolic, pulse, ago=datetime.timedelta(0)):
    """flags 0x06: time stamp, pulse rate; mmHg."""
    mean = (systolic + 2 * diastolic) // 3
    return bytes([0x06]) + sfloat(systolic) + sfloat(diastolic) + sfloat(mean) + device_time(ago) + sfloat(pulse)


def weight():
    """flags 0x06: time stamp, user 1; 72.6 kg as 14520 x 0.005 kg."""
    return bytes([0x06]) + (14520).to_bytes(2, "little") + device_time() + bytes([1])


def composition():
    """One Body Composition record in two parts, both with the Multiple Packet flag (bit 12), a
    time stamp and user 1: body fat 22.4 % (224) in each; fat free mass 56.2 kg (11240 x 0.005)
    in the first (flags 0x1046); weight 72.4 kg (14480) and height 1.74 m (1740 mm) in the second
    (flags 0x1C06)."""
    head = (224).to_bytes(2, "little") + device_time() + bytes([1])
    first = (0x1046).to_bytes(2, "little") + head + (11240).to_bytes(2, "little")
    second = (0x1C06).to_bytes(2, "little") + head + (14480).to_bytes(2, "little") + (1740).to_bytes(2, "little")
    return first, second


def spot_check():
    """flags 0x01: time stamp; SpO2 97 %, pulse 61 /min (SFLOAT)."""
    return bytes([0x01]) + sfloat(97) + sfloat(61) + device_time()


def continuous():
    """flags 0x00: SpO2 98 %, pulse 63 /min (SFLOAT)."""
    return bytes([0x00]) + sfloat(98) + sfloat(63)


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
    clock.characteristics.append(
        CurrentTime(bus, clock, 0, 0x2A2B, ["read", "write"], read=lambda: device_time() + bytes([0, 0, 0])))
    cuff = Service(bus, ROOT, 2, 0x1810)
    taken = [datetime.timedelta(minutes=10), datetime.timedelta(minutes=5)]
    stored = [pressure(131, 86, 72, taken[0]), pressure(127, 84, 70, taken[1])]
    # When the stored readings were taken, by the device's clock (a scenario's check reads it).
    for ago in taken:
        print("stored reading taken at %d" % int((device_now() - ago).timestamp()), flush=True)
    measurement = cuff.add(bus, 0x2A35, ["indicate"], subscribed=lambda: [measurement.notify(r) for r in stored])
    cuff.add(bus, 0x2A49, ["read"], bytes([0x00, 0x00]))
    thermometer = Service(bus, ROOT, 3, 0x1809)
    reading = thermometer.add(bus, 0x2A1C, ["indicate"])
    scale = Service(bus, ROOT, 4, 0x181D)
    weighing = scale.add(bus, 0x2A9D, ["indicate"])
    # Weight Scale Feature: time stamp (bit 0), multiple users (bit 1); resolutions not specified.
    scale.add(bus, 0x2A9E, ["read"], (0x03).to_bytes(4, "little"))
    body = Service(bus, ROOT, 5, 0x181B)
    # Body Composition Feature: time stamp, multiple users, fat free mass, weight, height.
    body.add(bus, 0x2A9B, ["read"], (0x0623).to_bytes(4, "little"))
    analysis = body.add(bus, 0x2A9C, ["indicate"], subscribed=lambda: analysis.notify(composition()[0]))
    oximeter = Service(bus, ROOT, 6, 0x1822)
    spot = oximeter.add(bus, 0x2A5E, ["indicate"])
    stream = oximeter.add(bus, 0x2A5F, ["notify"])
    oximeter.add(bus, 0x2A60, ["read"], bytes([0x00, 0x00]))
    application = Application(bus, ROOT, [information, clock, cuff, thermometer, scale, body, oximeter])
    advertisement = Advertisement(bus, ROOT, "lab cuff", [0x1810, 0x1809])

    def tick():
        measurement.notify(pressure(124, 81, 68))
        reading.notify(temperature())
        weighing.notify(weight())
        for part in composition():
            analysis.notify(part)
        spot.notify(spot_check())
        stream.notify(continuous())

    serve(bus, adapter, application, advertisement, [(5, tick)])


if __name__ == "__main__":
    main()
