public import FoundationEssentials

/// One heartbeat in a series (HKHeartbeatSeriesBuilder's `addHeartbeat(at:precededByGap:)`).
public struct Heartbeat: Hashable, Sendable, Codable {
    /// Seconds from the series' start date to this beat.
    public var timeSinceSeriesStart: Double
    /// True when beats before this one were missed (lost contact, lost link), so the interval to
    /// the previous beat is not an RR interval.
    public var precededByGap: Bool

    public init(timeSinceSeriesStart: Double, precededByGap: Bool) {
        self.timeSinceSeriesStart = timeSinceSeriesStart
        self.precededByGap = precededByGap
    }
}

/// A series of heartbeats, like HealthKit's HKHeartbeatSeriesSample. Built from RR intervals.
public struct HeartbeatSeriesSample: Hashable, Sendable {
    public let id: SampleID
    public let startDate: Date
    public let endDate: Date
    public let beats: [Heartbeat]
    public var device: Device?
    public var metadata: Metadata

    /// Creates a validated series.
    /// - Throws: ``SampleError/heartbeatsOutOfOrder`` when beat times are negative or decrease;
    ///   ``SampleError/endBeforeStart`` when the interval runs backwards.
    public init(
        id: SampleID, start: Date, end: Date, beats: [Heartbeat], device: Device? = nil,
        metadata: Metadata = Metadata()
    ) throws(SampleError) {
        guard end >= start else { throw .endBeforeStart }
        var previous = 0.0
        for beat in beats {
            guard beat.timeSinceSeriesStart.isFinite, beat.timeSinceSeriesStart >= previous else {
                throw .heartbeatsOutOfOrder
            }
            previous = beat.timeSinceSeriesStart
        }
        self.id = id
        self.startDate = start
        self.endDate = end
        self.beats = beats
        self.device = device
        self.metadata = metadata
    }
}

extension HeartbeatSeriesSample: Codable {
    enum CodingKeys: String, CodingKey {
        case id = "uuid", start, end, beats, device, metadata
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(
                id: try container.decode(SampleID.self, forKey: .id),
                start: try container.decode(Date.self, forKey: .start),
                end: try container.decode(Date.self, forKey: .end),
                beats: try container.decode([Heartbeat].self, forKey: .beats),
                device: try container.decodeIfPresent(Device.self, forKey: .device),
                metadata: try container.decodeIfPresent(Metadata.self, forKey: .metadata) ?? Metadata())
        } catch let error as SampleError {
            // Point at the field that is wrong: `end` for a backwards interval, else `beats`.
            throw DecodingError.dataCorruptedError(
                forKey: error == .endBeforeStart ? .end : .beats, in: container,
                debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(startDate, forKey: .start)
        try container.encode(endDate, forKey: .end)
        try container.encode(beats, forKey: .beats)
        try container.encodeIfPresent(device, forKey: .device)
        if !metadata.isEmpty { try container.encode(metadata, forKey: .metadata) }
    }
}
