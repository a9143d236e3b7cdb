#!/usr/bin/env python3
"""Replays a dm-log-writes log to each of its crash points and checks the store at each one.

    replay-log.py LOG SIZE WORK MARKS --http FILE --mqtt FILE --commands FILE [--from-mark NAME]
                  [--store-name NAME] [--min-states N] [--summary JSON]

LOG is the log device (or an image of it); SIZE the bytes of the device that was logged, all zero
before its first logged write (the disk the lab gives the guest is a new sparse file); WORK a
directory on a tmpfs for the replayed device and each state's copy. MARKS is the scenario's JSON
lines, one per dm-log-writes mark it made: {"mark": NAME, "http": BYTES, "mqtt": BYTES,
"commands": BYTES}, the sizes of the receivers' logs and the answered commands' log when the mark
was made (read before it was made).

The log's format is the kernel's (Documentation/admin-guide/device-mapper/log-writes.rst,
drivers/md/dm-log-writes.c): the super block in the first sector of the log (magic, version,
entries, sector size: little-endian u64, u64, u64, u32), then from the second sector on one entry
after another, each a sector holding its header (sector, sectors, flags, data length: u64 each) and,
for a mark, the mark's name, followed (unless it is a discard or a mark) by the sectors written.
Writes are logged once they completed and in the order they reached the disk's cache: a FLUSH
entry comes after every write that completed before the flush, so the device replayed through a
flush (or a FUA write) is what the disk held for certain at that moment, and through a mark what it
held if its cache had written everything it had been given.

A crash state is the replayed device at each FLUSH or FUA entry and at each mark, from the mark
--from-mark names on (before it the filesystem was being made). For each one a copy of the device
is checked as a gateway's boot would find it: `e2fsck -p` (the journal replayed, as systemd-fsck
does at boot), `e2fsck -fn` (nothing left to repair), the store's files read out of it with
debugfs (libext2fs: a crash image is never mounted in this machine's kernel), and the store's own
check (lib/store_check.py: PRAGMA integrity_check, and nothing that the receivers had acknowledged,
or the CLI had been answered, at the last mark before the state missing from it). It runs on the
host, at native speed, on the log disk's image.

Prints a verdict line per check that failed at some state (with the states it failed at), and the
totals: "ok N crash states checked (F flush or FUA points, M marks; entries E)".
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import store_check  # noqa: E402

MAGIC = 0x6A736677736872
FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8
SUPER = struct.Struct("<QQQI")
ENTRY = struct.Struct("<QQQQ")


def entries(log):
    """(index, flags, sector, sectors, data or mark name) for each entry the super block counts."""
    with open(log, "rb") as file:
        magic, version, count, sector_size = SUPER.unpack(file.read(SUPER.size))
        if magic != MAGIC:
            raise SystemExit(f"not a dm-log-writes log: magic {magic:#x}")
        position = sector_size
        for index in range(count):
            file.seek(position)
            header = file.read(sector_size)
            sector, sectors, flags, data_length = ENTRY.unpack_from(header)
            position += sector_size
            if flags & MARK:
                yield index, flags, sector, sectors, header[ENTRY.size:ENTRY.size + data_length].decode()
            elif flags & DISCARD:
                yield index, flags, sector * sector_size, sectors * sector_size, None
            else:
                data = file.read(sectors * sector_size)
                position += sectors * sector_size
                yield index, flags, sector * sector_size, sectors * sector_size, data


def run(command):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return result.returncode, result.stdout


def check_state(image, work, store_name, acknowledged, commands):
    """The verdicts for one crash state (a copy of the replayed device): fsck, the store."""
    state = os.path.join(work, "state.img")
    files = os.path.join(work, "files")
    subprocess.run(["cp", "--sparse=always", image, state], check=True)
    shutil.rmtree(files, ignore_errors=True)
    os.makedirs(files)
    verdicts = []
    # e2fsck -p as a boot runs it: 0 clean, 1 errors corrected (a journal replayed is none), more failed.
    status, output = run(["e2fsck", "-p", state])
    if status > 1:
        verdicts.append(("e2fsck -p", f"exit {status}: " + " | ".join(output.strip().splitlines()[-2:])))
    status, output = run(["e2fsck", "-fn", state])
    if status != 0:
        verdicts.append(("e2fsck -fn after -p", f"exit {status}: " + " | ".join(output.strip().splitlines()[-3:])))
    # The store's files as the filesystem holds them (libext2fs reads them: no mount of a crash
    # image in this machine's kernel).
    for name in (store_name, store_name + "-wal"):
        run(["debugfs", "-R", f"dump /{name} {os.path.join(files, name)}", state])
    summary = None
    path = os.path.join(files, store_name)
    try:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            store = store_check.Store(path)
            lines, summary = store_check.verdicts(store, acknowledged["receivers"], commands,
                                                  acknowledged_through=acknowledged["through"])
            for line in lines:
                word, _, text = line.partition(" ")
                if word != "ok":
                    verdicts.append((word, text))
        elif acknowledged["any"]:
            verdicts.append(("lost", f"no store at /{store_name}, though receivers had acknowledged records"))
    except Exception as error:  # a store SQLite cannot open is a verdict, not a crash of the checker
        verdicts.append(("unreadable", f"the store: {error}"))
    os.remove(state)
    return verdicts, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log")
    parser.add_argument("size", type=int)
    parser.add_argument("work")
    parser.add_argument("marks")
    parser.add_argument("--http", required=True)
    parser.add_argument("--mqtt", required=True)
    parser.add_argument("--commands", required=True)
    parser.add_argument("--from-mark")
    parser.add_argument("--store-name", default="samples.sqlite")
    parser.add_argument("--min-states", type=int, default=100)
    parser.add_argument("--summary")
    arguments = parser.parse_args()

    marks = {}
    with open(arguments.marks) as file:
        for line in file:
            entry = json.loads(line)
            marks[entry["mark"]] = entry
    repository = store_check.Acknowledgements.repository(arguments.http)
    broker = store_check.Acknowledgements.broker(arguments.mqtt)
    image = os.path.join(arguments.work, "replay.img")
    with open(image, "wb") as file:
        file.truncate(arguments.size)
    device = os.open(image, os.O_RDWR)
    # Before the first mark nothing was acknowledged or answered.
    current = {"receivers": [repository, broker], "through": {repository.name: 0, broker.name: 0}, "any": False}
    commands = store_check.Commands(arguments.commands, 0)
    failed = {}
    states = flushes = marked = count = 0
    began = time.monotonic()
    last = None
    max_lost = {name: 0 for name in ("the repository", "the broker", "workout end", "participant assign")}
    checking = arguments.from_mark is None
    for index, flags, offset, length, data in entries(arguments.log):
        count += 1
        if flags & MARK:
            checking = checking or data == arguments.from_mark
            entry = marks.get(data)
            if entry is not None:
                current = {"receivers": [repository, broker],
                           "through": {repository.name: entry["http"], broker.name: entry["mqtt"]},
                           "any": bool(repository.latest(entry["http"]) or broker.latest(entry["mqtt"]))}
                commands = store_check.Commands(arguments.commands, entry["commands"])
        elif flags & DISCARD:
            # A discarded range reads back as zeros on the lab's disks (and may on any disk).
            for start in range(0, length, 1 << 20):
                os.pwrite(device, bytes(min(1 << 20, length - start)), offset + start)
        elif length:
            os.pwrite(device, data, offset)
        if not checking or not flags & (FLUSH | FUA | MARK):
            continue
        if flags & MARK and data not in marks:
            continue  # the kernel's own end mark, or one the scenario did not describe
        states += 1
        if flags & MARK:
            marked += 1
        else:
            flushes += 1
        label = f"entry {index} ({'mark ' + data if flags & MARK else '+'.join(n for f, n in ((FLUSH, 'flush'), (FUA, 'fua')) if flags & f)})"
        verdicts, summary = check_state(image, arguments.work, arguments.store_name, current, commands)
        last = summary or last
        for name in ("the repository", "the broker", "workout end", "participant assign"):
            max_lost[name] = max(max_lost[name], ((summary or {}).get(name) or {}).get("lost", 0))
        for word, text in verdicts:
            # One kind of failure across states: its words without the counts.
            failed.setdefault((word, re.sub(r"\d+", "N", text.split(":")[0])), []).append((label, text))
        if states % 25 == 0:
            print(f"# {states} states checked in {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    os.close(device)
    for (word, _), where in failed.items():
        (first_label, first_text), (last_label, last_text) = where[0], where[-1]
        print(f"{word} at {len(where)} of {states} crash states; first at {first_label}: {first_text}"
              + ("" if len(where) == 1 else f"; last at {last_label}: {last_text.split(':')[0]}"))
    elapsed = time.monotonic() - began
    total = (f"{states} crash states checked ({flushes} flush or FUA points, {marked} marks; {count} log entries) "
             f"in {elapsed:.0f} s")
    print(("ok " if states >= arguments.min_states else f"few only ") + total
          + ("" if states >= arguments.min_states else f", fewer than {arguments.min_states}"))
    if arguments.summary:
        with open(arguments.summary, "w") as file:
            json.dump({"states": states, "flushes": flushes, "marks": marked, "entries": count,
                       "failed_states": len({label for where in failed.values() for label, _ in where}),
                       "seconds": round(elapsed, 1), "last": last,
                       "failures": {f"{word} {what}": len(where) for (word, what), where in failed.items()},
                       "max_lost": max_lost}, file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
