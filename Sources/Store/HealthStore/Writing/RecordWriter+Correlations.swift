import HealthModel
import SQLite

// Correlations (a blood-pressure reading): the correlation's row, its members written as
// quantity samples, and the links between them.
extension RecordWriter {
    /// The correlation's row, its members as ordinary samples (a member stored already is kept
    /// as it is) and the links between them.
    func write(_ correlation: CorrelationSample, using insert: inout QuantityInsert) throws -> Outcome {
        let decision = try resolve(
            table: "correlations", kind: .correlation, id: correlation.id, metadata: correlation.metadata)
        if decision == .ignore { return .ignored }
        let id = SQLiteValue.blob(correlation.id.bytes)
        try connection.run(
            """
            INSERT INTO correlations (anchor, uuid, type, start_us, end_us, device_id, sync_identifier, sync_version,
                metadata_set_id)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
            """,
            [.integer(nextAnchor()), id, .text(correlation.type.identifier),
             .integer(StoreTime.microseconds(correlation.startDate)), .integer(StoreTime.microseconds(correlation.endDate)),
             try deviceID(for: correlation.device).map(SQLiteValue.integer) ?? .null]
                + (try syncColumns(of: correlation.metadata)))
        if hasTombstones { try removeTombstone(of: correlation.id) }
        for (index, member) in correlation.objects.enumerated() {
            guard let anchor = try write(member, using: &insert).anchor else {
                throw SQLiteError(
                    .constraint, message: "member \(member.id) is held back by another sample with its sync identifier",
                    context: "correlation \(correlation.id)")
            }
            try connection.run(
                "INSERT INTO correlation_members (correlation_uuid, member_index, sample_anchor) VALUES (?1, ?2, ?3)",
                [id, .integer(Int64(index)), .integer(anchor)])
        }
        return decision == .replace ? .replaced : .inserted
    }
}
