#!/usr/bin/env python3
# count-advertisements.py ADVERTISED REPORTED LABEL - per advertiser, the changes it advertised
# (bumble-advertisers.py's log) against the changes a receiver reported (adv-reader.py's log, or
# any log of {"event": "reported", "t", "address", "data"} lines) within the receiver's window:
# from the moment its receiving path was in place (its last "registered" or "started" event, or a
# monitor's first "activated"; else its "mode" event) to its "done" event. Changes advertised in
# the window's last LATENCY seconds (4) are left out on both sides: under TCG on a busy host a
# report reached a D-Bus client up to 3 s after the advertiser changed its data, and the reader
# stops listening at "done". A reported change is a value different from the one reported before
# for that address, and it counts only when it is a value that was advertised. For the scales it
# also counts weighings: a weighing is reported when one of its stabilised values was. Prints a
# table and one JSON line {"label", "seconds", "devices": {address: {…}}}; "heard" there counts
# every report in the window, of whatever value.
import json
import sys

advertised_log, reported_log, label = sys.argv[1], sys.argv[2], sys.argv[3]


def lines(path):
    with open(path) as handle:
        for line in handle:
            line = line.strip()
            if line.startswith("{"):
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:
                    continue


reported = list(lines(reported_log))
start = next((e["t"] for e in reported if e["event"] == "mode"), None)
ready = [e["t"] for e in reported if e.get("state") in ("registered", "started")]
# A monitor receives from its activation on (Activate follows RegisterMonitor's answer by up to a
# second under TCG); a later re-activation does not move the window.
ready += [e["t"] for e in reported if e.get("state") == "activated" and ready and e["t"] <= min(ready) + 5]
start = max(ready) if ready else start
end = next((e["t"] for e in reported if e["event"] == "done"), None)
if start is None or end is None:
    sys.exit(f"{reported_log}: no complete window (mode … done)")
LATENCY = 4.0
advertised = [e for e in lines(advertised_log) if e["event"] == "advertised"]
devices = {}
for event in advertised:
    device = devices.setdefault(event["address"], {
        "name": event["device"], "path": event["path"], "advertised": 0, "reported": 0, "heard": 0, "unknown": 0,
        "values": {}, "weighings": set(), "weighingsReported": set()})
    # A value first advertised before the window may still be on the air at its start.
    device["values"].setdefault(event["data"], event)
    if start <= event["t"] <= end - LATENCY:
        device["advertised"] += 1
        if event.get("stabilized") and not event.get("loadRemoved"):
            device["weighings"].add(event["weighing"])
previous = {}
for event in reported:
    if event["event"] != "reported" or event["address"] not in devices or not start <= event["t"] <= end:
        continue
    device = devices[event["address"]]
    device["heard"] += 1  # any report in the window, of whatever value
    if previous.get(event["address"]) == event["data"]:
        continue
    previous[event["address"]] = event["data"]
    origin = device["values"].get(event["data"])
    if origin is None:
        device["unknown"] += 1
        continue
    if not start <= origin["t"] <= end - LATENCY:
        continue  # on the air before the window or in its last seconds: counted on neither side
    device["reported"] += 1
    if origin.get("stabilized") and not origin.get("loadRemoved"):
        device["weighingsReported"].add(origin["weighing"])

summary = {}
print(f"{label}: window {end - start:.1f} s")
print(f"  {'address':17}  {'device':20} {'path':12} {'advertised':>10} {'reported':>8}  rate   weighings")
for address, device in sorted(devices.items()):
    rate = device["reported"] / device["advertised"] if device["advertised"] else 0.0
    weighings = ""
    if device["path"] == "service":
        weighings = f"{len(device['weighingsReported'] & device['weighings'])}/{len(device['weighings'])}"
    print(f"  {address}  {device['name']:20} {device['path']:12} {device['advertised']:>10} {device['reported']:>8}"
          f"  {rate:4.2f}   {weighings}")
    summary[address] = {"name": device["name"], "advertised": device["advertised"], "reported": device["reported"],
                        "rate": round(rate, 3), "heard": device["heard"], "unknownValues": device["unknown"],
                        "weighings": len(device["weighings"]),
                        "weighingsReported": len(device["weighingsReported"] & device["weighings"])}
print(json.dumps({"label": label, "seconds": round(end - start, 1), "devices": summary}))
