import HealthModel
import SQLite

// Quantity samples, the hot path: one prepared insert for a whole batch, rebinding only what
// changed from the sample before.
extension RecordWriter {
    /// The insert statement with a memo of what is bound to it. `sqlite3_reset` keeps bindings,
    /// so consecutive samples of one type, unit and device, without an original value, metadata
    /// or sync keys, rebind only what changed.
    struct QuantityInsert {
        let statement: SQLiteStatement
        var typeID: Int64?
        var unitID: Int64?
        var deviceID: Int64??
        /// The parameters 6 and 10 (original value and metadata set) are bound to NULL.
        var optionalsNull = false
        var duration: Int64?
    }

    /// Writes one sample; returns what happened and the anchor of the row that holds the sample
    /// now (nil when a stored sample with the same sync identifier and a version at least as
    /// new wins).
    func write(_ sample: QuantitySample, using insert: inout QuantityInsert) throws -> (outcome: Outcome, anchor: Int64?) {
        var replacing = false
        var syncIdentifier: String?
        var syncVersion: Int64?
        if !sample.metadata.isEmpty {
            syncIdentifier = sample.metadata.syncIdentifier
            syncVersion = sample.metadata.syncVersion
        }
        let (typeID, canonicalUnitID) = try typeIDs(for: sample.type)
        let start = StoreTime.microseconds(sample.startDate)
        if let syncIdentifier {
            switch try resolveSample(sample, syncIdentifier: syncIdentifier, version: syncVersion ?? 0, typeID: typeID) {
            case .ignore(let anchor): return (.ignored, anchor)
            case .refuse(let anchor): return (.refused, anchor)
            case .replace: replacing = true
            case .insert: break
            }
        }
        let canonical = sample.quantity.unit == sample.type.canonicalUnit
        let unitID = canonical ? canonicalUnitID : try unitID(for: sample.quantity.unit.unitString)
        let deviceID = try deviceID(of: sample)
        // A sample with both sync keys keeps them in its `sample_sync` row only (version 17); one
        // with only one of them keeps it in its set.
        let metadataSetID = try sampleMetadataSetID(sample.metadata, synced: syncIdentifier != nil && syncVersion != nil)
        let duration = StoreTime.microseconds(sample.endDate) &- start
        let anchor = nextAnchor()
        let statement = insert.statement
        statement.bind(anchor, at: 1)
        if insert.typeID != typeID {
            statement.bind(typeID, at: 3)
            insert.typeID = typeID
        }
        // Already canonical (the usual case): no conversion, and no second copy of the value.
        let value = canonical ? sample.quantity.value : sample.canonicalValue
        statement.bind(value, at: 4)
        if insert.unitID != unitID {
            statement.bind(unitID, at: 5)
            insert.unitID = unitID
        }
        let original = canonical || sample.quantity.value == value ? nil : sample.quantity.value
        statement.bind(start, at: 7)
        if insert.duration != duration {
            statement.bind(duration, at: 8)
            insert.duration = duration
        }
        if insert.deviceID != .some(deviceID) {
            if let deviceID { statement.bind(deviceID, at: 9) } else { statement.bindNull(at: 9) }
            insert.deviceID = .some(deviceID)
        }
        if original == nil, metadataSetID == nil {
            if !insert.optionalsNull {
                statement.bindNull(at: 6)
                statement.bindNull(at: 10)
                insert.optionalsNull = true
            }
        } else {
            if let original { statement.bind(original, at: 6) } else { statement.bindNull(at: 6) }
            if let metadataSetID { statement.bind(metadataSetID, at: 10) } else { statement.bindNull(at: 10) }
            insert.optionalsNull = false
        }
        // The uuid's bytes are bound without a copy: they live until the statement is reset.
        var key = (sample.id.high.bigEndian, sample.id.low.bigEndian)
        try withUnsafeBytes(of: &key) { (bytes) throws(SQLiteError) in
            statement.bind(staticBytes: bytes, at: 2)
            try statement.runAndReset()
        }
        guard connection.changes > 0 else {
            // Stored already: the anchor drawn is given back (it was the last one drawn), so a
            // batch delivered twice does not move the log's latest anchor.
            returnAnchor(anchor)
            return (.ignored, try storedAnchor(typeID: typeID, start: start, id: sample.id))
        }
        if let syncIdentifier {
            try connection.run(
                "INSERT INTO sample_sync (sync_identifier, anchor, sync_version) VALUES (?1, ?2, ?3)",
                [.text(syncIdentifier), .integer(anchor), .integer(syncVersion ?? 0)])
        }
        if hasTombstones { try removeTombstone(of: sample.id) }
        if duration > 0, duration > spans[typeID] ?? 0 {
            try connection.run(
                "UPDATE quantity_types SET max_duration_us = ?2 WHERE id = ?1 AND max_duration_us < ?2",
                [.integer(typeID), .integer(duration)])
            spans[typeID] = duration
        }
        return (replacing ? .replaced : .inserted, anchor)
    }

    /// The id of the set of a sample's `metadata`, its sync keys left out when it is `synced` (its
    /// `sample_sync` row holds them); nil when nothing is left.
    private func sampleMetadataSetID(_ metadata: Metadata, synced: Bool) throws(SQLiteError) -> Int64? {
        if synced { return try metadataSetID(for: metadata) }
        return metadata.isEmpty ? nil : try metadataSets.id(of: metadata, in: connection)
    }

    /// The anchor of the stored sample with this type, start and uuid.
    private func storedAnchor(typeID: Int64, start: Int64, id: SampleID) throws(SQLiteError) -> Int64? {
        try connection.query(
            "SELECT anchor FROM samples WHERE type_id = ?1 AND start_us = ?2 AND uuid = ?3",
            [.integer(typeID), .integer(start), .blob(id.bytes)]
        ).first?.integer(0)
    }
}
