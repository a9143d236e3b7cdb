#!/usr/bin/env python3
# ghs-check.py SENSOR_LOG OUT CONNECTIONS - ghs.sh's verdicts: what bumble-ghs.py logged that it
# sent, against what the gateway stored, as `healthgate query` answered it (OUT/spo2.json and
# OUT/pulse.json from `query samples --format json`, OUT/changes.json from `query changes`).
# Prints one line a check: "ok TEXT" or "wrong: TEXT" (lib/checks.sh's `verdicts` makes them PASS
# and FAIL lines). Standard library only: it runs in the guest's python3.
#
# A sample matches an observation by its time to the millisecond (the sensor's UTC time stamp,
# ms resolution) and its value; an observation must be stored exactly once.
import json
import re
import struct
import sys
from collections import Counter, defaultdict
from datetime import datetime

# RACP's operators "all", "at most" (<=, as the gateway writes it when it erases a sensor's
# memory) and "at least" (>=, as it counts and asks for the records after its checkpoint), and
# the filter type "record number".
ALL, AT_MOST, AT_LEAST = 0x01, 0x02, 0x03
RECORD_NUMBER_FILTER = 0x01

OXIMETER, CUFF, ECG = "F0:47:48:53:00:01", "F0:47:48:53:00:02", "F0:47:48:53:00:03"
CUFF_NAME = "[GHS Cuff "  # how the gateway's log names the cuff: its name, then its identity
ECG_TYPE = "mdc.131329.4274"


def verdict(ok, text):
    print(("ok " if ok else "wrong: ") + text)


def millis(text):
    return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def fields(line):
    return dict(re.findall(r"(\S+)=(\S+)", line))


def load(path, default):
    try:
        with open(path) as file:
            return json.load(file)
    except (OSError, ValueError) as error:
        verdict(False, "cannot read %s: %s" % (path, error))
        return default


def metadata(record):
    value = record.get("metadata") or {}
    return value if isinstance(value, dict) else {}


def of_device(sample, address):
    """True when the sample names ADDRESS as its device's radio identifier (or its metadata's
    Bluetooth address), or names neither."""
    device = sample.get("device") or {}
    named = device.get("radioIdentifier") or metadata(sample).get("healthgate.bleAddress")
    return named is None or str(named).upper() == address


def sent(log, role, kind):
    """The distinct observations ROLE logged as sent KIND (live or stored), in order, and how
    often each stored record went out."""
    seen, result, times = set(), [], Counter()
    for line in log:
        if not line.startswith("sent %s %s " % (kind, role)):
            continue
        values = fields(line)
        key = values.get("record") or values["ms"]
        times[key] += 1
        if key not in seen:
            seen.add(key)
            result.append(values)
    return result, times


def check_oximeter(log, out):
    stored, resent = sent(log, "oximeter", "stored")
    live, _ = sent(log, "oximeter", "live")
    again = {record: n for record, n in resent.items() if n > 1}
    verdict(not again, "the oximeter sent each stored record once (%d records%s)"
            % (len(stored), "" if not again else "; sent again: %s" % again))
    for name, path, key, scale in (("oxygenSaturation", "spo2.json", "spo2", None), ("heartRate", "pulse.json", "pulse", 1)):
        samples = load("%s/%s" % (out, path), [])
        if isinstance(samples, dict):
            samples = samples.get("samples", [])
        samples = [s for s in samples if of_device(s, OXIMETER)]
        by_time = defaultdict(list)
        for sample in samples:
            value = float(sample["value"])
            # A fraction (HealthKit's percent) or a percentage: compared as a percentage.
            if scale is None and value <= 1.0:
                value *= 100
            by_time[millis(sample["start"])].append(round(value, 3))
        for label, observations in (("stored", stored), ("live", live)):
            missing, twice, wrong = [], [], []
            for observation in observations:
                at, expected = int(observation["ms"]), float(observation[key])
                found = by_time.get(at, [])
                if not found:
                    missing.append(at)
                elif len(found) > 1:
                    twice.append((at, found))
                elif abs(found[0] - expected) > 0.01:
                    wrong.append((at, expected, found[0]))
            verdict(observations and not missing and not twice and not wrong,
                    "every %s oximeter bundle's %s is stored once with its value: %d sent, %d missing, %d stored twice, %d wrong%s"
                    % (label, name, len(observations), len(missing), len(twice), len(wrong),
                       "" if not (missing or twice or wrong) else " (first: %s)" % ((missing + twice + wrong)[:3],)))
        expected_times = {int(o["ms"]) for o in stored + live}
        extra = [t for t in by_time if t not in expected_times]
        verdict(len(samples) == len(stored) + len(live) and not extra,
                "the store holds %d %s samples of the oximeter for %d bundles sent (%d at a time the sensor never sent)"
                % (len(samples), name, len(stored) + len(live), len(extra)))


