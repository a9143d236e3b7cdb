#!/usr/bin/env python3
"""A test adapter that does what its configuration says, for the gateway's AdapterRun tests.

The hello's config:
  hello     the hello to send: an object (default {"protocol": 1, "adapter": "scripted"}), or
            null to send none
  lines     raw lines written after the hello, in order: a string is written as UTF-8; an object
            {"hex": "..."} as those bytes (invalid UTF-8, a line without its newline)
  flood     after the lines, this many heartRate readings as fast as the pipe takes them, then a
            checkpoint {"flooded": N}
  ignoreStop  true: keep running after stop and the end of stdin (until a signal)
  exitAfter   exit with this status right after the lines (no waiting for stop)
Every gateway line is echoed on stderr as "gateway: <line>", so a test sees what the adapter read.
"""
import json
import os
import signal
import sys
import threading
import time


def write(data):
    os.write(1, data)


def main():
    stdin = os.fdopen(0, "rb", buffering=0)
    first = b""
    while not first.endswith(b"\n"):
        chunk = stdin.read(1)
        if not chunk:
            return 0
        first += chunk
    hello = json.loads(first)
    config = hello.get("config", {})
    sys.stderr.write("gateway: " + first.decode().strip() + "\n")
    sys.stderr.flush()
    stopped = threading.Event()

    def read_gateway():
        buffer = b""
        while True:
            chunk = stdin.read(4096)
            if not chunk:
                break
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                sys.stderr.write("gateway: " + line.decode(errors="replace") + "\n")
                sys.stderr.flush()
                if json.loads(line).get("type") == "stop":
                    stopped.set()
        stopped.set()

    threading.Thread(target=read_gateway, daemon=True).start()
    answer = config.get("hello", {"protocol": 1, "adapter": "scripted"})
    if answer is not None:
        answer = dict(answer, type="hello")
        write((json.dumps(answer) + "\n").encode())
    for line in config.get("lines", []):
        if isinstance(line, dict):
            write(bytes.fromhex(line["hex"]))
        else:
            write((line + "\n").encode())
    count = config.get("flood", 0)
    if count:
        batch = []
        for index in range(count):
            seconds = index % 60
            minutes = index // 60 % 60
            hours = index // 3600
            batch.append(json.dumps({
                "type": "quantity", "id": f"flood/{index}", "quantityType": "heartRate", "value": 60 + index % 100,
                "unit": "count/min", "start": f"2026-11-29T{hours:02d}:{minutes:02d}:{seconds:02d}Z"}) + "\n")
            if len(batch) == 500:
                write("".join(batch).encode())
                batch = []
        write("".join(batch).encode())
        write((json.dumps({"type": "checkpoint", "state": {"flooded": count}}) + "\n").encode())
    if "exitAfter" in config:
        return config["exitAfter"]
    if config.get("ignoreStop"):
        if config.get("ignoreTerm"):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    stopped.wait()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
