import HealthModel
import SQLite

extension RecordWriter {
    /// Gives the objects `selection` names to `person` (``HealthModel/MetadataKey/person``; nil:
    /// to nobody), each as a new version of it, in ONE immediate transaction, so that every
    /// remote sink sends the corrected object (`healthgate participant attribute`):
    /// - a quantity sample or a correlation (with its members) becomes a new object with the
    ///   sync identifier of the old one (or `healthgate-attribution:<old uuid>` when it had
    ///   none), the next sync version and the uuid derived from both
    ///   (``HealthModel/SampleID/init(syncIdentifier:version:)``); the old one is deleted,
    ///   leaving its tombstone, as a new sync version replaces an old one;
    /// - a closed quantity series, and a finished heartbeat series, keeps its uuid and is stored
    ///   again at its next version (its sync identifier kept, or `healthgate-attribution:<uuid>`),
    ///   which replaces it in place, as a growing series' versions do.
    ///
    /// Refused, changing nothing: a workout (it is its participant's), a quantity series still
    /// being filled, a heartbeat series still being recorded (a provisional version: its strap
    /// would publish its next version with the person of before), and a selection of none
    /// (``StoreError/Code/invalidArgument``).
    /// - Returns: each object's uuid before and after, and its kind, by old uuid.
    func attribute(_ selection: DeletionSelection, to person: String?) throws(StoreError) -> [Reattribution] {
        if case .person = selection { throw StoreError(.invalidArgument, path: path, message: "select objects by uuid or by device and range") }
        if case .type = selection { throw StoreError(.invalidArgument, path: path, message: "select objects by uuid or by device and range") }
        if case .device(_, let from, let to) = selection, to <= from {
            throw StoreError(.invalidArgument, path: path, message: "the range is empty: it must end after it starts")
        }
        return try transaction { () throws -> [Reattribution] in
            try selectTargets(selection)
            try refuseUnattributable()
            var result: [Reattribution] = []
            var records: [HealthRecord] = []
            let members = Set(try connection.query(
                """
                SELECT m.sample_anchor FROM correlation_members m
                JOIN temp.deletion_targets t ON t.kind = 'correlation' AND t.uuid = m.correlation_uuid
                """).compactMap { $0.integer(0) })
            let sampleTargets = "s.anchor IN (SELECT anchor FROM temp.deletion_targets WHERE kind = 'quantity')"
            var samples: [(anchor: Int64, sample: QuantitySample)] = []
            try RowDecoder.forEachSample(connection, where: sampleTargets, orderBy: "s.anchor", [], path: path) { anchor, sample in
                if !members.contains(anchor) { samples.append((anchor, sample)) }
            }
            for (anchor, sample) in samples {
                let (id, metadata) = Self.nextVersion(of: sample.id, sample.metadata, person: person)
                records.append(.quantity(try QuantitySample(
                    id: id, type: sample.type, quantity: sample.quantity, start: sample.startDate, end: sample.endDate,
                    device: sample.device, metadata: metadata)))
                result.append(Reattribution(before: sample.id, after: id, kind: .quantity))
                try remove(.quantity(sample), at: anchor)
            }
            let correlationTargets = "c.anchor IN (SELECT anchor FROM temp.deletion_targets WHERE kind = 'correlation')"
            for (anchor, correlation) in try RowDecoder.correlations(connection, where: correlationTargets, [], path: path) {
                let (id, metadata) = Self.nextVersion(of: correlation.id, correlation.metadata, person: person)
                let objects = try correlation.objects.enumerated().map { index, member in
                    var memberMetadata = member.metadata
                    memberMetadata[.person] = person.map(MetadataValue.string)
                    return try QuantitySample(
                        id: SampleID(syncIdentifier: "\(id)/member", version: Int64(index)), type: member.type, quantity: member.quantity,
                        start: member.startDate, end: member.endDate, device: member.device, metadata: memberMetadata)
                }
                records.append(.correlation(try CorrelationSample(
                    id: id, type: correlation.type, start: correlation.startDate, end: correlation.endDate, objects: objects,
                    device: correlation.device, metadata: metadata)))
                result.append(Reattribution(before: correlation.id, after: id, kind: .correlation))
                try remove(.correlation(correlation), at: anchor)
            }
            let seriesTargets = "q.anchor IN (SELECT anchor FROM temp.deletion_targets WHERE kind = 'quantitySeries')"
            for (_, series) in try RowDecoder.series(connection, where: seriesTargets, orderBy: "q.anchor", [], path: path) {
                // The series' own sync identifier is derived from its uuid when it is read.
                let metadata = Self.attributed(
                    series.metadata, to: person, syncIdentifier: nil, version: (series.metadata.syncVersion ?? 1) + 1)
                records.append(.quantitySeries(try QuantitySeriesSample(
                    id: series.id, type: series.type, unit: series.unit, quantities: series.quantities, device: series.device,
                    metadata: metadata)))
                result.append(Reattribution(before: series.id, after: series.id, kind: .quantitySeries))
            }
            let heartbeatTargets = "h.anchor IN (SELECT anchor FROM temp.deletion_targets WHERE kind = 'heartbeatSeries')"
            for (_, series) in try RowDecoder.heartbeatSeries(connection, where: heartbeatTargets, [], path: path) {
                // The series keeps its uuid; its metadata is the next version's.
                let (_, metadata) = Self.nextVersion(of: series.id, series.metadata, person: person)
                records.append(.heartbeatSeries(try HeartbeatSeriesSample(
                    id: series.id, start: series.startDate, end: series.endDate, beats: series.beats, device: series.device,
                    metadata: metadata)))
                result.append(Reattribution(before: series.id, after: series.id, kind: .heartbeatSeries))
            }
            guard !result.isEmpty else {
                throw StoreError(.invalidArgument, path: path, message: "nothing matched; nothing was attributed")
            }
            _ = try writeRecords(records)
            return result.sorted { $0.before < $1.before }
        }
    }