def latest(records):
    """Each uuid's last version (the highest anchor)."""
    newest = {}
    for change in records:
        sample = change["record"]["sample"]
        uuid = sample.get("uuid")
        if uuid not in newest or change["anchor"] > newest[uuid]["anchor"]:
            newest[uuid] = change
    return [change["record"] for change in newest.values()]


def check_cuff(log, changes):
    stored, _ = sent(log, "cuff", "stored")
    live, _ = sent(log, "cuff", "live")
    observations = stored + live
    correlations = [r["sample"] for r in latest([c for c in changes if (c.get("record") or {}).get("kind") == "correlation"])
                    if r["sample"].get("type") == "bloodPressure" and of_device(r["sample"], CUFF)]
    verdict(len(correlations) == len(observations),
            "the store holds %d bloodPressure correlations of the cuff for %d compound observations sent (%d stored, %d live)"
            % (len(correlations), len(observations), len(stored), len(live)))
    by_time = defaultdict(list)
    for correlation in correlations:
        by_time[millis(correlation["start"])].append(correlation)
    bad, means, mean_keys = [], [], set()
    for observation in observations:
        at = int(observation["ms"])
        found = by_time.get(at, [])
        if len(found) != 1:
            bad.append("%d: %d correlations" % (at, len(found)))
            continue
        correlation = found[0]
        objects = {o.get("type"): float(o.get("value")) for o in correlation.get("objects", [])}
        if objects.get("bloodPressureSystolic") != float(observation["systolic"]) or \
                objects.get("bloodPressureDiastolic") != float(observation["diastolic"]):
            bad.append("%d: %s, sent %s/%s" % (at, objects, observation["systolic"], observation["diastolic"]))
        keys = {key: value for key, value in metadata(correlation).items() if "meanArterialPressure" in key}
        mean_keys.update(keys)
        means.append(any(float(value if not isinstance(value, dict) else next(iter(value.values()))) == float(observation["mean"])
                         for value in keys.values()))
    verdict(observations and not bad, "each compound is a bloodPressure correlation at its time with its systolic and diastolic%s"
            % ("" if not bad else ": " + "; ".join(bad[:3])))
    example = metadata(correlations[0]) if correlations else {}
    verdict(means and all(means), "each correlation keeps the mean arterial pressure the cuff sent (%s; %d of %d)%s"
            % (", ".join(sorted(mean_keys)) or "no meanArterialPressure key", sum(means), len(observations),
               "" if means and all(means) else "; a correlation's metadata: %s" % json.dumps(example)[:400]))


def scalar(value):
    """A metadata value as `healthgate query` writes it: the value, or an object holding it."""
    return next(iter(value.values())) if isinstance(value, dict) and len(value) == 1 else value


