"""Tests of cuff_csv.py, run as the gateway runs it: a child process spoken to through pipes.

Each test plays the gateway (FakeGateway: writes the hello, reads the adapter's lines, answers
with acks and a stop) against CSV files in a temporary folder. Nothing sleeps: every wait is for
an expected line or exit, with a deadline, and a test that runs out of time fails with what the
adapter wrote on stdout and stderr.

    python3 -m unittest discover -s examples/adapters/cuff-csv
"""

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

ADAPTER = Path(__file__).resolve().with_name("cuff_csv.py")
DEADLINE = 10.0
POLL = 0.05
MMHG = "Serial,Measured,Systolic (mmHg),Diastolic (mmHg),Pulse (bpm)\n"
KPA = "Serial,Measured,Systolic (kPa),Diastolic (kPa),Pulse (bpm)\n"

# The keys of each message an adapter writes, required and optional (docs/adapter-protocol.md,
# "Adapter → gateway"): the gateway refuses any other key.
READING_KEYS = {"end", "id", "version", "device", "metadata"}
MESSAGE_KEYS = {
    "hello": ({"protocol", "adapter"}, {"version"}),
    "device": (
        {"id"},
        {"name", "manufacturer", "model", "serialNumber", "hardwareVersion", "firmwareVersion", "softwareVersion"},
    ),
    "quantity": ({"quantityType", "value", "unit", "start"}, READING_KEYS),
    "correlation": ({"correlationType", "start", "members"}, READING_KEYS),
    "heartbeats": ({"start", "beats"}, READING_KEYS - {"end"}),
    "checkpoint": ({"state"}, set()),
    "log": ({"message"}, {"level", "device"}),
    "status": ({"state"}, {"detail"}),
}
MEMBER_KEYS = ({"quantityType", "value", "unit"}, {"start", "end"})
READINGS = {"quantity", "correlation", "heartbeats"}


def pressure(reading_id, device, start, systolic, diastolic, unit="mmHg"):
    return {
        "type": "correlation",
        "id": reading_id,
        "device": device,
        "correlationType": "bloodPressure",
        "start": start,
        "members": [
            {"quantityType": "bloodPressureSystolic", "value": systolic, "unit": unit},
            {"quantityType": "bloodPressureDiastolic", "value": diastolic, "unit": unit},
        ],
    }


def pulse(reading_id, device, start, value):
    return {
        "type": "quantity",
        "id": reading_id,
        "device": device,
        "quantityType": "heartRate",
        "value": value,
        "unit": "count/min",
        "start": start,
    }


def checkpoint(files):
    return {"type": "checkpoint", "state": {"files": files}}


def is_checkpoint(files):
    return lambda message: message == checkpoint(files)


def is_log(level, *words):
    return lambda message: (
        message["type"] == "log" and message.get("level") == level and all(word in message["message"] for word in words)
    )


