#!/usr/bin/env python3
"""cuff-csv: a healthgate adapter for blood-pressure monitors whose vendor software exports CSV files.

It speaks the adapter protocol, version 1 (docs/adapter-protocol.md): one JSON object per line,
the gateway's messages on stdin, its own on stdout, its diagnostics on stderr. It watches one
folder and sends each new row of each CSV file there as a `bloodPressure` correlation and a
`heartRate` reading, then a checkpoint saying how many rows of each file it has sent. README.md,
beside it, describes the files it reads and its configuration.

Python 3.11 or later, standard library only.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import math
import os
import queue
import re
import sys
import threading
import time

PROTOCOL = 1
ADAPTER = "cuff-csv"
VERSION = "1.0"
MANUFACTURER = "Acme"

# The gateway's bounds on a few strings (its message declarations, `healthgate adapter schema`).
MAX_ID = 256
MAX_STATUS_STATE = 128
MAX_LOG_MESSAGE = 4096
MIN_LINE_BYTES = 1024
DEFAULT_MAX_LINE_BYTES = 65536

# A file moved out of the folder once the gateway has committed all its rows goes here.
DONE_FOLDER = "done"


def complain(text: str) -> None:
    """Writes a line on stderr, which the gateway logs under the source's name."""
    print(text, file=sys.stderr, flush=True)


# --- Configuration: each key declared once, with its check and its default ---------------------


class ConfigError(Exception):
    """The adapter's block of the gateway's configuration is wrong; the message names the key."""


def _text(key: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"config.{key} must be a non-empty string, not {json.dumps(value)}")
    return value


def _seconds(key: str, value: object) -> float:
    # bool is an int in Python: `true` is no number of seconds.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"config.{key} must be a number of seconds above 0, not {json.dumps(value)}")
    return float(value)


def _flag(key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"config.{key} must be true or false, not {json.dumps(value)}")
    return value


def _key(check, doc: str, default=dataclasses.MISSING):
    return dataclasses.field(default=default, metadata={"check": check, "doc": doc})


@dataclasses.dataclass(frozen=True)
class Config:
    """The `config` object of the gateway's hello. Field names are the JSON keys."""

    folder: str = _key(_text, "the folder the vendor software exports its CSV files into (required)")
    pollSeconds: float = _key(_seconds, "seconds between two looks at the folder", 2.0)
    deviceName: str | None = _key(_text, "the devices' name for people (default: none)", None)
    model: str = _key(_text, "the devices' model", "BP-7")
    archive: bool = _key(_flag, "move a file into <folder>/done/ once the gateway has committed all its rows", False)

    @classmethod
    def from_block(cls, block: object) -> Config:
        """Checks the block: an unknown key is an error, as in the gateway's own configuration."""
        if not isinstance(block, dict):
            raise ConfigError(f"config must be an object, not {json.dumps(block)}")
        fields = {field.name: field for field in dataclasses.fields(cls)}
        for key in block:
            if key not in fields:
                raise ConfigError(f"unknown key config.{key} (the keys are {', '.join(fields)})")
        values = {}
        for name, field in fields.items():
            if name in block:
                values[name] = field.metadata["check"](name, block[name])
            elif field.default is dataclasses.MISSING:
                raise ConfigError(f"config.{name} is required: {field.metadata['doc']}")
        return cls(**values)


# --- The CSV format: pure functions, text in, values or a RowError out --------------------------


class RowError(Exception):
    """A row (or a header) this adapter cannot read; the message says what is wrong with it."""


PRESSURE_UNITS = ("mmHg", "kPa")
SYSTOLIC = re.compile(r"Systolic \((mmHg|kPa)\)")
DIASTOLIC = re.compile(r"Diastolic \((mmHg|kPa)\)")
HEADER_TEXT = "Serial,Measured,Systolic (mmHg),Diastolic (mmHg),Pulse (bpm)"
# RFC 3339 with its zone; seconds may be left out by the exporting software (they are then 0).
MEASURED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})")
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
BOM = b"\xef\xbb\xbf"


@dataclasses.dataclass(frozen=True)
class Layout:
    """What a file's header says: the units of its two pressure columns."""

    systolic_unit: str
    diastolic_unit: str


@dataclasses.dataclass(frozen=True)
class Row:
    """One row of an export: a blood pressure and, when the cell is not empty, a pulse."""

    serial: str
    measured: str  # as written in the file: the readings' ids are made of it
    start: str  # RFC 3339, with seconds, as the gateway takes it
    systolic: int | float
    diastolic: int | float
    pulse: int | float | None


