#!/usr/bin/env python3
# store_readings.py DB SQL - SQL over a healthgate store as the lab's checks read it, printed as
# the sqlite3 shell prints it (a row a line, columns joined by "|", NULL empty). Standard library
# only: it runs in the guest's python3 as the service user.
#
# The store keeps a stream's readings (heart rate, power, cadence, speed: the types the model
# marks as streams) in quantity series, their quantities in a blob, and a heartbeat series' beats
# in a blob too (Sources/Store/HealthStore/Series: QuantitySeriesEncoding, HeartbeatEncoding,
# SeriesBytes, whose comments give the layouts this file decodes, independently of the Swift
# code). The checks count readings, so connect() opens the store read-only and shadows, in the
# connection's temp schema, which SQLite searches before the store's own:
#   samples           the store's samples and every quantity of every quantity series as a row
#                     of its own (its series' type, unit, device and metadata set; its uuid the
#                     series' with the quantity's index appended; the series' anchor)
#   samples_readable  the store's own view, made again over that table (its SQL read from the
#                     store, so its columns are the store's)
#   heartbeats        (series_uuid, beat_index, time_since_start, preceded_by_gap) of every beat
#                     of every heartbeat series
# Python scripts import it (sys.path) and call connect(path).
import sqlite3
import struct
import sys


def _varint(data, position):
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def _unzigzag(value):
    return (value >> 1) ^ -(value & 1)


def quantities(blob):
    """(offset µs, duration µs, value) of each quantity of a quantity series' blob."""
    data = bytes(blob)
    if data[0] != 1:
        raise ValueError("unknown quantity series format %d" % data[0])
    durations, scale = data[1] & 1, data[2]
    count, position = _varint(data, 3)
    result = []
    offset = step = scaled = 0
    for index in range(count):
        if index > 0:
            change, position = _varint(data, position)
            step += _unzigzag(change)
            offset += step
        duration = 0
        if durations:
            duration, position = _varint(data, position)
        if scale == 255:
            value = struct.unpack_from("<d", data, position)[0]
            position += 8
        else:
            change, position = _varint(data, position)
            scaled += _unzigzag(change)
            value = scaled / 10 ** scale
        result.append((offset, duration, value))
    return result


def beats(blob):
    """(seconds from the series' start, preceded by a gap) of each beat of a heartbeat series' blob."""
    data = bytes(blob)
    if data[0] != 1:
        raise ValueError("unknown heartbeat series format %d" % data[0])
    resolution = data[1]
    count, position = _varint(data, 2)
    result = []
    if resolution == 255:
        for _ in range(count):
            time = struct.unpack_from("<d", data, position)[0]
            result.append((time, data[position + 8] == 1))
            position += 9
        return result
    per_second = {0: 1024, 1: 1_000_000}[resolution]
    ticks = interval = 0
    for _ in range(count):
        value, position = _varint(data, position)
        interval += _unzigzag(value >> 1)
        ticks += interval
        result.append((ticks / per_second, value & 1 == 1))
    return result


def _columns(connection, table):
    return [row[1] for row in connection.execute("PRAGMA main.table_info(%s)" % table)]


def connect(path, timeout=10, options="mode=ro"):
    """The store at `path`, read-only (`options`: the URI's query, "immutable=1" for a copy no
    process writes), with the shadows above in its temp schema."""
    connection = sqlite3.connect("file:%s?%s" % (path, options), uri=True, timeout=timeout)
    tables = {row[0] for row in connection.execute("SELECT name FROM main.sqlite_schema WHERE type IN ('table', 'view')")}
    if "samples" not in tables:
        return connection  # no schema yet: nothing to shadow
    columns = _columns(connection, "samples")
    connection.execute("CREATE TEMP TABLE samples AS SELECT * FROM main.samples")
    if "quantity_series" in tables:
        series_columns = set(_columns(connection, "quantity_series"))
        shared = [c for c in ("anchor", "type_id", "unit_id", "device_id", "metadata_set_id") if c in columns and c in series_columns]
        insert = "INSERT INTO temp.samples (%s) VALUES (%s)" % (
            ", ".join(shared + ["uuid", "value", "start_us", "duration_us"]), ", ".join("?" * (len(shared) + 4)))
        for row in connection.execute("SELECT %s, uuid, start_us, quantities FROM main.quantity_series" % ", ".join(shared)).fetchall():
            values, uuid, start, blob = list(row[:len(shared)]), bytes(row[-3]), row[-2], row[-1]
            connection.executemany(insert, [
                values + [uuid + index.to_bytes(4, "big"), value, start + offset, duration]
                for index, (offset, duration, value) in enumerate(quantities(blob))])
    view = connection.execute("SELECT sql FROM main.sqlite_schema WHERE type = 'view' AND name = 'samples_readable'").fetchone()
    if view:
        connection.execute(view[0].replace("CREATE VIEW", "CREATE TEMP VIEW", 1))
    connection.execute("CREATE TEMP TABLE heartbeats (series_uuid BLOB, beat_index INTEGER, time_since_start REAL, preceded_by_gap INTEGER)")
    if "beats" in _columns(connection, "heartbeat_series"):
        for uuid, blob in connection.execute("SELECT uuid, beats FROM main.heartbeat_series WHERE beats IS NOT NULL").fetchall():
            connection.executemany("INSERT INTO temp.heartbeats VALUES (?, ?, ?, ?)", [
                (uuid, index, time, int(gap)) for index, (time, gap) in enumerate(beats(blob))])
    if "heartbeats" in tables:  # beats a store of an earlier schema has not moved yet
        connection.execute("INSERT INTO temp.heartbeats SELECT series_uuid, beat_index, time_since_start, preceded_by_gap FROM main.heartbeats")
    return connection


def _text(value):
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: store_readings.py DB SQL")
    try:
        rows = connect(sys.argv[1]).execute(sys.argv[2]).fetchall()
    except sqlite3.Error as error:
        sys.exit("store_readings.py: %s: %s" % (sys.argv[1], error))
    for row in rows:
        print("|".join(_text(value) for value in row))
