#!/usr/bin/env python3
"""What a healthgate store holds, against what its receivers acknowledged and its CLI was answered.

The power-cut scenarios (run-power-cut.sh, flush-points.sh) check each crash state with it:

    store_check.py check STORE [--http FILE[@BYTES]] [--mqtt FILE[@BYTES]] [--commands FILE[@BYTES]]
                         [--converged | --converged-only] [--summary JSON]

STORE is a copy of the store's files (the database and its -wal; opened read-write, so SQLite
recovers the log as the gateway would). FILE@BYTES reads only the first BYTES of FILE: what had
been written when the plug was pulled, or when a dm-log-writes mark was made.

- --http: the recording repository's log (plugins/HTTPRepository/Fixtures/recording_server.py): each
  POST answered 200 is an acknowledgement of every record (uuid, syncVersion) and deletion it
  carries (the native format: correlations, heartbeatSeries, quantitySeries, samples, workouts,
  deleted).
- --mqtt: mosquitto_sub -F %j's lines of the broker's messages on the sink's topics: a message the
  broker passed on is one it acknowledged (QoS 1); a record's payload is its HealthJSON, a
  deletion's {"kind", "type", "uuid"} on the "deleted" topic.
- --commands: the answered commands the scenario logged (JSON lines: "command" "workout end" with
  the "workout" uuid the answer named, or "participant assign" with "device", "participant" and
  "sequence", the order of issue; "answered" false for a command issued and not yet answered).

An acknowledged record is kept when the store holds its uuid at that version or a later one
(a quantity or heartbeat series grows in versions under its first uuid), or a tombstone for it (its
deletion). --converged also checks the other way (--converged-only checks that alone, with the
integrity): every object the store holds up to a follower's
cursor (correlation members travel inside their correlation) is at its receiver at its version or
later. Prints a verdict a
line: "ok TEXT", or another first word and what is missing (lib/checks.sh's verdicts turns them
into PASS and FAIL).
"""
import argparse
import json
import sqlite3
import sys

RECORD_SECTIONS = ("correlations", "heartbeatSeries", "quantitySeries", "samples", "workouts")


def key(uuid):
    """A uuid as the store keeps it: 32 lower-case hex digits."""
    return uuid.replace("-", "").lower()


def identity(record):
    """A record's uuid: "uuid" in HealthJSON's samples and series, "id" in a workout's."""
    return key(record.get("uuid") or record["id"])


def version_of(record):
    return int((record.get("metadata") or {}).get("syncVersion", 0))


def lines(path, limit=None):
    """Each complete line of PATH within its first LIMIT bytes, with the offset it ends at."""
    try:
        with open(path, "rb") as file:
            data = file.read() if limit is None else file.read(limit)
    except FileNotFoundError:
        return
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return
        yield end + 1, data[start:end]
        start = end + 1


def split_limit(argument):
    """FILE@BYTES, or FILE (everything)."""
    if argument is None:
        return None, None
    path, at, limit = argument.rpartition("@")
    if at and limit.isdigit():
        return path, int(limit)
    return argument, None


class Acknowledgements:
    """One receiver's acknowledgements in the order they came: (offset, uuid key, version, deleted)."""

    def __init__(self, name, follower, items):
        self.name = name
        self.follower = follower
        self.items = items

    @classmethod
    def repository(cls, path, limit=None):
        items = []
        for offset, line in lines(path, limit):
            request = json.loads(line)
            if request.get("method") != "POST" or request.get("status") != 200 or request.get("path") == "/_control":
                continue
            body = request.get("body")
            if not isinstance(body, dict):
                continue
            for section in RECORD_SECTIONS:
                for record in body.get(section) or []:
                    items.append((offset, identity(record), version_of(record), False))
            for deletion in body.get("deleted") or []:
                items.append((offset, key(deletion["uuid"]), 0, True))
        return cls("the repository", "repository", items)

    @classmethod
    def broker(cls, path, limit=None):
        items = []
        for offset, line in lines(path, limit):
            message = json.loads(line)
            topic = message.get("topic", "")
            if topic.endswith("/status") or topic.startswith("homeassistant/"):
                continue
            try:
                payload = json.loads(message.get("payload") or "")
            except ValueError:
                continue
            if not isinstance(payload, dict) or not ("uuid" in payload or "id" in payload):
                continue
            deleted = topic.endswith("/deleted")
            items.append((offset, identity(payload), 0 if deleted else version_of(payload), deleted))
        return cls("the broker", "broker", items)

    def latest(self, through=None):
        """uuid → (highest version acknowledged, deleted) over the items up to offset THROUGH."""
        latest = {}
        for offset, uuid, version, deleted in self.items:
            if through is not None and offset > through:
                break
            kept = latest.get(uuid, (0, False))
            latest[uuid] = (max(kept[0], version), kept[1] or deleted)
        return latest