def check_cuff_content(log, changes):
    """The cuff's string and TLV-encoded observations: each one record of its generic type
    (mdc.{kind}.512, value 1), the text in healthgate.mdc.text, each TLV entry in
    healthgate.mdc.attribute.{type}, the value as sent."""
    sent_lines = [fields(line) for line in log if line.startswith("sent live cuff-")]
    quantities = [c["record"]["sample"] for c in changes if (c.get("record") or {}).get("kind") == "quantity"]
    for line in sent_lines:
        kind, at = int(line["kind"]), int(line["ms"])
        found = [q for q in quantities if q.get("type") == "mdc.%d.512" % kind and millis(q["start"]) == at and of_device(q, CUFF)]
        if "text" in line:
            expected = {"healthgate.mdc.valueKind": "text", "healthgate.mdc.text": line["text"].replace("_", " ")}
        else:
            expected = {"healthgate.mdc.valueKind": "attributes", "healthgate.mdc.attribute.192528": int(line["inflations"]),
                        "healthgate.mdc.attribute.192529": line["profile"]}
        kept = found and all(scalar(metadata(found[0]).get(key)) == value for key, value in expected.items())
        verdict(len(found) == 1 and float(found[0].get("value")) == 1 and kept,
                "the cuff's %s observation (mdc.%d.512) is stored once, its content in metadata: %d records%s"
                % ("string" if "text" in line else "TLV-encoded", kind, len(found),
                   "" if kept else "; expected %s, metadata %s" % (expected, json.dumps(metadata(found[0]) if found else {})[:400])))
    verdict(len(sent_lines) == 2, "the cuff sent its message and its settings (%d of 2 logged)" % len(sent_lines))


def check_ecg(log, changes):
    arrays, _ = sent(log, "ecg", "live")
    expected = []  # (ms, value) of each sample
    for array in arrays:
        start, scale, offset = int(array["ms"]), float(array["scale"]), float(array["offset"])
        step = float(array["period"]) / int(array["per-period"])
        samples = [int(s) for s in array["samples"].split(",")]
        if len(samples) != int(array["count"]):
            verdict(False, "the ECG log line holds %d samples, not %s" % (len(samples), array["count"]))
        expected += [(start + round(i * step * 1000), round(offset + scale * s, 6)) for i, s in enumerate(samples)]
    records = [c for c in changes if ((c.get("record") or {}).get("sample") or {}).get("type") == ECG_TYPE]
    series = [r["sample"] for r in latest([c for c in records if c["record"]["kind"] == "quantitySeries"])]
    plain = [c for c in records if c["record"]["kind"] != "quantitySeries"]
    kinds = Counter(c["record"]["kind"] for c in changes)
    stored = []
    for sample in series:
        start = datetime.fromisoformat(sample["start"].replace("Z", "+00:00")).timestamp()
        stored += [(round((start + q["timeSinceSeriesStart"]) * 1000), round(float(q["value"]), 6)) for q in sample.get("quantities", [])]
    verdict(arrays and len(stored) == len(expected) and not plain,
            "the ECG lead is stored as %s series: %d quantities in %d series (%d plain samples) for %d samples sent in %d arrays%s"
            % (ECG_TYPE, len(stored), len(series), len(plain), len(expected), len(arrays),
               "" if records else "; the store's kinds: %s, types: %s" % (dict(kinds), sorted({
                   ((c.get("record") or {}).get("sample") or {}).get("type") for c in changes} - {None}))))
    if series:
        units = {s.get("unit") for s in series}
        verdict(Counter(v for _, v in stored) == Counter(v for _, v in expected),
                "every ECG sample's value is offset + scale x sample, in %s" % ", ".join(map(str, units)))
        verdict(Counter(stored) == Counter(expected),
                "every ECG sample is at its time (the array's time stamp + index x period / samples per period)")


def percent(sample):
    """An SpO2 sample's value as a percentage (a fraction, HealthKit's percent, or a percentage)."""
    value = float(sample["value"])
    return round(value * 100 if sample.get("type") == "oxygenSaturation" and value <= 1.0 else value, 3)


