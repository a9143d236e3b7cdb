#!/usr/bin/env python3
# bumble-hr.py CONNECTIONS PER_CONNECTION - a heart-rate monitor on Google's Bumble, the lab's
# second Bluetooth stack: neither BlueZ nor healthgate's simulator. It runs two Bumble
# controllers on one Bumble link: one is offered to the kernel over /dev/vhci (bluetoothd sees
# it as a new adapter, the gateway's), the other carries Bumble's own host stack with a GATT
# server (Heart Rate service 0x180D, Heart Rate Measurement 0x2A37, notify).
#
# Each time a central enables notifications, the monitor sends PER_CONNECTION measurements,
# the first at once (before BlueZ has answered the central's StartNotify or AcquireNotify), then
# one per heartbeat, and then drops the link itself. It does this for CONNECTIONS connections,
# then stays connected and silent. Every measurement it sends is logged as
#   sent <n> <heart rate> <rr in 1/1024 s>
# and "all sent <n>" ends the run, so the scenario can compare what arrived with what was sent.
# Written against Bumble 0.0.236 (bumble.device, bumble.gatt, bumble.controller, bumble.link).
import asyncio
import os
import struct
import sys

from bumble.controller import Controller
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.gatt import (GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, GATT_HEART_RATE_SERVICE, Characteristic,
                         Service)
from bumble.hci import Address
from bumble.transport import open_transport

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bumble_lab import gateway_link, log  # noqa: E402

NAME = "Bumble HR"


async def main(connections, per_connection):
    async with await open_transport("vhci") as gateway_side:
        # The gateway's controller: the kernel's host stack (and bluetoothd) drive it.
        link = gateway_link(gateway_side)
        monitor_controller = Controller("monitor", link=link)
        device = Device.with_hci(NAME, Address("F0:F1:F2:F3:F4:F5"), monitor_controller, monitor_controller)
        measurement = Characteristic(
            GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
            Characteristic.READABLE, bytes([0x00, 0x00]))
        device.add_service(Service(GATT_HEART_RATE_SERVICE, [measurement]))
        device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x180D)),
            (AdvertisingData.COMPLETE_LOCAL_NAME, NAME.encode()),
        ]))
        state = {"sent": 0, "connections": 0, "sending": False}
        finished = asyncio.Event()

        async def send_burst(connection):
            state["sending"] = True
            state["connections"] += 1
            number = state["connections"]
            for index in range(per_connection):
                state["sent"] += 1
                heart_rate = 120 + state["sent"] % 60
                rr = round(1024 * 60 / heart_rate)
                # Flags 0x10: uint8 heart rate, RR intervals present (HRS 1.0, 3.1.1).
                await device.notify_subscriber(connection, measurement, bytes([0x10, heart_rate]) + struct.pack("<H", rr))
                log("sent", state["sent"], heart_rate, rr)
                if index + 1 < per_connection:
                    await asyncio.sleep(rr / 1024)
            log(f"connection {number}: {per_connection} sent")
            if number < connections:
                await asyncio.sleep(0.5)
                await connection.disconnect()
                log(f"connection {number}: link dropped by the monitor")
            else:
                log("all sent", state["sent"])
                finished.set()
            state["sending"] = False

        def on_subscription(connection, characteristic, notify_enabled, indicate_enabled):
            log(f"subscription: notify {notify_enabled}")
            if notify_enabled and not state["sending"] and state["connections"] < connections:
                asyncio.get_running_loop().create_task(send_burst(connection))

        device.on("characteristic_subscription", on_subscription)
        device.on("connection", lambda connection: log("connected", connection.peer_address))
        await device.power_on()
        await device.start_advertising(auto_restart=True)
        log("advertising as", NAME, device.random_address)
        await finished.wait()
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