class Commands:
    """The commands the scenario logged, in the order they were answered or issued."""

    def __init__(self, path, limit=None):
        self.entries = [json.loads(line) for _, line in lines(path, limit)] if path else []

    def answered(self, command):
        return [entry for entry in self.entries if entry["command"] == command and entry.get("answered")]


class Store:
    """A store's state: its integrity, each object's version, its tombstones, workouts, participants."""

    def __init__(self, path):
        connection = sqlite3.connect(path, timeout=10)
        try:
            self.integrity = [row[0] for row in connection.execute("PRAGMA integrity_check")]
            # A crash state from before the gateway's first transactions were durable holds a
            # store without (all of) its schema: its tables read as empty.
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            self.schema = "complete" if {"samples", "anchors", "followers", "tombstones", "participant_devices",
                                         "correlation_members", "quantity_series", "heartbeat_series", "correlations",
                                         "workouts", "metadata_entries", "sample_sync"} <= tables else "incomplete"
            if self.schema == "incomplete":
                self.versions, self.anchors, self.members, self.tombstones, self.workouts = {}, {}, set(), set(), set()
                self.participants, self.followers, self.anchor = {}, {}, 0
                return
            self.versions = {}
            self.anchors = {}
            members = {row[0] for row in connection.execute("SELECT sample_anchor FROM correlation_members")}
            self.members = set()
            # A sample's sync version: in its `sample_sync` row (schema 17), or in its set (before).
            for anchor, uuid, version in connection.execute(
                    "SELECT s.anchor, lower(hex(s.uuid)), coalesce(CAST(e.value AS INTEGER), y.sync_version, 0) FROM samples s "
                    "LEFT JOIN metadata_entries e ON e.set_id = s.metadata_set_id AND e.key = 'syncVersion' "
                    "LEFT JOIN sample_sync y ON y.anchor = s.anchor"):
                self.versions[uuid] = version
                self.anchors[uuid] = anchor
                if anchor in members:
                    self.members.add(uuid)
            for table, column in (("quantity_series", "version"), ("heartbeat_series", "sync_version"),
                                  ("correlations", "sync_version"), ("workouts", "sync_version")):
                for anchor, uuid, version in connection.execute(
                        f"SELECT anchor, lower(hex(uuid)), coalesce({column}, 0) FROM {table}"):
                    self.versions[uuid] = version
                    self.anchors[uuid] = anchor
            self.tombstones = {row[0] for row in connection.execute("SELECT lower(hex(uuid)) FROM tombstones")}
            self.workouts = {row[0] for row in connection.execute("SELECT lower(hex(uuid)) FROM workouts")}
            self.participants = dict(connection.execute("SELECT device, participant FROM participant_devices"))
            self.anchor = connection.execute("SELECT latest FROM anchors").fetchone()[0]
            self.followers = dict(connection.execute("SELECT name, anchor FROM followers"))
        finally:
            connection.close()

    def missing(self, acknowledgements, through=None):
        """The acknowledged records the store lost: (uuid, version acknowledged, version stored or None)."""
        lost = []
        latest = acknowledgements.latest(through)
        for uuid, (version, deleted) in latest.items():
            if uuid in self.tombstones:
                continue
            stored = self.versions.get(uuid)
            if deleted:
                # A deletion is kept by its tombstone, or undone by the object stored again later.
                if stored is None:
                    lost.append((uuid, "deleted", None))
            elif stored is None or stored < version:
                lost.append((uuid, version, stored))
        return len(latest), lost


def verdicts(store, receivers, commands, converged=False, acknowledged_through=None, acknowledged=True):
    """The verdict lines for STORE, and a summary (counts, and the uuids lost) for the scenario's report."""
    out = []
    summary = {"anchor": store.anchor, "objects": len(store.versions), "tombstones": len(store.tombstones)}
    if store.integrity == ["ok"]:
        out.append(f"ok PRAGMA integrity_check: ok ({len(store.versions)} objects, {len(store.tombstones)} tombstones, anchor {store.anchor}"
                   + (", its schema not yet made)" if store.schema == "incomplete" else ")"))
    else:
        out.append("corrupt PRAGMA integrity_check: " + "; ".join(store.integrity[:5]))
    if acknowledged:
        out += acknowledgement_verdicts(store, receivers, commands, summary, acknowledged_through)
    if converged:
        out += convergence_verdicts(store, receivers, summary)
    return out, summary


