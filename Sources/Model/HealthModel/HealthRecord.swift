/// Anything that travels on the sample bus and lands in a sink.
public indirect enum HealthRecord: Hashable, Sendable {
    case quantity(QuantitySample)
    /// Readings of one type from one device kept as one sample (the store makes them of the
    /// readings of a type with a ``QuantityType/seriesPolicy``).
    case quantitySeries(QuantitySeriesSample)
    case heartbeatSeries(HeartbeatSeriesSample)
    case workout(Workout)
    /// Samples measured together (a blood-pressure reading), kept and sent as one record.
    case correlation(CorrelationSample)

    /// The record's identifier.
    public var id: SampleID {
        switch self {
        case .quantity(let sample): sample.id
        case .quantitySeries(let series): series.id
        case .heartbeatSeries(let series): series.id
        case .workout(let workout): workout.id
        case .correlation(let correlation): correlation.id
        }
    }

    /// The device that produced the record, if any.
    public var device: Device? {
        switch self {
        case .quantity(let sample): sample.device
        case .quantitySeries(let series): series.device
        case .heartbeatSeries(let series): series.device
        case .workout: nil
        case .correlation(let correlation): correlation.device
        }
    }

    /// The record's type: the quantity or correlation type's identifier (`heartRate`,
    /// `bloodPressure`; a quantity series' type too), `heartbeatSeries` or `workout`, as change
    /// logs and topics name it.
    public var typeIdentifier: String {
        switch self {
        case .quantity(let sample): sample.type.identifier
        case .quantitySeries(let series): series.type.identifier
        case .correlation(let correlation): correlation.type.identifier
        case .heartbeatSeries: "heartbeatSeries"
        case .workout: "workout"
        }
    }

    /// The person the record belongs to: a reading's attribution (``MetadataKey/person``), a
    /// participant's workout's participant (``MetadataKey/participant``); nil: nobody's.
    public var person: String? {
        let metadata: Metadata
        let key: MetadataKey
        switch self {
        case .quantity(let sample): (metadata, key) = (sample.metadata, .person)
        case .quantitySeries(let series): (metadata, key) = (series.metadata, .person)
        case .heartbeatSeries(let series): (metadata, key) = (series.metadata, .person)
        case .correlation(let correlation): (metadata, key) = (correlation.metadata, .person)
        case .workout(let workout): (metadata, key) = (workout.metadata, .participant)
        }
        if case .string(let name)? = metadata[key] { return name }
        return nil
    }

    /// The record kind as used in JSON (`"kind"`) and status output.
    public var kind: HealthRecordKind {
        switch self {
        case .quantity: .quantity
        case .quantitySeries: .quantitySeries
        case .heartbeatSeries: .heartbeatSeries
        case .workout: .workout
        case .correlation: .correlation
        }
    }
}

extension HealthRecord {
    /// The record with `stamp`'s entries added to its metadata where it has no value of its own
    /// (a correlation's members too): how a gateway marks what it receives with its provenance
    /// and time zone.
    public func stamped(_ stamp: Metadata) -> HealthRecord {
        var record = self
        record.stamp(stamp)
        return record
    }

    /// ``stamped(_:)`` in place: the record moves out of `self` and back, so that a record held
    /// only here is changed without copying its fields.
    public mutating func stamp(_ stamp: Metadata) {
        switch consume self {
        case .quantity(var sample):
            sample.metadata = sample.metadata.filling(from: stamp)
            self = .quantity(sample)
        case .quantitySeries(var series):
            series.metadata = series.metadata.filling(from: stamp)
            self = .quantitySeries(series)
        case .heartbeatSeries(var series):
            series.metadata = series.metadata.filling(from: stamp)
            self = .heartbeatSeries(series)
        case .workout(var workout):
            workout.metadata = workout.metadata.filling(from: stamp)
            self = .workout(workout)
        case .correlation(let correlation):
            let members = correlation.objects.map { member in
                var member = member
                member.metadata = member.metadata.filling(from: stamp)
                return member
            }
            // The members keep their types and intervals, which is all the validation checks.
            guard var stamped = try? CorrelationSample(
                id: correlation.id, type: correlation.type, start: correlation.startDate, end: correlation.endDate,
                objects: members, device: correlation.device, metadata: correlation.metadata)
            else {
                self = .correlation(correlation)
                return
            }
            stamped.metadata = stamped.metadata.filling(from: stamp)
            self = .correlation(stamped)
        }
    }
}

/// The kinds of ``HealthRecord``.
public enum HealthRecordKind: String, Hashable, Sendable, Codable, CaseIterable {
    case quantity, quantitySeries, heartbeatSeries, workout, correlation
}

extension HealthRecord: Codable {
    enum CodingKeys: String, CodingKey { case kind, sample }

    /// `{"kind": "quantity" | "quantitySeries" | "heartbeatSeries" | "workout" | "correlation", "sample": {…}}`
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        switch try container.decode(HealthRecordKind.self, forKey: .kind) {
        case .quantity: self = .quantity(try container.decode(QuantitySample.self, forKey: .sample))
        case .quantitySeries: self = .quantitySeries(try container.decode(QuantitySeriesSample.self, forKey: .sample))
        case .heartbeatSeries:
            self = .heartbeatSeries(try container.decode(HeartbeatSeriesSample.self, forKey: .sample))
        case .workout: self = .workout(try container.decode(Workout.self, forKey: .sample))
        case .correlation: self = .correlation(try container.decode(CorrelationSample.self, forKey: .sample))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        switch self {
        case .quantity(let sample): try container.encode(sample, forKey: .sample)
        case .quantitySeries(let series): try container.encode(series, forKey: .sample)
        case .heartbeatSeries(let series): try container.encode(series, forKey: .sample)
        case .workout(let workout): try container.encode(workout, forKey: .sample)
        case .correlation(let correlation): try container.encode(correlation, forKey: .sample)
        }
    }
}
