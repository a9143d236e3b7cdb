#!/usr/bin/env python3
# bumble-class.py BROADCASTING CONNECTED - the Bluetooth half of a class (class.sh), on Google's
# Bumble: the gateway's controller, offered to the kernel over /dev/vhci (hci0), and on the same
# Bumble link
#   * BROADCASTING Polar-like straps that only advertise their heart rate (bumble_broadcast.Strap,
#     ADV_NONCONN_IND, LE General Discoverable), addresses A0:9E:1A:C1:A5:0N, names
#     "Polar H10 C1A5500N" (N from 1): the Polar device id, C1A5500N, is what a participant lists;
#     each changes its heart rate every second and advertises twice a second;
#   * CONNECTED heart-rate straps, each a Bumble host with the Heart Rate service behind its own
#     controller (as bumble-hr.py), addresses F0:C1:A5:00:00:0N: once a central enables
#     notifications, one measurement a second with its RR interval, until the link drops.
# The gateway's controller applies a duplicate filter per (address, data), as many controllers do
# (bumble_broadcast.ScanningController): a discovery hears every change of a broadcast.
#
# Output, one JSON object per line (bumble_broadcast.emit):
#   {"event": "advertised", "t", "address", "device", "heartRate", …} every distinct value a
#     broadcasting strap starts advertising;
#   {"event": "notified", "t", "address", "device", "heartRate", "rr"} every measurement a
#     connected strap sent;
#   {"event": "subscription"|"connected"|"disconnected", "t", "address", …};
# and one line "advertising as …" once everything advertises.
# Written against Bumble 0.0.236.
import asyncio
import os
import struct
import sys

from bumble import hci, ll
from bumble.core import AdvertisingData
from bumble.device import Device
from bumble.gatt import (GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, GATT_HEART_RATE_SERVICE, Characteristic,
                         Service)
from bumble.transport import open_transport
from bumble.controller import Controller

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bumble_lab import GATEWAY_ADDRESS, ConnectionAddressedLink  # noqa: E402

# Twice a second, each value of a second advertised twice: beside an Advertisement Monitor (the
# class runs bluetoothd -E) the controller's duplicate filter is off and every advertisement goes
# through Bumble's controller, the kernel and bluetoothd, which under TCG on a loaded host starved
# the rest of the class (README.md, "A class"). bumble-advertisers.py keeps ADVERTISING_PERIOD.
CLASS_ADVERTISING_PERIOD = 0.5
from bumble_broadcast import (ScanningController, Strap, advertising_data, emit,  # noqa: E402
                              without_extended_advertising)


class ConnectedStrap:
    """A heart-rate strap that a central connects to: a Bumble host behind its own controller."""

    def __init__(self, index, link):
        self.index = index
        self.address = "F0:C1:A5:00:00:%02X" % index
        self.name = "Class HR %d" % index
        controller = without_extended_advertising(Controller(self.name, link=link))
        self.device = Device.with_hci(self.name, hci.Address(self.address), controller, controller)
        self.measurement = Characteristic(
            GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, Characteristic.Properties.READ | Characteristic.Properties.NOTIFY,
            Characteristic.READABLE, bytes([0x00, 0x00]))
        self.device.add_service(Service(GATT_HEART_RATE_SERVICE, [self.measurement]))
        self.device.advertising_data = advertising_data(
            self.name, 0x06, (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", 0x180D)))
        self.sent = 0
        self.task = None
        self.device.on("characteristic_subscription", self.on_subscription)
        self.device.on("connection", self.on_connection)

    def on_connection(self, connection):
        emit("connected", address=self.address, device=self.name, peer=str(connection.peer_address))
        connection.on("disconnection", lambda reason: self.on_disconnection(reason))

    def on_disconnection(self, reason):
        emit("disconnected", address=self.address, device=self.name, reason=reason)
        if self.task:
            self.task.cancel()
            self.task = None

    def on_subscription(self, connection, characteristic, notify_enabled, indicate_enabled):
        emit("subscription", address=self.address, device=self.name, notify=bool(notify_enabled))
        if self.task:
            self.task.cancel()
            self.task = None
        if notify_enabled:
            self.task = asyncio.get_running_loop().create_task(self.notify(connection))

    async def notify(self, connection):
        while True:
            self.sent += 1
            heart_rate = 95 + (self.sent * 3 + self.index * 17) % 70
            rr = round(1024 * 60 / heart_rate)
            # Flags 0x10: uint8 heart rate, RR intervals present (HRS 1.0, 3.1.1).
            await self.device.notify_subscriber(connection, self.measurement, bytes([0x10, heart_rate]) + struct.pack("<H", rr))
            emit("notified", address=self.address, device=self.name, heartRate=heart_rate, rr=rr)
            await asyncio.sleep(1)


async def main(broadcasting, connected):
    async with await open_transport("vhci") as gateway_side:
        link = ConnectionAddressedLink()
        without_extended_advertising(ScanningController(
            "gateway", host_source=gateway_side.source, host_sink=gateway_side.sink, link=link,
            public_address=GATEWAY_ADDRESS, duplicate_filter="data"))
        straps = [Strap(n, "A0:9E:1A:C1:A5:%02X" % n, "Polar H10 C1A550%02X" % n, 0x06, "full")
                  for n in range(1, broadcasting + 1)]
        hr_straps = [ConnectedStrap(n, link) for n in range(1, connected + 1)]
        for strap in hr_straps:
            await strap.device.power_on()
            await strap.device.start_advertising(auto_restart=True)

        last = {}

        async def seconds():
            while True:
                for strap in straps:
                    strap.tick += 1
                await asyncio.sleep(1)

        async def broadcast():
            while True:
                for strap in straps:
                    data, block, fields = strap.advertisement()
                    if last.get(strap.address) != block:
                        last[strap.address] = block
                        emit("advertised", address=strap.address, device=strap.name, data=block.hex(), **fields)
                    link.send_advertising_pdu(None, ll.AdvNonConnInd(
                        advertiser_address=hci.Address(strap.address, hci.Address.PUBLIC_DEVICE_ADDRESS), data=data))
                await asyncio.sleep(CLASS_ADVERTISING_PERIOD)

        emit("ready", broadcasting=[s.address for s in straps], connected=[s.address for s in hr_straps])
        print("advertising as", ", ".join([s.name for s in straps] + [s.name for s in hr_straps]), flush=True)
        await asyncio.gather(seconds(), broadcast())


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