class FakeGateway:
    """The gateway's side of one session with the adapter."""

    def __init__(self, test, config, checkpoint=None, protocol=1):
        self.test = test
        self.process = subprocess.Popen(
            [sys.executable, str(ADAPTER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        test.addCleanup(self.close)
        self.lines = queue.Queue()
        self.stderr = []
        self.received = []
        threading.Thread(target=self._pump, args=(self.process.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.process.stderr, self.stderr.append), daemon=True).start()
        hello = {
            "type": "hello",
            "protocol": protocol,
            "gateway": "healthgate 0.9.0",
            "name": "clinic-cuff",
            "config": config,
            "maxLineBytes": 65536,
        }
        if checkpoint is not None:
            hello["checkpoint"] = checkpoint
        self.send(hello)

    @staticmethod
    def _pump(stream, put):
        for line in stream:
            put(line)
        put(None)

    def send(self, message):
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def fail(self, text):
        received = "\n".join(json.dumps(message) for message in self.received)
        stderr = b"".join(line for line in self.stderr if line is not None).decode(errors="replace")
        self.test.fail(f"{text}\n--- the adapter's messages:\n{received}\n--- its stderr:\n{stderr}")

    def check(self, line):
        """The message on a line, checked as the gateway checks it: JSON, a known type, only its keys."""
        try:
            message = json.loads(line)
        except ValueError as error:
            self.fail(f"a line is not JSON ({error}): {line!r}")
        if not line.endswith(b"\n") or not isinstance(message, dict) or message.get("type") not in MESSAGE_KEYS:
            self.fail(f"a line is not a message: {line!r}")
        required, optional = MESSAGE_KEYS[message["type"]]
        keys = set(message) - {"type"}
        if not required <= keys or not keys <= required | optional:
            self.fail(f"a {message['type']} has keys {sorted(keys)}: {line!r}")
        for member in message.get("members", []):
            if not MEMBER_KEYS[0] <= set(member) <= MEMBER_KEYS[0] | MEMBER_KEYS[1]:
                self.fail(f"a correlation member has keys {sorted(member)}: {line!r}")
        return message

    def expect(self, what, predicate, timeout=DEADLINE):
        """Reads the adapter's messages until one satisfies the predicate, and returns it."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.fail(f"no {what} within {timeout} s")
            if line is None:
                self.lines.put(None)
                self.fail(f"stdout ended before {what}")
            message = self.check(line)
            self.received.append(message)
            if predicate(message):
                return message

    def messages_until(self, what, predicate):
        """The messages before the one that satisfies the predicate, that one included."""
        start = len(self.received)
        self.expect(what, predicate)
        return self.received[start:]

    def wait_exit(self, stop=True):
        """Sends stop (unless told not to), closes stdin, reads stdout to its end; the exit status."""
        if stop:
            self.send({"type": "stop"})
        self.process.stdin.close()
        try:
            status = self.process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            self.fail(f"the adapter has not exited {DEADLINE} s after {'stop' if stop else 'the end of its stdin'}")
        self._drain()
        return status

    def _drain(self):
        deadline = time.monotonic() + DEADLINE
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.fail("stdout did not end after the adapter exited")
            if line is None:
                return
            self.received.append(self.check(line))

    def stderr_text(self):
        return b"".join(line for line in self.stderr if line is not None).decode(errors="replace")

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()


class CuffCsvTests(unittest.TestCase):
    def setUp(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.folder = Path(folder.name)

    def write(self, name, text, mode="w"):
        with open(self.folder / name, mode) as file:
            file.write(text)

    def gateway(self, checkpoint=None, **config):
        return FakeGateway(self, {"folder": str(self.folder), "pollSeconds": POLL, **config}, checkpoint)

    def readings(self, messages):
        return [message for message in messages if message["type"] in READINGS]

    def test_each_row_is_a_blood_pressure_and_a_pulse_with_ids_of_its_serial_and_date(self):
        self.write(
            "a.csv",
            MMHG
            + "BP-7741,2026-11-30T08:15:00+01:00,128,82,64\n"
            + "BP-7741,2026-11-30T08:20+01:00,131,84,\n"
            + "BP-9012,2026-11-30T07:15:00Z,119.5,78,70\n",
        )
        gateway = self.gateway(deviceName="Clinic cuff")
        hello = gateway.expect("the hello", lambda message: True)
        self.assertEqual(hello, {"type": "hello", "protocol": 1, "adapter": "cuff-csv", "version": "1.0"})
        sent = gateway.messages_until("the checkpoint", is_checkpoint({"a.csv": 3}))
        device = {"type": "device", "name": "Clinic cuff", "manufacturer": "Acme", "model": "BP-7"}
        self.assertEqual(
            sent,
            [
                {**device, "id": "BP-7741", "serialNumber": "BP-7741"},
                pressure("BP-7741/2026-11-30T08:15:00+01:00", "BP-7741", "2026-11-30T08:15:00+01:00", 128, 82),
                pulse("BP-7741/2026-11-30T08:15:00+01:00/pulse", "BP-7741", "2026-11-30T08:15:00+01:00", 64),
                # The id keeps the date as written; start has the seconds the gateway wants.
                pressure("BP-7741/2026-11-30T08:20+01:00", "BP-7741", "2026-11-30T08:20:00+01:00", 131, 84),
                {**device, "id": "BP-9012", "serialNumber": "BP-9012"},
                pressure("BP-9012/2026-11-30T07:15:00Z", "BP-9012", "2026-11-30T07:15:00Z", 119.5, 78),
                pulse("BP-9012/2026-11-30T07:15:00Z/pulse", "BP-9012", "2026-11-30T07:15:00Z", 70),
                checkpoint({"a.csv": 3}),
            ],
        )
        status = gateway.expect("a status", lambda message: message["type"] == "status")
        self.assertEqual(status, {"type": "status", "state": f"watching {self.folder}", "detail": "1 file, 3 rows sent"})
        self.assertEqual(gateway.wait_exit(), 0)
        self.assertEqual(self.readings(gateway.received[len(sent) + 1 :]), [])

    def test_kpa_is_sent_in_kpa_for_the_gateway_to_convert(self):
        self.write("home.csv", KPA + "BP-3308,2026-11-30T07:05:00+01:00,16.4,10.50,58\n")
        gateway = self.gateway(model="BP-9")
        sent = gateway.messages_until("the checkpoint", is_checkpoint({"home.csv": 1}))
        self.assertIn(
            pressure("BP-3308/2026-11-30T07:05:00+01:00", "BP-3308", "2026-11-30T07:05:00+01:00", 16.4, 10.5, "kPa"), sent
        )
        self.assertIn({"type": "device", "id": "BP-3308", "manufacturer": "Acme", "model": "BP-9", "serialNumber": "BP-3308"}, sent)
        self.assertEqual(gateway.wait_exit(), 0)

    def test_resuming_from_the_checkpoint_sends_nothing_it_covers(self):
        self.write("a.csv", MMHG + "A,2026-11-30T06:00:00Z,120,80,60\nA,2026-11-30T06:10:00Z,121,81,61\n")
        self.write("b.csv", MMHG + "B,2026-11-30T07:00:00Z,130,85,70\nB,2026-11-30T07:10:00Z,131,86,71\nB,2026-11-30T07:20:00Z,132,87,\n")
        gateway = self.gateway(checkpoint={"files": {"a.csv": 2, "b.csv": 1}})
        # Files are read in the order of their names: a.csv, wholly covered, before b.csv.
        sent = gateway.messages_until("the checkpoint", is_checkpoint({"a.csv": 2, "b.csv": 3}))
        self.assertEqual(
            [message["id"] for message in self.readings(sent)],
            ["B/2026-11-30T07:10:00Z", "B/2026-11-30T07:10:00Z/pulse", "B/2026-11-30T07:20:00Z"],
        )
        self.assertEqual([message["id"] for message in sent if message["type"] == "device"], ["B"])
        self.assertEqual(gateway.wait_exit(), 0)
        self.assertEqual(len(self.readings(gateway.received)), 3)

    def test_rows_appended_later_are_sent_later(self):
        self.write("a.csv", MMHG + "A,2026-11-30T06:00:00Z,120,80,60\n")
        gateway = self.gateway()
        gateway.expect("the first checkpoint", is_checkpoint({"a.csv": 1}))
        self.write("a.csv", "A,2026-11-30T06:10:00Z,121,81,61\nA,2026-11-30T06:20:00Z,122,82,62\n", "a")
        sent = gateway.messages_until("the second checkpoint", is_checkpoint({"a.csv": 3}))
        self.assertEqual(
            [message["id"] for message in self.readings(sent)],
            [
                "A/2026-11-30T06:10:00Z",
                "A/2026-11-30T06:10:00Z/pulse",
                "A/2026-11-30T06:20:00Z",
                "A/2026-11-30T06:20:00Z/pulse",
            ],
        )
        self.assertNotIn("device", [message["type"] for message in sent])
        # A last row without its newline is sent once the file stays as it is for a look.
        self.write("a.csv", "A,2026-11-30T06:30:00Z,123,83,63", "a")
        sent = gateway.messages_until("the third checkpoint", is_checkpoint({"a.csv": 4}))
        self.assertEqual([message["id"] for message in self.readings(sent)], ["A/2026-11-30T06:30:00Z", "A/2026-11-30T06:30:00Z/pulse"])
        self.write("a.csv", "\nA,2026-11-30T06:40:00Z,124,84,\n", "a")
        sent = gateway.messages_until("the fourth checkpoint", is_checkpoint({"a.csv": 5}))
        self.assertEqual([message["id"] for message in self.readings(sent)], ["A/2026-11-30T06:40:00Z"])
        self.assertEqual(gateway.wait_exit(), 0)

    def test_archive_moves_a_file_only_once_its_rows_are_acknowledged(self):
        self.write("a.csv", MMHG + "A,2026-11-30T06:00:00Z,120,80,60\nA,2026-11-30T06:10:00Z,121,81,61\n")
        gateway = self.gateway(archive=True)
        first = gateway.expect("the first checkpoint", is_checkpoint({"a.csv": 2}))
        # Another file, and its checkpoint: the adapter has looked at the folder since, without an ack.
        self.write("b.csv", MMHG + "B,2026-11-30T07:00:00Z,130,85,70\n")
        second = gateway.expect("the second checkpoint", is_checkpoint({"a.csv": 2, "b.csv": 1}))
        self.assertTrue((self.folder / "a.csv").exists())
        self.assertFalse((self.folder / "done").exists())
        gateway.send({"type": "ack", "state": first["state"]})
        gateway.expect("the log of the move", is_log("info", "moved a.csv to done/a.csv"))
        self.assertEqual(sorted(os.listdir(self.folder)), ["b.csv", "done"])
        self.assertEqual(os.listdir(self.folder / "done"), ["a.csv"])
        # A moved file leaves the checkpoints; one not acknowledged whole stays where it is.
        self.write("b.csv", "B,2026-11-30T07:10:00Z,131,86,71\n", "a")
        gateway.expect("the third checkpoint", is_checkpoint({"b.csv": 2}))
        gateway.send({"type": "ack", "state": second["state"]})
        self.assertTrue((self.folder / "b.csv").exists())
        self.assertEqual(gateway.wait_exit(), 0)

    def test_archive_moves_a_file_the_hellos_checkpoint_covers(self):
        self.write("a.csv", MMHG + "A,2026-11-30T06:00:00Z,120,80,60\n")
        # A file of the same name moved there before keeps its place.
        (self.folder / "done").mkdir()
        self.write("done/a.csv", MMHG)
        gateway = self.gateway(checkpoint={"files": {"a.csv": 1}}, archive=True)
        gateway.expect("the log of the move", is_log("info", "moved a.csv to done/a-2.csv"))
        self.assertEqual(sorted(os.listdir(self.folder / "done")), ["a-2.csv", "a.csv"])
        self.assertEqual(gateway.wait_exit(), 0)
        self.assertEqual(self.readings(gateway.received), [])

    def test_a_row_that_cannot_be_read_is_logged_and_the_rest_sent(self):
        self.write(
            "a.csv",
            MMHG
            + "A,2026-11-30T06:00:00Z,120,80,60\n"
            + "A,2026-11-30 06:10,121,81,61\n"
            + "\n"
            + "A,2026-11-30T06:20:00Z,high,82,62\n"
            + "A,2026-11-30T06:30:00Z,123,83,63\n",
        )
        self.write("b.csv", "Serial,Date,Time,Systolic (mmHg),Diastolic (mmHg),Pulse (bpm)\nA,2026-11-30,06:00,120,80,60\n")
        gateway = self.gateway()
        sent = gateway.messages_until("the checkpoint", is_checkpoint({"a.csv": 5}))
        self.assertEqual(
            [message["id"] for message in self.readings(sent)],
            ["A/2026-11-30T06:00:00Z", "A/2026-11-30T06:00:00Z/pulse", "A/2026-11-30T06:30:00Z", "A/2026-11-30T06:30:00Z/pulse"],
        )
        warnings = [message["message"] for message in sent if message["type"] == "log"]
        self.assertEqual(len(warnings), 2, warnings)
        self.assertIn("a.csv line 3: Measured '2026-11-30 06:10'", warnings[0])
        self.assertIn("a.csv line 5: Systolic 'high' is not a number", warnings[1])
        gateway.expect("the warning about b.csv", is_log("warning", "b.csv is left alone", "header"))
        # One warning for a file it cannot read, however many looks it takes.
        self.write("a.csv", "A,2026-11-30T06:40:00Z,124,84,64\n", "a")
        gateway.expect("the next checkpoint", is_checkpoint({"a.csv": 6}))
        self.assertEqual(gateway.wait_exit(), 0)
        self.assertEqual(len([message for message in gateway.received if is_log("warning", "b.csv")(message)]), 1)

    def test_stop_ends_it_with_status_0(self):
        gateway = self.gateway()
        gateway.expect("a status", lambda message: message == {"type": "status", "state": f"watching {self.folder}", "detail": "0 files, 0 rows sent"})
        self.assertEqual(gateway.wait_exit(), 0)

    def test_the_end_of_stdin_ends_it_with_status_0(self):
        self.write("a.csv", MMHG + "A,2026-11-30T06:00:00Z,120,80,60\n")
        gateway = self.gateway()
        gateway.expect("the checkpoint", is_checkpoint({"a.csv": 1}))
        self.assertEqual(gateway.wait_exit(stop=False), 0)

    def test_refused_readings_errors_and_unknown_messages_do_not_stop_it(self):
        self.write("a.csv", MMHG + "A,2026-11-30T06:00:00Z,520,80,60\n")
        gateway = self.gateway()
        gateway.expect("the checkpoint", is_checkpoint({"a.csv": 1}))
        gateway.send({"type": "refused", "line": 3, "reason": "bloodPressureSystolic 520 mmHg is implausible", "id": "A/2026-11-30T06:00:00Z"})
        gateway.send({"type": "error", "reason": "line 9 is not JSON"})
        gateway.send({"type": "something-new", "since": 2})
        self.write("a.csv", "A,2026-11-30T06:10:00Z,121,81,61\n", "a")
        gateway.expect("the next checkpoint", is_checkpoint({"a.csv": 2}))
        gateway.send({"type": "error", "reason": "protocol 1 is no longer spoken", "fatal": True})
        self.assertEqual(gateway.wait_exit(stop=False), 1)
        stderr = gateway.stderr_text()
        self.assertIn("refused line 3 (id A/2026-11-30T06:00:00Z): bloodPressureSystolic 520 mmHg is implausible", stderr)
        self.assertIn("line 9 is not JSON", stderr)
        self.assertIn("protocol 1 is no longer spoken", stderr)

    def test_a_folder_that_is_not_there_yet_is_waited_for(self):
        self.folder = self.folder / "later"
        gateway = self.gateway()
        gateway.expect("the warning", is_log("warning", f"cannot read the folder {self.folder}"))
        gateway.expect("the status", lambda message: message["type"] == "status" and message["state"] == f"waiting for {self.folder}")
        self.folder.mkdir()
        self.write("a.csv", MMHG + "A,2026-11-30T06:00:00Z,120,80,60\n")
        gateway.expect("the checkpoint", is_checkpoint({"a.csv": 1}))
        self.assertEqual(gateway.wait_exit(), 0)

    def test_another_protocol_version_ends_it_with_status_2(self):
        gateway = FakeGateway(self, {"folder": str(self.folder)}, protocol=2)
        self.assertEqual(gateway.wait_exit(stop=False), 2)
        self.assertEqual(gateway.received, [])
        self.assertIn("protocol 2", gateway.stderr_text())

    def test_a_configuration_without_a_folder_is_logged_and_ends_it_with_status_1(self):
        gateway = FakeGateway(self, {"pollSeconds": 1})
        self.assertEqual(gateway.wait_exit(stop=False), 1)
        self.assertEqual(gateway.received[0]["type"], "hello")
        self.assertEqual(gateway.received[1:], [{"type": "log", "message": gateway.received[1]["message"], "level": "error"}])
        self.assertIn("config.folder is required", gateway.received[1]["message"])
        self.assertIn("config.folder is required", gateway.stderr_text())

    def test_an_unknown_configuration_key_ends_it_with_status_1(self):
        gateway = self.gateway(archve=True)
        self.assertEqual(gateway.wait_exit(stop=False), 1)
        self.assertIn("unknown key config.archve", gateway.stderr_text())


if __name__ == "__main__":
    unittest.main()