    /// The uuid and metadata of the next version of the object `id` with `metadata`, given to
    /// `person`.
    static func nextVersion(of id: SampleID, _ metadata: Metadata, person: String?) -> (SampleID, Metadata) {
        let identifier = metadata.syncIdentifier ?? id.uuidString(after: "healthgate-attribution:")
        let version = (metadata.syncVersion ?? 0) + 1
        return (
            SampleID(syncIdentifier: identifier, version: version),
            attributed(metadata, to: person, syncIdentifier: identifier, version: version))
    }

    /// `metadata` given to `person`, with the sync identifier and version of its new version.
    static func attributed(_ metadata: Metadata, to person: String?, syncIdentifier: String?, version: Int64) -> Metadata {
        var next = metadata
        next.syncIdentifier = syncIdentifier
        next.syncVersion = version
        next[.person] = person.map(MetadataValue.string)
        return next
    }

    /// Throws `.invalidArgument` when a target is a workout, `.inUse` when it is an open
    /// quantity series or a heartbeat series still being recorded.
    private func refuseUnattributable() throws {
        let refusals: [(query: String, code: StoreError.Code, message: (String) -> String)] = [
            ("SELECT uuid FROM temp.deletion_targets WHERE kind = 'workout' LIMIT 1", .invalidArgument,
             { "\($0): a workout is its participant's (metadata healthgate.participant); nothing was attributed" }),
            ("""
             SELECT h.uuid FROM heartbeat_series h JOIN temp.deletion_targets t ON t.kind = 'heartbeatSeries' AND t.anchor = h.anchor
             WHERE h.metadata_set_id IN (SELECT set_id FROM metadata_set_entries WHERE key = '\(MetadataKey.provisional.rawValue)')
             LIMIT 1
             """, .inUse,
             { "the heartbeat series \($0) is still being recorded; attribute it once it is finished (within a minute of its last beat)" }),
            ("""
             SELECT q.uuid FROM quantity_series q JOIN temp.deletion_targets t ON t.kind = 'quantitySeries' AND t.anchor = q.anchor
             WHERE q.open = 1 LIMIT 1
             """, .inUse,
             { "the quantity series \($0) is still being filled; attribute it once it is closed (within a minute of its last reading)" }),
        ]
        for refusal in refusals {
            guard let row = try connection.query(refusal.query).first else { continue }
            let id = row.blob(0).flatMap { SampleID(bytes: $0) }.map(\.description) ?? "?"
            throw StoreError(refusal.code, path: path, message: refusal.message(id))
        }
    }
}