def split_cells(line: bytes) -> list[str]:
    """One line of a file, decoded (UTF-8) and split into its trimmed cells."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise RowError(f"it is not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        cells = next(csv.reader([text], strict=True), [])
    except csv.Error as error:
        raise RowError(f"it is not a CSV row ({error})") from None
    return [cell.strip() for cell in cells]


def parse_header(line: bytes) -> Layout:
    """The layout of a file from its first line; a RowError when it is not this format's header."""
    cells = split_cells(line.removeprefix(BOM))
    while cells and cells[-1] == "":
        cells.pop()  # some exporters end every line with a comma
    if len(cells) == 5 and cells[0] == "Serial" and cells[1] == "Measured" and cells[4] == "Pulse (bpm)":
        systolic, diastolic = SYSTOLIC.fullmatch(cells[2]), DIASTOLIC.fullmatch(cells[3])
        if systolic and diastolic:
            return Layout(systolic.group(1), diastolic.group(1))
    raise RowError(f"its header is {','.join(cells)!r}, not {HEADER_TEXT!r} (or with kPa)")


def parse_start(measured: str) -> str:
    """The RFC 3339 date the gateway takes (seconds included, UTC as Z) from a `Measured` cell."""
    if not MEASURED.fullmatch(measured):
        raise RowError(f"Measured {measured!r} is not a date with its zone, like 2026-11-30T08:15:00+01:00")
    try:
        moment = datetime.datetime.fromisoformat(measured)
    except ValueError as error:
        raise RowError(f"Measured {measured!r} is no date ({error})") from None
    text = moment.isoformat()
    return text[: -len("+00:00")] + "Z" if moment.utcoffset() == datetime.timedelta(0) else text


def parse_number(column: str, cell: str) -> int | float:
    """A cell's number; integral values stay integers in the JSON."""
    if not NUMBER.fullmatch(cell):
        raise RowError(f"{column} {cell!r} is not a number")
    value = float(cell)
    if not math.isfinite(value):
        raise RowError(f"{column} {cell!r} is out of range")
    return int(value) if value.is_integer() else value


def parse_row(line: bytes) -> Row | None:
    """One data line; None for an empty line, a RowError for one that cannot be read."""
    cells = split_cells(line)
    if not any(cells):
        return None
    # Empty cells after the fifth are a trailing comma or two, as some exporters write.
    if len(cells) < 5 or any(cells[5:]):
        raise RowError(f"it has {len(cells)} cells, not 5")
    serial, measured, systolic, diastolic, pulse = cells[:5]
    if not serial:
        raise RowError("its Serial is empty")
    if len(f"{serial}/{measured}/pulse") > MAX_ID:
        raise RowError(f"its Serial is too long for a reading's id ({MAX_ID} characters)")
    return Row(
        serial=serial,
        measured=measured,
        start=parse_start(measured),
        systolic=parse_number("Systolic", systolic),
        diastolic=parse_number("Diastolic", diastolic),
        pulse=parse_number("Pulse", pulse) if pulse else None,
    )


def device_message(serial: str, config: Config) -> dict:
    """The `device` message for a serial number, sent before its first reading."""
    message = {"type": "device", "id": serial}
    if config.deviceName is not None:
        message["name"] = config.deviceName
    message.update(manufacturer=MANUFACTURER, model=config.model, serialNumber=serial)
    return message


def reading_messages(row: Row, layout: Layout) -> list[dict]:
    """A row's readings: its blood pressure, then its pulse when it has one.

    The ids are made of the serial and the `Measured` cell as written, so a row read again (after
    a restart, or exported again in another file) is the same reading.
    """
    reading_id = f"{row.serial}/{row.measured}"
    messages = [
        {
            "type": "correlation",
            "id": reading_id,
            "device": row.serial,
            "correlationType": "bloodPressure",
            "start": row.start,
            "members": [
                {"quantityType": "bloodPressureSystolic", "value": row.systolic, "unit": layout.systolic_unit},
                {"quantityType": "bloodPressureDiastolic", "value": row.diastolic, "unit": layout.diastolic_unit},
            ],
        }
    ]
    if row.pulse is not None:
        messages.append(
            {
                "type": "quantity",
                "id": f"{reading_id}/pulse",
                "device": row.serial,
                "quantityType": "heartRate",
                "value": row.pulse,
                "unit": "count/min",
                "start": row.start,
            }
        )
    return messages


