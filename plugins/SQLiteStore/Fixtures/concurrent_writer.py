"""A second process that shares the store with healthgate's writer.

Usage: concurrent_writer.py DB TARGET

Commits transactions of 25 stepCount rows through Python's own sqlite3 module, and after each
one reads how many heartRate rows healthgate's writer has committed. Writers take turns: after a
commit it reads (readers never block in WAL mode) until the other writer has committed again, so
neither starves the other. It stops once it has seen TARGET heartRate rows (after at least 20
transactions) and prints a JSON report. Any SQLite error (SQLITE_BUSY included) is reported, not
retried.
"""
import json
import sqlite3
import struct
import sys
import time

path, target = sys.argv[1], int(sys.argv[2])
T0_US = 1_800_057_600_000_000
connection = sqlite3.connect(path, timeout=30, isolation_level=None)
journal_mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
observed, errors, transactions = [], [], 0
deadline = time.monotonic() + 60
while True:
    try:
        connection.execute("BEGIN IMMEDIATE")
        for j in range(25):
            key = struct.pack(">QQ", 0xF000_0000_0000_0000 | (transactions * 25 + j), 0)
            connection.execute(
                "INSERT INTO samples (uuid, type, value, unit, original_value, start_us, end_us)"
                " VALUES (?, 'stepCount', 1.0, 'count', 1.0, ?, ?)",
                (key, T0_US + transactions, T0_US + transactions))
        connection.execute("COMMIT")
        transactions += 1
        seen = connection.execute("SELECT count(*) FROM samples WHERE type = 'heartRate'").fetchone()[0]
        observed.append(seen)
    except sqlite3.Error as error:
        errors.append(f"{type(error).__name__}: {error}")
        break
    if (seen >= target and transactions >= 20) or time.monotonic() > deadline:
        break
    while seen < target and time.monotonic() < deadline:
        current = connection.execute("SELECT count(*) FROM samples WHERE type = 'heartRate'").fetchone()[0]
        if current != seen:
            break
        time.sleep(0.0005)  # pacing the polling reads, not waiting for a guessed duration
print(json.dumps({"journalMode": journal_mode, "transactions": transactions,
                  "observed": observed, "errors": errors}))
