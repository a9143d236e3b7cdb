import HealthModel
import SQLite

/// Finds a workout's records by what the workout says of itself, as HealthKit finds a workout's
/// samples by predicate: its time, its quantity types, and its devices. There are no links from a
/// workout to rows: a workout in progress reads what it collected back through
/// ``HealthStore/recordsForWorkout(of:endingFrom:devices:excluding:)``, a stored one through
/// ``HealthStore/workout(id:)``, and both go through here.
///
/// The devices are selected in SQL, exactly as ``HealthModel/IdentitySelection/matches(_:)``
/// selects a record's device: each row of `devices` (a few rows, one per distinct device) is made
/// into the ``HealthModel/Device`` the sample readers make of it and matched in Swift, and the
/// samples and series are then read by their `device_id` alone, so a workout in a class reads its
/// own strap's hour, not the whole class's. A record without a device is read only when every
/// device is taken.
///
/// A participant's workout reads by attribution besides (issue 65): the records attributed to
/// the participant (metadata `healthgate.person`) from any device, and those of its devices
/// attributed to nobody, never another person's (``LiveWorkoutBuilder``'s rule).
struct WorkoutRecordReader {
    let connection: SQLiteConnection
    let path: String
    /// The devices taken, as a condition on a `device_id` column; nil when none is.
    let selection: StoredDeviceSelection?
    /// The participant whose workout it is, or nil.
    let person: String?

    /// A reader of the records of `devices` (nil names: every device) but those `excluded` names;
    /// with `person`, by attribution as well.
    init(
        _ connection: SQLiteConnection, path: String, devices: IdentitySelection, excluded: [String], person: String? = nil
    ) throws(StoreError) {
        self.connection = connection
        self.path = path
        self.person = person
        selection = try Self.deviceSelection(
            connection, path: path, devices: devices, excluded: excluded.isEmpty ? nil : IdentitySelection(excluded))
    }

    /// Whether a read can find anything: a device taken, or a person's records.
    private var readsAnything: Bool { selection != nil || person != nil }

    /// ` AND (…)` on the table aliased `alias`, its person (if any) bound as `?parameter`.
    private func condition(_ alias: String, parameter: Int) -> String {
        let devices = selection?.expression(on: "\(alias).device_id")
        guard person != nil else { return devices.map { " AND (\($0))" } ?? "" }
        let key = MetadataKey.person.rawValue
        let attributed = "SELECT set_id FROM metadata_set_entries WHERE key = '\(key)'"
        return " AND (\(alias).metadata_set_id IN (\(attributed) AND value = ?\(parameter))"
            + " OR ((\(alias).metadata_set_id IS NULL OR \(alias).metadata_set_id NOT IN (\(attributed))) AND (\(devices ?? "0"))))"
    }

    /// The person's binding, when there is one.
    private var personBinding: [SQLiteValue] { person.map { [.text($0)] } ?? [] }

    /// The samples of `type` (plain, and each quantity of its series as a sample of its own)
    /// that end in `[from, to]` (µs; `to` nil: no end), by start date.
    func samples(of type: QuantityType, endingFrom from: Int64, through to: Int64?) throws(StoreError) -> [QuantitySample] {
        guard readsAnything, let spans = try StoreVocabulary.spans(of: type, connection, path: path) else { return [] }
        let last = to ?? .max
        var samples = try RowDecoder.samples(
            connection,
            where: "s.type_id = ?1 AND s.start_us >= ?2 AND s.start_us <= ?3 AND s.start_us + s.duration_us >= ?4"
                + " AND s.start_us + s.duration_us <= ?3" + condition("s", parameter: 5),
            orderBy: "s.start_us, s.uuid",
            [.integer(spans.id), .integer(from - spans.duration), .integer(last), .integer(from)] + personBinding, path: path)
        let seriesStart = from - spans.series - spans.duration
        try RowDecoder.forEachSeries(
            connection,
            where: "q.type_id = ?1 AND q.start_us >= ?2 AND q.start_us <= ?3 AND q.end_us >= ?4" + condition("q", parameter: 5),
            orderBy: "q.start_us, q.uuid", [.integer(spans.id), .integer(seriesStart), .integer(last), .integer(from)] + personBinding,
            path: path
        ) { _, series in
            for index in series.quantities.indices {
                let end = StoreTime.microseconds(series.quantities[index].endDate)
                if end >= from, end <= last { samples.append(series.quantitySample(at: index)) }
            }
        }
        samples.sort { ($0.startDate, $0.id) < ($1.startDate, $1.id) }
        return samples
    }

