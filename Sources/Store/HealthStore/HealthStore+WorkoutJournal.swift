public import FoundationEssentials
public import HealthModel
import SQLite

// The workout in progress (schema version 4) and the participants' devices (version 5): the
// journal the workout controller rebuilds its workouts from after a restart, committed through
// the store's writer like everything else. The controller calls these from its own serial
// queue, one at a time, and each blocks until its transaction is durable: never call them from
// the cooperative pool.
//
// The writer completes the contract: the transaction that stores a finished workout deletes its
// `live_workouts` row (RecordWriter's workout path), so handing a workout over needs nothing here.
extension HealthStore {
    /// The workouts in `live_workouts` with their entries, oldest first (uuids are UUIDv7).
    public func workoutJournal() throws(StoreError) -> [JournaledWorkout] {
        try readBlocking { connection throws(StoreError) in
            var result: [JournaledWorkout] = []
            for row in try self.run(connection, "SELECT uuid, activity_type, first_activity_uuid, devices, types, participant FROM live_workouts ORDER BY uuid", []) {
                let id = try self.sampleID(row.blob(0))
                guard let activity = row.text(1).flatMap(WorkoutActivityType.init(rawValue:)) else {
                    throw self.invalid("live workout \(id) has an unknown activity type \(row.text(1) ?? "NULL")")
                }
                let devices = try row.text(3).map { text throws(StoreError) in try self.decode([String].self, text, id) }
                let typeNames = try self.decode([String].self, row.text(4) ?? "", id)
                let types = try typeNames.map { name throws(StoreError) -> QuantityType in
                    guard let type = QuantityType.named(name) else { throw self.invalid("live workout \(id) has an unknown type \(name)") }
                    return type
                }
                let definition = WorkoutDefinition(
                    id: id, activityType: activity, firstActivityID: try self.sampleID(row.blob(2)), devices: devices,
                    types: types, participant: row.text(5))
                var entries: [WorkoutJournalEntry] = []
                for event in try self.run(
                    connection,
                    """
                    SELECT entry_index, action, at_us, activity_uuid, activity_type, segment_start_us, metadata
                    FROM live_workout_events WHERE workout_uuid = ?1 ORDER BY entry_index
                    """, [row.values[0]])
                {
                    guard event.integer(0) == Int64(entries.count) else {
                        throw self.invalid("live workout \(id) misses entry \(entries.count)")
                    }
                    guard let action = event.text(1).flatMap(WorkoutAction.init(rawValue:)), let at = event.integer(2) else {
                        throw self.invalid("live workout \(id), entry \(entries.count): unknown action \(event.text(1) ?? "NULL")")
                    }
                    var newActivity: WorkoutJournalEntry.NewActivity?
                    if let bytes = event.blob(3) {
                        guard let type = event.text(4).flatMap(WorkoutActivityType.init(rawValue:)) else {
                            throw self.invalid("live workout \(id), entry \(entries.count): unknown activity type")
                        }
                        newActivity = .init(id: try self.sampleID(bytes), type: type)
                    }
                    // The clock base is kept with the event's metadata (where the clock
                    // correction finds it) and is not part of it.
                    var metadata = try event.text(6).map { text throws(StoreError) in try self.decode(Metadata.self, text, id) } ?? Metadata()
                    let clockBase = metadata.clockBase
                    metadata.clockBase = nil
                    entries.append(WorkoutJournalEntry(
                        action: action, date: StoreTime.date(microseconds: at), newActivity: newActivity,
                        segmentStart: event.integer(5).map(StoreTime.date(microseconds:)),
                        metadata: metadata, clockBase: clockBase))
                }
                result.append(JournaledWorkout(definition: definition, entries: entries))
            }
            return result
        }
    }

