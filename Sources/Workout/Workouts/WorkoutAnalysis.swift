public import FoundationEssentials
public import HealthModel

/// A stretch of running time without heart-rate readings longer than the gap threshold (a strap
/// that lost contact, a device out of range). Gap time is not zone time and does not end the
/// workout.
public struct HeartRateGap: Hashable, Sendable, Codable {
    /// The last reading before the gap (or the window start).
    public var start: Date
    /// The first reading after the gap; nil while the gap is still open.
    public var end: Date?
    /// Running seconds without readings (pauses excluded).
    public var seconds: Double

    /// Creates a gap.
    public init(start: Date, end: Date?, seconds: Double) {
        self.start = start
        self.end = end
        self.seconds = seconds
    }
}

/// Where the workout's energy figure came from.
public enum EnergySource: String, Hashable, Sendable, Codable {
    /// Keytel et al. 2005 from heart rate and the profile (see ``ActiveEnergyEquation``).
    case heartRateEquation
    /// The sum of the devices' `activeEnergyBurned` samples.
    case device
}

/// Statistics of a workout (or one activity) over a window, computed from the collected samples.
///
/// Heart rate is analysed as a step function: each reading holds until the next one. A step
/// longer than the gap threshold (in running time) is a gap, and so is the stretch from the
/// window start to the first reading or from the last reading to the window end when longer than
/// the threshold. Zone seconds, the average heart rate and the equation's energy use only the
/// steps that are not gaps.
///
/// The heart-rate **average is time-weighted** over those steps: BLE straps notify irregularly
/// (about once a second, faster or slower with the beat), and a plain sample mean would weight
/// bursts. With no counted step yet (a single reading), the average is the sample mean. Minimum,
/// maximum and most recent are over the readings. Other discrete types (speed, stride) report
/// the plain sample mean. Cumulative types (steps, distance, device energy) are summed.
public struct WorkoutAnalysis: Hashable, Sendable {
    /// Running seconds in the window.
    public var elapsedSeconds: Double
    /// Statistics per collected type (every session type is listed, empty ones too).
    public var statistics: [QuantityStatistics]
    /// The latest heart rate, nil when none or when the stream is in a gap.
    public var currentHeartRate: Double?
    /// The zones in bpm, nil when unknown.
    public var zones: HeartRateZones?
    /// Seconds per zone, in the order of ``zones``; empty when the zones are unknown.
    public var zoneSeconds: [Double]
    /// Counted heart-rate seconds below the first zone.
    public var belowZonesSeconds: Double
    /// Heart-rate gaps in time order; the last is open (`end == nil`) in a live window.
    public var gaps: [HeartRateGap]
    /// Active energy in kcal; nil when unavailable.
    public var energyKilocalories: Double?
    /// Where ``energyKilocalories`` came from; nil when unavailable.
    public var energySource: EnergySource?

    /// The statistics of `type`.
    public func statistics(for type: QuantityType) -> QuantityStatistics? {
        statistics.first { $0.type == type }
    }

    /// Whether the heart-rate stream is in an open gap.
    public var inGap: Bool { gaps.last.map { $0.end == nil } ?? false }

