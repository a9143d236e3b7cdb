/// One heart-rate zone in beats per minute. The lower bound is inclusive, the upper exclusive,
/// except in the top zone, which also holds every rate above it.
public struct HeartRateZone: Hashable, Sendable, Codable {
    /// 1-based zone number.
    public var number: Int
    /// Inclusive lower bound, beats per minute.
    public var lowerBPM: Double
    /// Exclusive upper bound, beats per minute (the top zone has none).
    public var upperBPM: Double

    /// Creates a zone.
    public init(number: Int, lowerBPM: Double, upperBPM: Double) {
        self.number = number
        self.lowerBPM = lowerBPM
        self.upperBPM = upperBPM
    }
}

/// The zones used for a workout, resolved to beats per minute.
public struct HeartRateZones: Hashable, Sendable, Codable {
    /// The maximum heart rate the percent zones came from, if known.
    public var maximumHeartRate: Double?
    /// Ascending, non-overlapping.
    public var zones: [HeartRateZone]

    /// Creates a zone set from zones in bpm.
    public init(maximumHeartRate: Double?, zones: [HeartRateZone]) {
        self.maximumHeartRate = maximumHeartRate
        self.zones = zones
    }

    /// The zone `bpm` falls in; nil below the first zone or between zones.
    public func zone(for bpm: Double) -> HeartRateZone? {
        guard let top = zones.last else { return nil }
        if bpm >= top.lowerBPM { return top }
        return zones.first { bpm >= $0.lowerBPM && bpm < $0.upperBPM }
    }
}
