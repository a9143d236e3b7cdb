public import Foundation
public import HealthModel

/// One quantity sample collected into a workout, reduced to what statistics need.
public struct CollectedSample: Hashable, Sendable, Codable {
    /// The sample's identifier (linked to the workout).
    public var id: SampleID
    /// The quantity type.
    public var type: QuantityType
    /// Start of the measured interval.
    public var startDate: Date
    /// End of the measured interval; what decides whether it falls in running time.
    public var endDate: Date
    /// The value in the type's canonical unit.
    public var value: Double

    /// Creates a collected sample.
    public init(id: SampleID, type: QuantityType, startDate: Date, endDate: Date, value: Double) {
        self.id = id
        self.type = type
        self.startDate = startDate
        self.endDate = endDate
        self.value = value
    }
}

/// Collects samples into a live workout (HKLiveWorkoutBuilder's data collection).
///
/// A sample is collected when its type is one of the session's types, its device is one of the
/// session's devices (or the session takes every device), and its end date lies in a running
/// interval. So samples from pauses are left out, and a sample that arrives late (queued on the
/// bus) still counts for the interval it was measured in. Duplicates (a batch redelivered after a
/// sink restart) are recognised by id and counted once. Heartbeat series are linked to the
/// workout by id; heart-rate statistics come from the `heartRate` samples.
///
/// Bounded: at most ``capacity`` samples and series (more than a day of one-per-second heart
/// rate, steps and distance). Beyond that, new records are refused and counted in
/// ``refusedCount``; what was collected stays intact.
public struct LiveWorkoutBuilder: Hashable, Sendable, Codable {
    /// The most samples plus heartbeat series one workout collects.
    public static let capacity = 300_000

    /// Collected samples, ordered by end date.
    public private(set) var samples: [CollectedSample] = []
    /// Heartbeat series collected, by id.
    public private(set) var heartbeatSeriesIDs: [SampleID] = []
    /// Records refused because the builder was full.
    public private(set) var refusedCount = 0
    private var seen: Set<SampleID> = []

    /// An empty builder.
    public init() {}

    enum CodingKeys: String, CodingKey { case samples, heartbeatSeriesIDs, refusedCount }

    /// Decodes a saved builder and rebuilds its duplicate filter.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        samples = try container.decode([CollectedSample].self, forKey: .samples)
        heartbeatSeriesIDs = try container.decode([SampleID].self, forKey: .heartbeatSeriesIDs)
        refusedCount = try container.decodeIfPresent(Int.self, forKey: .refusedCount) ?? 0
        seen = Set(samples.map(\.id)).union(heartbeatSeriesIDs)
    }

    /// Encodes the collected samples and series (the duplicate filter is derived).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(samples, forKey: .samples)
        try container.encode(heartbeatSeriesIDs, forKey: .heartbeatSeriesIDs)
        try container.encode(refusedCount, forKey: .refusedCount)
    }

    /// Every collected id, samples then heartbeat series.
    public var sampleIDs: [SampleID] { samples.map(\.id) + heartbeatSeriesIDs }

    /// Whether the builder would take `record` for `session` (type, device, running interval).
    public static func wants(_ record: HealthRecord, session: WorkoutSession) -> Bool {
        guard session.state == .running || session.state == .paused || session.state == .stopped else { return false }
        let date: Date
        switch record {
        case .quantity(let sample):
            guard session.types.contains(sample.type) else { return false }
            date = sample.endDate
        case .heartbeatSeries(let series):
            guard session.types.contains(.heartRate) else { return false }
            date = series.endDate
        case .workout:
            return false
        }
        if let devices = session.devices {
            guard let device = record.device else { return false }
            let names = [device.localIdentifier, device.name, device.displayName].compactMap { $0 }
            guard names.contains(where: devices.contains) else { return false }
        }
        return session.timeline.contains(date)
    }

    /// Adds `record` if ``wants(_:session:)``, it is new, and there is room (else it is counted
    /// in ``refusedCount``). Returns whether it was added.
    @discardableResult
    public mutating func add(_ record: HealthRecord, session: WorkoutSession, capacity: Int = LiveWorkoutBuilder.capacity) -> Bool {
        guard Self.wants(record, session: session), !seen.contains(record.id) else { return false }
        guard seen.count < capacity else {
            refusedCount += 1
            return false
        }
        seen.insert(record.id)
        switch record {
        case .quantity(let sample):
            let collected = CollectedSample(
                id: sample.id, type: sample.type, startDate: sample.startDate, endDate: sample.endDate,
                value: sample.canonicalValue)
            // Usually appended at the end; a late sample is inserted in order.
            let index = samples.lastIndex { $0.endDate <= collected.endDate }.map { $0 + 1 } ?? 0
            samples.insert(collected, at: index)
        case .heartbeatSeries(let series):
            heartbeatSeriesIDs.append(series.id)
        case .workout:
            return false
        }
        return true
    }
}
