import FoundationEssentials
import HealthModel
import SQLite

// The background step `attribution` (schema version 19): the readings stored before version 18
// get their person from the intervals the store knows held then, a bounded window of anchors
// per batch, so that ingest waits for one batch at most and a killed gateway resumes where the
// step stands.
extension RecordWriter {
    /// The object tables whose rows the step attributes, with each row's end (µs).
    private static let attributedTables = [
        ("samples", "start_us + duration_us"), ("quantity_series", "end_us"), ("correlations", "end_us"),
        ("heartbeat_series", "end_us"),
    ]

    /// Attributes the readings with anchors in the step's next window (after its `position`,
    /// at most its `through`): a reading without `healthgate.person` whose start and end lie in
    /// one interval of one person for its device (``legacyIntervals()``) gets that person, in
    /// place (a new metadata set, the same anchor). A quantity series still open, a reading
    /// without a device, or one in two people's intervals or in none stays as it is. `done`
    /// counts the rows looked at; the step finishes past `through`.
    func attributeStoredReadings(_ step: StoreMigrationStep, window: Int64) throws {
        guard let through = step.through, step.position < through else {
            try finishMigrationStep(step.name)
            return
        }
        let upper = min(through, step.position + window)
        let known: [WearInterval] = try legacyIntervals()
        let intervals = Dictionary(grouping: known) { (interval: WearInterval) in HealthModel.DeviceIdentity(interval.device) }
        var looked: Int64 = 0
        if !intervals.isEmpty {
            let devices = Dictionary(uniqueKeysWithValues: try RowDecoder.storedDevices(connection, path: path).map { ($0.id, $0.device) })
            var metadata = MetadataReader(path: path)
            for (table, end) in Self.attributedTables {
                let open = table == "quantity_series" ? " AND open = 0" : ""
                let rows = try connection.query(
                    "SELECT anchor, device_id, start_us, \(end), metadata_set_id FROM \(table) WHERE anchor > ?1 AND anchor <= ?2\(open)",
                    [.integer(step.position), .integer(upper)])
                looked += Int64(rows.count)
                for row in rows {
                    guard let anchor = row.integer(0), let device = row.integer(1).flatMap({ devices[$0] }),
                        let start = row.integer(2), let end = row.integer(3)
                    else { continue }
                    var entries = try metadata.metadata(row.values[4], connection)
                    guard entries[.person] == nil,
                        let person = Self.onlyWearer(of: device, from: StoreTime.date(microseconds: start),
                                                     to: StoreTime.date(microseconds: end), in: intervals)
                    else { continue }
                    entries[.person] = .string(person)
                    try connection.run(
                        "UPDATE \(table) SET metadata_set_id = ?2 WHERE anchor = ?1",
                        [.integer(anchor), try metadataSetID(for: entries).map(SQLiteValue.integer) ?? .null])
                }
            }
        } else {
            // Nothing is known of who wore what: every row stays as it is.
            looked = step.position < through ? Int64(step.total - step.done) : 0
        }
        try connection.run(
            "UPDATE store_migrations SET done = min(total, done + ?2), position = ?3 WHERE step = ?1",
            [.text(step.name), .integer(looked), .integer(intervals.isEmpty ? through : upper)])
        if intervals.isEmpty || upper >= through { try finishMigrationStep(step.name) }
    }

    /// The one person whose interval for one of `device`'s identities holds both `start` and
    /// `end`; nil when nobody's does, or several people's do.
    static func onlyWearer(of device: Device, from start: Date, to end: Date, in intervals: [HealthModel.DeviceIdentity: [WearInterval]]) -> String? {
        var people = Set<String>()
        for identity in device.identities {
            for interval in intervals[identity] ?? [] where interval.contains(start) && interval.contains(end) {
                people.insert(interval.person)
            }
        }
        return people.count == 1 ? people.first : nil
    }

    /// What the store knows held before version 18: every wear interval, and each participant's
    /// workout as an interval of each of its devices (``HealthModel/MetadataKey/workoutDevices``)
    /// from its start through its end.
    func legacyIntervals() throws -> [WearInterval] {
        var intervals = try connection.query("SELECT device, participant, start_us, end_us FROM wear_intervals").compactMap { row in
            guard let device = row.text(0), let person = row.text(1), let start = row.integer(2) else { return nil as WearInterval? }
            return WearInterval(
                device: device, person: person, start: StoreTime.date(microseconds: start), end: row.integer(3).map(StoreTime.date(microseconds:)))
        }
        var metadata = MetadataReader(path: path)
        for row in try connection.query("SELECT start_us, end_us, metadata_set_id FROM workouts WHERE metadata_set_id IS NOT NULL") {
            guard let start = row.integer(0), let end = row.integer(1) else { continue }
            let entries = try metadata.metadata(row.values[2], connection)
            guard case .string(let person)? = entries[.participant], case .string(let devices)? = entries[.workoutDevices] else { continue }
            for device in devices.split(separator: ",") {
                // The interval's end is exclusive; the workout's last reading ends at its end.
                intervals.append(WearInterval(
                    device: String(device), person: person, start: StoreTime.date(microseconds: start),
                    end: StoreTime.date(microseconds: end + 1)))
            }
        }
        return intervals
    }
}
