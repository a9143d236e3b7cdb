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

    /// `value` of `type` with the type's decimals (``QuantityType/fractionDigits``, as every
    /// view of a value prints it), or `-` when absent.
    public static func value(_ value: Double?, of type: QuantityType) -> String {
        value.map(type.text(for:)) ?? "-"
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
                duration(workout.duration), value(heartRate?.average, of: .heartRate), value(heartRate?.maximum, of: .heartRate),
                distances(workout), value(workout.statistics(for: .stepCount)?.sum, of: .stepCount),
                workout.power.map { value($0.average, of: $0.type) } ?? "-",
                workout.cadence.map { value($0.average, of: $0.type) } ?? "-",
                value(workout.statistics(for: .activeEnergyBurned)?.sum, of: .activeEnergyBurned),
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
            "  heart rate avg \(value(heartRate?.average, of: .heartRate)) min \(value(heartRate?.minimum, of: .heartRate)) "
                + "max \(value(heartRate?.maximum, of: .heartRate)) bpm",
            "  steps      \(value(workout.statistics(for: .stepCount)?.sum, of: .stepCount))",
            "  distance   \(distances(workout))",
            "  energy     \(value(workout.statistics(for: .activeEnergyBurned)?.sum, of: .activeEnergyBurned)) kcal"
                + (workout.metadata["healthgate.energySource"].map { " (\($0))" } ?? " (unavailable)"),
        ]
        // A machine's figures, when it has them: average and maximum; power and cadence with
        // their type's decimals, speed in km/h.
        for (label, statistics, unit) in [("power", workout.power, "W"), ("cadence", workout.cadence, "/min")] {
            guard let statistics else { continue }
            lines.append(
                "  \(label.padded(toLength: 10)) avg \(value(statistics.average, of: statistics.type)) "
                    + "max \(value(statistics.maximum, of: statistics.type)) \(unit)")
        }
        if let speed = workout.speed {
            lines.append(
                "  speed      avg \(number(speed.average.map { $0 * 3.6 }, digits: 1)) "
                    + "max \(number(speed.maximum.map { $0 * 3.6 }, digits: 1)) km/h")
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
        // The readings its statistics counted: a workout refers to its time and devices, not to
        // stored rows, which retention may prune.
        lines.append("  readings   \(workout.statistics.reduce(0) { $0 + $1.sampleCount }) (in its statistics)")
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
            "hr \(snapshot.inGap ? "gap" : value(snapshot.heartRate.current, of: .heartRate))",
            "avg \(value(snapshot.heartRate.average, of: .heartRate))", "max \(value(snapshot.heartRate.maximum, of: .heartRate))",
            "zone \(snapshot.zone.map(String.init) ?? "-")",
            "steps \(value(snapshot.steps, of: .stepCount))",
            "dist \(number(snapshot.distanceMeters.map { $0 / 1000 }, digits: 2)) km",
            "energy \(value(snapshot.energyKilocalories, of: .activeEnergyBurned)) kcal",
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
            "  heart rate  \(snapshot.inGap ? "-- (no signal)" : value(snapshot.heartRate.current, of: .heartRate)) bpm"
                + "   zone \(snapshot.zone.map(String.init) ?? "-")",
            "  average     \(value(snapshot.heartRate.average, of: .heartRate)) bpm   "
                + "max \(value(snapshot.heartRate.maximum, of: .heartRate)) bpm",
            "  steps       \(value(snapshot.steps, of: .stepCount))",
            "  distance    \(number(snapshot.distanceMeters.map { $0 / 1000 }, digits: 2)) km",
            "  energy      \(value(snapshot.energyKilocalories, of: .activeEnergyBurned)) kcal"
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