def acknowledgement_verdicts(store, receivers, commands, summary, acknowledged_through):
    out = []
    for receiver in receivers:
        through = (acknowledged_through or {}).get(receiver.name)
        checked, lost = store.missing(receiver, through)
        versions = sum(1 for item in receiver.items if through is None or item[0] <= through)
        summary[receiver.name] = {"records": checked, "versions": versions, "lost": len(lost),
                                  "lost_uuids": sorted(uuid for uuid, _, _ in lost)}
        if not lost:
            out.append(f"ok every record {receiver.name} acknowledged is in the store: {checked} records ({versions} versions and deletions)")
        else:
            shown = ", ".join(f"{uuid} v{version} (stored: {'absent' if stored is None else f'v{stored}'})"
                              for uuid, version, stored in lost[:4])
            out.append(f"lost {len(lost)} of the {checked} records {receiver.name} acknowledged: {shown}"
                       + (" …" if len(lost) > 4 else ""))
    ends = commands.answered("workout end")
    lost_ends = [entry for entry in ends if key(entry["workout"]) not in store.workouts]
    summary["workout end"] = {"answered": len(ends), "lost": len(lost_ends),
                              "lost_uuids": sorted(key(entry["workout"]) for entry in lost_ends)}
    if lost_ends:
        out.append(f"lost {len(lost_ends)} of the {len(ends)} answered workout ends: "
                   + ", ".join(f"{entry.get('participant')}'s {entry['workout']}" for entry in lost_ends[:4]))
    else:
        out.append(f"ok every answered workout end is stored: {len(ends)} workouts")
    assigns = [entry for entry in commands.entries if entry["command"] == "participant assign"]
    answered = [entry for entry in assigns if entry.get("answered")]
    lost_assigns = []
    for entry in answered:
        # The device's row is this assignment's, or one issued after it (answered or not).
        later = {other["participant"] for other in assigns
                 if other["device"] == entry["device"] and other["sequence"] >= entry["sequence"]}
        if store.participants.get(entry["device"]) not in later:
            lost_assigns.append(entry)
    summary["participant assign"] = {"answered": len(answered), "lost": len(lost_assigns),
                                     "lost_uuids": sorted(str(entry["sequence"]) for entry in lost_assigns)}
    if lost_assigns:
        out.append(f"lost {len(lost_assigns)} of the {len(answered)} answered participant assigns: "
                   + ", ".join(f"{entry['device']} → {entry['participant']} (stored: {store.participants.get(entry['device'])})"
                               for entry in lost_assigns[:4]))
    else:
        out.append(f"ok every answered participant assign is stored: {len(answered)} assignments")
    return out


def convergence_verdicts(store, receivers, summary):
    """What a follower's cursor has passed, its receiver holds (in that version or a later one)."""
    out = []
    for receiver in receivers:
        latest = receiver.latest()
        cursor = store.followers.get(receiver.follower, 0)
        passed = [uuid for uuid in store.versions if uuid not in store.members and store.anchors[uuid] <= cursor]
        behind = [uuid for uuid in passed
                  if not (uuid in latest and (latest[uuid][1] or latest[uuid][0] >= store.versions[uuid]))]
        summary.setdefault(receiver.name, {}).update(behind=len(behind), cursor=cursor, passed=len(passed))
        if behind:
            out.append(f"behind {receiver.name} lacks {len(behind)} of the {len(passed)} objects its follower's cursor "
                       f"passed (anchor {cursor} of {store.anchor}): "
                       + ", ".join(f"{uuid} v{store.versions[uuid]}" for uuid in behind[:4]))
        else:
            out.append(f"ok {receiver.name} holds every object its follower's cursor passed at its stored version "
                       f"({len(passed)} objects; anchor {cursor} of {store.anchor})")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    check = sub.add_parser("check")
    check.add_argument("store")
    check.add_argument("--http")
    check.add_argument("--mqtt")
    check.add_argument("--commands")
    check.add_argument("--converged", action="store_true")
    check.add_argument("--converged-only", action="store_true")
    check.add_argument("--summary")
    arguments = parser.parse_args()
    try:
        store = Store(arguments.store)
    except sqlite3.Error as error:
        print(f"unreadable the store {arguments.store}: {error}")
        return 0
    receivers = []
    if arguments.http:
        receivers.append(Acknowledgements.repository(*split_limit(arguments.http)))
    if arguments.mqtt:
        receivers.append(Acknowledgements.broker(*split_limit(arguments.mqtt)))
    commands = Commands(*split_limit(arguments.commands)) if arguments.commands else Commands(None)
    out, summary = verdicts(store, receivers, commands, arguments.converged or arguments.converged_only,
                            acknowledged=not arguments.converged_only)
    print("\n".join(out))
    if arguments.summary:
        with open(arguments.summary, "w") as file:
            json.dump(summary, file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
