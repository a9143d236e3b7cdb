#!/usr/bin/env python3
"""A USB ANT stick and a class of ANT+ heart-rate straps, for tests and the device lab.

Written from Dynastream's "ANT Message Protocol and Usage" (frames, configuration and control
messages, channel responses and events, extended broadcast data, capabilities) and the ANT+ Heart
Rate Monitor device profile (data pages 0-4 and 7, the page toggle bit, beat event time and count),
independently of healthgate's own simulator, so that the two cannot share a misreading.

The stick is either a new pseudo-terminal (default; its slave path is printed and, with --link,
a symlink is pointed at it) or an existing tty (--device, e.g. a USB gadget's /dev/ttyGS0 in the
device lab). It answers the host's commands as a stick does and, once a receive channel is open
(continuous scan mode, or paired channels on a stick without scan mode), plays the straps:
broadcast data (0x4E) at each strap's own 8070/32768 s period, with the flagged extended channel
id when the host enabled it (lib config 0x6E bit 0x80, or 0x66).

Every beat a strap sent (carried by at least one broadcast that left the stick) is written to the
--log file as one JSON line: {"event": "beat", "device": 20-bit number, "beat": index since the
strap's start, "beatCount": 8-bit count, "eventTime": 1/1024 s unwrapped, "eventTime16": as sent,
"rr": 1/1024 s since the strap's previous beat, "afterGap": the previous beat was never sent,
"sentAt": seconds since the emulator started, "heartRate": the computed heart rate it carried,
"monotonic": CLOCK_MONOTONIC when its first broadcast was queued for the tty, "wall": the beat's
own time on the wall clock}.
Other lines describe the straps, the commands and their answers, leaves, unplugs and the end.

Standard library only: the device lab runs it with the guest's /usr/bin/python3.
"""
import argparse
import errno
import heapq
import json
import math
import os
import random
import select
import signal
import sys
import termios
import time
import tty

SYNC = 0xA4
# Message ids (ANT Message Protocol and Usage, section 9.3).
MSG_CHANNEL_EVENT = 0x40
MSG_UNASSIGN = 0x41
MSG_ASSIGN = 0x42
MSG_PERIOD = 0x43
MSG_SEARCH_TIMEOUT = 0x44
MSG_RF = 0x45
MSG_NETWORK_KEY = 0x46
MSG_TX_POWER = 0x47
MSG_RESET = 0x4A
MSG_OPEN = 0x4B
MSG_CLOSE = 0x4C
MSG_REQUEST = 0x4D
MSG_BROADCAST = 0x4E
MSG_CHANNEL_ID = 0x51
MSG_CHANNEL_STATUS = 0x52
MSG_CAPABILITIES = 0x54
MSG_OPEN_SCAN = 0x5B
MSG_CHANNEL_TX_POWER = 0x60
MSG_SERIAL_NUMBER = 0x61
MSG_LOW_PRIORITY_TIMEOUT = 0x63
MSG_ENABLE_EXT = 0x66
MSG_ENABLE_LED = 0x68
MSG_CRYSTAL = 0x6D
MSG_LIB_CONFIG = 0x6E
MSG_STARTUP = 0x6F
MSG_VERSION = 0x3E
MSG_SERIAL_ERROR = 0xAE
# Response and event codes (section 9.5.6.1).
RESPONSE_NO_ERROR = 0x00
EVENT_RX_FAIL_GO_TO_SEARCH = 0x08
EVENT_CHANNEL_CLOSED = 0x07
CHANNEL_IN_WRONG_STATE = 0x15
CHANNEL_NOT_OPENED = 0x16
INVALID_MESSAGE = 0x28
INVALID_NETWORK_NUMBER = 0x29
INVALID_PARAMETER_PROVIDED = 0x33
# Capabilities, advanced options 2 (section 9.5.7.4).
CAP_EXT_MESSAGE = 0x02
CAP_SCAN_MODE = 0x04
# The startup message's reason: reset by command (section 9.5.3.1).
STARTUP_COMMAND_RESET = 0x20
# Serial error message codes (section 9.5.3.2).
SERIAL_ERROR_CHECKSUM = 0x02
# Lib config flags (section 9.5.2.20).
LIB_CHANNEL_ID = 0x80
LIB_RSSI = 0x40
LIB_TIMESTAMP = 0x20

HRM_DEVICE_TYPE = 120
HRM_PERIOD = 8070 / 32768  # seconds: 4.06 Hz
MAX_PAYLOAD = 41