def files_of(state: object) -> dict[str, int]:
    """The rows sent per file, from a checkpoint's state; a ValueError when this adapter wrote no such state."""
    files = state.get("files") if isinstance(state, dict) else None
    if not isinstance(files, dict) or not all(
        isinstance(name, str) and type(rows) is int and rows >= 0 for name, rows in files.items()
    ):
        raise ValueError(f"{json.dumps(state)[:200]} is not {{\"files\": {{name: rows sent}}}}")
    return dict(files)


# --- The export folder ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Export:
    """What one look at an export file found.

    `rows` are its complete data lines: the line at index i is the file's line i + 2 (the header is
    line 1). A last line without its newline may still be being written: it is held back
    (`pending`) until a look finds the file unchanged since the previous one.
    """

    name: str
    stamp: tuple[int, int]  # size and modification time: a file that did not change is not read again
    header: bytes | None
    rows: list[bytes]
    pending: bool


def list_exports(folder: str) -> list[str]:
    """The export files in the folder, by name: regular `*.csv` files, hidden ones left out."""
    with os.scandir(folder) as entries:
        return sorted(
            entry.name
            for entry in entries
            if entry.name.lower().endswith(".csv") and not entry.name.startswith(".") and entry.is_file()
        )


def file_stamp(path: str) -> tuple[int, int]:
    status = os.stat(path)
    return (status.st_size, status.st_mtime_ns)


def read_export(folder: str, name: str, settled_stamp: tuple[int, int] | None) -> Export:
    """Reads a file; a last line without its newline counts only when the file's stamp is `settled_stamp`."""
    with open(os.path.join(folder, name), "rb") as file:
        status = os.fstat(file.fileno())
        data = file.read()
    stamp = (status.st_size, status.st_mtime_ns)
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    pending = False
    if tail:
        if stamp == settled_stamp:
            lines.append(tail)
        else:
            pending = True
    lines = [line.removesuffix(b"\r") for line in lines]
    return Export(name, stamp, lines[0] if lines else None, lines[1:], pending)


# --- The gateway: stdin read on a thread, stdout written a line at a time ------------------------


def read_stdin(fd: int, inbox: queue.Queue) -> None:
    """Puts each line of stdin in the inbox, as ("message", object) or ("unreadable", text), then ("eof", None).

    It reads the file descriptor itself, not sys.stdin, so that no buffered reader's lock is held
    by this thread when the main thread exits.
    """
    pending = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError as error:
            inbox.put(("unreadable", f"stdin: {error}"))
            chunk = b""
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop() if chunk else b""
        for line in lines:
            if not line.strip():
                continue
            try:
                inbox.put(("message", json.loads(line)))
            except ValueError as error:
                inbox.put(("unreadable", f"{line[:200]!r}: {error}"))
        if not chunk:
            inbox.put(("eof", None))
            return


class GatewayGone(Exception):
    """stdout is closed: the gateway is no longer reading."""


class Output:
    """The adapter's stdout: one JSON object per line, flushed at once."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.max_line_bytes = DEFAULT_MAX_LINE_BYTES

    def send(self, message: dict) -> None:
        line = json.dumps(message, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8") + b"\n"
        if len(line) > self.max_line_bytes:
            complain(f"a {message['type']} message of {len(line)} bytes is longer than the gateway reads: not sent")
            return
        try:
            self.stream.write(line)
            self.stream.flush()
        except BrokenPipeError:
            raise GatewayGone() from None

    def log(self, level: str, text: str) -> None:
        if len(text) > MAX_LOG_MESSAGE:
            text = text[: MAX_LOG_MESSAGE - 1] + "…"
        self.send({"type": "log", "message": text, "level": level})


class Stop(Exception):
    """The adapter is done: the gateway said stop, stdin ended, or an error was fatal."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


# --- The adapter -------------------------------------------------------------------------------


