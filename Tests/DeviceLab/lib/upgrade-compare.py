#!/usr/bin/env python3
"""upgrade.sh's verdict: what the previous release answered against what this one answers after the
upgrade, and what the recording repository received on each side of it.

usage: upgrade-compare.py BEFORE AFTER REPOSITORY_LOG SPLIT CONFIG

BEFORE and AFTER hold the answers of upgrade.sh's `answers` (query samples, query stats by minute and
hour with and without --by-device, query changes of the heartbeat series, workout list, show and a
FIT export of each workout) for the same range, by the previous release's binary and by this one's.
REPOSITORY_LOG is recording_server.py's log; SPLIT (seconds since 1970) is when the previous
release's process logged its stop: the requests received before it are that process's. CONFIG is
the class's configuration (its participants and the straps each wears).

The store's schema 19 gives the readings stored before it their person where the store knows who
wore the device then (docs/data-model.md, "The upgrade"): here, while a participant's workout ran
with that device. So the answers are compared without `healthgate.person`, and the person is
checked apart: each attributed reading its strap's wearer, every reading of a workout its
participant's.

Prints a verdict a line, "ok TEXT" or "FAIL TEXT", and the counts as "note TEXT" lines
(lib/checks.sh's `verdicts`).
"""
import glob
import json
import os
import sys

before_dir, after_dir, repository_log, split, config_path = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
PERSON = "healthgate.person"


def uuid_of(record):
    """A record's uuid: HealthJSON's "uuid", or "id" in a workout's own encoding."""
    return record.get("uuid", record.get("id"))


def verdict(ok, text):
    print(("ok " if ok else "FAIL ") + text)


def note(text):
    print("note " + text)


def without_person(record):
    """`record` (a sample, or a change holding one) without the person schema 19 gave it."""
    if isinstance(record, dict):
        return {k: without_person(v) for k, v in record.items() if k != PERSON}
    if isinstance(record, list):
        return [without_person(v) for v in record]
    return record


def load(directory, name):
    with open(os.path.join(directory, name)) as file:
        return json.load(file)


def first_difference(a, b, path="$"):
    """Where two parsed JSON values first differ, as a path and the two values."""
    if type(a) is not type(b):
        return "%s: %r vs %r" % (path, a, b)
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return "%s.%s: only %s" % (path, key, "before" if key in a else "after")
            found = first_difference(a[key], b[key], path + "." + key)
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return "%s: %d items vs %d" % (path, len(a), len(b))
        for index, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, "%s[%d]" % (path, index))
            if found:
                return found
        return None
    return None if a == b else "%s: %r vs %r" % (path, a, b)


def same(name, a, b, what):
    difference = first_difference(a, b)
    verdict(difference is None, "%s: the same before and after the upgrade%s" % (what, "" if difference is None else " (%s)" % difference))


# --- what a user reads ---------------------------------------------------------------------------
samples = load(before_dir, "samples.json")
samples_after = load(after_dir, "samples.json")
same("samples.json", without_person(samples), without_person(samples_after),
     "query samples (%d heart rates, uuids, values, dates, devices; the person apart)" % len(samples))
before_persons = [s for s in samples if PERSON in s.get("metadata", {})]
verdict(not before_persons, "the previous release stored no person (%d readings with one)" % len(before_persons))

# The person: whose strap each reading came from (the class's configuration) and, while a
# workout of its participant ran with that strap, the reading must be theirs.
config = json.load(open(config_path))
wearer = {device: participant["name"] for participant in config["participants"] for device in participant["devices"]}


def strap(device):
    """The configuration's name of a reading's strap: an address, or a broadcasting strap's id."""
    return device.get("radioIdentifier") or device.get("localIdentifier", "").rsplit("/", 1)[-1]


workout_spans = []
for workout in load(after_dir, "workouts.json"):
    metadata = workout.get("metadata", {})
    for device in str(metadata.get("healthgate.devices", "")).split(","):
        workout_spans.append((device, metadata.get("healthgate.participant"), workout["startDate"], workout["endDate"]))
