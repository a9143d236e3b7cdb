#!/usr/bin/env python3
"""SDNN and RMSSD of runs of gap-free NN intervals, by hrv-analysis (PyPI `hrv-analysis`), the
independent implementation healthgate's HeartRateVariability is checked against.

Reads {"runs": [[ms, ...], ...]} on stdin; prints {"sdnn": ..., "rmssd": ...}. SDNN is
hrv-analysis's over every interval of every run; RMSSD is hrv-analysis's per run, combined by the
number of successive differences in each (a gap between runs is not a difference)."""
import json
import math
import sys

try:
    from hrvanalysis import get_time_domain_features
except ImportError:
    # hrv-analysis 1.0.4 (its latest release) imports LombScargle from astropy.stats, which
    # astropy removed; only its frequency-domain features use it. The time-domain function used
    # here is left as it is: only that import is satisfied.
    import astropy.stats
    from astropy.timeseries import LombScargle
    astropy.stats.LombScargle = LombScargle
    from hrvanalysis import get_time_domain_features

runs = [run for run in json.load(sys.stdin)["runs"] if run]
pooled = [interval for run in runs for interval in run]
sdnn = get_time_domain_features(pooled)["sdnn"]
squares = 0.0
differences = 0
for run in runs:
    if len(run) < 2:
        continue
    rmssd = get_time_domain_features(run)["rmssd"]
    squares += rmssd * rmssd * (len(run) - 1)
    differences += len(run) - 1
print(json.dumps({"sdnn": float(sdnn), "rmssd": math.sqrt(squares / differences)}))