# ANT+ manufacturer ids (FIT profile's manufacturer table) a class plausibly wears.
MANUFACTURERS = [1, 15, 23, 32]  # Garmin, Dynastream, Suunto, Wahoo


def frame(message_id, payload):
    """One ANT serial frame: sync, length, id, payload, XOR of everything before it."""
    body = bytes([SYNC, len(payload), message_id]) + bytes(payload)
    checksum = 0
    for byte in body:
        checksum ^= byte
    return body + bytes([checksum])


class FrameReader:
    """Reassembles host commands from any chunking; skips bytes before a sync byte and restarts
    one byte after a sync whose frame fails its checksum (counted)."""

    def __init__(self):
        self.buffer = bytearray()
        self.skipped = 0
        self.bad_checksums = 0

    def feed(self, data):
        self.buffer.extend(data)
        frames = []
        while True:
            start = self.buffer.find(SYNC)
            if start < 0:
                self.skipped += len(self.buffer)
                self.buffer.clear()
                return frames
            if start:
                self.skipped += start
                del self.buffer[:start]
            if len(self.buffer) < 2:
                return frames
            length = self.buffer[1]
            if length > MAX_PAYLOAD:
                self.skipped += 1
                del self.buffer[:1]
                continue
            if len(self.buffer) < length + 4:
                return frames
            candidate = bytes(self.buffer[:length + 4])
            checksum = 0
            for byte in candidate[:-1]:
                checksum ^= byte
            if checksum != candidate[-1]:
                self.bad_checksums += 1
                del self.buffer[:1]
                frames.append(None)
                continue
            del self.buffer[:length + 4]
            frames.append((candidate[2], candidate[3:-1]))


