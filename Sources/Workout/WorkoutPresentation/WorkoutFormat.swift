public import Workouts
import FoundationEssentials
public import HealthModel
import GatewayRuntime

/// Text renderings of workouts and live snapshots for the CLI. Pure functions, so they are
/// tested without a terminal or a daemon.
public enum WorkoutFormat {
    /// `h:mm:ss`, or `m:ss` under an hour.
    public static func duration(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded(.down))
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }

    /// A number with `digits` decimals, or `-` when absent.
    public static func number(_ value: Double?, digits: Int = 0) -> String {
        guard let value else { return "-" }
        return String(cFormat: "%.\(digits)f", value)
    }

    /// A table of workouts, one line each, newest first as given.
    public static func table(_ workouts: [Workout]) -> String {
        let header = [
            "ID", "ACTIVITY", "START", "DURATION", "AVG HR", "MAX HR", "DISTANCE", "STEPS", "AVG POWER W", "AVG CADENCE /MIN",
            "ENERGY KCAL",
        ]
        let rows = workouts.map { workout -> [String] in
            let heartRate = workout.statistics(for: .heartRate)
            return [
                workout.id.uuidString, workout.activityType.rawValue, RFC3339.string(from: workout.startDate),
                duration(workout.duration), number(heartRate?.average), number(heartRate?.maximum),
                distances(workout), number(workout.statistics(for: .stepCount)?.sum),
                number(workout.power?.average), number(workout.cadence?.average),
                number(workout.statistics(for: .activeEnergyBurned)?.sum),
            ]
        }
        return render(header: header, rows: rows)
    }

    /// Each kind of distance of `workout`, the activity's own first: `12.40 km cycling, 0.31 km
    /// walking/running`; `-` without any.
    public static func distances(_ workout: Workout) -> String {
        let kinds = workout.distances
        guard !kinds.isEmpty else { return "-" }
        return kinds.map { "\(number($0.meters / 1000, digits: 2)) km \(WorkoutMeasures.name(of: $0.type))" }
            .joined(separator: ", ")
    }

    /// A multi-line description of one workout: totals, activities, events.
    public static func detail(_ workout: Workout) -> String {
        let heartRate = workout.statistics(for: .heartRate)
        var lines = [
            "Workout \(workout.id.uuidString)",
            "  activity   \(workout.activityType.rawValue)",
            "  start      \(RFC3339.string(from: workout.startDate))",
            "  end        \(RFC3339.string(from: workout.endDate))",
            "  duration   \(duration(workout.duration)) (pauses excluded)",
            "  heart rate avg \(number(heartRate?.average)) min \(number(heartRate?.minimum)) max \(number(heartRate?.maximum)) bpm",
            "  steps      \(number(workout.statistics(for: .stepCount)?.sum))",
            "  distance   \(distances(workout))",
            "  energy     \(number(workout.statistics(for: .activeEnergyBurned)?.sum)) kcal"
                + (workout.metadata["healthgate.energySource"].map { " (\($0))" } ?? " (unavailable)"),
        ]
        // A machine's figures, when it has them: average and maximum.
        for (label, statistics, unit, scale, digits) in [
            ("power", workout.power, "W", 1.0, 0), ("cadence", workout.cadence, "/min", 1, 0),
            ("speed", workout.speed, "km/h", 3.6, 1),
        ] {
            guard let statistics else { continue }
            lines.append(
                "  \(label.padded(toLength: 10)) avg \(number(statistics.average.map { $0 * scale }, digits: digits)) "
                    + "max \(number(statistics.maximum.map { $0 * scale }, digits: digits)) \(unit)")
        }
        let zoneEntries = workout.metadata.filter { $0.key.rawValue.hasPrefix("healthgate.zone") }
        if !zoneEntries.isEmpty {
            lines.append("  zones      " + zoneEntries.map { entry in
                let name = entry.key.rawValue.dropFirst("healthgate.zone".count).dropLast("Seconds".count)
                return "Z\(name) \(duration(workout.metadata.number(entry.key) ?? 0))"
            }.joined(separator: "  "))
        }
        if let count = workout.metadata.number("healthgate.gapCount"), count > 0 {
            let seconds = workout.metadata.number("healthgate.gapSeconds") ?? 0
            lines.append("  gaps       \(Int(count)) without heart rate, \(duration(seconds)) in total")
        }
        lines.append("  samples    \(workout.sampleIDs.count)")
        if workout.activities.count > 1 {
            lines.append("Activities:")
            for activity in workout.activities {
                lines.append("  \(activity.activityType.rawValue)  \(RFC3339.string(from: activity.startDate)) → "
                    + (activity.endDate.map(RFC3339.string(from:)) ?? "-"))
            }
        }
        if !workout.events.isEmpty {
            lines.append("Events:")
            for event in workout.events {
                lines.append("  \(event.type.rawValue.padded(toLength: 7)) \(RFC3339.string(from: event.startDate))"
                    + (event.endDate != event.startDate ? " → \(RFC3339.string(from: event.endDate))" : ""))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One workout as pretty JSON (the model's JSON representation).
    public static func json(_ workout: Workout) throws -> String {
        String(decoding: try HealthJSON.makeEncoder(pretty: true).encode(workout), as: UTF8.self)
    }

    /// One line per update, for pipes and logs: no cursor control.
    public static func liveLine(_ snapshot: WorkoutSnapshot) -> String {
        var parts = [
            snapshot.state.rawValue, duration(snapshot.elapsedSeconds),
            "hr \(snapshot.inGap ? "gap" : number(snapshot.heartRate.current))",
            "avg \(number(snapshot.heartRate.average))", "max \(number(snapshot.heartRate.maximum))",
            "zone \(snapshot.zone.map(String.init) ?? "-")",
            "steps \(number(snapshot.steps))",
            "dist \(number(snapshot.distanceMeters.map { $0 / 1000 }, digits: 2)) km",
            "energy \(number(snapshot.energyKilocalories)) kcal",
        ]
        if let power = snapshot.power { parts.append("power \(number(power.current)) W") }
        if let cadence = snapshot.cadence { parts.append("cad \(number(cadence.current))/min") }
        if let speed = snapshot.speed { parts.append("speed \(number(speed.current.map { $0 * 3.6 }, digits: 1)) km/h") }
        if !snapshot.gaps.isEmpty { parts.append("gaps \(snapshot.gaps.count)") }
        return parts.joined(separator: "  ")
    }

    /// The full-screen live view (without cursor control; the caller homes the cursor).
    public static func liveScreen(_ snapshot: WorkoutSnapshot) -> [String] {
        let zones = snapshot.zoneSeconds.enumerated().map { "Z\($0.offset + 1) \(duration($0.element))" }
        // A machine's figures: now, average and maximum.
        func gauge(_ label: String, _ gauge: WorkoutSnapshot.Gauge?, unit: String, scale: Double = 1, digits: Int = 0) -> [String] {
            guard let gauge else { return [] }
            let values = [gauge.current, gauge.average, gauge.maximum].map { number($0.map { $0 * scale }, digits: digits) }
            return ["  \(label.padded(toLength: 12))\(values[0]) \(unit)   avg \(values[1])   max \(values[2])"]
        }
        let machine = gauge("power", snapshot.power, unit: "W") + gauge("cadence", snapshot.cadence, unit: "/min")
            + gauge("speed", snapshot.speed, unit: "km/h", scale: 3.6, digits: 1)
        return [
            "healthgate workout — \(snapshot.activityType?.rawValue ?? "none")  [\(snapshot.state.rawValue)]"
                + (snapshot.restored ? "  (restored after restart)" : ""),
            "",
            "  elapsed     \(duration(snapshot.elapsedSeconds))",
            "  heart rate  \(snapshot.inGap ? "-- (no signal)" : number(snapshot.heartRate.current)) bpm"
                + "   zone \(snapshot.zone.map(String.init) ?? "-")",
            "  average     \(number(snapshot.heartRate.average)) bpm   max \(number(snapshot.heartRate.maximum)) bpm",
            "  steps       \(number(snapshot.steps))",
            "  distance    \(number(snapshot.distanceMeters.map { $0 / 1000 }, digits: 2)) km",
            "  energy      \(number(snapshot.energyKilocalories)) kcal"
                + (snapshot.energySource.map { " (\($0.rawValue))" } ?? ""),
            "  zones       \(zones.isEmpty ? "unknown (set profile.maximumHeartRate or dateOfBirth)" : zones.joined(separator: "  "))",
            "  gaps        \(snapshot.gaps.count) (\(duration(snapshot.gapSeconds)))\(snapshot.inGap ? "  NO HEART RATE NOW" : "")",
            "  laps        \(snapshot.laps)",
        ] + machine
    }

    static func render(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padded(toLength: widths[index] + 2)
            }.joined()
        }.joined(separator: "\n")
    }
}