def check_pair_twin_and_faults(log, out, changes):
    """Issue #78's observations from the cuff: the pair of one time (a simple-discrete SpO2 code
    and a bundle's numeric SpO2 and pulse rate) stored as three records; the twin (two numeric
    SpO2 of one identity, different values) as the first, the second refused aloud; no fault
    stored, each counted once by its reason; the valid SpO2 after them stored."""
    quantities = [r["sample"] for r in latest([c for c in changes if (c.get("record") or {}).get("kind") == "quantity"])]
    cuff = defaultdict(list)
    for sample in quantities:
        if of_device(sample, CUFF) and (sample.get("device") or metadata(sample).get("healthgate.bleAddress")):
            cuff[millis(sample["start"])].append(sample)
    logs = []
    for name in ("healthgate-killed.log", "healthgate.log"):
        try:
            with open("%s/%s" % (out, name)) as file:
                logs += [line.rstrip("\n") for line in file]
        except OSError:
            pass
    pairs = [fields(line) for line in log if line.startswith("sent pair cuff ")]
    for pair in pairs:
        found = cuff.get(int(pair["ms"]), [])
        kinds = sorted((s.get("type"), percent(s), scalar(metadata(s).get("healthgate.mdc.valueKind"))) for s in found)
        code = [k for k in kinds if k[2] == "code" and k[1] == float(pair["code"])]
        spo2 = [k for k in kinds if k[0] == "oxygenSaturation" and k[1] == float(pair["spo2"])]
        pulse = [k for k in kinds if k[0] == "heartRate" and k[1] == float(pair["pulse"])]
        verdict(len(found) == 3 and len(code) == 1 and len(spo2) == 1 and len(pulse) == 1 and len({s.get("uuid") for s in found}) == 3,
                "the pair of one time (an SpO2 code %s and a bundle's SpO2 %s %% and pulse %s) is three records: %s"
                % (pair["code"], pair["spo2"], pair["pulse"], kinds))
    verdict(len(pairs) == 1, "the cuff sent the pair (%d logged)" % len(pairs))
    twins = [fields(line) for line in log if line.startswith("sent twin cuff ")]
    refusals = [line for line in logs if "refused 1 reading whose sync identifier and version are stored already" in line
                and "/150456/numeric/544/object" in line]
    for twin in twins:
        found = [percent(s) for s in cuff.get(int(twin["ms"]), [])]
        verdict(found == [float(twin["first"])] and len(refusals) == 1,
                "two SpO2 of one identity (%s then %s %%): the first stored (%s), the second refused aloud (%d warnings%s)"
                % (twin["first"], twin["second"], found, len(refusals), (": " + refusals[0][-160:]) if refusals else ""))
    verdict(len(twins) == 1, "the cuff sent the twin (%d logged)" % len(twins))
    faults = [fields(line) for line in log if line.startswith("sent fault cuff ")]
    stored = ["%s: %s" % (f["fault"], [percent(s) for s in cuff[int(f["ms"])]]) for f in faults if cuff.get(int(f["ms"]))]
    verdict(len(faults) == 8 and not stored, "none of the cuff's %d faulty observations is stored%s" % (len(faults), "; STORED: " + "; ".join(stored) if stored else ""))
    valid = [fields(line) for line in log if line.startswith("sent valid cuff ")]
    wrong = ["%s: %s" % (v["ms"], [percent(s) for s in cuff.get(int(v["ms"]), [])]) for v in valid
             if [percent(s) for s in cuff.get(int(v["ms"]), [])] != [float(v["spo2"])]]
    verdict(len(valid) == 2 and not wrong, "the valid SpO2 among the faults are stored once each (%d sent%s)"
            % (len(valid), "; WRONG: " + "; ".join(wrong) if wrong else ""))
    cuff_lines = [line for line in logs if CUFF_NAME in line]
    dropped = Counter(m.group(1) for m in (re.search(r"observation dropped: (\w+)", line) for line in cuff_lines) if m)
    expected = Counter({"outOfOrder": 1, "missingFirstSegment": 2, "interrupted": 1})
    verdict(dropped == expected, "each observation lost in segments is dropped once, by its first reason: %s (expected %s)"
            % (dict(dropped), dict(expected)))
    bad = [line for line in logs if "bad payload" in line.lower()]
    mine = [line for line in bad if CUFF_NAME in line]
    verdict(len(mine) == 5 and len(bad) == 5,
            "bad payloads: %d of the cuff (4 observations dropped, 1 bad length), %d of the other sensors%s"
            % (len(mine), len(bad) - len(mine), "" if len(bad) == len(mine) else ": " + "; ".join(l[-200:] for l in bad if CUFF_NAME not in l)[:600]))
    skipped = [line for line in cuff_lines if "observation not stored" in line]
    verdict(len(skipped) == 3, "the invalid, not-available and NaN SpO2 are not stored, each logged: %d%s"
            % (len(skipped), "".join("; " + line[-140:] for line in skipped[:4])))


