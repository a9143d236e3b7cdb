# bumble_broadcast.py - what the lab's Bumble peripherals that advertise share (imported by
# bumble-advertisers.py and bumble-class.py): JSON events, the gateway's controller that reports
# legacy advertisements with a duplicate filter as real controllers apply it, legacy advertising
# data, and a Polar-like strap broadcasting its heart rate in manufacturer data (company 0x006B, in
# the format Polar's SDK parses: see bumble-advertisers.py). Written against Bumble 0.0.236.
import json
import struct
import time

from bumble import hci, ll
from bumble.controller import Controller
from bumble.core import AdvertisingData

ADVERTISING_PERIOD = 0.25


def emit(event, **fields):
    print(json.dumps({"event": event, "t": round(time.time(), 3), **fields}), flush=True)


def without_extended_advertising(controller):
    controller.le_features = controller.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING
    return controller


class ScanningController(Controller):
    """The gateway's controller: reports legacy ADV_IND and ADV_NONCONN_IND to the kernel, with a
    duplicate filter as a real controller applies it when the host enables one."""

    def __init__(self, *arguments, duplicate_filter="address", **keywords):
        super().__init__(*arguments, **keywords)
        self.duplicate_filter = duplicate_filter
        self.seen = set()
        self.reported = 0
        self.filtered = 0

    @property
    def active(self):
        return self.le_scan_type == 1

    def on_hci_le_set_scan_enable_command(self, command):
        result = super().on_hci_le_set_scan_enable_command(command)
        # Core 5.3, Vol 4, Part E, 7.8.11: the filter's memory starts afresh with each enable.
        self.seen.clear()
        emit("scan", enable=bool(command.le_scan_enable), filterDuplicates=bool(command.filter_duplicates),
             active=self.active)
        return result

    def on_ll_advertising_pdu(self, packet):
        if isinstance(packet, (ll.AdvInd, ll.AdvNonConnInd)):
            self.on_advertising_pdu(packet)
        else:
            super().on_ll_advertising_pdu(packet)

    def on_advertising_pdu(self, pdu):
        if self.le_scan_enable:
            key = {"address": pdu.advertiser_address, "data": (pdu.advertiser_address, pdu.data)}.get(self.duplicate_filter)
            if self.filter_duplicates and key is not None and key in self.seen:
                self.filtered += 1
            else:
                if self.filter_duplicates and key is not None:
                    self.seen.add(key)
                self.reported += 1
                kind = hci.HCI_LE_Advertising_Report_Event.EventType
                event_type = kind.ADV_IND if isinstance(pdu, ll.AdvInd) else kind.ADV_NONCONN_IND
                reports = [hci.HCI_LE_Advertising_Report_Event.Report(
                    event_type=event_type, address_type=pdu.advertiser_address.address_type,
                    address=pdu.advertiser_address, data=pdu.data, rssi=-50)]
                if self.active and isinstance(pdu, ll.AdvInd):
                    # An active scan of a scannable advertiser gets its (here empty) scan response.
                    reports.append(hci.HCI_LE_Advertising_Report_Event.Report(
                        event_type=kind.SCAN_RSP, address_type=pdu.advertiser_address.address_type,
                        address=pdu.advertiser_address, data=b"", rssi=-50))
                for report in reports:
                    self.send_hci_packet(hci.HCI_LE_Advertising_Report_Event([report]))
        if isinstance(pdu, ll.AdvInd):
            pending = self.pending_le_connection
            if pending and pending.peer_address == pdu.advertiser_address:
                self.create_le_connection(pdu.advertiser_address)


def advertising_data(name, flags, *structures):
    """Flags (None: none, so not discoverable), STRUCTURES, the complete local name: at most 31 bytes."""
    flag_structures = [] if flags is None else [(AdvertisingData.FLAGS, bytes([flags]))]
    data = bytes(AdvertisingData([*flag_structures, *structures, (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode())]))
    if len(data) > 31:
        raise ValueError(f"{name}: {len(data)} bytes of legacy advertising data, more than 31")
    return data


class Strap:
    """A Polar-like strap: its manufacturer data block changes every second."""

    def __init__(self, index, address, name, flags, form):
        self.index, self.address, self.name, self.flags, self.form = index, address, name, flags, form
        self.tick = 0

    def manufacturer_data(self):
        heart_rate = 60 + (self.tick * 7 + self.index * 11) % 90
        fast = heart_rate + (1 if self.tick % 2 else -1)
        counter = self.tick % 8
        battery_ok, contact = 1, 1 if self.tick % 10 else 0
        # BlePolarHrAdvertisement: bit 0 battery status, bit 1 sensor contact, bits 2-4 counter.
        status = battery_ok | contact << 1 | counter << 2
        block = bytes([status, 0x00, fast, heart_rate]) if self.form != "legacy" else bytes([status, 0x00, heart_rate])
        if self.form == "gpb":
            # A "GPB" block as in Polar's SDK test (BleAdvertisementContentTest, "SAGRFC23 format"):
            # bit 6 set, one byte of data.
            block = bytes.fromhex("7a0103") + block
        fields = {"heartRate": heart_rate, "fastAverageHeartRate": fast if self.form != "legacy" else heart_rate,
                  "frameCounter": counter, "sensorContact": bool(contact), "batteryOk": bool(battery_ok)}
        return block, fields

    def advertisement(self):
        block, fields = self.manufacturer_data()
        data = advertising_data(self.name, self.flags,
                                (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, struct.pack("<H", 0x006B) + block))
        return data, block, fields