    /// Commits `entries` as the entries numbered from `index` (index 0 inserts the workout's row
    /// first) in one immediate transaction.
    /// - Throws: ``StoreError`` when the commit fails or `index`
    ///   does not follow the stored entries; then nothing is written.
    public func appendToWorkoutJournal(
        _ entries: [WorkoutJournalEntry], from index: Int, of definition: WorkoutDefinition
    ) throws(StoreError) {
        let key = SQLiteValue.blob(definition.id.bytes)
        var devices = SQLiteValue.null
        let types: String
        var metadata: [SQLiteValue] = []
        do {
            for entry in entries {
                var stored = entry.metadata
                if let base = entry.clockBase { stored.clockBase = base }
                metadata.append(stored.isEmpty
                    ? .null : .text(String(decoding: try HealthJSON.makeEncoder().encode(stored), as: UTF8.self)))
            }
            if let list = definition.devices {
                devices = .text(String(decoding: try JSONEncoder().encode(list), as: UTF8.self))
            }
            types = String(decoding: try JSONEncoder().encode(definition.types.map(\.identifier)), as: UTF8.self)
        } catch {
            throw StoreError(.invalidArgument, path: path, message: "cannot encode the entries of workout \(definition.id): \(error)")
        }
        let (devicesValue, metadataValues) = (devices, metadata)
        try writeBlocking { connection throws(StoreError) in
            if index == 0 {
                try self.run(
                    connection,
                    """
                    INSERT INTO live_workouts (uuid, activity_type, first_activity_uuid, devices, types, participant)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    """,
                    [key, .text(definition.activityType.rawValue), .blob(definition.firstActivityID.bytes), devicesValue, .text(types),
                     definition.participant.map(SQLiteValue.text) ?? .null])
            }
            let stored = try self.run(connection, "SELECT count(*) FROM live_workout_events WHERE workout_uuid = ?1", [key])
                .first?.integer(0) ?? 0
            guard stored == Int64(index) else {
                throw self.invalid("workout \(definition.id) has \(stored) entries in the store; entry \(index) cannot follow")
            }
            for (offset, entry) in entries.enumerated() {
                try self.run(
                    connection,
                    """
                    INSERT INTO live_workout_events (workout_uuid, entry_index, action, at_us, activity_uuid, activity_type,
                        segment_start_us, metadata)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                    """,
                    [key, .integer(Int64(index + offset)), .text(entry.action.rawValue),
                     .integer(StoreTime.microseconds(entry.date)),
                     entry.newActivity.map { .blob($0.id.bytes) } ?? .null,
                     entry.newActivity.map { .text($0.type.rawValue) } ?? .null,
                     entry.segmentStart.map { .integer(StoreTime.microseconds($0)) } ?? .null, metadataValues[offset]])
            }
        }
    }

    /// Committed quantity samples of `types` ending at or after `start` (plain samples, and each
    /// quantity of a series as a sample of its own, by end date), and committed heartbeat series
    /// ending at or after `start`, of the devices `devices` takes and `others` does not name, read
    /// in one transaction (``WorkoutRecordReader``: the devices are matched in Swift once, the
    /// records then read by `device_id` alone, so a workout's end in a class reads its own
    /// strap's hour, not the whole class's).
    /// - Parameters:
    ///   - devices: the devices to read from; `IdentitySelection(nil)` (the default): every device.
    ///   - others: devices to leave out (someone else's), as a workout's `devices` names them; a
    ///     record without a device is not left out by them.
    ///   - person: a participant's workout: the records attributed to `person` from any device,
    ///     and those of `devices` attributed to nobody; never another person's.
    public func recordsForWorkout(
        of types: [QuantityType], endingFrom start: Date, devices: IdentitySelection = IdentitySelection(nil),
        excluding others: [String] = [], person: String? = nil
    ) throws(StoreError) -> [HealthRecord] {
        let from = StoreTime.microseconds(start)
        return try readBlocking { connection throws(StoreError) in
            let reader = try WorkoutRecordReader(connection, path: self.path, devices: devices, excluded: others, person: person)
            var records: [HealthRecord] = []
            for type in types {
                records += try reader.samples(of: type, endingFrom: from, through: nil)
                    .sorted { ($0.endDate, $0.id) < ($1.endDate, $1.id) }.map(HealthRecord.quantity)
            }
            if types.contains(.heartRate) {
                records += try reader.heartbeatSeries(from: from, through: nil).map(HealthRecord.heartbeatSeries)
            }
            return records
        }
    }

    /// The rows of `participant_devices` (schema version 5; `until_class_end` since 14), oldest first.
    public func storedParticipantAssignments() throws(StoreError) -> [ParticipantAssignment] {
        try readBlocking { connection throws(StoreError) in
            try self.run(
                connection, "SELECT device, participant, until_class_end FROM participant_devices ORDER BY assigned_us, device", []
            )
            .compactMap { row in
                guard let device = row.text(0), let participant = row.text(1) else { return nil }
                return ParticipantAssignment(device: device, participant: participant, untilClassEnd: row.integer(2) == 1)
            }
        }
    }

