"""A second process that writes to the store while healthgate's writer does.

Usage: concurrent_writer.py DB TARGET

Commits transactions of 25 stepCount rows through Python's own sqlite3 module, as a second
writer must (Sources/Store/HealthStore/README.md, "Writers"): in one immediate transaction it reads
anchors.latest, gives its rows the next anchors, and stores the new latest. After each commit it
reads how many heart rates healthgate's writer has committed. Writers take turns: after a
commit it reads (readers never block in WAL mode) until the other writer has committed again, so
neither starves the other. It stops once it has seen TARGET heart rates (after at least 20
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
# healthgate's writer keeps heart rates in quantity series (their quantities counted by each
# series' row) and a late one as a sample of its own.
HEART_RATE = """SELECT
    (SELECT count(*) FROM samples WHERE type_id = (SELECT id FROM quantity_types WHERE identifier = 'heartRate'))
    + (SELECT ifnull(sum(count), 0) FROM quantity_series
        WHERE type_id = (SELECT id FROM quantity_types WHERE identifier = 'heartRate'))"""
connection = sqlite3.connect(path, timeout=30, isolation_level=None)
journal_mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
observed, errors, transactions = [], [], 0
deadline = time.monotonic() + 60
while True:
    try:
        connection.execute("BEGIN IMMEDIATE")
        latest = connection.execute("SELECT latest FROM anchors").fetchone()[0]
        connection.execute("INSERT INTO quantity_types (identifier) VALUES ('stepCount') ON CONFLICT DO NOTHING")
        connection.execute("INSERT INTO units (unit) VALUES ('count') ON CONFLICT DO NOTHING")
        type_id = connection.execute("SELECT id FROM quantity_types WHERE identifier = 'stepCount'").fetchone()[0]
        unit_id = connection.execute("SELECT id FROM units WHERE unit = 'count'").fetchone()[0]
        for j in range(25):
            key = struct.pack(">QQ", 0xF000_0000_0000_0000 | (transactions * 25 + j), 0)
            latest += 1
            connection.execute(
                "INSERT INTO samples (anchor, uuid, type_id, value, unit_id, start_us, duration_us)"
                " VALUES (?, ?, ?, 1.0, ?, ?, 0)",
                (latest, key, type_id, unit_id, T0_US + transactions))
        connection.execute("UPDATE anchors SET latest = ?", (latest,))
        connection.execute("COMMIT")
        transactions += 1
        seen = connection.execute(HEART_RATE).fetchone()[0]
        observed.append(seen)
    except sqlite3.Error as error:
        errors.append(f"{type(error).__name__}: {error}")
        break
    if (seen >= target and transactions >= 20) or time.monotonic() > deadline:
        break
    while seen < target and time.monotonic() < deadline:
        current = connection.execute(HEART_RATE).fetchone()[0]
        if current != seen:
            break
        time.sleep(0.0005)  # pacing the polling reads, not waiting for a guessed duration
print(json.dumps({"journalMode": journal_mode, "transactions": transactions,
                  "observed": observed, "errors": errors}))
