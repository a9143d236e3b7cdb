#!/usr/bin/env python3
"""A broken adapter, for the tests of `healthgate adapter check`: it ignores the hello's checkpoint.

WHAT IT DOES WRONG: it sends all N readings every time it starts, whatever checkpoint the hello
gives it, so a run resumed from a checkpoint sends again what it covers; the check "resume from
the checkpoint" must fail. Everything else is as good_scale.py does it: unit kg, stable ids
(scale-1/<i>).

It speaks the adapter protocol v1 (docs/adapter-protocol.md) as good_scale.py does, config
{"count": N} (default 5): N bodyMass readings from the device scale-1, reading i (from 0) dated
2026-11-30T08:00:00Z plus i minutes, valued 70 + i/10, then the checkpoint {"sent": N}; then it
waits for stop or the end of stdin and exits 0.

Standard library only.
"""

import datetime
import json
import os
import queue
import sys
import threading

START = datetime.datetime(2026, 11, 30, 8, 0, tzinfo=datetime.timezone.utc)


def send(message):
    try:
        sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        sys.exit(0)


def read_stdin(inbox):
    # Its own thread, so that a stop is seen whatever the main thread does. It reads fd 0 itself:
    # a daemon thread blocked in sys.stdin would hold its lock while the interpreter exits.
    pending = b""
    while chunk := os.read(0, 65536):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in filter(bytes.strip, lines):
            try:
                inbox.put(json.loads(line))
            except ValueError:
                print(f"not JSON from the gateway: {line!r}", file=sys.stderr, flush=True)
    inbox.put(None)


def main():
    inbox = queue.Queue()
    threading.Thread(target=read_stdin, args=(inbox,), daemon=True).start()
    hello = inbox.get()
    if hello is None:
        return 0
    if not isinstance(hello, dict) or hello.get("type") != "hello" or hello.get("protocol") != 1:
        print(f"expected the gateway's hello of protocol 1, got {hello!r}", file=sys.stderr, flush=True)
        return 2
    send({"type": "hello", "protocol": 1, "adapter": "ignores-checkpoint", "version": "1.0"})

    config = hello.get("config") or {}
    count = int(config.get("count", 5))
    first = 0  # wrong: the hello's checkpoint says which readings are already committed

    send({"type": "device", "id": "scale-1", "name": "Test scale", "manufacturer": "Example", "model": "Scale"})
    for i in range(first, count):
        start = (START + datetime.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        send(
            {
                "type": "quantity",
                "id": f"scale-1/{i}",
                "device": "scale-1",
                "quantityType": "bodyMass",
                "value": round(70 + i / 10, 1),
                "unit": "kg",
                "start": start,
            }
        )
    send({"type": "checkpoint", "state": {"sent": count}})

    while True:
        message = inbox.get()
        if message is None or (isinstance(message, dict) and message.get("type") == "stop"):
            return 0
        if isinstance(message, dict) and message.get("type") == "refused":
            print(f"refused: {message.get('reason')}", file=sys.stderr, flush=True)
        if isinstance(message, dict) and message.get("type") == "error":
            print(f"gateway error: {message.get('reason')}", file=sys.stderr, flush=True)
            if message.get("fatal") is True:
                return 1


if __name__ == "__main__":
    sys.exit(main())