wrong, unattributed_in_workout, attributed = [], [], 0
for sample in samples_after:
    person = sample.get("metadata", {}).get(PERSON)
    name = strap(sample.get("device", {}))
    if person is not None:
        attributed += 1
        if wearer.get(name) != person:
            wrong.append("%s from %s is %s's, worn by %s" % (sample["uuid"], name, person, wearer.get(name)))
    elif any(d == name and start <= sample["start"] <= end for d, _, start, end in workout_spans):
        unattributed_in_workout.append("%s from %s at %s" % (sample["uuid"], name, sample["start"]))
verdict(not wrong and not unattributed_in_workout and attributed > 0,
        "after the upgrade %d of %d heart rates have a person, each its strap's wearer (%d not: %s); "
        "every reading of a workout its participant's (%d not: %s)"
        % (attributed, len(samples_after), len(wrong), "; ".join(wrong[:3]) or "none",
           len(unattributed_in_workout), "; ".join(unattributed_in_workout[:3]) or "none"))
for interval in ("minute", "hour"):
    for suffix, what in (("", ""), ("-by-device", " --by-device")):
        name = "stats-%s%s.json" % (interval, suffix)
        rows = load(before_dir, name)
        same(name, rows, load(after_dir, name), "query stats --interval %s%s (%d rows)" % (interval, what, len(rows)))

# Heartbeat series: each one answered before, at the same anchor after with the same beats. A
# series that grew after the answer moved to a later anchor: it is counted apart.
def series_by_uuid(document):
    found = {}
    for change in document.get("added", []):
        record = change.get("record", change)
        sample = record.get("sample", record)
        found[sample["uuid"]] = (change.get("anchor"), record)
    return found


series_before = series_by_uuid(load(before_dir, "heartbeat-series.json"))
series_after = series_by_uuid(load(after_dir, "heartbeat-series.json"))
kept = [uuid for uuid, (anchor, _) in series_before.items() if uuid in series_after and series_after[uuid][0] == anchor]
grown = [uuid for uuid in series_before if uuid in series_after and uuid not in kept]
missing = [uuid for uuid in series_before if uuid not in series_after]
beats = sum(len(series_before[uuid][1].get("sample", {}).get("beats", [])) for uuid in kept)
differing = [uuid for uuid in kept
             if first_difference(without_person(series_before[uuid][1]), without_person(series_after[uuid][1]))]
series_persons = [(uuid, record.get("sample", record).get("metadata", {}).get(PERSON), record.get("sample", record).get("device", {}))
                  for uuid, (_, record) in series_after.items()]
wrong_series = ["%s is %s's, worn by %s" % (uuid, person, wearer.get(strap(device)))
                for uuid, person, device in series_persons if person is not None and wearer.get(strap(device)) != person]
verdict(not missing and not differing and kept,
        "query changes --type heartbeatSeries: %d of %d series at the same anchor with the same %d beats, the person apart "
        "(%d grew after the answer, %d missing, %d differ%s)"
        % (len(kept), len(series_before), beats, len(grown), len(missing), len(differing),
           "" if not differing else ": " + first_difference(without_person(series_before[differing[0]][1]),
                                                            without_person(series_after[differing[0]][1]))))
verdict(not wrong_series,
        "after the upgrade %d of %d heartbeat series have a person, each its strap's wearer%s"
        % (sum(1 for _, person, _ in series_persons if person is not None), len(series_persons),
           "" if not wrong_series else ": " + "; ".join(wrong_series[:3])))

# Workouts: the same JSON but for what a version adds or drops (the previous release lists its
# sample ids, this one refers to time and devices), and the same FIT export byte for byte.
workouts = load(before_dir, "workouts.json")
after_workouts = load(after_dir, "workouts.json")
only = sorted({key for w in workouts for key in w} ^ {key for w in after_workouts for key in w})
strip = lambda items: [{k: v for k, v in w.items() if k not in only} for w in items]
same("workouts.json", strip(workouts), strip(after_workouts),
     "workout list (%d workouts; fields of one version only, not compared: %s)" % (len(workouts), ", ".join(only) or "none"))
