#!/usr/bin/env python3
# between-classes.py SPEC ANT_LOG DB HEALTHGATE - strap-between-classes.sh's verdict, run in the guest
# with its python3 (standard library only).
#
# SPEC: {"straps": {NAME: "ant:120:N"}, "handover": {"strap", "from", "to", "at"}} (times on the
# guest's wall clock, seconds). ANT_LOG: the stick emulator's JSON lines ("strap" and "beat"
# events, each beat with the heart rate its broadcast carried). DB: the gateway's store, read
# through HEALTHGATE (`query samples --participant`, `workout show --records`), as a user would.
#
# The handed strap's heart rates (healthgate.person): the former wearer's all dated before the
# assignment, the new member's all from it, none attributed to nobody; exactly, by the instant
# the gateway committed the assignment (its wear interval's start in the store's
# `wear_intervals`), since the store attributes each reading where it commits it (issue 77). Every participant's workout: each heart rate stored in it one its strap sent, at
# least 90 % of what the strap sent while it ran and no more (plus one, for a reading on its
# edge); the former wearer's workout (class 1) none from after the hand-over, the new member's
# none from before. Prints what it found and the problems; exits 1 when there is any.
import json
import sqlite3
import subprocess
import sys
from datetime import datetime

spec = json.load(open(sys.argv[1]))
ant = [json.loads(line) for line in open(sys.argv[2]) if line.startswith("{")]
db, healthgate = sys.argv[3], sys.argv[4]
handover = spec["handover"]
devices = {e["identifier"]: e["device"] for e in ant if e["event"] == "strap"}
problems = []


def seconds(text):
    """An RFC 3339 date as seconds since the epoch."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def run(arguments):
    done = subprocess.run([healthgate] + arguments + ["--db", db], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("healthgate %s: status %d: %s" % (" ".join(arguments), done.returncode, done.stderr))
    return json.loads(done.stdout)


def sent(strap):
    """(time, heart rate) of every beat the strap's emulator sent."""
    return [(e["wall"], e["heartRate"]) for e in ant if e["event"] == "beat" and e["device"] == devices[strap]]


def strap_readings(option):
    """The start times of the handed strap's heart rates that `query samples OPTION` lists."""
    return sorted(seconds(s["start"]) for s in run(["query", "samples", "--type", "heartRate", "--format", "json"] + option)
                  if handover["strap"] in ((s.get("device") or {}).get("radioIdentifier"), (s.get("device") or {}).get("localIdentifier")))


former = strap_readings(["--participant", handover["from"]])
new = strap_readings(["--participant", handover["to"]])
nobodys = strap_readings(["--unattributed"])
store = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
worn = store.execute("SELECT start_us / 1e6 FROM wear_intervals WHERE device = ? AND participant = ? ORDER BY start_us",
                     (handover["strap"], handover["to"])).fetchall()
if len(worn) != 1:
    problems.append("%s's wear intervals of the strap: %s, one expected" % (handover["to"], worn))
at = worn[0][0] if worn else handover["at"]
print("%s: committed %.1f s after the scenario asked; %d readings %s's (the last %.3f s before it), %d %s's (the first %.3f s after), %d nobody's" % (
    handover["strap"], at - handover["at"], len(former), handover["from"], at - max(former, default=0), len(new), handover["to"],
    min(new, default=0) - at, len(nobodys)))
if not former or any(t >= at for t in former):
    problems.append("%s's readings of the strap: none, or some after the hand-over" % handover["from"])
if not new or any(t < at for t in new):
    problems.append("%s's readings of the strap: none, or some before the hand-over" % handover["to"])
if nobodys:
    problems.append("%d readings of the strap attributed to nobody" % len(nobodys))

workouts = {}
for workout in run(["workout", "list", "--format", "json"]):
    name = (workout.get("metadata") or {}).get("healthgate.participant")
    if name:
        workouts.setdefault(name, []).append(workout)
expected = {handover["from"]: 1, handover["to"]: 1}
expected.update({name: 2 for name in spec["straps"] if name not in expected})
for name, count in sorted(expected.items()):
    mine = workouts.get(name, [])
    if len(mine) != count:
        problems.append("%s: %d workouts stored, %d expected" % (name, len(mine), count))
        continue
    strap = spec["straps"][name]
    readings = sent(strap)
    values = {v for _, v in readings}
    for workout in mine:
        start, end = seconds(workout["startDate"]), seconds(workout["endDate"])
        shown = run(["workout", "show", workout["id"], "--format", "json", "--records"])
        stored = sorted(seconds(s["start"]) for s in shown["samples"] if s["type"] == "heartRate")
        stored_values = [s["value"] for s in shown["samples"] if s["type"] == "heartRate"]
        in_workout = [t for t, _ in readings if start <= t <= end]
        print("%s's workout %.0f..%.0f s after the hand-over: %s sent %d, stored %d" % (
            name, start - at, end - at, strap, len(in_workout), len(stored)))
        if any(round(v) not in values for v in stored_values):
            problems.append("%s: stored heart rates its strap never sent" % name)
        if not in_workout or len(stored) < 0.9 * len(in_workout) or len(stored) > len(in_workout) + 1:
            problems.append("%s: %d heart rates stored for %d sent" % (name, len(stored), len(in_workout)))
        if name == handover["from"] and any(t > at for t in stored):
            problems.append("%s's workout holds readings from after the hand-over" % name)
        if name == handover["to"] and any(t < at for t in stored):
            problems.append("%s's workout holds readings from before the hand-over" % name)

print("problems %d" % len(problems))
for problem in problems:
    print("PROBLEM", problem)
sys.exit(1 if problems else 0)