class CuffCsvAdapter:
    """Watches the folder and sends what is new in it, between the gateway's messages.

    Everything runs on the main thread; the stdin thread only fills the inbox, which is emptied
    between two rows as well as while waiting for the next look at the folder, so an ack or a stop
    is seen while a long file is being sent.
    """

    def __init__(self, config: Config, output: Output, inbox: queue.Queue, checkpoint: dict[str, int]) -> None:
        self.config = config
        self.output = output
        self.inbox = inbox
        self.sent = dict(checkpoint)  # rows of each file sent (or skipped as unreadable)
        self.committed = dict(checkpoint)  # the latest checkpoint the gateway acknowledged
        self.exports: dict[str, Export] = {}
        self.devices: set[str] = set()
        self.warned: set[str] = set()  # files already warned about
        self.folder_warned = False
        self.status: tuple[str, str] | None = None
        self.look_soon = False

    def run(self) -> None:
        """Looks at the folder every pollSeconds (at once after an ack, when archiving) until told to stop."""
        next_look = time.monotonic()
        while True:
            if self.look_soon:
                self.look_soon = False
                next_look = time.monotonic()
            delay = next_look - time.monotonic()
            if delay <= 0:
                self.look()
                next_look = time.monotonic() + self.config.pollSeconds
                continue
            try:
                self.handle(self.inbox.get(timeout=delay))
            except queue.Empty:
                pass

    def take_messages(self) -> None:
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return
            self.handle(item)

    def handle(self, item: tuple[str, object]) -> None:
        kind, message = item
        if kind == "eof":
            raise Stop(0)
        if kind == "unreadable":
            complain(f"unreadable line from the gateway: {message}")
            return
        if not isinstance(message, dict):
            complain(f"a message from the gateway is not an object: {json.dumps(message)[:200]}")
            return
        match message.get("type"):
            case "ack":
                try:
                    self.committed = files_of(message.get("state"))
                except ValueError as error:
                    complain(f"ack of a checkpoint this adapter did not send: {error}")
                    return
                self.look_soon = self.config.archive
            case "refused":
                reading = f" (id {message['id']})" if "id" in message else ""
                complain(f"the gateway refused line {message.get('line')}{reading}: {message.get('reason')}")
            case "error":
                complain(f"the gateway says: {message.get('reason')}")
                if message.get("fatal") is True:
                    raise Stop(1)
            case "stop":
                raise Stop(0)
            case _:
                pass  # a later protocol version may add messages: ignored (docs/adapter-protocol.md)

    def look(self) -> None:
        """One look at the folder: sends every new row, a checkpoint after each file, archives what is committed."""
        folder = self.config.folder
        try:
            names = list_exports(folder)
        except OSError as error:
            if not self.folder_warned:
                self.folder_warned = True
                self.output.log("warning", f"cannot read the folder {folder}: {error.strerror or error}")
            self.show_status(f"waiting for {folder}", error.strerror or str(error))
            return
        self.folder_warned = False
        self.forget_missing(set(names))
        for name in names:
            self.take_messages()
            export = self.read(name)
            if export is None:
                continue
            if self.send_new_rows(export):
                self.output.send({"type": "checkpoint", "state": {"files": dict(self.sent)}})
            self.archive_if_committed(export)
        remaining = [name for name in names if name in self.exports]
        rows = sum(self.sent.get(name, 0) for name in remaining)
        self.show_status(f"watching {folder}", f"{plural(len(remaining), 'file')}, {plural(rows, 'row')} sent")

    def forget_missing(self, names: set[str]) -> None:
        # A file gone from the folder leaves the next checkpoint: the state stays as small as the folder.
        for name in (set(self.sent) | set(self.committed) | set(self.exports) | self.warned) - names:
            self.forget(name)

    def forget(self, name: str) -> None:
        for table in (self.sent, self.committed, self.exports):
            table.pop(name, None)
        self.warned.discard(name)

    def read(self, name: str) -> Export | None:
        """The file as it is now; the previous look's when it has not changed."""
        previous = self.exports.get(name)
        try:
            if previous is not None and file_stamp(os.path.join(self.config.folder, name)) == previous.stamp:
                if not previous.pending:
                    return previous
            export = read_export(self.config.folder, name, previous.stamp if previous else None)
        except FileNotFoundError:
            return None  # moved away since the folder was listed
        except OSError as error:
            self.warn_once(name, f"cannot read {name}: {error.strerror or error}")
            return None
        self.exports[name] = export
        return export

    def send_new_rows(self, export: Export) -> bool:
        """Sends the rows after those already sent; true when there were any."""
        name = export.name
        if export.header is None:
            return False  # empty, or its header is still being written
        try:
            layout = parse_header(export.header)
        except RowError as error:
            self.warn_once(name, f"{name} is left alone: {error}")
            return False
        done = self.sent.get(name, 0)
        if done > len(export.rows):
            if export.pending:
                return False  # the row the checkpoint counted is still without its newline
            self.output.log(
                "warning",
                f"{name} has {plural(len(export.rows), 'row')} but {done} were sent from it: it was written anew, "
                "so it is sent again from its first row",
            )
            self.sent.pop(name)
            self.committed.pop(name, None)
            done = 0
        for index in range(done, len(export.rows)):
            self.take_messages()
            self.send_row(name, index + 2, layout, export.rows[index])
            self.sent[name] = index + 1
        return done < len(export.rows)

    def send_row(self, name: str, line: int, layout: Layout, text: bytes) -> None:
        try:
            row = parse_row(text)
        except RowError as error:
            self.output.log("warning", f"{name} line {line}: {error}; the row is skipped")
            return
        if row is None:
            return
        if row.serial not in self.devices:
            self.output.send(device_message(row.serial, self.config))
            self.devices.add(row.serial)
        for message in reading_messages(row, layout):
            self.output.send(message)

    def archive_if_committed(self, export: Export) -> None:
        """Moves a file whose every row the gateway has committed (acknowledged) into done/."""
        name = export.name
        rows = len(export.rows)
        if not self.config.archive or export.pending or rows == 0:
            return
        if self.sent.get(name) != rows or self.committed.get(name) != rows:
            return
        source = os.path.join(self.config.folder, name)
        try:
            if file_stamp(source) != export.stamp:
                return  # it grew since: its new rows go first
            done = os.path.join(self.config.folder, DONE_FOLDER)
            os.makedirs(done, exist_ok=True)
            target = free_path(done, name)
            os.rename(source, target)
        except OSError as error:
            self.warn_once(name, f"cannot move {name} into {DONE_FOLDER}/: {error.strerror or error}")
            return
        self.forget(name)
        self.output.log("info", f"moved {name} to {os.path.relpath(target, self.config.folder)}: its {plural(rows, 'row')} are committed")

    def warn_once(self, name: str, text: str) -> None:
        if name not in self.warned:
            self.warned.add(name)
            self.output.log("warning", text)

    def show_status(self, state: str, detail: str) -> None:
        if len(state) > MAX_STATUS_STATE:
            state = state[: MAX_STATUS_STATE - 1] + "…"
        if self.status != (state, detail):
            self.status = (state, detail)
            self.output.send({"type": "status", "state": state, "detail": detail})