    /// Analyses `samples` (sorted by end date) in `window` of `timeline`.
    /// - Parameters:
    ///   - isLive: whether the window's end is "now" of a running session (a trailing gap stays open).
    public static func analyse(
        samples: [CollectedSample], types: [QuantityType], timeline: RunningTimeline,
        window: (start: Date, end: Date), isLive: Bool, profile: UserProfile
    ) -> WorkoutAnalysis {
        // One pass over the samples, copying none of them: the board asks for every
        // participant's figures every second, over an hour of readings each (Benchmarks, `board`).
        var aggregateTypes = types
        if !aggregateTypes.contains(.activeEnergyBurned) { aggregateTypes.append(.activeEnergyBurned) }
        var aggregates = Array(repeating: Aggregate(), count: aggregateTypes.count)
        var heartRate: [(endDate: Date, value: Double)] = []
        // A live window also takes readings stamped after "now": a device clock a little ahead
        // of ours must not hide its samples (their step to "now" is zero seconds).
        for sample in samples where sample.endDate >= window.start && (isLive || sample.endDate <= window.end) {
            if sample.type == .heartRate { heartRate.append((sample.endDate, sample.value)) }
            if let slot = aggregateTypes.firstIndex(of: sample.type) { aggregates[slot].add(sample.value, at: sample.endDate) }
        }
        let threshold = profile.gapThreshold
        let zones = profile.heartRateZones(on: window.start)
        let equation = ActiveEnergyEquation(profile: profile, on: window.start)
        var zoneSeconds = Array(repeating: 0.0, count: zones?.zones.count ?? 0)
        var below = 0.0
        var gaps: [HeartRateGap] = []
        var weightedSum = 0.0
        var weight = 0.0
        var equationEnergy = 0.0

        // Leading stretch: from the window start to the first reading.
        let firstDate = heartRate.first?.endDate ?? window.end
        let leading = timeline.activeSeconds(from: window.start, to: firstDate)
        if leading > threshold {
            let open = heartRate.isEmpty && isLive
            gaps.append(HeartRateGap(start: window.start, end: open ? nil : firstDate, seconds: leading))
        }
        for (index, reading) in heartRate.enumerated() {
            let isLast = index == heartRate.count - 1
            let next = isLast ? window.end : heartRate[index + 1].endDate
            let seconds = timeline.activeSeconds(from: reading.endDate, to: next)
            if seconds > threshold {
                gaps.append(HeartRateGap(start: reading.endDate, end: isLast && isLive ? nil : next, seconds: seconds))
                continue
            }
            weightedSum += reading.value * seconds
            weight += seconds
            if let zones {
                if let zone = zones.zone(for: reading.value), let slot = zones.zones.firstIndex(of: zone) {
                    zoneSeconds[slot] += seconds
                } else {
                    below += seconds
                }
            }
            if let equation { equationEnergy += equation.kilocalories(heartRate: reading.value, seconds: seconds) ?? 0 }
        }

        var statistics: [QuantityStatistics] = []
        var energy: Double?
        var energySource: EnergySource?
        // Non-nil: aggregateTypes holds .activeEnergyBurned (added above).
        let deviceEnergy = aggregates[aggregateTypes.firstIndex(of: .activeEnergyBurned) ?? 0]
        if equation != nil, weight > 0 {
            energy = equationEnergy
            energySource = .heartRateEquation
        } else if deviceEnergy.count > 0 {
            energy = deviceEnergy.sum
            energySource = .device
        }
        var allTypes = types
        if energy != nil, !allTypes.contains(.activeEnergyBurned) { allTypes.append(.activeEnergyBurned) }
        for type in allTypes {
            let values = aggregateTypes.firstIndex(of: type).map { aggregates[$0] } ?? Aggregate()
            switch type.aggregationStyle {
            case .cumulative where type == .activeEnergyBurned:
                statistics.append(QuantityStatistics(
                    type: type, startDate: window.start, endDate: window.end,
                    sampleCount: energySource == .heartRateEquation ? heartRate.count : values.count,
                    sum: energy))
            case .cumulative:
                statistics.append(QuantityStatistics(
                    type: type, startDate: window.start, endDate: window.end, sampleCount: values.count,
                    sum: values.count == 0 ? nil : values.sum))
            case .discrete:
                let mean = values.count == 0 ? nil : values.sum / Double(values.count)
                let average = type == .heartRate && weight > 0 ? weightedSum / weight : mean
                statistics.append(QuantityStatistics(
                    type: type, startDate: window.start, endDate: window.end, sampleCount: values.count,
                    average: average, minimum: values.minimum, maximum: values.maximum,
                    mostRecent: values.last?.value, mostRecentDate: values.last?.date))
            }
        }
        let inGap = gaps.last.map { $0.end == nil } ?? false
        return WorkoutAnalysis(
            elapsedSeconds: timeline.activeSeconds(from: window.start, to: window.end),
            statistics: statistics,
            currentHeartRate: isLive && !inGap ? heartRate.last?.value : nil,
            zones: zones, zoneSeconds: zoneSeconds, belowZonesSeconds: below, gaps: gaps,
            energyKilocalories: energy, energySource: energySource)
    }

    /// Count, sum, extremes and the latest value of one type's samples, in sample order.
    private struct Aggregate {
        var count = 0
        var sum = 0.0
        var minimum: Double?
        var maximum: Double?
        var last: (value: Double, date: Date)?

        mutating func add(_ value: Double, at date: Date) {
            count += 1
            sum += value
            minimum = min(minimum ?? value, value)
            maximum = max(maximum ?? value, value)
            last = (value, date)
        }
    }
}
