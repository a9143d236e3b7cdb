#!/usr/bin/env python3
# bumble-cgm.py CONNECTIONS LIVE BAD_CONNECTION - a continuous glucose monitor (CGMS 1.0.1,
# 0x181F) on Google's Bumble, a Bluetooth stack independent of BlueZ and of healthgate's
# simulator, for the device lab (bluetooth-cgm.sh). Written for this lab from the service's
# specification, against Bumble 0.0.236; the link comes from Tests/DeviceLab/peripherals/bumble_lab.py.
#
# The sensor's session started HISTORY minutes before it starts: it holds records at time
# offsets 0 … HISTORY-1. It supports E2E-CRC (CGM Feature bit 12): every value it sends ends in
# the CRC-16/MCRF4XX of its other octets, and it refuses a write to a control point or to Session
# Start Time whose CRC does not match. Its Session Start Time is unset (year 0) until a collector
# writes one. Per connection, once the collector has subscribed, it sends LIVE records, one new
# time offset every second or so (the first two in one notification), and then drops the link,
# CONNECTIONS times; afterwards it stays connected and keeps sending. On connection
# BAD_CONNECTION, its second live record goes out with a broken CRC (a record no collector may
# store); the sensor's memory keeps the good one, and sends that if asked again.
#
# A Record Access Control Point "report stored records" (all, or time offset >= n) is answered
# with the records asked for, then the response code. The Specific Ops Control Point answers
# start/stop session and set communication interval. Logged for the scenario:
#   sent <offset> <mg/dL>        a record sent with a good CRC (live or downloaded)
#   sent-bad <offset> <mg/dL>    a record sent with a broken CRC
#   racp all | racp from <n>     a request, as the collector asked it
#   session start written <hex>  a Session Start Time written (with a valid CRC)
import asyncio
import os
import struct
import sys

from bumble.controller import Controller
from bumble.core import UUID, AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
from bumble.transport import open_transport