def free_path(folder: str, name: str) -> str:
    """A path in the folder for the name that does not exist yet: `name`, else `stem-2.csv`, `stem-3.csv`…"""
    stem, extension = os.path.splitext(name)
    candidate, number = name, 1
    while os.path.lexists(os.path.join(folder, candidate)):
        number += 1
        candidate = f"{stem}-{number}{extension}"
    return os.path.join(folder, candidate)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


# --- The session ---------------------------------------------------------------------------------


def handshake(inbox: queue.Queue, output: Output) -> dict:
    """Reads the gateway's hello and answers it; Stop(2) when it is none, or of another protocol."""
    kind, hello = inbox.get()
    if kind == "eof":
        raise Stop(0)
    if kind != "message" or not isinstance(hello, dict) or hello.get("type") != "hello":
        complain(f"the gateway's first line is not its hello: {hello if kind == 'unreadable' else json.dumps(hello)[:200]}")
        raise Stop(2)
    version = hello.get("protocol")
    if type(version) is not int or version != PROTOCOL:
        complain(f"the gateway speaks adapter protocol {json.dumps(version)}; {ADAPTER} speaks {PROTOCOL} only")
        raise Stop(2)
    max_line_bytes = hello.get("maxLineBytes")
    if type(max_line_bytes) is int and max_line_bytes >= MIN_LINE_BYTES:
        output.max_line_bytes = max_line_bytes
    output.send({"type": "hello", "protocol": PROTOCOL, "adapter": ADAPTER, "version": VERSION})
    return hello


def session(inbox: queue.Queue, output: Output) -> None:
    hello = handshake(inbox, output)
    try:
        config = Config.from_block(hello.get("config", {}))
    except ConfigError as error:
        output.log("error", f"configuration: {error}")
        complain(f"configuration: {error}")
        raise Stop(1) from None
    checkpoint: dict[str, int] = {}
    if hello.get("checkpoint") is not None:
        try:
            checkpoint = files_of(hello["checkpoint"])
        except ValueError as error:
            output.log("warning", f"the checkpoint is not this adapter's, every file is sent again: {error}")
    # The hello's checkpoint is committed: a file it covers whole is archived on the first look.
    CuffCsvAdapter(config, output, inbox, checkpoint).run()


def main() -> int:
    inbox: queue.Queue = queue.Queue()
    threading.Thread(target=read_stdin, args=(sys.stdin.fileno(), inbox), name="stdin", daemon=True).start()
    try:
        session(inbox, Output(sys.stdout.buffer))
    except Stop as stop:
        return stop.status
    except GatewayGone:
        # Nobody reads our stdout any more; point it at /dev/null so that the interpreter's final
        # flush does not complain about the broken pipe too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
