#!/usr/bin/env python3
# bumble-advertisers.py DUPLICATE_FILTER - devices that only advertise, on Google's Bumble (the
# lab's second Bluetooth stack, see bumble-hr.py): the gateway's controller, offered to the
# kernel over /dev/vhci, and on the same Bumble link
#   * three Polar-like heart-rate straps broadcasting in manufacturer data (company 0x006B), in
#     the format Polar's SDK parses (polar-ble-sdk, BleAdvertisementContent.processAdvManufacturerData
#     and BlePolarHrAdvertisement): per block, byte 0 = bit 0 battery status, bit 1 sensor
#     contact, bits 2-4 frame counter, bit 6 data type (0 heart rate, 1 "GPB" data whose next
#     byte is its length); then kHz code, fast average, slow average heart rate (the 3-byte
#     legacy form has one heart rate). The heart rate and the frame counter change every second.
#       A0:9E:1A:00:00:01 "Polar H10 1A2B3C4D"  legacy non-connectable (ADV_NONCONN_IND), flags 0x04:
#                                               not discoverable (neither LE general nor limited)
#       A0:9E:1A:00:00:02 "Polar H10 5E6F7A8B"  non-connectable, no flags at all, a GPB block
#                                               (7A 01 03) before the heart-rate block
#       A0:9E:1A:00:00:03 "Polar H9 9C0D1E2F"   legacy connectable (ADV_IND, a Bumble host with the
#                                               Heart Rate service behind it), 3-byte legacy block
#     A legacy advertisement holds at most 31 bytes (the kernel drops a longer legacy report, "legacy
#     adv larger than 31 bytes"): "Polar H10 XXXXXXXX" takes 20, so the GPB strap has no room for flags.
#   * Xiaomi scales in service data, in the format Home Assistant's xiaomi-ble parses
#     (parser.py, _parse_scale_v1/_parse_scale_v2), non-connectable, each weighing advertised as
#     rising unstable weights, then the stabilised weight repeated over many advertisements, then
#     the load-removed flag, then an empty scale:
#       C8:0F:10:00:00:01 "MI SCALE2" Mi Scale 2, 0x181D (10 bytes: control, weight LE, year LE,
#                                     month, day, hour, minute, second); kg, then lb
#       C8:0F:10:00:00:02 "MIBFS"     Mi Body Composition Scale 2, 0x181B (13 bytes: 2 control,
#                                     date-time 7, impedance LE, weight LE); impedance after the
#                                     weight settles
# Every strap advertises 4 times a second, every scale 4 times a second.
#
# The gateway's controller emulates the controller's duplicate filter, which Bumble's own
# controller ignores: with DUPLICATE_FILTER `address` (what many controllers do, BlueZ issue 406),
# an enabled filter reports each advertiser once per LE Set Scan Enable; with `data` once per
# distinct (address, data); with `none` the filter is ignored. The controller reports legacy
# advertising reports only (extended advertising is not offered to the kernel).
#
# Output, one JSON object per line:
#   {"event": "advertised", "t": …, "address": …, "device": …, "path": "manufacturer"|"service",
#    "key": "006b"|"181d"|"181b", "data": HEX (after the company id or UUID), …decoded fields}
#     once for every distinct value an advertiser starts advertising;
#   {"event": "scan", "t": …, "enable": …, "filterDuplicates": …, "active": …} for every LE Set
#     Scan Enable the kernel sends;
#   {"event": "controller", "t": …, "reported": N, "filtered": N} every 5 s;
#   {"event": "ready", …} once everything advertises.
# Written against Bumble 0.0.236 (bumble.controller, bumble.link, bumble.ll, bumble.device).
import asyncio
import datetime
import os
import struct
import sys
import time

from bumble import hci, ll
from bumble.controller import Controller
from bumble.core import AdvertisingData
from bumble.device import AdvertisingType, Device
from bumble.gatt import (GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, GATT_HEART_RATE_SERVICE, Characteristic,
                         Service)
from bumble.transport import open_transport

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bumble_lab import GATEWAY_ADDRESS, ConnectionAddressedLink  # noqa: E402
from bumble_broadcast import (ADVERTISING_PERIOD, ScanningController, Strap, advertising_data, emit,  # noqa: E402
                             without_extended_advertising)

def clock_bytes(when):
    return struct.pack("<HBBBBB", when.year, when.month, when.day, when.hour, when.minute, when.second)


