#!/usr/bin/env python3
"""Decodes a FIT file with fitdecode (PyPI; CRCs checked, any parse problem an error) and a TCX
file with the standard library's XML parser, independently of healthgate's writers, and prints
what they hold as JSON for WorkoutExportTests to compare with the stored workout.

usage: decode_exports.py FILE.fit FILE.tcx"""
import json
import sys
import xml.etree.ElementTree as ElementTree

import fitdecode


def fit(path):
    messages = {}
    with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE,
                             error_handling=fitdecode.ErrorHandling.RAISE) as reader:
        for frame in reader:
            if frame.frame_type != fitdecode.FIT_FRAME_DATA:
                continue
            fields = {}
            for field in frame.fields:
                value = field.value
                if hasattr(value, "isoformat"):
                    value = value.isoformat()
                elif isinstance(value, (bytes, bytearray)):
                    value = value.hex()
                elif not isinstance(value, (int, float, str, type(None))):
                    value = str(value)
                fields[field.name] = value
            messages.setdefault(frame.name, []).append(fields)
    return messages


def optional_int(node):
    return None if node is None else int(node.text)


def tcx(path):
    ns = {"t": "http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2",
          "x": "http://www.garmin.com/xmlschemas/ActivityExtension/v2"}
    root = ElementTree.parse(path).getroot()
    activity = root.find("t:Activities/t:Activity", ns)
    laps = []
    for lap in activity.findall("t:Lap", ns):
        points = []
        for point in lap.findall("t:Track/t:Trackpoint", ns):
            def text(name):
                node = point.find(name, ns)
                return None if node is None else node.text
            points.append({"time": text("t:Time"), "heartRate": text("t:HeartRateBpm/t:Value"),
                           "distance": text("t:DistanceMeters"), "cadence": text("t:Cadence"),
                           "speed": text("t:Extensions/x:TPX/x:Speed"), "watts": text("t:Extensions/x:TPX/x:Watts")})
        laps.append({"start": lap.get("StartTime"), "seconds": float(lap.find("t:TotalTimeSeconds", ns).text),
                     "distance": float(lap.find("t:DistanceMeters", ns).text),
                     "calories": int(lap.find("t:Calories", ns).text),
                     "maximumHeartRate": int(lap.find("t:MaximumHeartRateBpm/t:Value", ns).text),
                     "cadence": optional_int(lap.find("t:Cadence", ns)),
                     "averageWatts": optional_int(lap.find("t:Extensions/x:LX/x:AvgWatts", ns)),
                     "points": points})
    return {"sport": activity.get("Sport"), "id": activity.find("t:Id", ns).text, "laps": laps}


print(json.dumps({"fit": fit(sys.argv[1]), "tcx": tcx(sys.argv[2])}))
