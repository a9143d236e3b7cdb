#!/usr/bin/env python3
# bumble-ghs.py CONNECTIONS LIVE OFF_AIR_AFTER OFF_AIR_SECONDS - three Generic Health Sensors (GHSS 1.0, service 0x1840) on
# Google's Bumble, a Bluetooth stack independent of BlueZ and of healthgate's simulator, for the
# device lab (ghs.sh). Written for this lab from the service's wire format (IEEE 11073-10206 ACOM
# observations, segmented), against Bumble 0.0.236, without reading healthgate's Swift code; the
# link and the gateway's controller come from Tests/DeviceLab/peripherals/bumble_lab.py. Each
# sensor is a Bumble host behind its own controller on that one link, so the gateway's adapter
# (hci0) connects to all three:
#
#   oximeter F0:47:48:53:00:01  holds STORED bundles (SpO2 150456 in %, pulse rate 149530 in bpm)
#       when it starts, numbered from 1. Once the collector writes Start Send Live Observations
#       (GHS Control Point 0x01) it sends LIVE live bundles, one a second, and then drops the link
#       itself, CONNECTIONS times; while nobody is connected it measures GAP more bundles, which
#       it only stores (a collector reconnecting asks for them through the RACP). After the drop
#       that ends connection OFF_AIR_AFTER it stays off air (no advertising) for OFF_AIR_SECONDS:
#       time for the scenario to kill the gateway and start it again. An ATT MTU of at most 48: a
#       bundle goes out in two segments.
#   cuff     F0:47:48:53:00:02  a blood pressure monitor: compound observations (150020 with
#       systolic 150021, diastolic 150022 and mean 150023, mmHg), 2 stored, 3 live two seconds
#       apart (the first time a collector starts them), then a string observation (a message) and
#       a TLV-encoded one (its settings: a uint16 and a UTF-8 string); then the observations
#       issue #78 found mishandled: a simple-discrete SpO2 code 98 and a bundle of a numeric SpO2
#       of 98 % and a pulse rate of the same time stamp (two observations, not one), two numeric
#       SpO2 of one time stamp with different values (the same identity: the second is refused),
#       and faults: a segment lost, the first two segments swapped, the first segment missing, an
#       observation interrupted by the next (a valid SpO2), an SpO2 marked invalid, one marked not
#       available, a NaN, an object whose length field is one too long, and a valid SpO2 after
#       them; then it stays connected and quiet.
#   ecg      F0:47:48:53:00:03  an ECG lead (MDC_ECG_ELEC_POTL_I 131329 in mV) as sample arrays of
#       ECG_SAMPLES 16-bit samples at 250 Hz (ECG_ARRAYS of them, live), behind an ATT MTU of 23:
#       each array goes out in tens of 19-byte segments (the first time a collector starts them).
#
# Every sensor: Health Sensor Features (read, indicate), Live and Stored Health Observations
# (notify), the Record Access Control Point (write, indicate), the GHS Control Point (write,
# indicate), Observation Schedule Changed (indicate), LE GATT Security Levels (read: mode 1 level
# 1, no pairing), and Device Information. A write to a control point whose indications the
# collector has not enabled gets the ATT error 0xFD (CCCD improperly configured), a second RACP
# request while one runs 0xFE (procedure already in progress), as the profiles require.
#
# The wire format (little-endian): each notification of an observation characteristic starts
# with a segmentation header (bit 0 first, bit 1 last, bits 2-7 a rolling counter, +1 a segment
# across objects, from 0 at each connection), then at most ATT_MTU - 4 bytes of the object; a
# stored object is its record number (uint32) and the observation. An observation: class uint8,
# length uint16 (the bytes after it), flags uint16, the fields its flags name in bit order
# (observation type uint32, time stamp), then its value. The time stamp is 9 bytes: flags 0x2A
# (UTC, millisecond resolution, current timeline), the milliseconds since 2000-01-01T00:00:00Z
# (uint48), time source 1, offset 0. FLOAT is IEEE 11073's 32-bit: exponent sint8 high, mantissa
# sint24 low.
#
# Logged for the scenario (one line each; MS is the observation's time, ms since the Unix epoch):
#   connected <role> <peer>  /  disconnected <role> <reason>
#   sent stored oximeter record=N ms=MS spo2=S pulse=P segments=K
#   sent live oximeter ms=MS spo2=S pulse=P segments=K
#   sent stored cuff record=N ms=MS systolic=A diastolic=B mean=C segments=K
#   sent live cuff ms=MS systolic=A diastolic=B mean=C segments=K
#   sent live cuff-message ms=MS kind=K text=T (spaces as _)  /  sent live cuff-settings ms=MS kind=K inflations=3 profile=adult
#   sent pair cuff ms=MS code=98 spo2=98 pulse=71  /  sent twin cuff ms=MS first=95 second=96
#   sent fault cuff fault=F ms=MS spo2=S (F: lost-segment, swapped-segments, missing-first-segment, interrupted,
#       invalid, not-available, nan, bad-length)  /  sent valid cuff ms=MS spo2=S
#   sent live ecg ms=MS period=0.2 per-period=50 scale=0.005 offset=-0.6 count=N segments=K samples=s1,s2,...
#   racp <role> all | from N | ... (each request as the collector wrote it) / racp <role> answered <code> <count>
#   ghs-cp <role> 0xNN / measured <role> record=N (stored while disconnected)
#   <role> off air for S s / <role> on air again
#   <role> connection N: link dropped by the sensor / all connections done
import asyncio
import os
import struct
import sys
import time