class Scale:
    """A Xiaomi scale: a weighing every CYCLE seconds (settled from 3 to 9 s), its service data changing as it settles."""
    CYCLE = 16

    def __init__(self, address, name, service, weighings):
        self.address, self.name, self.service, self.weighings = address, name, service, weighings
        self.started = time.monotonic()
        self.when = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)

    def service_data(self):
        elapsed = time.monotonic() - self.started
        number = int(elapsed // self.CYCLE) % len(self.weighings)
        weighing = int(elapsed // self.CYCLE) + 1
        phase = elapsed % self.CYCLE
        kilograms, unit = self.weighings[number]
        stabilized = removed = impedance_present = False
        if phase < 3:          # stepping on: unstable weights rising every half second
            shown = kilograms * (0.6 + 0.1 * int(phase * 2) / 1.5)
        elif phase < 9:        # settled: the same stabilised weighing, advertised many times
            shown, stabilized = kilograms, True
            impedance_present = self.service == 0x181B and phase >= 5
        elif phase < 11:       # stepped off: the weight with the load-removed flag
            shown, stabilized, removed = kilograms, True, True
        else:                  # empty
            shown, removed = 0.0, True
        if phase < 0.5:
            self.when = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        # xiaomi-ble: kg advertised ×200, lb ×100, jin (catty) ×100.
        raw = round(shown * 200) if unit == "kg" else round(shown / 0.45359237 * 100) if unit == "lb" else round(shown * 2 * 100)
        impedance = 500 + 10 * number if impedance_present else 0
        if self.service == 0x181D:
            control = 0x02 | (0x01 if unit == "lb" else 0) | (0x10 if unit == "jin" else 0) | \
                (0x20 if stabilized else 0) | (0x80 if removed else 0)
            data = bytes([control]) + struct.pack("<H", raw) + clock_bytes(self.when)
        else:
            control = bytes([0x02 | (0x01 if unit == "lb" else 0),
                             0x04 | (0x40 if unit == "jin" else 0) | (0x20 if stabilized else 0) |
                             (0x80 if removed else 0) | (0x02 if impedance_present else 0)])
            data = control + clock_bytes(self.when) + struct.pack("<HH", impedance, raw)
        fields = {"weighing": weighing, "weight": round(shown, 3), "unit": unit, "stabilized": stabilized,
                  "loadRemoved": removed, "impedance": impedance if impedance_present else None}
        return data, fields

    def advertisement(self):
        data, fields = self.service_data()
        payload = advertising_data(self.name, 0x06, (AdvertisingData.SERVICE_DATA_16_BIT_UUID,
                                                     struct.pack("<H", self.service) + data))
        return payload, data, fields


async def main(duplicate_filter):
    async with await open_transport("vhci") as gateway_side:
        link = ConnectionAddressedLink()
        gateway = without_extended_advertising(ScanningController(
            "gateway", host_source=gateway_side.source, host_sink=gateway_side.sink, link=link,
            public_address=GATEWAY_ADDRESS, duplicate_filter=duplicate_filter))
        straps = [Strap(1, "A0:9E:1A:00:00:01", "Polar H10 1A2B3C4D", 0x04, "full"),
                  Strap(2, "A0:9E:1A:00:00:02", "Polar H10 5E6F7A8B", None, "gpb")]
        connectable = Strap(3, "A0:9E:1A:00:00:03", "Polar H9 9C0D1E2F", 0x06, "legacy")
        scales = [Scale("C8:0F:10:00:00:01", "MI SCALE2", 0x181D, [(72.35, "kg"), (81.6, "lb")]),
                  Scale("C8:0F:10:00:00:02", "MIBFS", 0x181B, [(64.8, "kg"), (90.25, "kg")])]

        # The connectable strap: a Bumble host behind its own controller, legacy ADV_IND.
        controller = without_extended_advertising(Controller("strap3", link=link, public_address=connectable.address))
        device = Device.with_hci(connectable.name, hci.Address(connectable.address), controller, controller)
        device.add_service(Service(GATT_HEART_RATE_SERVICE, [Characteristic(
            GATT_HEART_RATE_MEASUREMENT_CHARACTERISTIC, Characteristic.Properties.NOTIFY, Characteristic.READABLE,
            bytes([0x00, 0x00]))]))
        await device.power_on()
        data, _, _ = connectable.advertisement()
        await device.start_advertising(advertising_type=AdvertisingType.UNDIRECTED_CONNECTABLE_SCANNABLE,
                                       own_address_type=hci.OwnAddressType.PUBLIC, auto_restart=True,
                                       advertising_data=data, advertising_interval_min=ADVERTISING_PERIOD * 1000,
                                       advertising_interval_max=ADVERTISING_PERIOD * 1000)

        last = {}

        def record(advertiser, path, key, value, fields):
            if last.get(advertiser.address) != value:
                last[advertiser.address] = value
                emit("advertised", address=advertiser.address, device=advertiser.name, path=path, key=key,
                     data=value.hex(), **fields)

        async def strap_seconds():
            while True:
                for strap in straps + [connectable]:
                    strap.tick += 1
                data, block, fields = connectable.advertisement()
                await device.send_command(hci.HCI_LE_Set_Advertising_Data_Command(advertising_data=data))
                record(connectable, "manufacturer", "006b", block, fields)
                await asyncio.sleep(1)

        async def broadcast():
            while True:
                for strap in straps:
                    data, block, fields = strap.advertisement()
                    record(strap, "manufacturer", "006b", block, fields)
                    link.send_advertising_pdu(None, ll.AdvNonConnInd(
                        advertiser_address=hci.Address(strap.address, hci.Address.PUBLIC_DEVICE_ADDRESS), data=data))
                for scale in scales:
                    data, service, fields = scale.advertisement()
                    record(scale, "service", f"{scale.service:04x}", service, fields)
                    link.send_advertising_pdu(None, ll.AdvNonConnInd(
                        advertiser_address=hci.Address(scale.address, hci.Address.PUBLIC_DEVICE_ADDRESS), data=data))
                await asyncio.sleep(ADVERTISING_PERIOD)

        async def counters():
            while True:
                await asyncio.sleep(5)
                emit("controller", reported=gateway.reported, filtered=gateway.filtered)

        emit("ready", duplicateFilter=duplicate_filter, straps=[s.address for s in straps + [connectable]],
             scales=[s.address for s in scales])
        print("advertising as", ", ".join(s.name for s in straps + [connectable] + scales), flush=True)
        await asyncio.gather(strap_seconds(), broadcast(), counters())


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "address"))
