public import FoundationEssentials

/// One quantity of a ``QuantitySeriesSample``: a value in the series' unit over its own date
/// interval (HKQuantitySeriesSampleBuilder's `insert(_:for:)`).
public struct SeriesQuantity: Hashable, Sendable {
    public var value: Double
    public var startDate: Date
    public var endDate: Date

    public init(value: Double, start: Date, end: Date) {
        self.value = value
        self.startDate = start
        self.endDate = end
    }
}

/// A run of quantities of one type from one device, kept as one sample, like HealthKit's
/// HKQuantitySeriesSample: one uuid, type, unit, device and metadata, and each quantity with
/// its own date interval.
///
/// The store keeps the readings of a type with a ``QuantityType/seriesPolicy`` as series as they
/// arrive; a series that is still being filled carries ``MetadataKey/provisional`` and a
/// ``Metadata/syncVersion`` that grows with it (the rule growing heartbeat series follow: a later
/// version with the same uuid and a higher version replaces the earlier). Whoever reads samples
/// sees each quantity as a ``QuantitySample`` of its own (``quantitySample(at:)``), as
/// HKQuantitySeriesSampleQuery enumerates a series' quantities.
public struct QuantitySeriesSample: Hashable, Sendable {
    public let id: SampleID
    public let type: QuantityType
    /// The unit of every quantity's value: the unit the readings were recorded in.
    public let unit: HealthUnit
    /// The quantities, ordered by start date; never empty.
    public let quantities: [SeriesQuantity]
    /// The first quantity's start.
    public let startDate: Date
    /// The latest end of a quantity.
    public let endDate: Date
    public var device: Device?
    public var metadata: Metadata

    /// Creates a validated series.
    /// - Throws: ``SampleError``: `.unitMismatch` when `unit` does not fit `type`, `.notFinite`
    ///   for a value that is not a finite number, `.endBeforeStart` for a quantity whose interval
    ///   runs backwards, `.seriesOutOfOrder` when the quantities are not ordered by start date or
    ///   there are none.
    // Inlinable, as QuantitySample's is, so that a caller's values move into the series: a
    // store read builds one per row, and the call's copy and release of the five references a
    // series holds showed in the change log's profile.
    @inlinable
    public init(
        id: SampleID, type: QuantityType, unit: HealthUnit, quantities: [SeriesQuantity], device: Device? = nil,
        metadata: Metadata = Metadata()
    ) throws(SampleError) {
        guard type.accepts(unit) else {
            throw .unitMismatch(type: type.identifier, unit: unit.unitString, expected: type.canonicalUnit.unitString)
        }
        guard let first = quantities.first else { throw .seriesOutOfOrder }
        var previous = first.startDate
        var end = first.endDate
        for quantity in quantities {
            guard quantity.value.isFinite else { throw .notFinite(type: type.identifier) }
            guard quantity.endDate >= quantity.startDate else { throw .endBeforeStart }
            guard quantity.startDate >= previous else { throw .seriesOutOfOrder }
            previous = quantity.startDate
            end = max(end, quantity.endDate)
        }
        self.id = id
        self.type = type
        self.unit = unit
        self.quantities = quantities
        self.startDate = first.startDate
        self.endDate = end
        self.device = device
        self.metadata = metadata
    }

    /// How many quantities the series holds.
    public var count: Int { quantities.count }

    /// Whether the series may still grow (``MetadataKey/provisional``): a later version with the
    /// same uuid and a higher sync version will replace this one.
    public var isProvisional: Bool { metadata[.provisional] == .bool(true) }

    /// The quantity at `index` as a sample of its own: its id derived from the series' id and
    /// the index (``SampleID/init(quantity:ofSeries:)``), the series' device, and the series'
    /// metadata without its sync keys and provisional mark, with ``MetadataKey/series`` naming
    /// the series.
    public func quantitySample(at index: Int) -> QuantitySample {
        let quantity = quantities[index]
        // The series' values were validated against its type and unit when it was made.
        return QuantitySample(
            validated: SampleID(quantity: index, ofSeries: id), type: type, quantity: Quantity(quantity.value, unit),
            start: quantity.startDate, end: quantity.endDate, device: device, metadata: quantityMetadata)
    }

