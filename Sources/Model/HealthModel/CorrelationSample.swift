public import FoundationEssentials

/// Samples measured together, like HealthKit's HKCorrelation: a blood-pressure reading is one
/// systolic and one diastolic sample, kept and sent as one record.
///
/// The members are ordinary quantity samples with their own uuids; the correlation holds exactly
/// one sample of each of its type's ``CorrelationType/memberTypes``, in that order, each within
/// the correlation's interval.
public struct CorrelationSample: Hashable, Sendable {
    public let id: SampleID
    public let type: CorrelationType
    public let startDate: Date
    public let endDate: Date
    /// One sample per member type, in the order of ``CorrelationType/memberTypes``.
    public let objects: [QuantitySample]
    public var device: Device?
    public var metadata: Metadata

    /// Creates a validated correlation; the members may come in any order.
    /// - Throws: ``SampleError/correlationMembers(type:expected:)`` unless there is exactly one
    ///   sample of each member type and nothing else; ``SampleError/memberOutsideCorrelation``
    ///   when a member's interval is not within the correlation's; ``SampleError/endBeforeStart``.
    public init(
        id: SampleID, type: CorrelationType, start: Date, end: Date, objects: [QuantitySample],
        device: Device? = nil, metadata: Metadata = Metadata()
    ) throws(SampleError) {
        guard end >= start else { throw .endBeforeStart }
        var ordered: [QuantitySample] = []
        for memberType in type.memberTypes {
            let matching = objects.filter { $0.type == memberType }
            guard matching.count == 1 else { throw .correlationMembers(type: type.identifier, expected: type.memberList) }
            ordered.append(matching[0])
        }
        guard objects.count == ordered.count, Set(objects.map(\.id)).count == objects.count else {
            throw .correlationMembers(type: type.identifier, expected: type.memberList)
        }
        for member in ordered where member.startDate < start || member.endDate > end {
            throw .memberOutsideCorrelation(type: type.identifier)
        }
        self.id = id
        self.type = type
        self.startDate = start
        self.endDate = end
        self.objects = ordered
        self.device = device
        self.metadata = metadata
    }

    /// A blood-pressure correlation over the members' interval.
    public static func bloodPressure(
        id: SampleID, systolic: QuantitySample, diastolic: QuantitySample, device: Device? = nil,
        metadata: Metadata = Metadata()
    ) throws(SampleError) -> CorrelationSample {
        try CorrelationSample(
            id: id, type: .bloodPressure, start: min(systolic.startDate, diastolic.startDate),
            end: max(systolic.endDate, diastolic.endDate), objects: [systolic, diastolic], device: device,
            metadata: metadata)
    }

    /// The member of `type`, or nil when the correlation's type has no such member.
    public func object(of type: QuantityType) -> QuantitySample? {
        objects.first { $0.type == type }
    }

    /// HealthKit's sync identifier, kept in ``metadata``.
    public var syncIdentifier: String? { metadata.syncIdentifier }
    /// HealthKit's sync version, kept in ``metadata``.
    public var syncVersion: Int64? { metadata.syncVersion }
}

extension CorrelationType {
    /// "one bloodPressureSystolic and one bloodPressureDiastolic sample", for errors.
    var memberList: String {
        memberTypes.map { "one \($0.identifier)" }.joined(separator: " and ") + " sample"
    }
}

extension CorrelationSample: Codable {
    enum CodingKeys: String, CodingKey {
        case id = "uuid", type, start, end, objects, device, metadata
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(
                id: try container.decode(SampleID.self, forKey: .id),
                type: try container.decode(CorrelationType.self, forKey: .type),
                start: try container.decode(Date.self, forKey: .start),
                end: try container.decode(Date.self, forKey: .end),
                objects: try container.decode([QuantitySample].self, forKey: .objects),
                device: try container.decodeIfPresent(Device.self, forKey: .device),
                metadata: try container.decodeIfPresent(Metadata.self, forKey: .metadata) ?? Metadata())
        } catch let error as SampleError {
            throw DecodingError.dataCorruptedError(
                forKey: error == .endBeforeStart ? .end : .objects, in: container,
                debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(startDate, forKey: .start)
        try container.encode(endDate, forKey: .end)
        try container.encode(objects, forKey: .objects)
        try container.encodeIfPresent(device, forKey: .device)
        if !metadata.isEmpty { try container.encode(metadata, forKey: .metadata) }
    }
}
