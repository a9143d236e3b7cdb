#!/usr/bin/env python3
"""A scale's adapter for the tests of `healthgate adapter check`: correct, or wrong in one way.

usage: scale.py [--wrong-unit | --unstable-ids | --ignores-checkpoint]

With no option it is correct and must pass every check. Each option breaks one thing, and the
check named must fail:
  --wrong-unit          its readings' unit is count/min, which does not fit bodyMass (a mass): the
                        gateway refuses every one ("units and types accepted")
  --unstable-ids        each reading's id is a new uuid4 every time it is sent, so a reading sent
                        by two runs has two ids ("identifiers stable across a restart")
  --ignores-checkpoint  it sends every reading whatever checkpoint the hello gives it ("resumes
                        from its checkpoint")

It speaks the adapter protocol v1 (docs/adapter-protocol.md). Its config is {"count": N}
(default 5): it sends N bodyMass readings in kg from the device scale-1, reading i (from 0)
dated 2026-11-30T08:00:00Z plus i minutes, valued 70 + i/10, with the id scale-1/<i>; then the
checkpoint {"sent": N}. Started with a checkpoint {"sent": k}, it sends readings k to N-1 only
(and the checkpoint again). Then it waits for stop or the end of stdin and exits 0.

Standard library only.
"""

import datetime
import json
import os
import queue
import sys
import threading
import uuid

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
    flaw = sys.argv[1] if len(sys.argv) > 1 else None
    if flaw not in (None, "--wrong-unit", "--unstable-ids", "--ignores-checkpoint"):
        print(__doc__, file=sys.stderr)
        return 64
    name = flaw[2:] if flaw else "good-scale"
    inbox = queue.Queue()
    threading.Thread(target=read_stdin, args=(inbox,), daemon=True).start()
    hello = inbox.get()
    if hello is None:
        return 0
    if not isinstance(hello, dict) or hello.get("type") != "hello" or hello.get("protocol") != 1:
        print(f"expected the gateway's hello of protocol 1, got {hello!r}", file=sys.stderr, flush=True)
        return 2
    send({"type": "hello", "protocol": 1, "adapter": name, "version": "1.0"})

    config = hello.get("config") or {}
    count = int(config.get("count", 5))
    checkpoint = hello.get("checkpoint") or {}
    first = checkpoint.get("sent", 0) if isinstance(checkpoint, dict) else 0
    if flaw == "--ignores-checkpoint":
        first = 0

    send({"type": "device", "id": "scale-1", "name": "Test scale", "manufacturer": "Example", "model": "Scale"})
    for i in range(first, count):
        start = (START + datetime.timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        send(
            {
                "type": "quantity",
                "id": str(uuid.uuid4()) if flaw == "--unstable-ids" else f"scale-1/{i}",
                "device": "scale-1",
                "quantityType": "bodyMass",
                "value": round(70 + i / 10, 1),
                "unit": "count/min" if flaw == "--wrong-unit" else "kg",
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
