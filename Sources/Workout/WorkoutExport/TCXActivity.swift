import FoundationEssentials
public import HealthModel

/// A stored workout as a Garmin Training Center XML (TCX v2) activity: one `Lap` per lap with
/// its time, distance, calories and heart rate, and a `Trackpoint` per second that has a
/// reading (heart rate, cadence, cumulative distance of the activity's own kind, and speed and
/// power in the Activity Extension v2); each lap has its average cadence and power too.
public enum TCXActivity {
    public static func encode(_ workout: Workout, samples: [QuantitySample]) -> String {
        let timeline = ExportTimeline(workout)
        let points = ExportPoint.points(of: samples, distance: timeline.distanceType(samples: samples))
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <TrainingCenterDatabase xmlns="http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2" \
            xmlns:ns3="http://www.garmin.com/xmlschemas/ActivityExtension/v2">
              <Activities>
                <Activity Sport="\(sport(of: workout.activityType))">
                  <Id>\(time(workout.startDate))</Id>

            """
        let laps = timeline.laps(samples: samples)
        // Each point in the lap it falls in: after the lap's start, up to its end (the first lap
        // from the workout's start on).
        let lapOfPoint = points.map { point in laps.lastIndex { point.date > $0.start } ?? 0 }
        for (index, lap) in laps.enumerated() {
            xml += "      <Lap StartTime=\"\(time(lap.start))\">\n"
            xml += "        <TotalTimeSeconds>\(number(lap.timerSeconds))</TotalTimeSeconds>\n"
            xml += "        <DistanceMeters>\(number(lap.distance ?? 0))</DistanceMeters>\n"
            xml += "        <Calories>\(Int((lap.energy ?? 0).rounded()))</Calories>\n"
            if let average = lap.averageHeartRate {
                xml += "        <AverageHeartRateBpm><Value>\(Int(average.rounded()))</Value></AverageHeartRateBpm>\n"
            }
            if let maximum = lap.maximumHeartRate {
                xml += "        <MaximumHeartRateBpm><Value>\(Int(maximum.rounded()))</Value></MaximumHeartRateBpm>\n"
            }
            xml += "        <Intensity>Active</Intensity>\n"
            // The lap's average cadence (ActivityLap_t: after Intensity, before TriggerMethod).
            if let cadence = lap.averageCadence { xml += "        <Cadence>\(min(254, Int(cadence.rounded())))</Cadence>\n" }
            xml += "        <TriggerMethod>Manual</TriggerMethod>\n        <Track>\n"
            for (point, pointLap) in zip(points, lapOfPoint) where pointLap == index {
                xml += "          <Trackpoint>\n            <Time>\(time(point.date))</Time>\n"
                if let distance = point.distance { xml += "            <DistanceMeters>\(number(distance))</DistanceMeters>\n" }
                if let rate = point.heartRate {
                    xml += "            <HeartRateBpm><Value>\(Int(rate.rounded()))</Value></HeartRateBpm>\n"
                }
                if let cadence = point.cadence { xml += "            <Cadence>\(min(254, Int(cadence.rounded())))</Cadence>\n" }
                if point.speed != nil || point.power != nil {
                    xml += "            <Extensions><ns3:TPX>"
                    if let speed = point.speed { xml += "<ns3:Speed>\(number(speed))</ns3:Speed>" }
                    if let power = point.power { xml += "<ns3:Watts>\(Int(power.rounded()))</ns3:Watts>" }
                    xml += "</ns3:TPX></Extensions>\n"
                }
                xml += "          </Trackpoint>\n"
            }
            xml += "        </Track>\n"
            if let power = lap.averagePower {
                // Activity Extension v2's lap figures (LX), after the track.
                xml += "        <Extensions><ns3:LX><ns3:AvgWatts>\(Int(power.rounded()))</ns3:AvgWatts>"
                    + (lap.maximumPower.map { "<ns3:MaxWatts>\(Int($0.rounded()))</ns3:MaxWatts>" } ?? "")
                    + "</ns3:LX></Extensions>\n"
            }
            xml += "      </Lap>\n"
        }
        xml += "      <Notes>healthgate workout \(workout.id)</Notes>\n    </Activity>\n  </Activities>\n</TrainingCenterDatabase>\n"
        return xml
    }

    /// TCX's three sports.
    static func sport(of activity: WorkoutActivityType) -> String {
        switch activity {
        case .running, .walking, .hiking: "Running"
        case .cycling: "Biking"
        default: "Other"
        }
    }

    static func time(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// A non-negative number with two decimals.
    static func number(_ value: Double) -> String {
        let hundredths = Int64(max(0, value * 100).rounded())
        let fraction = hundredths % 100
        return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