    /// Every row of `wear_intervals` (schema version 18), oldest first.
    public func storedWearIntervals() throws(StoreError) -> [WearInterval] {
        try readBlocking { connection throws(StoreError) in
            try self.run(connection, "SELECT device, participant, start_us, end_us FROM wear_intervals ORDER BY start_us, rowid", [])
                .compactMap { row in
                    guard let device = row.text(0), let participant = row.text(1), let start = row.integer(2) else { return nil }
                    return WearInterval(
                        device: device, person: participant, start: StoreTime.date(microseconds: start),
                        end: row.integer(3).map { StoreTime.date(microseconds: $0) })
                }
        }
    }

    /// Replaces the device's row in `participant_devices` and begins its interval in
    /// `wear_intervals` (ending the one that held), in one immediate transaction.
    public func storeParticipantAssignment(_ assignment: ParticipantAssignment, at date: Date) throws(StoreError) {
        try writeBlocking { connection throws(StoreError) in
            try self.endWearIntervals(of: [assignment.device], at: date, connection)
            try self.run(
                connection, "INSERT INTO wear_intervals (device, participant, start_us) VALUES (?1, ?2, ?3)",
                [.text(assignment.device), .text(assignment.participant), .integer(StoreTime.microseconds(date))])
            try self.run(
                connection,
                "INSERT OR REPLACE INTO participant_devices (device, participant, assigned_us, until_class_end) VALUES (?1, ?2, ?3, ?4)",
                [.text(assignment.device), .text(assignment.participant),
                 .integer(StoreTime.microseconds(date)), .integer(assignment.untilClassEnd ? 1 : 0)])
        }
    }

    /// Deletes the rows of `devices` (as stored, exactly) from `participant_devices` and ends
    /// their intervals at `date`, in one immediate transaction: the devices are worn by nobody
    /// the store knows of.
    public func removeParticipantAssignments(devices: [String], at date: Date) throws(StoreError) {
        guard !devices.isEmpty else { return }
        try writeBlocking { connection throws(StoreError) in
            for device in devices {
                try self.run(connection, "DELETE FROM participant_devices WHERE device = ?1", [.text(device)])
            }
            try self.endWearIntervals(of: devices, at: date, connection)
        }
    }

    /// Ends the intervals of `devices` that still hold, at `date`.
    private func endWearIntervals(of devices: [String], at date: Date, _ connection: SQLiteConnection) throws(StoreError) {
        for device in devices {
            try run(
                connection, "UPDATE wear_intervals SET end_us = max(start_us, ?2) WHERE device = ?1 AND end_us IS NULL",
                [.text(device), .integer(StoreTime.microseconds(date))])
        }
    }

    // MARK: Plumbing

    private func writeBlocking(_ body: @Sendable (SQLiteConnection) throws(StoreError) -> Void) throws(StoreError) {
        let writer = try requireWriter()
        try writer.performBlocking { recordWriter throws(StoreError) in
            try recordWriter.transaction { try body(recordWriter.connection) }
            // An assignment may have changed the wear intervals readings are attributed by.
            recordWriter.publishAttributionRulesAfterCommit()
        }
    }

    @discardableResult
    private func run(_ connection: SQLiteConnection, _ sql: String, _ bindings: [SQLiteValue]) throws(StoreError) -> [SQLiteRow] {
        try Self.run(connection, sql, bindings, path: path)
    }

    private func sampleID(_ bytes: [UInt8]?) throws(StoreError) -> SampleID {
        guard let bytes, let id = SampleID(bytes: bytes) else { throw invalid("a live workout uuid is not 16 bytes") }
        return id
    }

    private func decode<T: Decodable>(_ type: T.Type, _ text: String, _ id: SampleID) throws(StoreError) -> T {
        do {
            return try HealthJSON.makeDecoder().decode(T.self, from: Data(text.utf8))
        } catch {
            throw invalid("live workout \(id) has an unreadable column: \(error)")
        }
    }

    private func invalid(_ message: String) -> StoreError {
        StoreError(.invalidData, path: path, message: message)
    }
}
