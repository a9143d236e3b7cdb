public import FoundationEssentials

/// One measurement over an interval, like HealthKit's HKQuantitySample.
///
/// A discrete sample (heart rate) usually has `startDate == endDate`; a cumulative sample
/// (steps) covers the interval over which its amount was counted.
public struct QuantitySample: Hashable, Sendable {
    /// Time-ordered unique identifier (UUIDv7); the storage key everywhere.
    public let id: SampleID
    public let type: QuantityType
    public let quantity: Quantity
    public let startDate: Date
    public let endDate: Date
    public var device: Device?
    public var metadata: Metadata

    /// Creates a validated sample.
    /// - Throws: ``SampleError`` when the unit does not fit the type, the value is not finite, or
    ///   the interval runs backwards.
    // Inlinable, so that a caller's values move into the sample (a store read builds one per row).
    @inlinable
    public init(
        id: SampleID, type: QuantityType, quantity: Quantity, start: Date, end: Date,
        device: Device? = nil, metadata: Metadata = Metadata()
    ) throws(SampleError) {
        guard type.accepts(quantity.unit) else {
            throw .unitMismatch(
                type: type.identifier, unit: quantity.unit.unitString,
                expected: type.canonicalUnit.unitString)
        }
        guard quantity.value.isFinite else { throw .notFinite(type: type.identifier) }
        guard end >= start else { throw .endBeforeStart }
        self.init(validated: id, type: type, quantity: quantity, start: start, end: end, device: device, metadata: metadata)
    }

    /// The value in the type's canonical unit. Never fails: the initializer checked the dimension.
    public var canonicalValue: Double {
        (try? quantity.doubleValue(for: type.canonicalUnit)) ?? quantity.value
    }

    /// HealthKit's sync identifier, kept in ``metadata``.
    public var syncIdentifier: String? { metadata.syncIdentifier }
    /// HealthKit's sync version, kept in ``metadata``.
    public var syncVersion: Int64? { metadata.syncVersion }
}

extension QuantitySample: Codable {
    enum CodingKeys: String, CodingKey {
        case id = "uuid", type, value, unit, start, end, device, metadata
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(QuantityType.self, forKey: .type)
        let quantity = Quantity(
            try container.decode(Double.self, forKey: .value),
            try container.decode(HealthUnit.self, forKey: .unit))
        do {
            try self.init(
                id: try container.decode(SampleID.self, forKey: .id), type: type, quantity: quantity,
                start: try container.decode(Date.self, forKey: .start),
                end: try container.decode(Date.self, forKey: .end),
                device: try container.decodeIfPresent(Device.self, forKey: .device),
                metadata: try container.decodeIfPresent(Metadata.self, forKey: .metadata) ?? Metadata())
        } catch let error as SampleError {
            // Point the error at the field that is wrong, so that a bad file or request names
            // `unit` (not `value`) when the unit does not fit the type.
            let key: CodingKeys = switch error {
            case .unitMismatch: .unit
            case .endBeforeStart: .end
            case .notFinite, .heartbeatsOutOfOrder, .correlationMembers, .memberOutsideCorrelation, .seriesOutOfOrder: .value
            }
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(quantity.value, forKey: .value)
        try container.encode(quantity.unit, forKey: .unit)
        try container.encode(startDate, forKey: .start)
        try container.encode(endDate, forKey: .end)
        try container.encodeIfPresent(device, forKey: .device)
        if !metadata.isEmpty { try container.encode(metadata, forKey: .metadata) }
    }
}