class Strap:
    """One ANT+ heart-rate strap: its own drifting heart rate, beats, pages and radio period."""

    def __init__(self, index, rng, legacy):
        self.index = index
        self.rng = rng
        self.legacy = legacy
        self.stepped = False
        # 20-bit device number: the 16-bit number plus the transmission type's upper nibble.
        # Every third strap uses the extension, so ids above 65535 are always exercised.
        low = rng.randrange(1, 0x10000)
        extension = rng.randrange(1, 16) if index % 3 == 0 else 0
        self.device = (extension << 16) | low
        self.transmission_type = (extension << 4) | 0x01  # lower nibble 1: independent channel
        self.manufacturer = MANUFACTURERS[index % len(MANUFACTURERS)]
        self.serial_high = rng.randrange(0, 0x10000)  # page 2: the serial's upper 16 bits
        self.hardware_version = rng.randrange(1, 10)
        self.software_version = rng.randrange(1, 60)
        self.model = rng.randrange(1, 20)
        self.battery_level = rng.randrange(20, 101)
        self.battery_voltage = 2.6 + self.battery_level / 250
        self.operating_seconds = rng.randrange(0, 2 * 3600 * 500)
        self.base_rate = rng.uniform(65, 165)
        self.swing = rng.uniform(5, 20)
        self.swing_period = rng.uniform(40, 180)
        self.swing_phase = rng.uniform(0, 2 * math.pi)
        # Beat event time and count start anywhere, so the 16-bit time (64 s) and the 8-bit
        # count roll over in a one-minute test.
        self.event_ticks = rng.randrange(0, 0x10000)
        self.ticks_origin = self.event_ticks
        self.beat_count = rng.randrange(0, 256)
        self.beat_index = 0
        self.previous_ticks = self.event_ticks - 800
        self.current_sent = False
        self.gap_before_current = True
        self.message_index = rng.randrange(0, 65)
        self.world_origin = -rng.uniform(0, 1)  # its first beat was just before the stick started
        self.rate = self.base_rate
        self.next_beat_ticks = self.event_ticks + self.rr_ticks(0)
        self.first_send = rng.uniform(0, HRM_PERIOD)
        self.paired_channel = None

    def heart_rate(self, world):
        if self.stepped:
            # --stepped-rates: one value a second, none repeated within 100 s (see the option).
            return 70.0 + (math.floor(world) + 3 * self.index) % 100
        rate = self.base_rate + self.swing * math.sin(2 * math.pi * world / self.swing_period + self.swing_phase)
        return max(45.0, min(200.0, rate))

    def rr_ticks(self, world):
        self.rate = self.heart_rate(world)
        return max(300, round(61440 / self.rate * (1 + self.rng.gauss(0, 0.015))))

    def beat_world_time(self, ticks):
        return self.world_origin + (ticks - self.ticks_origin) / 1024

    def advance(self, world):
        """Beats up to world time `world` (the strap beats whether or not anyone listens)."""
        while self.beat_world_time(self.next_beat_ticks) <= world:
            self.previous_ticks = self.event_ticks
            self.event_ticks = self.next_beat_ticks
            self.beat_count = (self.beat_count + 1) & 0xFF
            self.beat_index += 1
            self.gap_before_current = not self.current_sent
            self.current_sent = False
            self.next_beat_ticks = self.event_ticks + self.rr_ticks(self.beat_world_time(self.event_ticks))

    def page(self, world):
        """The next broadcast's 8 bytes (the strap's message counter advances)."""
        m = self.message_index
        self.message_index += 1
        time16 = self.event_ticks & 0xFFFF
        common = [time16 & 0xFF, time16 >> 8, self.beat_count, round(self.rate) & 0xFF]
        if self.legacy:
            # Pre-profile straps: one page format, no toggle; bytes 0-3 carry nothing.
            return bytes([0x00, 0xFF, 0xFF, 0xFF] + common)
        toggle = 0x80 if (m // 4) % 2 else 0x00
        if m % 65 == 64:
            page = [1, 2, 3, 7][(m // 65) % 4]
        else:
            page = 4
        if page == 4:
            previous = self.previous_ticks & 0xFFFF
            specific = [0xFF, previous & 0xFF, previous >> 8]
        elif page == 1:
            units = (self.operating_seconds + int(world)) // 2 & 0xFFFFFF
            specific = [units & 0xFF, (units >> 8) & 0xFF, units >> 16]
        elif page == 2:
            specific = [self.manufacturer, self.serial_high & 0xFF, self.serial_high >> 8]
        elif page == 3:
            specific = [self.hardware_version, self.software_version, self.model]
        else:  # 7: battery level, fractional voltage (1/256 V), coarse voltage | status 2 (good)
            coarse = int(self.battery_voltage)
            fraction = int((self.battery_voltage - coarse) * 256) & 0xFF
            specific = [self.battery_level, fraction, (coarse & 0x0F) | (2 << 4)]
        return bytes([page | toggle] + specific + common)

    def describe(self):
        return {"event": "strap", "index": self.index, "device": self.device, "deviceNumber": self.device & 0xFFFF,
                "transmissionType": self.transmission_type, "deviceType": HRM_DEVICE_TYPE,
                "identifier": "ant:%d:%d" % (HRM_DEVICE_TYPE, self.device), "legacy": self.legacy,
                "manufacturer": self.manufacturer, "serialNumber": (self.serial_high << 16) | (self.device & 0xFFFF),
                "hardwareVersion": self.hardware_version, "softwareVersion": self.software_version,
                "model": self.model, "batteryLevel": self.battery_level, "baseRate": round(self.base_rate, 1)}


class Channel:
    def __init__(self):
        self.reset()

    def reset(self):
        self.state = "unassigned"  # assigned, open, scanning
        self.type = 0
        self.network = 0
        self.device_number = 0
        self.device_type = 0
        self.transmission_type = 0
        self.rf = 66
        self.period = 8192
        self.strap = None
        self.missed = 0


class Stick:
    """The stick's command side: channels, networks, configuration; answers as section 9.5 says."""

    def __init__(self, args, log):
        self.args = args
        self.log = log
        self.channels = [Channel() for _ in range(args.channels)]
        self.networks = 8
        self.reset_state()

    def reset_state(self):
        for channel in self.channels:
            channel.reset()
        self.keys = {}
        self.lib_config = 0
        self.ext_enabled = False

    @property
    def scan_capable(self):
        return not self.args.no_scan_mode

    def capabilities(self):
        advanced2 = 0x01 | 0x20 | (0 if self.args.no_scan_mode else CAP_EXT_MESSAGE | CAP_SCAN_MODE)
        # max channels, max networks, standard options, advanced options (network, serial number,
        # per-channel tx power, low-priority search, search list), advanced 2, SensRcore channels,
        # advanced 3 (event buffering, event filtering, high duty search, search sharing), advanced 4.
        return bytes([len(self.channels), self.networks, 0x00, 0xBA, advanced2, 0x00, 0x1E, 0x00])

    def key_ok(self, network):
        expected = self.args.network_key
        return expected is None or self.keys.get(network) == expected

    def handle(self, message_id, payload):
        """The frames answering one host command, as (id, payload) pairs."""
        ch = payload[0] if payload else 0
        forced = self.args.fail_command.get(message_id)
        if forced is not None:
            return [(MSG_CHANNEL_EVENT, [ch, message_id, forced])]

        def respond(code, channel=ch):
            return [(MSG_CHANNEL_EVENT, [channel, message_id, code])]

        def channel_or_none():
            if not payload or payload[0] >= len(self.channels):
                return None
            return self.channels[payload[0]]

        if message_id == MSG_RESET:
            self.reset_state()
            return [(MSG_STARTUP, [STARTUP_COMMAND_RESET])]
        if message_id == MSG_REQUEST:
            if len(payload) < 2:
                return respond(INVALID_MESSAGE)
            wanted = payload[1]
            if wanted == MSG_CAPABILITIES:
                return [(MSG_CAPABILITIES, list(self.capabilities()))]
            if wanted == MSG_VERSION:
                return [(MSG_VERSION, list(b"AOV1.04B00\x00"))]
            if wanted == MSG_SERIAL_NUMBER:
                return [(MSG_SERIAL_NUMBER, list(self.args.stick_serial.to_bytes(4, "little")))]
            channel = channel_or_none()
            if channel is None:
                return respond(INVALID_PARAMETER_PROVIDED)
            if wanted == MSG_CHANNEL_STATUS:
                state = {"unassigned": 0, "assigned": 1, "open": 2, "scanning": 2}[channel.state]
                if channel.state in ("open", "scanning") and channel.strap is not None:
                    state = 3
                return [(MSG_CHANNEL_STATUS, [ch, state | (channel.network << 2) | (channel.type & 0xF0)])]
            if wanted == MSG_CHANNEL_ID:
                number = channel.device_number if channel.strap is None else channel.strap.device & 0xFFFF
                return [(MSG_CHANNEL_ID, [ch, number & 0xFF, number >> 8, channel.device_type, channel.transmission_type])]
            return respond(INVALID_MESSAGE, channel=ch)
        if message_id == MSG_NETWORK_KEY:
            if len(payload) != 9:
                return respond(INVALID_MESSAGE)
            if payload[0] >= self.networks:
                return respond(INVALID_NETWORK_NUMBER)
            key = bytes(payload[1:9])
            if self.args.network_key is not None and key != self.args.network_key:
                return respond(INVALID_PARAMETER_PROVIDED)
            self.keys[payload[0]] = key
            return respond(RESPONSE_NO_ERROR)
        if message_id == MSG_LIB_CONFIG:
            if len(payload) != 2:
                return respond(INVALID_MESSAGE)
            if self.args.no_scan_mode and payload[1] & LIB_CHANNEL_ID:
                # A stick without extended messages has no lib config for them.
                return respond(INVALID_MESSAGE)
            self.lib_config = payload[1]
            return respond(RESPONSE_NO_ERROR)
        if message_id == MSG_ENABLE_EXT:
            if self.args.no_scan_mode:
                return respond(INVALID_MESSAGE)
            self.ext_enabled = len(payload) >= 2 and payload[1] != 0
            return respond(RESPONSE_NO_ERROR)
        if message_id in (MSG_ENABLE_LED, MSG_CRYSTAL):
            return respond(RESPONSE_NO_ERROR)
        if message_id == MSG_OPEN_SCAN:
            if not self.scan_capable:
                return respond(INVALID_MESSAGE)
            zero = self.channels[0]
            if zero.state != "assigned" or zero.type != 0x00:
                return respond(CHANNEL_IN_WRONG_STATE)
            if any(c.state in ("open", "scanning") for c in self.channels[1:]):
                return respond(CHANNEL_IN_WRONG_STATE)
            zero.state = "scanning"
            self.log({"event": "scanning"})
            return respond(RESPONSE_NO_ERROR)
        channel = channel_or_none()
        if message_id == MSG_ASSIGN:
            if channel is None or len(payload) < 3:
                return respond(INVALID_PARAMETER_PROVIDED if len(payload) >= 3 else INVALID_MESSAGE)
            if payload[2] >= self.networks:
                return respond(INVALID_NETWORK_NUMBER)
            if channel.state != "unassigned":
                return respond(CHANNEL_IN_WRONG_STATE)
            channel.state, channel.type, channel.network = "assigned", payload[1], payload[2]
            return respond(RESPONSE_NO_ERROR)
        if message_id in (MSG_UNASSIGN, MSG_CHANNEL_ID, MSG_PERIOD, MSG_SEARCH_TIMEOUT, MSG_RF, MSG_TX_POWER,
                          MSG_CHANNEL_TX_POWER, MSG_LOW_PRIORITY_TIMEOUT, MSG_OPEN, MSG_CLOSE):
            expected_length = {MSG_UNASSIGN: 1, MSG_CHANNEL_ID: 5, MSG_PERIOD: 3, MSG_SEARCH_TIMEOUT: 2, MSG_RF: 2,
                               MSG_TX_POWER: 2, MSG_CHANNEL_TX_POWER: 2, MSG_LOW_PRIORITY_TIMEOUT: 2,
                               MSG_OPEN: 1, MSG_CLOSE: 1}[message_id]
            if len(payload) < expected_length:
                return respond(INVALID_MESSAGE)
            if message_id == MSG_TX_POWER:  # a stick-wide setting; byte 0 is filler
                return respond(RESPONSE_NO_ERROR)
            if channel is None:
                return respond(INVALID_PARAMETER_PROVIDED)
            if message_id == MSG_CLOSE:
                if channel.state not in ("open", "scanning"):
                    return respond(CHANNEL_NOT_OPENED)
                channel.state = "assigned"
                channel.strap = None
                return respond(RESPONSE_NO_ERROR) + [(MSG_CHANNEL_EVENT, [ch, 0x01, EVENT_CHANNEL_CLOSED])]
            if channel.state == "unassigned":
                return respond(CHANNEL_IN_WRONG_STATE)
            if message_id == MSG_UNASSIGN:
                if channel.state != "assigned":
                    return respond(CHANNEL_IN_WRONG_STATE)
                channel.reset()
                return respond(RESPONSE_NO_ERROR)
            if message_id == MSG_OPEN:
                if channel.state != "assigned":
                    return respond(CHANNEL_IN_WRONG_STATE)
                if self.channels[0].state == "scanning":
                    return respond(CHANNEL_IN_WRONG_STATE)
                channel.state = "open"
                channel.strap = None
                self.log({"event": "open", "channel": ch})
                return respond(RESPONSE_NO_ERROR)
            if message_id == MSG_CHANNEL_ID:
                channel.device_number = payload[1] | payload[2] << 8
                channel.device_type = payload[3]
                channel.transmission_type = payload[4]
            elif message_id == MSG_RF:
                if payload[1] > 124:
                    return respond(INVALID_PARAMETER_PROVIDED)
                channel.rf = payload[1]
            elif message_id == MSG_PERIOD:
                channel.period = payload[1] | payload[2] << 8
            return respond(RESPONSE_NO_ERROR)
        return respond(INVALID_MESSAGE)

    def receivers(self, strap):
        """The channels that hear `strap`'s broadcast now (none unless a receive channel is open
        on a network with the right key, the strap's RF 57 and a matching channel id)."""
        zero = self.channels[0]
        if zero.state == "scanning":
            return [0] if self.hears(zero, strap) else []
        if strap.paired_channel is not None:
            channel = self.channels[strap.paired_channel]
            if channel.state == "open" and channel.strap is strap:
                return [strap.paired_channel]
            strap.paired_channel = None
        for number, channel in enumerate(self.channels):
            if channel.state == "open" and channel.strap is None and self.hears(channel, strap):
                channel.strap = strap
                strap.paired_channel = number
                self.log({"event": "paired", "channel": number, "device": strap.device})
                return [number]
        return []

    def hears(self, channel, strap):
        if channel.type & 0x10 or channel.rf != 57 or not self.key_ok(channel.network):
            return False
        if channel.device_type not in (0, HRM_DEVICE_TYPE) and (channel.device_type & 0x7F) != HRM_DEVICE_TYPE:
            return False
        if channel.device_number not in (0, strap.device & 0xFFFF):
            return False
        upper = channel.transmission_type
        return upper == 0 or upper == strap.transmission_type

    def broadcast(self, number, strap, data, now):
        payload = [number] + list(data)
        if self.lib_config & LIB_CHANNEL_ID or self.ext_enabled:
            flag = 0x80 | (self.lib_config & (LIB_RSSI | LIB_TIMESTAMP))
            payload += [flag, strap.device & 0xFF, (strap.device >> 8) & 0xFF, HRM_DEVICE_TYPE, strap.transmission_type]
            if flag & LIB_RSSI:
                payload += [0x20, (-60 - strap.index) & 0xFF, (-96) & 0xFF]
            if flag & LIB_TIMESTAMP:
                stamp = int(now * 32768) & 0xFFFF
                payload += [stamp & 0xFF, stamp >> 8]
        return frame(MSG_BROADCAST, payload)


class Port:
    """The stick's end of the link: a new pty (with an optional symlink) or an existing tty."""

    def __init__(self, args):
        self.args = args
        self.fd = None
        self.hold = None
        self.path = None

    def plug(self):
        if self.args.device:
            fd = os.open(self.args.device, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
            tty.setraw(fd)
            self.fd, self.path = fd, self.args.device
        else:
            master, slave = os.openpty()
            # Raw on both ends: no echo of the host's commands, no byte translation.
            tty.setraw(master)
            tty.setraw(slave)
            attributes = termios.tcgetattr(slave)
            attributes[3] &= ~termios.ECHO
            termios.tcsetattr(slave, termios.TCSANOW, attributes)
            os.set_blocking(master, False)
            # The emulator keeps the slave open too, so that a host closing and reopening it
            # (a gateway killed and restarted) finds the same stick, as with a USB tty.
            self.fd, self.hold, self.path = master, slave, os.ttyname(slave)
            if self.args.link:
                temporary = self.args.link + ".new"
                if os.path.lexists(temporary):
                    os.unlink(temporary)
                os.symlink(self.path, temporary)
                os.replace(temporary, self.args.link)

    def unplug(self):
        if self.args.link and not self.args.device and os.path.lexists(self.args.link):
            os.unlink(self.args.link)
        for fd in (self.fd, self.hold):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.fd = self.hold = None


class Emulator:
    def __init__(self, args):
        self.args = args
        self.log_file = open(args.log, "a", buffering=1) if args.log else None
        self.rng = random.Random(args.seed)
        self.straps = [Strap(i, random.Random(self.rng.randrange(1 << 30)), i < args.legacy_straps)
                       for i in range(args.straps)]
        for strap in self.straps:
            if args.stepped_rates:
                # Its first beat's rate too (the constructor drew it from the base rate).
                strap.stepped = True
                strap.next_beat_ticks = strap.event_ticks + strap.rr_ticks(strap.beat_world_time(strap.event_ticks))
        self.stick = Stick(args, self.log)
        self.port = Port(args)
        self.reader = FrameReader()
        self.out = bytearray()
        self.start = time.monotonic()
        self.origin = None  # world time the first receive channel opened: --leave, --duration count from it
        self.sent = 0
        self.dropped_overflow = 0
        self.frames_out = 0
        self.finished = False
        self.stopping = False
        self.plugged = False

    def log(self, record):
        if self.log_file:
            record.setdefault("t", round(self.world(), 4))
            self.log_file.write(json.dumps(record, separators=(",", ":")) + "\n")

    def world(self):
        return time.monotonic() - self.start

    def queue(self, data):
        if self.fd is None:
            return False
        if len(self.out) + len(data) > self.args.buffer:
            self.dropped_overflow += 1
            return False
        self.out.extend(data)
        self.frames_out += 1
        if self.args.garbage_every and self.frames_out % self.args.garbage_every == 0:
            noise = bytes(self.rng.choice([b for b in range(256) if b != SYNC]) for _ in range(self.rng.randrange(1, 9)))
            if self.args.garbage_with_sync:
                # A false sync with a plausible length, then a wrong checksum: a host must
                # resynchronise one byte after it and not lose the next frame.
                noise += bytes([SYNC, 3, 0x40, 0x00, 0x01, 0x00])
            self.out.extend(noise)
            self.log({"event": "garbage", "bytes": len(noise)})
        return True

    @property
    def fd(self):
        return self.port.fd

    def flush(self):
        while self.out and self.fd is not None:
            try:
                written = os.write(self.fd, self.out)
            except BlockingIOError:
                return
            except OSError as error:
                if self.args.device:  # the gadget went away under the write
                    self.gadget_gone()
                    return
                if error.errno == errno.EIO:  # nobody holds the slave; cannot happen while we hold it
                    return
                raise
            del self.out[:written]

    def plug(self):
        self.port.plug()
        self.plugged = True
        self.reader = FrameReader()
        self.out.clear()
        self.stick.reset_state()
        self.log({"event": "plug", "path": self.port.path, "link": self.args.link})
        print("ANT stick emulator: %s%s" % (self.port.path, " (" + self.args.link + ")" if self.args.link else ""), flush=True)

    def unplug(self):
        self.port.unplug()
        self.plugged = False
        self.stick.reset_state()
        for strap in self.straps:
            strap.paired_channel = None
        self.log({"event": "unplug"})

    def receive(self):
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return
        except OSError as error:
            if self.args.device and error.errno in (errno.EIO, errno.ENODEV, errno.ENXIO):
                self.gadget_gone()
                return
            raise
        if not data:
            if self.args.device:
                self.gadget_gone()
            return
        for item in self.reader.feed(data):
            if item is None:
                self.queue(frame(MSG_SERIAL_ERROR, [SERIAL_ERROR_CHECKSUM]))
                self.log({"event": "badChecksum"})
                continue
            message_id, payload = item
            answers = self.stick.handle(message_id, list(payload))
            if message_id == MSG_RESET and self.args.reset_delay:
                self.flush()
                time.sleep(self.args.reset_delay)  # a real stick takes a moment to restart
            for answer_id, answer in answers:
                self.queue(frame(answer_id, answer))
            code = answers[0][1][2] if answers and answers[0][0] == MSG_CHANNEL_EVENT else None
            self.log({"event": "command", "id": message_id, "payload": bytes(payload).hex(),
                      "answer": answers[0][0] if answers else None, "code": code})
            if self.origin is None and any(c.state in ("open", "scanning") for c in self.stick.channels):
                self.origin = self.world()
                self.log({"event": "receiving"})

    def gadget_gone(self):
        """The USB gadget was unbound (device lab): wait for it to come back."""
        self.unplug()
        deadline = time.monotonic() + self.args.replug_wait
        # First the node must go: opening /dev/ttyGS0 while g_serial is being removed oopses the
        # kernel's u_serial (6.1: a NULL dereference in gs_close) and kills the opener.
        while os.path.exists(self.args.device) and time.monotonic() < deadline and not self.stopping:
            time.sleep(0.1)
        came_back = None
        while time.monotonic() < deadline and not self.stopping:
            if os.path.exists(self.args.device) and came_back is None:
                came_back = time.monotonic()
            # ...and the new gadget settle before it is opened.
            if came_back is not None and time.monotonic() - came_back >= 1.0:
                try:
                    self.plug()
                    return
                except (OSError, termios.error) as error:  # the node is there before the gadget is
                    self.port.unplug()
                    self.log({"event": "reopenFailed", "error": str(error)})
            time.sleep(0.2)
        self.stopping = True

    def strap_present(self, strap, world):
        if self.origin is None:
            return False
        for index, at, duration in self.args.leave:
            if index == strap.index and self.origin + at <= world < self.origin + at + duration:
                return False
        return True

    def send(self, strap, world):
        strap.advance(world)
        data = strap.page(world)
        if self.finished or not self.plugged or not self.strap_present(strap, world):
            return
        if self.args.dropout and self.rng.random() < self.args.dropout:
            return
        for number in self.stick.receivers(strap):
            if self.queue(self.stick.broadcast(number, strap, data, world)):
                self.sent += 1
                if not strap.current_sent:
                    strap.current_sent = True
                    ticks = strap.event_ticks
                    self.log({"event": "beat", "device": strap.device, "beat": strap.beat_index,
                              "beatCount": strap.beat_count, "eventTime": ticks, "eventTime16": ticks & 0xFFFF,
                              "rr": ticks - strap.previous_ticks, "afterGap": strap.gap_before_current,
                              "sentAt": round(world, 4), "heartRate": round(strap.rate) & 0xFF,
                              "monotonic": round(time.monotonic(), 6),
                              "wall": round(time.time() - (world - strap.beat_world_time(ticks)), 4)})

    def run(self):
        for strap in self.straps:
            self.log(strap.describe())
        self.plug()
        schedule = [(strap.first_send, strap.index) for strap in self.straps]
        heapq.heapify(schedule)
        unplug_at = None
        replug_at = None
        was_present = {strap.index: True for strap in self.straps}
        while not self.stopping:
            now = self.world()
            if self.origin is not None:
                if self.args.unplug and unplug_at is None:
                    unplug_at = self.origin + self.args.unplug[0]
                if unplug_at is not None and self.plugged and replug_at is None and now >= unplug_at:
                    self.flush()
                    self.unplug()
                    replug_at = now + self.args.unplug[1]
                if self.args.duration and not self.finished and now >= self.origin + self.args.duration:
                    self.finished = True
                    self.log({"event": "finished", "broadcasts": self.sent, "overflowDrops": self.dropped_overflow,
                              "skippedBytes": self.reader.skipped, "badChecksums": self.reader.bad_checksums})
                    if self.args.exit_when_finished:
                        self.stopping = True
            if replug_at is not None and now >= replug_at:
                replug_at = None
                unplug_at = float("inf")
                self.plug()
            while schedule and schedule[0][0] <= now:
                when, index = heapq.heappop(schedule)
                strap = self.straps[index]
                present = self.strap_present(strap, when)
                if self.origin is not None and present != was_present[index]:
                    was_present[index] = present
                    self.log({"event": "return" if present else "leave", "device": strap.device})
                self.send(strap, when)
                heapq.heappush(schedule, (when + HRM_PERIOD, index))
            self.flush()
            timeout = max(0.0, min(schedule[0][0] - self.world(), 0.25)) if schedule else 0.25
            readers = [self.fd] if self.fd is not None else []
            writers = [self.fd] if self.fd is not None and self.out else []
            try:
                readable, _, _ = select.select(readers, writers, [], timeout)
            except InterruptedError:
                continue
            if readable and self.fd is not None:
                self.receive()
        self.flush()
        self.log({"event": "exit", "broadcasts": self.sent, "overflowDrops": self.dropped_overflow})
        self.port.unplug()


def parse_leave(text):
    index, at, duration = text.split(":")
    return int(index), float(at), float(duration)


def parse_fail(text):
    message, _, code = text.partition("=")
    return int(message, 0), int(code, 0) if code else INVALID_PARAMETER_PROVIDED


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--straps", type=int, default=3, help="how many straps (default 3)")
    parser.add_argument("--duration", type=float, default=0,
                        help="seconds of broadcasts after the first receive channel opened (0: until stopped)")
    parser.add_argument("--exit-when-finished", action="store_true", help="exit once --duration has passed")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--link", help="a symlink pointed at the pty (re-pointed at each plug)")
    parser.add_argument("--device", help="an existing tty instead of a pty (a USB gadget's /dev/ttyGS0)")
    parser.add_argument("--replug-wait", type=float, default=60,
                        help="with --device: seconds to wait for the tty to come back after it went away")
    parser.add_argument("--log", help="JSON lines: straps, commands, every beat sent, events")
    parser.add_argument("--network-key", type=bytes.fromhex,
                        help="the key the host must set (16 hex digits); another gets INVALID_PARAMETER_PROVIDED "
                             "and a channel on a network without it hears nothing")
    parser.add_argument("--no-scan-mode", action="store_true",
                        help="capabilities without scan mode or extended messages (open RX scan answers INVALID_MESSAGE)")
    parser.add_argument("--channels", type=int, default=8, help="channels the stick has (default 8)")
    parser.add_argument("--fail-command", type=parse_fail, action="append", default=[],
                        metavar="ID[=CODE]", help="answer this command (e.g. 0x45) with CODE (default 0x33)")
    parser.add_argument("--garbage-every", type=int, default=0, help="garbage bytes after every Nth frame sent")
    parser.add_argument("--garbage-with-sync", action="store_true", help="the garbage holds a false sync and frame")
    parser.add_argument("--leave", type=parse_leave, action="append", default=[], metavar="INDEX:AT:FOR",
                        help="strap INDEX goes out of range AT seconds after receiving began, for FOR seconds")
    parser.add_argument("--unplug", type=lambda t: tuple(float(x) for x in t.split(":")), metavar="AT:FOR",
                        help="close the pty AT seconds after receiving began (the link removed), a new one FOR s later")
    parser.add_argument("--dropout", type=float, default=0, help="probability that a broadcast is lost in the air")
    parser.add_argument("--legacy-straps", type=int, default=0, help="the first N straps send page 0 only, no toggle")
    parser.add_argument("--stepped-rates", action="store_true",
                        help="each strap's heart rate is 70 + (second + 3 x index) mod 100 bpm, the second counted from "
                             "the emulator's start: a new value every second, none repeated within 100 s, so a reader "
                             "can tell which broadcast a value it shows came from (the class benchmark)")
    parser.add_argument("--buffer", type=int, default=65536, help="bytes the stick holds for a host that does not read")
    parser.add_argument("--reset-delay", type=float, default=0.02)
    parser.add_argument("--stick-serial", type=int, default=0x4C414231)
    args = parser.parse_args(argv)
    args.fail_command = dict(args.fail_command)
    if args.network_key is not None and len(args.network_key) != 8:
        parser.error("--network-key takes 8 bytes (16 hex digits)")
    emulator = Emulator(args)

    def stop(_signal, _frame):
        emulator.stopping = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # A parent that blocks these signals (a test process handling them itself) passes its mask
    # on through exec; unblocked, SIGTERM stops the emulator whoever started it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    emulator.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
