#!/usr/bin/env python3
# count-stored.py ADVERTISED DB LABEL STRAPS_FROM SCALES_FROM TO [STOP] - what a gateway stored of
# what bumble-advertisers.py advertised (its log, ADVERTISED), in one span of the guest's clock.
# TO is when the gateway had ended; STOP (default TO) when it was told to stop (its log's "received
# SIGTERM"): from then on its sources stop hearing, however long the stop takes (ci79: 7 changes of
# 44 in a slow stop counted as sent; the grader's run of 2026-11-29: a weighing that settled 0.5 s
# before the gateway ended, after its SIGTERM, counted as one it had to store).
#   straps: each strap's changes on air from STRAPS_FROM to STOP against the heartRate samples of
#           that strap stamped in that span (each sample carries the time its advertisement was
#           received): at least 0.9 of the changes stored, and no more samples than changes;
#   scales: the stabilised weighings on air from SCALES_FROM to STOP - LATE seconds against the
#           store's bodyMass samples (SCALES_FROM "-" leaves the scales out): each stored, none
#           twice. The one on air as the count began, and one that settled only in the last LATE
#           seconds before STOP or after it (bluetoothd's report may reach the gateway after it
#           stopped listening), may be stored, not must.
# DB is a copy of the store, opened read-only and immutable (a copy on the host's share cannot map
# SQLite's WAL index). Prints one verdict a line, "ok TEXT" or "fail TEXT".
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import store_readings  # noqa: E402  (the store's quantity series read as samples)

advertised_log, db, label, straps_from, scales_from, to = sys.argv[1:7]
straps_from, to = float(straps_from), float(to)
stop = float(sys.argv[7]) if len(sys.argv) > 7 else to
LATE = 2.0
events = [json.loads(line) for line in open(advertised_log) if line.startswith('{"event": "advertised"')]
store = store_readings.connect(db, options="immutable=1")
rows = store.execute(
    "SELECT ifnull(device, ''), start_us / 1e6 FROM samples_readable WHERE type = 'heartRate'").fetchall()
straps = sorted({e["device"] for e in events if e["path"] == "manufacturer"})
if not straps:
    print(f"fail {label}: the advertisers' log names no strap")
for name in straps:
    ident = name.split()[-1]
    times = [e["t"] for e in events if e["device"] == name]
    # The change on air when the count starts is one of them: bluetoothd and the kernel report a
    # device's current data when the path first finds it.
    sent = sum(1 for t in times if straps_from <= t <= stop) + (1 if any(t < straps_from for t in times) else 0)
    stored = sum(1 for device, at in rows if ident in device and straps_from <= at <= stop)
    rate = stored / sent if sent else 0
    verdict = "ok" if sent and stored <= sent and rate >= 0.9 else "fail"
    print(f"{verdict} {label}: {name} stored {stored} of {sent} changes (rate {rate:.2f}, 0.9 required)")
if scales_from != "-":
    # A weighing counts when any of its stabilised advertisements (the stepped-off repeats too, which
    # carry the same weight and clock) fell inside the span: the gateway must store it then.
    stabilised = [e for e in events if e["path"] == "service" and e.get("stabilized")]
    weighings = {(e["address"], e["weighing"]) for e in stabilised if float(scales_from) <= e["t"] <= stop - LATE}
    late = {(e["address"], e["weighing"]) for e in stabilised if stop - LATE < e["t"] <= to} - weighings
    # The one on air as the count starts may be stored too, not must: bluetoothd reports a scale's
    # cached data when the path first finds it only if it has some (package.sh's service found the
    # scales' last weighing; advertisements.sh's gateway did not).
    earlier = set()
    for address in {e["address"] for e in events if e["path"] == "service"}:
        before = [e for e in events if e["path"] == "service" and e["address"] == address and e["t"] < float(scales_from)]
        last = max(before, key=lambda e: e["t"]) if before else None
        if last and last.get("stabilized") and (address, last["weighing"]) not in weighings:
            earlier.add((address, last["weighing"]))
    # A weighing stored twice is two samples with the same scale, weight and scale clock.
    stored = store.execute("""SELECT s.device, s.value, m.value FROM samples_readable s
        LEFT JOIN metadata_readable m ON m.uuid = s.uuid AND m.key = 'healthgate.scaleTimestamp'
        WHERE s.type = 'bodyMass'""").fetchall()
    twice = len(stored) - len(set(stored))
    optional = len(earlier) + len(late)
    verdict = "ok" if weighings and len(weighings) <= len(stored) <= len(weighings) + optional and twice == 0 else "fail"
    print(f"{verdict} {label}: {len(stored)} bodyMass samples for {len(weighings)} stabilised weighings advertised "
          f"(and {len(earlier)} on air as the count began, {len(late)} settled in the last {LATE:.0f} s before the stop "
          f"or after it, which may be stored), {twice} stored twice")
    if verdict == "fail":
        # What to compare: each stabilised weighing on air (its first and last advertisement) and
        # each sample with the time its advertisement was received.
        spans = {}
        for e in events:
            if e["path"] == "service" and e.get("stabilized"):
                first, last = spans.get((e["address"], e["weighing"]), (e["t"], e["t"]))
                spans[(e["address"], e["weighing"])] = (min(first, e["t"]), max(last, e["t"]))
        print(f"  span {scales_from} to {stop} (stopped), {to} (ended); on air: " + "; ".join(
            f"{address} #{weighing} {first:.1f}-{last:.1f} kg {next(e['weight'] for e in events if e.get('weighing') == weighing and e['address'] == address and e.get('stabilized'))}"
            for (address, weighing), (first, last) in sorted(spans.items(), key=lambda item: item[1])
            if last >= float(scales_from) - 40))
        received = store.execute("""SELECT s.device, s.value, s.start_us / 1e6 FROM samples_readable s
            WHERE s.type = 'bodyMass' ORDER BY s.start_us""").fetchall()
        print("  stored: " + "; ".join(f"{device} {value} kg at {at:.1f}" for device, value, at in received))