    /// The heartbeat series that overlap `[from, to]` (µs; `to` nil: no end), by start date.
    func heartbeatSeries(from: Int64, through to: Int64?) throws(StoreError) -> [HeartbeatSeriesSample] {
        guard readsAnything else { return [] }
        return try RowDecoder.heartbeatSeries(
            connection, where: "h.end_us >= ?1 AND h.start_us <= ?2" + condition("h", parameter: 3),
            [.integer(from), .integer(to ?? .max)] + personBinding, path: path
        ).map(\.series)
    }

    /// What a stored workout collected: its statistics' types' samples ending in a running
    /// interval, and the heartbeat series overlapping one when it has heart rate, of its devices
    /// (``MetadataKey/workoutDevices``, else every device but its ``MetadataKey/excludedDevices``).
    static func records(
        of workout: Workout, _ connection: SQLiteConnection, path: String
    ) throws(StoreError) -> (samples: [QuantitySample], heartbeatSeries: [HeartbeatSeriesSample]) {
        func list(_ key: MetadataKey) -> [String]? {
            guard case .string(let text) = workout.metadata[key] else { return nil }
            return text.split(separator: ",").map(String.init)
        }
        let participant: String? = if case .string(let name)? = workout.metadata[.participant] { name } else { nil }
        let reader = try WorkoutRecordReader(
            connection, path: path, devices: IdentitySelection(list(.workoutDevices)), excluded: list(.excludedDevices) ?? [],
            person: participant)
        let timeline = RunningTimeline(workout: workout)
        let from = StoreTime.microseconds(workout.startDate)
        let to = StoreTime.microseconds(workout.endDate)
        var samples: [QuantitySample] = []
        for type in Set(workout.statistics.map(\.type)) {
            samples += try reader.samples(of: type, endingFrom: from, through: to).filter { timeline.contains($0.endDate) }
        }
        samples.sort { ($0.startDate, $0.id) < ($1.startDate, $1.id) }
        let series = workout.statistics.contains { $0.type == .heartRate }
            ? try reader.heartbeatSeries(from: from, through: to).filter { timeline.overlaps(start: $0.startDate, end: $0.endDate) }
            : []
        return (samples, series)
    }

    /// Which stored devices a read takes: every row of `devices` matched in Swift; nil when it
    /// takes none, not even a record without a device.
    private static func deviceSelection(
        _ connection: SQLiteConnection, path: String, devices: IdentitySelection, excluded: IdentitySelection?
    ) throws(StoreError) -> StoredDeviceSelection? {
        // Every device, and none left out: no condition, no look at the devices.
        if devices.names == nil, excluded == nil { return StoredDeviceSelection(taken: [], left: [], withoutDevice: true, every: true) }
        var taken: [Int64] = []
        var left: [Int64] = []
        for (id, device) in try RowDecoder.storedDevices(connection, path: path) {
            if devices.matches(device), !(excluded?.matches(device) ?? false) { taken.append(id) } else { left.append(id) }
        }
        // As `IdentitySelection.matches(nil)`: only a selection of every device takes a record
        // without one, and a list of devices to leave out never names it.
        let withoutDevice = devices.names == nil
        if taken.isEmpty, !withoutDevice { return nil }
        return StoredDeviceSelection(taken: taken, left: left, withoutDevice: withoutDevice, every: false)
    }
}

/// The stored devices a workout's read takes, as a condition on a `device_id` column.
struct StoredDeviceSelection {
    /// The ids of the devices taken, and of those left.
    var taken: [Int64]
    var left: [Int64]
    /// Whether a record without a device is taken.
    var withoutDevice: Bool
    /// Every device and a record without one: no condition.
    var every: Bool

    /// The condition on `column`, or nil when every record is taken. The shorter of the two
    /// lists is written out (the ids are the store's own integers, never text from outside).
    func expression(on column: String) -> String? {
        if every { return nil }
        let devices = taken.count <= left.count || left.isEmpty
            ? (taken.isEmpty ? "0" : "\(column) IN (\(taken.map(String.init).joined(separator: ",")))")
            : "\(column) NOT IN (\(left.map(String.init).joined(separator: ",")))"
        return devices + (withoutDevice ? " OR \(column) IS NULL" : "")
    }
}