links = 0
for workout in workouts:
    uuid = workout["id"]
    shown_before = load(before_dir, "workout-%s.json" % uuid)
    links += len(shown_before.get("sampleIDs", []))
    same("workout-%s.json" % uuid, strip([shown_before])[0], strip([load(after_dir, "workout-%s.json" % uuid)])[0], "workout show %s" % uuid)
    with open(os.path.join(before_dir, "workout-%s.fit" % uuid), "rb") as a, open(os.path.join(after_dir, "workout-%s.fit" % uuid), "rb") as b:
        fit_before, fit_after = a.read(), b.read()
    exported = [open(os.path.join(d, "export-%s.txt" % uuid)).read().strip() for d in (before_dir, after_dir)]
    verdict(fit_before == fit_after,
            "workout export %s: the same FIT file (%d and %d bytes; before: %s; after: %s)"
            % (uuid, len(fit_before), len(fit_after), exported[0], exported[1]))
note("the previous release's workouts listed %d sample and series ids (workout_samples); this one reads them by time and device" % links)

# --- what the repository received ----------------------------------------------------------------
SECTIONS = ("samples", "quantitySeries", "heartbeatSeries", "correlations", "workouts")
requests = [json.loads(line) for line in open(repository_log)]
accepted = [r for r in requests if r["method"] == "POST" and 200 <= r["status"] < 300 and isinstance(r["body"], dict)]
sides = {"before": [r for r in accepted if r["received"] < split], "after": [r for r in accepted if r["received"] >= split]}
received = {}
for side, batch in sides.items():
    records = {section: [] for section in SECTIONS}
    for request in batch:
        for section in SECTIONS:
            records[section] += request["body"].get(section, [])
    deleted = [d for request in batch for d in request["body"].get("deleted", [])]
    received[side] = (records, deleted)
    note("the repository before %s the upgrade: %d requests; %s; %d deletions" % (
        "the stop of" if side == "before" else "and after", len(batch),
        ", ".join("%s %d (%d uuids)" % (s, len(records[s]), len({uuid_of(r) for r in records[s]})) for s in SECTIONS),
        len(deleted)))
before_records, _ = received["before"]
after_records, _ = received["after"]
held = {}
for section in SECTIONS:
    for record in before_records[section]:
        held[uuid_of(record)] = record
sent_after = [(section, record) for section in SECTIONS for record in after_records[section]]
again = [(s, r) for s, r in sent_after if uuid_of(r) in held]
identical = [(s, r) for s, r in again if first_difference(held[uuid_of(r)], r) is None]
versions = [(s, r) for s, r in again if (s, r) not in identical]
new = {uuid_of(r) for s, r in sent_after if uuid_of(r) not in held}
verdict(not identical,
        "the repository: nothing it held before the upgrade sent again as it was (%d objects held, %d sent after: %d new uuids, "
        "%d resent, of them %d identical, %d later versions%s)"
        % (len(held), len(sent_after), len(new), len(again), len(identical), len(versions),
           "" if not identical else ": " + ", ".join("%s %s" % (s, uuid_of(r)) for s, r in identical[:5])))
heart_rates = {s["uuid"] for s in samples}
reached = {r["uuid"] for r in before_records["samples"]} | {r["uuid"] for r in after_records["samples"]}
verdict(heart_rates <= reached,
        "every heart rate stored before the upgrade reached the repository as a sample (%d of %d)"
        % (len(heart_rates & reached), len(heart_rates)))
series = after_records["quantitySeries"]
quantities = {}
for record in series:
    quantities[record["uuid"]] = len(record.get("quantities", []))
late = [r for r in after_records["samples"] if r.get("type") == "heartRate"]
verdict(series and all(r.get("type") == "heartRate" for r in series),
        "after the upgrade new heart rates arrive as quantity series: %d series in %d versions, %d quantities in their latest; "
        "%d heart rates as plain samples (late readings)"
        % (len(quantities), len(series), sum(quantities.values()), len(late)))