def counted_records(operand):
    """What a count request (RACP op code 0x04) selects, named as bumble-ghs.py names a report's:
    "all", "from N", or its operand in hex."""
    value = bytes.fromhex(operand)
    if value == bytes([ALL]):
        return "all"
    if len(value) == 6 and value[:2] == bytes([AT_LEAST, RECORD_NUMBER_FILTER]):
        return "from %d" % struct.unpack("<I", value[2:])[0]
    return operand


def check_racp(log, role, at_least):
    """ROLE's record requests. Each connection first counts the records (op code 0x04): while the
    gateway has nothing of it all of them (or from record 1); after that, from one past the last
    record the sensor had sent it (its checkpoint, kept across reconnects and the gateway's
    restart); AT_LEAST counts. Each report asks for the records the count before it counted, and
    only when it counted some."""
    highest, wrong, unannounced, requests, counts, reports = 0, [], [], [], 0, 0
    counted = None  # [records, answer] of the last count not yet followed by its report
    for line in log:
        if line.startswith("sent stored %s " % role):
            highest = max(highest, int(fields(line)["record"]))
        elif line.startswith("racp %s answered count " % role):
            if counted is not None:
                counted[1] = int(line.split()[-1])
        elif line.startswith("racp %s " % role) and not line.startswith("racp %s answered" % role):
            request = line.split(" ", 2)[2].strip()
            requests.append(request)
            if request.startswith("count "):
                counts += 1
                records = counted_records(request.split()[1])
                counted = [records, None]
                if records != "from %d" % (highest + 1) and not (highest == 0 and records in ("all", "from 0")):
                    wrong.append("a count of '%s' with records up to %d sent" % (records, highest))
            elif request == "all" or request.startswith("from "):
                reports += 1
                if counted is None or counted[0] != request:
                    unannounced.append("'%s' after %s" % (request, "no count" if counted is None else "a count of '%s'" % counted[0]))
                elif counted[1] == 0:
                    unannounced.append("'%s' after a count of 0" % request)
                counted = None
    verdict(not wrong and counts >= at_least,
            "the gateway counted the %s's records %d times (at least %d), each from one past the last it had "
            "(requests: %s)%s" % (role, counts, at_least, "; ".join(requests[:12]),
                                  "" if not wrong else "; WRONG: " + "; ".join(wrong)))
    verdict(not unannounced,
            "each of the gateway's %d report requests to the %s came after a count of the same records that found some%s"
            % (reports, role, "" if not unannounced else "; WRONG: " + "; ".join(unannounced)))


def check_deletes(log, role):
    """deleteStoredObservations: ROLE is asked to erase its records up to a bound (operator "at
    most", filter record number), never past the last record it had sent the gateway."""
    highest, bounds, wrong = 0, [], []
    for line in log:
        if line.startswith("sent stored %s " % role):
            highest = max(highest, int(fields(line)["record"]))
        elif line.startswith("racp %s delete " % role):
            operand = bytes.fromhex(line.split()[3])
            if len(operand) != 6 or operand[0] != AT_MOST or operand[1] != 0x01:
                wrong.append("'%s'" % line.strip())
                continue
            bound = struct.unpack("<I", operand[2:])[0]
            bounds.append(bound)
            if bound > highest:
                wrong.append("up to %d with records up to %d sent" % (bound, highest))
    verdict(bounds and not wrong,
            "the gateway asked the %s to erase what it had stored, never more than it had sent (bounds: %s)%s"
            % (role, bounds, "" if not wrong else "; WRONG: " + "; ".join(wrong)))


def main(log_path, out, connections):
    """CONNECTIONS: the oximeter's connections; the gateway was restarted once during the run."""
    with open(log_path) as file:
        log = [line.rstrip("\n") for line in file]
    changes = load("%s/changes.json" % out, {}).get("added", [])
    check_racp(log, "oximeter", connections)
    check_racp(log, "cuff", 2)
    check_deletes(log, "oximeter")
    check_deletes(log, "cuff")
    check_racp(log, "ecg", 2)
    check_oximeter(log, out)
    check_cuff(log, changes)
    check_cuff_content(log, changes)
    check_pair_twin_and_faults(log, out, changes)
    check_ecg(log, changes)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
