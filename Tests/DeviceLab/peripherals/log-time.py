#!/usr/bin/env python3
# log-time.py LOG FALLBACK TEXT... - the time (seconds since the epoch) of LOG's first line that
# contains every TEXT, else FALLBACK. A line starts with its time: healthgate's own RFC 3339 UTC
# time ("2026-11-26T10:13:01.123Z INFO …") or journalctl's `-o short-unix` ("1795687981.123456 …").
import datetime
import re
import sys

log, fallback, texts = sys.argv[1], sys.argv[2], sys.argv[3:]
for line in open(log, errors="replace"):
    if not all(text in line for text in texts):
        continue
    iso = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z ", line)
    unix = re.match(r"(\d{9,}\.\d+) ", line)
    if iso:
        print(datetime.datetime.fromisoformat(iso.group(1)).replace(tzinfo=datetime.timezone.utc).timestamp())
        break
    if unix:
        print(float(unix.group(1)))
        break
else:
    print(fallback)
