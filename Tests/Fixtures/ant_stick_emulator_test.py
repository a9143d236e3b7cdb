#!/usr/bin/env python3
"""Tests of ant_stick_emulator.py through its pty, as a host sees it: framing and checksums,
the answers to each command (and the errors its modes ask for), continuous scan mode with
extended channel ids, paired channels on a stick without scan mode, pages and the beat log.

The host side here has its own frame parser (not the emulator's), so that a shared mistake
does not pass. Run: .build/pyenv/bin/python Tests/Fixtures/ant_stick_emulator_test.py
(EndToEndTests' ANTStickEndToEndTests runs it in the suite; the device lab runs its `stream`
mode against /dev/ttyUSB0: `ant_stick_emulator_test.py stream PATH SECONDS KEY`).
"""
import json
import math
import os
import select
import shutil
import subprocess
import sys
import tempfile
import termios
import time
import tty
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EMULATOR = os.path.join(HERE, "ant_stick_emulator.py")
KEY = bytes.fromhex("4c41422d4b455921")  # "LAB-KEY!": the tests' own key, not the ANT+ network key


class Host:
    """A host on the stick's tty: sends frames, reads and checks them."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.fd)
        attributes = termios.tcgetattr(self.fd)
        attributes[3] &= ~termios.ECHO
        termios.tcsetattr(self.fd, termios.TCSANOW, attributes)
        self.pending = b""
        self.bytes_skipped = 0

    def close(self):
        os.close(self.fd)

    def send(self, message_id, payload):
        body = bytes([0xA4, len(payload), message_id]) + bytes(payload)
        checksum = 0
        for b in body:
            checksum ^= b
        os.write(self.fd, body + bytes([checksum]))

    def send_raw(self, data):
        os.write(self.fd, data)

    def frame(self, timeout=3.0):
        """The next frame (id, payload), checking sync, length and checksum; None on timeout."""
        deadline = time.monotonic() + timeout
        while True:
            while self.pending and self.pending[0] != 0xA4:
                self.pending = self.pending[1:]
                self.bytes_skipped += 1
            if len(self.pending) >= 2 and len(self.pending) >= self.pending[1] + 4:
                length = self.pending[1]
                candidate, rest = self.pending[:length + 4], self.pending[length + 4:]
                checksum = 0
                for b in candidate[:-1]:
                    checksum ^= b
                if checksum == candidate[-1]:
                    self.pending = rest
                    return candidate[2], candidate[3:-1]
                self.pending = self.pending[1:]
                self.bytes_skipped += 1
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, _, _ = select.select([self.fd], [], [], remaining)
            if readable:
                self.pending += os.read(self.fd, 4096)

    def command(self, message_id, payload, timeout=3.0):
        """Sends a command and returns the first non-broadcast answer."""
        self.send(message_id, payload)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            answer = self.frame(deadline - time.monotonic())
            if answer is None:
                break
            if answer[0] != 0x4E:
                return answer
        raise AssertionError("no answer to 0x%02X" % message_id)


def start(*options, straps=3, directory=None):
    link = os.path.join(directory, "stick")
    log = os.path.join(directory, "log.jsonl")
    process = subprocess.Popen([sys.executable, EMULATOR, "--straps", str(straps), "--link", link, "--log", log,
                                "--network-key", KEY.hex(), *options], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    assert line.startswith("ANT stick emulator: "), line
    return process, link, log


def records(log, event=None):
    with open(log) as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [r for r in rows if event is None or r["event"] == event]


def scan_setup(host, key=KEY):
    """Reset, key, channel 0 receive, wildcard id, RF 57, channel ids on, open RX scan mode."""
    assert host.command(0x4A, [0]) == (0x6F, bytes([0x20]))
    steps = [(0x46, [0] + list(key)), (0x42, [0, 0x00, 0]), (0x51, [0, 0, 0, 0, 0]), (0x45, [0, 57]),
             (0x6E, [0, 0x80]), (0x5B, [0])]
    return [(message_id, host.command(message_id, payload)) for message_id, payload in steps]


def broadcasts(host, seconds):
    """Extended broadcasts heard for `seconds`: (device, data) per frame."""
    heard = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        item = host.frame(max(0.01, deadline - time.monotonic()))
        if item and item[0] == 0x4E:
            payload = item[1]
            assert len(payload) == 14 and payload[9] & 0x80, payload.hex()
            device = payload[10] | payload[11] << 8 | (payload[13] >> 4) << 16
            assert payload[12] == 120
            heard.append((device, payload[1:9]))
    return heard


class EmulatorTests(unittest.TestCase):
    def setUp(self):
        self.processes = []

    def tearDown(self):
        for process in self.processes:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
                raise AssertionError("the emulator did not stop on SIGTERM")
            finally:
                process.stdout.close()

    def emulator(self, *options, straps=3):
        directory = tempfile.mkdtemp(prefix="ant-emulator-test-")
        self.addCleanup(shutil.rmtree, directory, True)
        process, link, log = start(*options, straps=straps, directory=directory)
        self.processes.append(process)
        host = Host(link)
        self.addCleanup(host.close)
        return host, log

    def test_commands_answers_and_scan_broadcasts(self):
        host, log = self.emulator()
        # Capabilities: 8 channels, 8 networks, extended messages and scan mode in advanced 2.
        message_id, capabilities = host.command(0x4D, [0, 0x54])
        self.assertEqual(message_id, 0x54)
        self.assertEqual(capabilities[0], 8)
        self.assertEqual(capabilities[4] & 0x06, 0x06)
        self.assertEqual(host.command(0x4D, [0, 0x61])[0], 0x61)
        # A wrong key is refused with INVALID_PARAMETER_PROVIDED, naming the command.
        self.assertEqual(host.command(0x46, [0] + [1] * 8), (0x40, bytes([0, 0x46, 0x33])))
        # Open before assign: CHANNEL_IN_WRONG_STATE; close of a closed channel: CHANNEL_NOT_OPENED.
        self.assertEqual(host.command(0x4B, [0]), (0x40, bytes([0, 0x4B, 0x15])))
        self.assertEqual(host.command(0x4C, [1]), (0x40, bytes([1, 0x4C, 0x16])))
        # An unknown message: INVALID_MESSAGE.
        self.assertEqual(host.command(0x99, [0]), (0x40, bytes([0, 0x99, 0x28])))
        for message_id, answer in scan_setup(host):
            self.assertEqual(answer, (0x40, bytes([answer[1][0], message_id, 0])), "0x%02X" % message_id)
        heard = broadcasts(host, 4)
        straps = records(log, "strap")
        self.assertEqual({d for d, _ in heard}, {s["device"] for s in straps})
        self.assertTrue(any(s["device"] > 0xFFFF for s in straps), "a 20-bit id is exercised")
        # 4.06 Hz per strap: about 16 broadcasts each in 4 s.
        for strap in straps:
            count = sum(1 for d, _ in heard if d == strap["device"])
            self.assertGreaterEqual(count, 13, strap)
            self.assertLessEqual(count, 18, strap)
        # Page 4 mostly, the toggle bit changing every 4 messages of a strap.
        first = straps[0]["device"]
        pages = [data for d, data in heard if d == first]
        self.assertGreaterEqual(sum(1 for p in pages if p[0] & 0x7F == 4), len(pages) - 1)
        toggles = [p[0] >> 7 for p in pages]
        runs = [1]
        for a, b in zip(toggles, toggles[1:]):
            if a == b:
                runs[-1] += 1
            else:
                runs.append(1)
        self.assertTrue(all(r == 4 for r in runs[1:-1]), runs)
        # Close: the response, then EVENT_CHANNEL_CLOSED.
        self.assertEqual(host.command(0x4C, [0]), (0x40, bytes([0, 0x4C, 0])))
        event = host.frame()
        while event is not None and event[0] == 0x4E:  # broadcasts already on their way
            event = host.frame()
        self.assertEqual(event, (0x40, bytes([0, 0x01, 0x07])))
        # Channel status: assigned (1) again.
        self.assertEqual(host.command(0x4D, [0, 0x52]), (0x52, bytes([0, 0x01])))

    def test_the_beat_log_matches_the_broadcasts(self):
        host, log = self.emulator()
        scan_setup(host)
        heard = broadcasts(host, 6)
        beats = records(log, "beat")
        for strap in records(log, "strap"):
            logged = [b for b in beats if b["device"] == strap["device"]]
            seen = []
            for device, data in heard:
                if device == strap["device"]:
                    key = (data[4] | data[5] << 8, data[6])
                    if not seen or seen[-1][:2] != key:
                        seen.append(key + (data,))
            self.assertEqual([(b["eventTime16"], b["beatCount"]) for b in logged], [s[:2] for s in seen])
            for beat, (_, _, data) in zip(logged[1:], seen[1:]):
                if data[0] & 0x7F == 4:  # page 4's previous beat time gives the same RR
                    previous = data[2] | data[3] << 8
                    self.assertEqual(beat["rr"], (beat["eventTime16"] - previous) & 0xFFFF)
            for a, b in zip(logged, logged[1:]):
                self.assertEqual(b["beatCount"], (a["beatCount"] + 1) & 0xFF)
                self.assertFalse(b["afterGap"])
                self.assertEqual(b["rr"], b["eventTime"] - a["eventTime"])
                self.assertTrue(300 <= b["rr"] <= 1400, b)

    def test_stepped_rates_name_each_second(self):
        # --stepped-rates (the class benchmark): each beat carries 70 + (its second + 3 x index)
        # mod 100, the broadcasts carry what the log says, and the log stamps each beat's send.
        host, log = self.emulator("--stepped-rates")
        scan_setup(host)
        before = time.monotonic()
        heard = broadcasts(host, 4)
        listened = time.monotonic()
        beats = records(log, "beat")
        straps = records(log, "strap")
        self.assertTrue(beats)
        for strap in straps:
            logged = [b for b in beats if b["device"] == strap["device"]]
            self.assertGreaterEqual(len({b["heartRate"] for b in logged}), 3, logged)
            for beat in logged:
                # The beat's own second: at most one broadcast period (0.25 s) before its send.
                second = math.floor(beat["sentAt"])
                self.assertIn(beat["heartRate"], {70 + (s + 3 * strap["index"]) % 100 for s in (second - 1, second)})
                self.assertGreaterEqual(beat["monotonic"], before - 1)
            carried = {(data[4] | data[5] << 8, data[7]) for device, data in heard if device == strap["device"]}
            # A beat logged in the listening's last two seconds may be on its way still (a loaded
            # host reads the stick late); one logged before was broadcast while the test listened.
            for beat in (b for b in logged if b["monotonic"] < listened - 2):
                self.assertIn((beat["eventTime16"], beat["heartRate"]), carried)

    def test_background_pages_and_legacy_straps(self):
        host, log = self.emulator("--legacy-straps", "1", straps=2)
        scan_setup(host)
        heard = broadcasts(host, 20)  # 65 messages of a strap take 16 s
        legacy, modern = records(log, "strap")
        legacy_pages = [d for device, d in heard if device == legacy["device"]]
        self.assertTrue(legacy_pages and all(p[0] == 0 for p in legacy_pages))
        pages = [d for device, d in heard if device == modern["device"]]
        background = [p for p in pages if p[0] & 0x7F != 4]
        self.assertGreaterEqual(len(background), 1)
        for page in background:
            number = page[0] & 0x7F
            self.assertIn(number, (1, 2, 3, 7))
            if number == 2:
                self.assertEqual(page[1], modern["manufacturer"])
                self.assertEqual(page[2] | page[3] << 8, modern["serialNumber"] >> 16)
            if number == 3:
                self.assertEqual(list(page[1:4]), [modern["hardwareVersion"], modern["softwareVersion"], modern["model"]])
            if number == 7:
                self.assertEqual(page[1], modern["batteryLevel"])

    def test_a_failing_command_and_garbage_between_frames(self):
        host, _ = self.emulator("--fail-command", "0x45=0x33", "--garbage-every", "2", "--garbage-with-sync")
        answers = dict(scan_setup(host))
        self.assertEqual(answers[0x45], (0x40, bytes([0, 0x45, 0x33])))
        # RF was refused, so the channel is not on 57 and hears nothing, but the answers keep
        # coming with garbage between them, which the host skips.
        for _ in range(4):
            self.assertEqual(host.command(0x4D, [0, 0x54])[0], 0x54)
        self.assertGreater(host.bytes_skipped, 0)
        self.assertEqual(broadcasts(host, 1.5), [])

    def test_garbage_between_broadcasts_loses_no_frame(self):
        host, log = self.emulator("--garbage-every", "1", "--garbage-with-sync")
        scan_setup(host)
        heard = broadcasts(host, 3)
        self.assertGreater(host.bytes_skipped, 0)
        finished = len(heard)
        self.assertGreaterEqual(finished, 3 * 11)

    def test_a_bad_checksum_gets_a_serial_error(self):
        host, _ = self.emulator()
        host.send_raw(bytes([0xA4, 0x01, 0x4A, 0x00, 0x00]))
        self.assertEqual(host.frame(), (0xAE, bytes([0x02])))
        self.assertEqual(host.command(0x4A, [0]), (0x6F, bytes([0x20])))

    def test_a_stick_without_scan_mode_pairs_channels(self):
        host, log = self.emulator("--no-scan-mode", "--channels", "2", straps=3)
        message_id, capabilities = host.command(0x4D, [0, 0x54])
        self.assertEqual(capabilities[4] & 0x06, 0)
        self.assertEqual(host.command(0x4A, [0])[0], 0x6F)
        self.assertEqual(host.command(0x46, [0] + list(KEY))[1][2], 0)
        for channel in range(2):
            for message_id, payload in [(0x42, [channel, 0, 0]), (0x51, [channel, 0, 0, 120, 0]),
                                        (0x43, [channel, 0x86, 0x1F]), (0x45, [channel, 57])]:
                self.assertEqual(host.command(message_id, payload)[1][2], 0)
        self.assertEqual(host.command(0x5B, [0]), (0x40, bytes([0, 0x5B, 0x28])))
        self.assertEqual(host.command(0x6E, [0, 0x80]), (0x40, bytes([0, 0x6E, 0x28])))
        for channel in range(2):
            self.assertEqual(host.command(0x4B, [channel]), (0x40, bytes([channel, 0x4B, 0])))
        frames = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            item = host.frame(0.5)
            if item and item[0] == 0x4E:
                frames.append(item[1])
        self.assertTrue(all(len(p) == 9 for p in frames))
        self.assertEqual({p[0] for p in frames}, {0, 1})
        paired = records(log, "paired")
        self.assertEqual(len(paired), 2)
        # Channel id of a paired channel: the strap's number.
        answer = host.command(0x4D, [0, 0x51])
        self.assertEqual(answer[0], 0x51)
        self.assertEqual(answer[1][1] | answer[1][2] << 8, paired[0]["device"] & 0xFFFF)

    def test_a_strap_leaves_and_returns_and_the_stick_is_unplugged(self):
        host, log = self.emulator("--leave", "0:1:2", "--unplug", "4:1", straps=2)
        scan_setup(host)
        first = records(log, "strap")[0]["device"]
        heard = broadcasts(host, 3.5)
        times = [t for t, (d, _) in enumerate(heard) if d == first]
        self.assertTrue(times)
        self.assertTrue(any(e["event"] == "leave" for e in records(log)))
        self.assertTrue(any(e["event"] == "return" for e in records(log)))
        beats = [b for b in records(log, "beat") if b["device"] == first]
        self.assertTrue(any(b["afterGap"] for b in beats[1:]), "the return follows a gap")
        # The unplug: the pty goes away (end of file or EIO) and the link is re-pointed.
        deadline = time.monotonic() + 5
        gone = False
        while time.monotonic() < deadline and not gone:
            try:
                readable, _, _ = select.select([host.fd], [], [], 0.2)
                if readable and not os.read(host.fd, 4096):
                    gone = True
            except OSError:
                gone = True
        self.assertTrue(gone, "the host saw the stick go")
        link = [e for e in records(log, "plug")][0]["link"]
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(records(log, "plug")) < 2:
            time.sleep(0.05)
        plugs = records(log, "plug")
        self.assertEqual(len(plugs), 2)
        self.assertEqual(os.readlink(link), plugs[1]["path"])
        again = Host(link)
        self.addCleanup(again.close)
        scan_setup(again)
        self.assertTrue(broadcasts(again, 1.5))


def stream(path, seconds, key):
    """Device-lab stand-in for the gateway: set up scan mode on PATH, print what is heard."""
    host = Host(path)
    answers = scan_setup(host, bytes.fromhex(key))
    failed = [hex(m) for m, (i, p) in answers if i != 0x40 or p[2] != 0]
    heard = broadcasts(host, seconds)
    devices = sorted({d for d, _ in heard})
    host.send(0x4A, [0])  # reset: the stick stops receiving, so nothing piles up for the next host
    host.close()
    print(json.dumps({"setupFailures": failed, "broadcasts": len(heard), "devices": devices,
                      "skippedBytes": host.bytes_skipped}))
    return 0 if not failed and heard else 1


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "stream":
        sys.exit(stream(sys.argv[2], float(sys.argv[3]), sys.argv[4]))
    unittest.main()