LAB = os.path.join(os.environ.get("HEALTHGATE_REPO", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")),
                   "Tests", "DeviceLab", "peripherals")
sys.path.insert(0, LAB)
from bumble_lab import gateway_link, log  # noqa: E402

NAME = "Bumble CGM"
ADDRESS = "F0:F1:F2:F3:F4:C6"
HISTORY = 40
CGM = 0x181F


def crc16(data):
    """CRC-16/MCRF4XX: reflected 0x1021, initial 0xFFFF, no final XOR."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def with_crc(data):
    return bytes(data) + struct.pack("<H", crc16(data))


def crc_ok(value):
    return len(value) >= 3 and struct.unpack("<H", value[-2:])[0] == crc16(value[:-2])


def glucose(offset):
    """mg/dL at a time offset: 90 to 150, a slow wave."""
    return 120 + (offset * 7) % 31 - 15


def sfloat(mantissa, exponent=0):
    return struct.pack("<H", ((exponent & 0xF) << 12) | (mantissa & 0x0FFF))


def record(offset, good=True):
    """Size 11: flags 0x81 (trend, Status octet), concentration, offset, Status 0, trend, CRC."""
    trend = glucose(offset) - glucose(offset - 1)
    body = bytes([11, 0x81]) + sfloat(glucose(offset)) + struct.pack("<H", offset) + bytes([0x00]) + sfloat(trend)
    value = with_crc(body)
    return value if good else value[:-1] + bytes([value[-1] ^ 0x5A])


def u16(value):
    return UUID.from_16_bits(value)


async def main(connections, live, bad_connection):
    async with await open_transport("vhci") as gateway_side:
        link = gateway_link(gateway_side)
        controller = Controller("sensor", link=link)
        device = Device.with_hci(NAME, Address(ADDRESS), controller, controller)
        state = {"next": HISTORY, "start_time": bytes(9), "connections": 0, "live_task": None, "stopped": False}
        READ, WRITE, NOTIFY, INDICATE = (Characteristic.Properties.READ, Characteristic.Properties.WRITE,
                                         Characteristic.Properties.NOTIFY, Characteristic.Properties.INDICATE)
        readable, writeable = Characteristic.READABLE, Characteristic.WRITEABLE

        measurement = Characteristic(u16(0x2AA7), NOTIFY, readable, b"")
        # Features: trend (15), E2E-CRC (12), low battery (9), malfunction (6); interstitial fluid, subcutaneous.
        features = (1 << 15) | (1 << 12) | (1 << 9) | (1 << 6)
        feature = Characteristic(u16(0x2AA8), READ, readable, with_crc(struct.pack("<I", features)[:3] + bytes([0x59])))

        def read_status(connection):
            offset = state["next"]
            return with_crc(struct.pack("<H", offset) + bytes([0x01 if state["stopped"] else 0x00, 0, 0]))

        status = Characteristic(u16(0x2AA9), READ, readable, CharacteristicValue(read=read_status))

        def read_start_time(connection):
            return with_crc(state["start_time"])

        def write_start_time(connection, value):
            if len(value) != 11 or not crc_ok(value):
                log("session start refused", bytes(value).hex())
                return
            state["start_time"] = bytes(value[:9])
            log("session start written", bytes(value).hex())

        start_time = Characteristic(u16(0x2AAA), READ | WRITE, readable | writeable,
                                    CharacteristicValue(read=read_start_time, write=write_start_time))
        run_time = Characteristic(u16(0x2AAB), READ, readable, with_crc(struct.pack("<H", 336)))

        def write_racp(connection, value):
            value = bytes(value)
            if value == bytes([0x01, 0x01]):
                first = 0
                log("racp all")
            elif len(value) == 5 and value[:3] == bytes([0x01, 0x03, 0x01]):
                first = struct.unpack("<H", value[3:])[0]
                log("racp from", first)
            else:
                log("racp unsupported", value.hex())
                asyncio.get_running_loop().create_task(device.indicate_subscriber(connection, racp, bytes([0x06, 0x00, value[0] if value else 0, 0x02])))
                return

            async def answer():
                offsets = list(range(first, state["next"]))
                for offset in offsets:
                    await device.notify_subscriber(connection, measurement, record(offset))
                    log("sent", offset, glucose(offset))
                await device.indicate_subscriber(connection, racp, bytes([0x06, 0x00, 0x01, 0x01 if offsets else 0x06]))

            asyncio.get_running_loop().create_task(answer())

        racp = Characteristic(u16(0x2A52), WRITE | INDICATE, writeable, CharacteristicValue(write=write_racp))

        def write_socp(connection, value):
            value = bytes(value)
            if not crc_ok(value):
                log("specific ops refused (CRC)", value.hex())
                return
            op = value[0]
            code = 0x01 if op in (0x01, 0x1A, 0x1B) else 0x02
            if op == 0x1A:
                state["stopped"] = False
            elif op == 0x1B:
                state["stopped"] = True
            log("specific ops", hex(op))
            asyncio.get_running_loop().create_task(device.indicate_subscriber(connection, socp, with_crc(bytes([0x1C, op, code]))))

        socp = Characteristic(u16(0x2AAC), WRITE | INDICATE, writeable, CharacteristicValue(write=write_socp))

        device.add_service(Service(u16(CGM), [measurement, feature, status, start_time, run_time, racp, socp]))
        device.add_service(Service(u16(0x180A), [
            Characteristic(u16(0x2A29), READ, readable, b"Bumble Lab"),
            Characteristic(u16(0x2A25), READ, readable, b"CGM-0001"),
        ]))
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", CGM)),
            (AdvertisingData.COMPLETE_LOCAL_NAME, NAME.encode()),
        ]))

        async def send_live(connection):
            state["connections"] += 1
            number = state["connections"]
            # Let the collector read, write and download first: the live records follow.
            await asyncio.sleep(2)
            sent = 0
            while number > connections or sent < live:
                offset = state["next"]
                if sent == 0:
                    # Two records in one notification.
                    state["next"] += 2
                    await device.notify_subscriber(connection, measurement, record(offset) + record(offset + 1))
                    log("sent", offset, glucose(offset))
                    log("sent", offset + 1, glucose(offset + 1))
                    sent += 2
                else:
                    state["next"] += 1
                    good = not (number == bad_connection and sent == 2)
                    await device.notify_subscriber(connection, measurement, record(offset, good))
                    log("sent" if good else "sent-bad", offset, glucose(offset))
                    sent += 1
                await asyncio.sleep(1.2)
            log(f"connection {number}: {sent} live sent")
            if number < connections:
                await asyncio.sleep(0.5)
                await connection.disconnect()
                log(f"connection {number}: link dropped by the sensor")
            elif number == connections:
                log("all connections done")

        def on_subscription(connection, characteristic, notify_enabled, indicate_enabled):
            log(f"subscription {characteristic.uuid}: notify {notify_enabled} indicate {indicate_enabled}")
            if characteristic is measurement and notify_enabled:
                task = state["live_task"]
                if task is None or task.done():
                    state["live_task"] = asyncio.get_running_loop().create_task(send_live(connection))

        device.on("characteristic_subscription", on_subscription)
        device.on("connection", lambda connection: log("connected", connection.peer_address))
        await device.power_on()
        await device.start_advertising(auto_restart=True)
        log("advertising as", NAME, device.random_address)
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])))