    /// Every quantity as a sample of its own (``quantitySample(at:)``), in order.
    public var quantitySamples: [QuantitySample] {
        let metadata = quantityMetadata
        return quantities.indices.map { index in
            let quantity = quantities[index]
            return QuantitySample(
                validated: SampleID(quantity: index, ofSeries: id), type: type, quantity: Quantity(quantity.value, unit),
                start: quantity.startDate, end: quantity.endDate, device: device, metadata: metadata)
        }
    }

    /// The metadata each quantity's sample carries.
    private var quantityMetadata: Metadata {
        var metadata = self.metadata
        metadata.syncIdentifier = nil
        metadata.syncVersion = nil
        metadata[.provisional] = nil
        metadata[.series] = .string(id.uuidString)
        return metadata
    }
}

extension QuantitySample {
    /// A sample whose values were validated already (a quantity of a validated series, or by
    /// the public initializer).
    // Inlinable like the public initializer that ends in it, so that the values still move.
    @inlinable
    init(
        validated id: SampleID, type: QuantityType, quantity: Quantity, start: Date, end: Date, device: Device?,
        metadata: Metadata
    ) {
        self.id = id
        self.type = type
        self.quantity = quantity
        self.startDate = start
        self.endDate = end
        self.device = device
        self.metadata = metadata
    }
}

extension SampleID {
    /// The id of the quantity at `index` of the series `series`, as its sample shows it: a
    /// version 8 UUID (RFC 9562 §5.8) whose bits mix the series' id and the index (splitmix64),
    /// so the same quantity of the same series always has the same id, and it is told apart from
    /// the version 7 ids of samples and series.
    public init(quantity index: Int, ofSeries series: SampleID) {
        func mix(_ value: UInt64) -> UInt64 {
            var z = value &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let position = UInt64(truncatingIfNeeded: index)
        let high = mix(series.high ^ mix(position))
        let low = mix(series.low ^ mix(high ^ position))
        self.init(high: high & ~0xF000 | 0x8000, low: low & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000)
    }
}

extension QuantitySeriesSample: Codable {
    enum CodingKeys: String, CodingKey {
        case id = "uuid", type, unit, start, end, quantities, device, metadata
    }

    /// A quantity in JSON: `{"timeSinceSeriesStart": 1.002, "value": 82}`, with `"duration"` (s)
    /// when the quantity lasts (seconds, as a heartbeat series' beats are timed).
    struct QuantityJSON: Codable {
        var timeSinceSeriesStart: Double
        var duration: Double?
        var value: Double
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let start = try container.decode(Date.self, forKey: .start)
        let quantities = try container.decode([QuantityJSON].self, forKey: .quantities).map { quantity in
            let begin = start.addingTimeInterval(quantity.timeSinceSeriesStart)
            return SeriesQuantity(value: quantity.value, start: begin, end: begin.addingTimeInterval(quantity.duration ?? 0))
        }
        do {
            try self.init(
                id: try container.decode(SampleID.self, forKey: .id), type: try container.decode(QuantityType.self, forKey: .type),
                unit: try container.decode(HealthUnit.self, forKey: .unit), quantities: quantities,
                device: try container.decodeIfPresent(Device.self, forKey: .device),
                metadata: try container.decodeIfPresent(Metadata.self, forKey: .metadata) ?? Metadata())
        } catch let error as SampleError {
            throw DecodingError.dataCorruptedError(
                forKey: error.isUnitMismatch ? .unit : .quantities, in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(type, forKey: .type)
        try container.encode(unit, forKey: .unit)
        try container.encode(startDate, forKey: .start)
        try container.encode(endDate, forKey: .end)
        try container.encode(quantities.map { quantity in
            let duration = StoreSeconds.between(quantity.startDate, quantity.endDate)
            return QuantityJSON(
                timeSinceSeriesStart: StoreSeconds.between(startDate, quantity.startDate),
                duration: duration == 0 ? nil : duration, value: quantity.value)
        }, forKey: .quantities)
        try container.encodeIfPresent(device, forKey: .device)
        if !metadata.isEmpty { try container.encode(metadata, forKey: .metadata) }
    }
}

/// Seconds between two dates at the store's resolution, the microsecond, so that a series
/// written as JSON reads back to the same microseconds.
enum StoreSeconds {
    static func between(_ from: Date, _ to: Date) -> Double {
        func micros(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
        return Double(micros(to) - micros(from)) / 1_000_000
    }
}
