import FoundationEssentials

/// Heart-rate variability of one heartbeat series, in the time domain, over its gap-free beats.
///
/// The NN intervals are the times between consecutive beats where the later beat is not
/// `precededByGap` (a series' first beat counts from the series' start, which is the previous
/// chunk's last beat, unless it follows a gap). **SDNN** is their standard deviation (with n − 1,
/// as Task Force 1996 and hrv-analysis compute it); **RMSSD** is the root mean square of the
/// differences between successive intervals, taken only within a run of gap-free beats: a gap
/// is not a difference. A series with fewer than ``minimumIntervals`` intervals, or whose
/// intervals cover less than half its duration (mostly gaps), has none.
public struct HeartRateVariability: Hashable, Sendable {
    /// SDNN in milliseconds.
    public var sdnn: Double
    /// RMSSD in milliseconds.
    public var rmssd: Double
    /// How many NN intervals both come from.
    public var intervals: Int

    /// Fewer intervals make a standard deviation too noisy to report (about 30 s of beats).
    public static let minimumIntervals = 30

    /// The variability of `series`, or nil when it has too few gap-free intervals.
    public init?(_ series: HeartbeatSeriesSample) {
        var runs: [[Double]] = []
        var run: [Double] = []
        var previous = 0.0
        for beat in series.beats {
            if beat.precededByGap {
                if !run.isEmpty { runs.append(run) }
                run = []
            } else {
                run.append((beat.timeSinceSeriesStart - previous) * 1000)
            }
            previous = beat.timeSinceSeriesStart
        }
        if !run.isEmpty { runs.append(run) }
        self.init(runs: runs, duration: series.endDate.timeIntervalSince(series.startDate))
    }

    /// The variability of runs of gap-free NN intervals (milliseconds) over a series of
    /// `duration` seconds.
    public init?(runs: [[Double]], duration: Double) {
        let all = runs.joined()
        let count = all.count
        guard count >= Self.minimumIntervals, all.reduce(0, +) / 1000 >= duration / 2 else { return nil }
        let mean = all.reduce(0, +) / Double(count)
        let squares = all.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        var differences = 0
        var squaredDifferences = 0.0
        for run in runs where run.count > 1 {
            for index in 1..<run.count {
                let difference = run[index] - run[index - 1]
                squaredDifferences += difference * difference
                differences += 1
            }
        }
        guard differences > 0 else { return nil }
        sdnn = (squares / Double(count - 1)).squareRoot()
        rmssd = (squaredDifferences / Double(differences)).squareRoot()
        intervals = count
    }
}

extension MetadataKey {
    /// A workout's device list (`workout start --devices`), comma-separated: it collected only
    /// from these. Absent: from every device but its ``excludedDevices``.
    public static let workoutDevices: MetadataKey = "healthgate.devices"
    /// The devices a workout without a device list left to others (the participants' straps
    /// beside the gateway's own workout), comma-separated.
    public static let excludedDevices: MetadataKey = "healthgate.excludedDevices"
}

extension MetadataKey {
    /// On a heart-rate variability sample: the uuid of the heartbeat series it was computed from.
    public static let heartbeatSeries: MetadataKey = "healthgate.heartbeatSeries"
    /// On a heart-rate variability sample: how many NN intervals it was computed over.
    public static let variabilityIntervals: MetadataKey = "healthgate.nnIntervals"
}

extension HeartbeatSeriesSample {
    /// SDNN (`heartRateVariabilitySDNN`, HealthKit's) and RMSSD (`heartRateVariabilityRMSSD`,
    /// healthgate's own) over the series' interval, from its device, with the series' metadata
    /// (less its sync keys and provisional mark), the series' uuid and the interval count; each
    /// with a uuid derived from the series' uuid and its type, so a series published again gives
    /// the same two samples (stored once). No sync keys: a sample that never has a second version
    /// needs none, and a store keeps sync keys in a row and an index entry of their own. Empty
    /// when the series has too few gap-free beats (see ``HeartRateVariability``) or is still
    /// provisional.
    public func variabilitySamples() -> [QuantitySample] {
        guard metadata[.provisional] != .bool(true), let variability = HeartRateVariability(self) else { return [] }
        var base = metadata
        base.syncIdentifier = nil
        base.syncVersion = nil
        base[.heartbeatSeries] = .string(id.description)
        base[.variabilityIntervals] = .integer(Int64(variability.intervals))
        return [(QuantityType.heartRateVariabilitySDNN, variability.sdnn, "sdnn"),
                (QuantityType.heartRateVariabilityRMSSD, variability.rmssd, "rmssd")].compactMap { type, value, name in
            // `hrv-NAME:SERIES`: the name the uuids of every stored HRV sample derive from, so a
            // series published again gives samples a store already holds.
            try? QuantitySample(
                id: SampleID(syncIdentifier: "hrv-\(name):\(id)", version: 1), type: type, quantity: Quantity(value, .millisecond),
                start: startDate, end: endDate, device: device, metadata: base)
        }
    }
}