from bumble import att
from bumble.controller import Controller
from bumble.core import UUID, AdvertisingData
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Descriptor, Service
from bumble.hci import Address
from bumble.transport import open_transport

LAB = os.path.join(os.environ.get("HEALTHGATE_REPO", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")),
                   "Tests", "DeviceLab", "peripherals")
sys.path.insert(0, LAB)
from bumble_lab import gateway_link, log  # noqa: E402

GHS = 0x1840
STORED = 12          # the oximeter's bundles when it starts
GAP = 3              # bundles the oximeter measures while nobody is connected, after each drop
ECG_SAMPLES = 240
ECG_ARRAYS = 3          # 3 x 28 segments: the 6-bit rolling counter wraps
EPOCH_2000 = 946684800  # 2000-01-01T00:00:00Z in Unix seconds

# IEEE 11073-10101 codes (partition 2 observation types, partition 4 units).
SPO2, PULSE_RATE = 150456, 149530
BP_NONINVASIVE, SYSTOLIC, DIASTOLIC, MEAN = 150020, 150021, 150022, 150023
ECG_LEAD_I = 131329
# A string and a TLV-encoded observation of the cuff: private codes (partition 2, 0xF000 up), as
# a vendor would name a device message and its settings; the TLV entries' types and formats.
CUFF_MESSAGE, CUFF_SETTINGS = 0x0002F001, 0x0002F002
SETTING_INFLATIONS, SETTING_PROFILE = 0x0002F010, 0x0002F011
FORMAT_UINT16, FORMAT_UTF8S = 0x06, 0x19
PERCENT, BPM, MMHG, MILLIVOLT = 544, 2720, 3872, 4274

# Observation classes and flags (ACOM).
NUMERIC, SIMPLE_DISCRETE, STRING, SAMPLE_ARRAY, COMPOUND, TLV_ENCODED, BUNDLE = 0x01, 0x02, 0x03, 0x04, 0x07, 0x08, 0xFF
HAS_TYPE, HAS_TIME, HAS_STATUS = 0x0001, 0x0002, 0x0008
INVALID, NOT_AVAILABLE = 0x0001, 0x0004  # measurement status bits 0 and 2
NAN = 0x7FFFFF  # FLOAT's NaN: mantissa 0x7FFFFF, exponent 0

# RACP (op codes, operators, response codes) and the GHS Control Point.
REPORT, DELETE, ABORT, COUNT, COUNT_RESPONSE, RESPONSE = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
NULL, ALL, AT_MOST, AT_LEAST, WITHIN, FIRST, LAST = 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
SUCCESS, OPCODE_UNSUPPORTED, INVALID_OPERATOR, OPERATOR_UNSUPPORTED, INVALID_OPERAND, NO_RECORDS = 1, 2, 3, 4, 5, 6
OPERAND_UNSUPPORTED = 9
RECORD_NUMBER_FILTER = 0x01
START_LIVE, STOP_LIVE, CP_SUCCESS, CP_UNSUPPORTED = 0x01, 0x02, 0x80, 0x81
CCCD_IMPROPERLY_CONFIGURED, PROCEDURE_ALREADY_IN_PROGRESS = 0xFD, 0xFE


def u16(value):
    return UUID.from_16_bits(value)


def float32(mantissa, exponent=0):
    """IEEE 11073 FLOAT: exponent (sint8) in the high byte, mantissa (sint24) in the low three."""
    return struct.pack("<I", ((exponent & 0xFF) << 24) | (mantissa & 0xFFFFFF))


def time_stamp(ms):
    """9 bytes: flags 0x2A (UTC, 1 ms resolution, current timeline), ms since 2000, NTP, offset 0."""
    ticks = ms - EPOCH_2000 * 1000
    return bytes([0x2A]) + ticks.to_bytes(6, "little") + bytes([0x01, 0x00])


def observation(cls, flags, fields, value):
    """Class, length (the bytes after the length field), flags, FIELDS (already in bit order), VALUE."""
    body = struct.pack("<H", flags) + fields + value
    return bytes([cls]) + struct.pack("<H", len(body)) + body


def numeric(kind, unit, mantissa, exponent=0, ms=None):
    flags, fields = HAS_TYPE, struct.pack("<I", kind)
    if ms is not None:
        flags, fields = flags | HAS_TIME, fields + time_stamp(ms)
    return observation(NUMERIC, flags, fields, struct.pack("<H", unit) + float32(mantissa, exponent))


def spo2_with_status(ms, mantissa, status):
    """A numeric SpO2 with its time stamp and a measurement status (flags bit 3, after the time)."""
    fields = struct.pack("<I", SPO2) + time_stamp(ms) + struct.pack("<H", status)
    return observation(NUMERIC, HAS_TYPE | HAS_TIME | HAS_STATUS, fields, struct.pack("<H", PERCENT) + float32(mantissa))


def simple_discrete(kind, ms, code):
    return observation(SIMPLE_DISCRETE, HAS_TYPE | HAS_TIME, struct.pack("<I", kind) + time_stamp(ms), struct.pack("<I", code))


def bundle(ms, members):
    return observation(BUNDLE, HAS_TIME, time_stamp(ms), bytes([len(members)]) + b"".join(members))


def oximeter_bundle(ms, spo2, pulse):
    """A bundle with a time stamp and two numeric members without one (they take the bundle's)."""
    members = numeric(SPO2, PERCENT, spo2) + numeric(PULSE_RATE, BPM, pulse)
    return observation(BUNDLE, HAS_TIME, time_stamp(ms), bytes([2]) + members)


def pressure(ms, systolic, diastolic, mean):
    components = b"".join(struct.pack("<IBH", kind, 1, MMHG) + float32(value)
                          for kind, value in ((SYSTOLIC, systolic), (DIASTOLIC, diastolic), (MEAN, mean)))
    return observation(COMPOUND, HAS_TYPE | HAS_TIME, struct.pack("<I", BP_NONINVASIVE) + time_stamp(ms),
                       bytes([3]) + components)


def text(kind, ms, value):
    """A string observation: length uint16, then the UTF-8 bytes."""
    data = value.encode("utf-8")
    return observation(STRING, HAS_TYPE | HAS_TIME, struct.pack("<I", kind) + time_stamp(ms), struct.pack("<H", len(data)) + data)


def tlv_encoded(kind, ms, entries):
    """A TLV-encoded observation: a count uint8, then each entry's type uint32, length uint16 (of
    the value), format uint8 and value."""
    value = bytes([len(entries)]) + b"".join(struct.pack("<IHB", entry, len(data), form) + data for entry, form, data in entries)
    return observation(TLV_ENCODED, HAS_TYPE | HAS_TIME, struct.pack("<I", kind) + time_stamp(ms), value)


def ecg_array(ms, samples):
    """Unit mV, scale 0.005, offset -0.6, sample period 0.2 s with 50 samples in it (250 Hz),
    2 bytes a sample, the count, the samples (unsigned)."""
    value = (struct.pack("<H", MILLIVOLT) + float32(5, -3) + float32(-6, -1) + float32(2, -1)
             + bytes([50, 2]) + struct.pack("<I", len(samples)) + b"".join(struct.pack("<H", s) for s in samples))
    return observation(SAMPLE_ARRAY, HAS_TYPE | HAS_TIME, struct.pack("<I", ECG_LEAD_I) + time_stamp(ms), value)


def now_ms():
    return int(time.time() * 1000)


class Sensor:
    """One Generic Health Sensor: a Bumble host behind its own controller on the lab's link."""

    def __init__(self, role, address, name, link, features, max_mtu=None, schedules=()):
        self.role, self.address, self.name = role, address, name
        controller = Controller(name, link=link)
        self.device = Device.with_hci(name, Address(address), controller, controller)
        if max_mtu:
            self.device.gatt_server.max_mtu = max_mtu
        # record number -> (stored object, its log text)
        self.records = {}
        self.next_record = 1
        self.counters = {}
        self.connections = 0
        self.connection = None
        self.live_task = None
        self.racp_task = None
        # A procedure runs until its last indication is on its way: a collector may write the
        # next request as soon as that indication reaches it, before Bumble has seen the
        # confirmation end the task that sent it.
        self.racp_busy = False

        READ, WRITE, NOTIFY, INDICATE = (Characteristic.Properties.READ, Characteristic.Properties.WRITE,
                                         Characteristic.Properties.NOTIFY, Characteristic.Properties.INDICATE)
        readable, writeable = Characteristic.READABLE, Characteristic.WRITEABLE
        # Observation Schedule descriptors (0x2910) of Health Sensor Features: type, measurement
        # period and update interval (FLOAT seconds).
        descriptors = [Descriptor(u16(0x2910), readable, struct.pack("<I", kind) + float32(1) + float32(1))
                       for kind in schedules]
        self.features = Characteristic(u16(0x2BF3), READ | INDICATE, readable, features, descriptors)
        self.live = Characteristic(u16(0x2B8B), NOTIFY, readable, b"")
        self.stored = Characteristic(u16(0x2BDD), NOTIFY, readable, b"")
        self.racp = Characteristic(u16(0x2A52), WRITE | INDICATE, writeable, CharacteristicValue(write=self.write_racp))
        self.control = Characteristic(u16(0x2BF4), WRITE | INDICATE, writeable, CharacteristicValue(write=self.write_control))
        self.schedule_changed = Characteristic(u16(0x2BF1), INDICATE, readable, b"")
        self.security = Characteristic(u16(0x2BF5), READ, readable, bytes([0x01, 0x01]))
        self.device.add_service(Service(u16(GHS), [self.features, self.live, self.stored, self.racp, self.control,
                                                   self.schedule_changed, self.security]))
        self.device.add_service(Service(u16(0x180A), [
            Characteristic(u16(0x2A29), READ, readable, b"Bumble Lab"),
            Characteristic(u16(0x2A24), READ, readable, name.encode()),
            Characteristic(u16(0x2A25), READ, readable, ("GHS-" + address[-5:].replace(":", "")).encode()),
        ]))
        self.device.advertising_data = bytes(AdvertisingData([
            (AdvertisingData.FLAGS, bytes([0x06])),
            (AdvertisingData.COMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack("<H", GHS)),
            (AdvertisingData.COMPLETE_LOCAL_NAME, name.encode()),
        ]))
        self.device.on("connection", self.on_connection)

    # The link.

    def on_connection(self, connection):
        self.connections += 1
        self.connection = connection
        self.counters = {}  # the rolling segment counters start at 0 on each connection
        log("connected", self.role, connection.peer_address, "connection", self.connections)
        connection.on("disconnection", lambda reason: self.on_disconnection(connection, reason))

    def on_disconnection(self, connection, reason):
        log("disconnected", self.role, reason)
        if self.connection is connection:
            self.connection = None
        for task in (self.live_task, self.racp_task):
            if task is not None and not task.done():
                task.cancel()
        self.live_task = self.racp_task = None
        self.racp_busy = False
        asyncio.get_running_loop().create_task(self.advertise_again(self.disconnected()))

    def disconnected(self):
        """What the sensor does once nobody is connected; returns the seconds it stays off air."""
        return 0

    async def advertise(self):
        # Restarted here rather than by Bumble's auto_restart, so that a sensor can stay off air.
        await self.device.start_advertising(auto_restart=False)

    async def advertise_again(self, after):
        if after:
            log(self.role, "off air for %g s" % after)
            await asyncio.sleep(after)
            log(self.role, "on air again")
        await self.advertise()

    def subscribed(self, connection, characteristic, bit):
        cccd = self.device.gatt_server.subscribers.get(connection, {}).get(characteristic.handle)
        return cccd is not None and len(cccd) == 2 and cccd[0] & bit != 0

    # Observations.

    async def send_object(self, connection, characteristic, data):
        """DATA in segments of at most ATT_MTU - 4 bytes, each behind its header; the segments sent."""
        size = max(1, connection.att_mtu - 4)
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        key = characteristic.handle
        for index, chunk in enumerate(chunks):
            counter = self.counters.get(key, 0)
            self.counters[key] = (counter + 1) % 64
            header = (counter << 2) | (0x01 if index == 0 else 0) | (0x02 if index == len(chunks) - 1 else 0)
            await self.device.notify_subscriber(connection, characteristic, bytes([header]) + chunk)
            await asyncio.sleep(0)
        return len(chunks)

    async def send_cut(self, connection, data, size, order, counters=None):
        """DATA cut into SIZE-byte segments, the ones at the indices ORDER sent in that order, each
        with the counter of its place: a segment never sent leaves a gap. COUNTERS, when given,
        is how many counters the object uses (a sensor that gave up on it after that many)."""
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        key = self.live.handle
        base = self.counters.get(key, 0)
        self.counters[key] = (base + (len(chunks) if counters is None else counters)) % 64
        for index in order:
            header = (((base + index) % 64) << 2) | (0x01 if index == 0 else 0) | (0x02 if index == len(chunks) - 1 else 0)
            await self.device.notify_subscriber(connection, self.live, bytes([header]) + chunks[index])
            await asyncio.sleep(0)

    def store(self, obj, text):
        number = self.next_record
        self.next_record += 1
        self.records[number] = (obj, text)
        return number

    async def send_live(self, connection, obj, text):
        segments = await self.send_object(connection, self.live, obj)
        log("sent live", self.role, text, "segments=%d" % segments)

    # The Record Access Control Point.

    def selection(self, operator, operand):
        """The record numbers an operator and operand select, or a response code."""
        numbers = sorted(self.records)
        if operator == ALL and not operand:
            return numbers
        if operator in (FIRST, LAST) and not operand:
            return numbers[:1] if operator == FIRST else numbers[-1:]
        if operator in (AT_MOST, AT_LEAST, WITHIN):
            if not operand or operand[0] != RECORD_NUMBER_FILTER:
                return OPERAND_UNSUPPORTED
            values = operand[1:]
            if operator == WITHIN and len(values) == 8:
                low, high = struct.unpack("<II", values)
                return [n for n in numbers if low <= n <= high] if low <= high else INVALID_OPERAND
            if operator != WITHIN and len(values) == 4:
                (bound,) = struct.unpack("<I", values)
                return [n for n in numbers if (n <= bound if operator == AT_MOST else n >= bound)]
            return INVALID_OPERAND
        if operator in (ALL, FIRST, LAST):
            return INVALID_OPERAND
        return OPERATOR_UNSUPPORTED if operator <= 0x06 else INVALID_OPERATOR

    @staticmethod
    def describe(value):
        if value[:2] == bytes([REPORT, ALL]) and len(value) == 2:
            return "all"
        if len(value) == 7 and value[:3] == bytes([REPORT, AT_LEAST, RECORD_NUMBER_FILTER]):
            return "from %d" % struct.unpack("<I", value[3:])[0]
        names = {REPORT: "report", DELETE: "delete", ABORT: "abort", COUNT: "count"}
        return "%s %s" % (names.get(value[0], "op-0x%02x" % value[0]) if value else "empty", value[1:].hex())

    def write_racp(self, connection, value):
        value = bytes(value)
        if not self.subscribed(connection, self.racp, 0x02):
            log("racp", self.role, "refused (indications off):", value.hex())
            raise att.ATT_Error(CCCD_IMPROPERLY_CONFIGURED)
        busy = self.racp_busy
        if busy and value[:1] != bytes([ABORT]):
            log("racp", self.role, "refused (in progress):", value.hex())
            raise att.ATT_Error(PROCEDURE_ALREADY_IN_PROGRESS)
        log("racp", self.role, self.describe(value))
        loop = asyncio.get_running_loop()
        if not value or len(value) < 2:
            loop.create_task(self.respond(connection, value[0] if value else 0, INVALID_OPERATOR))
            return
        op, operator, operand = value[0], value[1], value[2:]
        if op == ABORT:
            if busy:
                self.racp_task.cancel()
                self.racp_busy = False
            loop.create_task(self.respond(connection, ABORT, SUCCESS if operator == NULL else INVALID_OPERATOR))
            return
        if op not in (REPORT, DELETE, COUNT):
            loop.create_task(self.respond(connection, op, OPCODE_UNSUPPORTED))
            return
        selected = self.selection(operator, operand)
        if isinstance(selected, int):
            loop.create_task(self.respond(connection, op, selected))
        elif op == COUNT:
            # The answer is the procedure's last indication: not busy while it goes out.
            self.racp_task = loop.create_task(self.indicate(
                connection, self.racp, bytes([COUNT_RESPONSE, NULL]) + struct.pack("<I", len(selected)), "answered count %d" % len(selected)))
        elif op == DELETE:
            for number in selected:
                del self.records[number]
            loop.create_task(self.respond(connection, DELETE, SUCCESS if selected else NO_RECORDS, len(selected)))
        else:
            self.racp_busy = True
            self.racp_task = loop.create_task(self.report(connection, selected))

    async def report(self, connection, numbers):
        for number in numbers:
            obj, text = self.records[number]
            segments = await self.send_object(connection, self.stored, struct.pack("<I", number) + obj)
            log("sent stored", self.role, "record=%d" % number, text, "segments=%d" % segments)
        self.racp_busy = False
        await self.respond(connection, REPORT, SUCCESS if numbers else NO_RECORDS, len(numbers))

    async def respond(self, connection, op, code, count=None):
        await self.indicate(connection, self.racp, bytes([RESPONSE, NULL, op, code]),
                            "answered 0x%02x to 0x%02x" % (code, op) + ("" if count is None else " (%d records)" % count))

    async def indicate(self, connection, characteristic, value, text):
        await self.device.indicate_subscriber(connection, characteristic, value)
        log("racp" if characteristic is self.racp else "ghs-cp", self.role, text)

    # The GHS Control Point.

    def write_control(self, connection, value):
        value = bytes(value)
        if not self.subscribed(connection, self.control, 0x02):
            log("ghs-cp", self.role, "refused (indications off):", value.hex())
            raise att.ATT_Error(CCCD_IMPROPERLY_CONFIGURED)
        op = value[0] if value else 0
        log("ghs-cp", self.role, "0x%02x" % op)
        code = CP_SUCCESS if op in (START_LIVE, STOP_LIVE) and len(value) == 1 else CP_UNSUPPORTED
        loop = asyncio.get_running_loop()
        loop.create_task(self.indicate(connection, self.control, bytes([code]), "answered 0x%02x" % code))
        if code != CP_SUCCESS:
            return
        if op == START_LIVE and (self.live_task is None or self.live_task.done()):
            self.live_task = loop.create_task(self.run_live(connection))
        elif op == STOP_LIVE and self.live_task is not None:
            self.live_task.cancel()
            self.live_task = None

    async def run_live(self, connection):
        """The live observations of one connection (once the collector started them)."""

    async def wait_for_racp(self):
        while self.racp_task is not None and not self.racp_task.done():
            await asyncio.sleep(0.1)


class Oximeter(Sensor):
    def __init__(self, link, connections, live, off_air_after, off_air_seconds):
        features = bytes([0x01, 2]) + struct.pack("<II", SPO2, PULSE_RATE) + bytes([1]) + struct.pack("<HB", 0x1004, 1)
        super().__init__("oximeter", "F0:47:48:53:00:01", "GHS Oximeter", link, features, max_mtu=48,
                         schedules=(SPO2, PULSE_RATE))
        self.total_connections, self.per_connection = connections, live
        self.off_air_after, self.off_air_seconds = off_air_after, off_air_seconds
        self.sent = 0
        start = now_ms() - STORED * 60_000
        for index in range(STORED):
            self.store(*self.bundle(start + index * 60_000))

    def bundle(self, ms):
        """The next bundle the oximeter measures, at MS, and its log text."""
        self.sent += 1
        spo2, pulse = 93 + self.sent % 7, 60 + (self.sent * 7) % 41
        return oximeter_bundle(ms, spo2, pulse), "ms=%d spo2=%d pulse=%d" % (ms, spo2, pulse)

    def disconnected(self):
        if self.connections < self.total_connections:
            # Spot checks while nobody listens: stored, for the next collector's RACP request.
            base = now_ms()
            for index in range(GAP):
                number = self.store(*self.bundle(base + 100 * index))
                log("measured", self.role, "record=%d" % number)
        return self.off_air_seconds if self.connections == self.off_air_after else 0

    async def run_live(self, connection):
        number = self.connections
        # The collector may still be downloading the stored bundles: the live ones follow.
        await asyncio.sleep(1)
        sent = 0
        while number > self.total_connections or sent < self.per_connection:
            await self.send_live(connection, *self.bundle(now_ms()))
            sent += 1
            await asyncio.sleep(1)
        log("oximeter connection %d: %d live sent" % (number, sent))
        if number < self.total_connections:
            await self.wait_for_racp()
            await asyncio.sleep(0.5)
            log("oximeter connection %d: link dropped by the sensor" % number)
            await connection.disconnect()
        else:
            log("oximeter: all connections done")


class Cuff(Sensor):
    LIVE = 3

    def __init__(self, link):
        features = bytes([0x01, 1]) + struct.pack("<I", BP_NONINVASIVE) + bytes([1]) + struct.pack("<HB", 0x1007, 1)
        super().__init__("cuff", "F0:47:48:53:00:02", "GHS Cuff", link, features)
        self.sent = 0
        start = now_ms() - 2 * 3_600_000
        for index in range(2):
            obj, text = self.reading(start + index * 3_600_000)
            self.store(obj, text)

    def reading(self, ms):
        self.sent += 1
        systolic, diastolic = 112 + self.sent * 3, 70 + self.sent * 2
        mean = round((systolic + 2 * diastolic) / 3)
        return pressure(ms, systolic, diastolic, mean), "ms=%d systolic=%d diastolic=%d mean=%d" % (ms, systolic, diastolic, mean)

    async def run_live(self, connection):
        # Live readings once: a collector starting them again (after its restart) gets none.
        if self.sent > 2:
            return
        await asyncio.sleep(1)
        for _ in range(self.LIVE):
            await self.send_live(connection, *self.reading(now_ms()))
            await asyncio.sleep(2)
        # A message and the cuff's settings, which have no number to send.
        ms = now_ms()
        await self.send_object(connection, self.live, text(CUFF_MESSAGE, ms, "Cuff deflated, 3 inflations"))
        log("sent live cuff-message ms=%d kind=%d text=Cuff_deflated,_3_inflations" % (ms, CUFF_MESSAGE))
        ms += 1
        await self.send_object(connection, self.live, tlv_encoded(CUFF_SETTINGS, ms, [
            (SETTING_INFLATIONS, FORMAT_UINT16, struct.pack("<H", 3)), (SETTING_PROFILE, FORMAT_UTF8S, "adult".encode())]))
        log("sent live cuff-settings ms=%d kind=%d inflations=3 profile=adult" % (ms, CUFF_SETTINGS))
        await asyncio.sleep(1)
        await self.send_pair_twin_and_faults(connection)
        # As after each pressure: time for the gateway to store it before the scenario goes on.
        await asyncio.sleep(2)
        log("cuff: all readings sent")

    async def send_pair_twin_and_faults(self, connection):
        ms = now_ms()
        await self.send_object(connection, self.live, simple_discrete(SPO2, ms, 98))
        await self.send_object(connection, self.live, bundle(ms, [numeric(SPO2, PERCENT, 98), numeric(PULSE_RATE, BPM, 71)]))
        log("sent pair cuff ms=%d code=98 spo2=98 pulse=71" % ms)
        ms += 1
        await self.send_object(connection, self.live, numeric(SPO2, PERCENT, 95, ms=ms))
        await self.send_object(connection, self.live, numeric(SPO2, PERCENT, 96, ms=ms))
        log("sent twin cuff ms=%d first=95 second=96" % ms)
        # Segments lost or reordered: each object in three segments of 10 bytes.
        for fault, spo2, order in (("lost-segment", 81, [0, 2]), ("swapped-segments", 82, [1, 0, 2]),
                                   ("missing-first-segment", 83, [1, 2])):
            ms += 1
            await self.send_cut(connection, numeric(SPO2, PERCENT, spo2, ms=ms), 10, order)
            log("sent fault cuff fault=%s ms=%d spo2=%d" % (fault, ms, spo2))
        # Two segments, then the sensor starts over with the next observation, in sequence.
        ms += 1
        await self.send_cut(connection, numeric(SPO2, PERCENT, 84, ms=ms), 10, [0, 1], counters=2)
        log("sent fault cuff fault=interrupted ms=%d spo2=84" % ms)
        ms += 1
        await self.send_object(connection, self.live, numeric(SPO2, PERCENT, 90, ms=ms))
        log("sent valid cuff ms=%d spo2=90" % ms)
        # Whole objects the gateway must not store.
        too_long = bytearray(numeric(SPO2, PERCENT, 87, ms=ms + 4))
        too_long[1] += 1
        for fault, spo2, obj in (("invalid", 85, spo2_with_status(ms + 1, 85, INVALID)),
                                 ("not-available", 86, spo2_with_status(ms + 2, 86, NOT_AVAILABLE)),
                                 ("nan", 0, numeric(SPO2, PERCENT, NAN, ms=ms + 3)), ("bad-length", 87, bytes(too_long))):
            ms += 1
            await self.send_object(connection, self.live, obj)
            log("sent fault cuff fault=%s ms=%d spo2=%d" % (fault, ms, spo2))
        ms += 1
        await self.send_object(connection, self.live, numeric(SPO2, PERCENT, 91, ms=ms))
        log("sent valid cuff ms=%d spo2=91" % ms)


class ECG(Sensor):
    def __init__(self, link):
        features = bytes([0x00, 1]) + struct.pack("<I", ECG_LEAD_I)
        super().__init__("ecg", "F0:47:48:53:00:03", "GHS ECG", link, features, max_mtu=23)
        self.arrays = 0

    async def run_live(self, connection):
        if self.arrays:
            return
        await asyncio.sleep(1)
        for _ in range(ECG_ARRAYS):
            self.arrays += 1
            # A lead's wave: 0 mV at rest (sample 120, with the offset of -0.6 mV) with a little
            # noise, and an R peak of 1.2 mV every 200 samples.
            samples = [120 + (240 - 24 * abs(i % 200 - 100) if 90 <= i % 200 <= 110 else (i * 7 + self.arrays) % 9)
                       for i in range(ECG_SAMPLES)]
            ms = now_ms()
            text = "ms=%d period=0.2 per-period=50 scale=0.005 offset=-0.6 count=%d" % (ms, len(samples))
            segments = await self.send_object(connection, self.live, ecg_array(ms, samples))
            log("sent live", self.role, text, "segments=%d" % segments, "samples=" + ",".join(map(str, samples)))
            await asyncio.sleep(3)
        log("ecg: all arrays sent")


async def main(connections, live, off_air_after, off_air_seconds):
    async with await open_transport("vhci") as gateway_side:
        link = gateway_link(gateway_side)
        sensors = [Oximeter(link, connections, live, off_air_after, off_air_seconds), Cuff(link), ECG(link)]
        for sensor in sensors:
            await sensor.device.power_on()
            await sensor.advertise()
        for sensor in sensors:
            log("holds", sensor.role, "records=%d" % len(sensor.records))
        log("advertising as", ", ".join("%s %s" % (s.name, s.address) for s in sensors))
        await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])))
