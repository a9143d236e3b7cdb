public import FoundationEssentials
public import HealthModel

/// A running workout's live figures (zone seconds, active energy) kept up to date as samples
/// arrive, so that reading them costs the same an hour into a workout as a minute in: the live
/// board asks for them whenever a tile changes, for every participant.
///
/// It follows a ``LiveWorkoutBuilder``'s samples by index and takes only those appended since the
/// last call; the steps between consecutive heart-rate readings are settled once (their running
/// seconds no longer change: pauses are only ever appended after them), and the open step from
/// the last reading to "now" is added at each read. The result is the same as
/// ``WorkoutAnalysis/analyse(samples:types:timeline:window:isLive:profile:)`` over the same window
/// (the tests compare them). When the builder's samples change other than by an append (a late
/// sample, a prune; ``LiveWorkoutBuilder/reorderings``), or the profile or the start changes, it
/// starts over from the first sample once: a cost proportional to the workout, paid only then.
///
/// A value with no clock and no I/O.
public struct RunningFigures: Sendable {
    /// Zone seconds and energy at one moment.
    public struct Figures: Hashable, Sendable {
        /// Seconds per zone, in the zones' order; empty when the zones are unknown.
        public var zoneSeconds: [Double]
        /// Active energy in kcal (the equation's, else the devices' sum); nil when unavailable.
        public var energyKilocalories: Double?
    }

    private struct Basis: Equatable {
        var start: Date
        var profile: UserProfile
        var reorderings: Int
    }

    private var basis: Basis?
    private var processed = 0
    private var zones: HeartRateZones?
    private var equation: ActiveEnergyEquation?
    private var threshold = 0.0
    private var lastReading: (date: Date, value: Double)?
    private var zoneSeconds: [Double] = []
    private var counted = 0.0
    private var equationEnergy = 0.0
    private var deviceEnergy = 0.0
    private var deviceEnergyCount = 0

    /// Nothing followed yet.
    public init() {}

    /// Takes the samples appended to `builder` since the last call (or all of them, after a change
    /// of order, of `start` or of `profile`), for a workout that started at `start`.
    ///
    /// When the builder dropped samples (``LiveWorkoutBuilder/dropSamples(endingBefore:)``) and
    /// this must start over (or has not seen them), it starts from `base`: the figures that
    /// followed exactly the dropped samples (``advance(over:timeline:start:profile:)``), so
    /// what was dropped still counts.
    public mutating func follow(
        _ builder: LiveWorkoutBuilder, timeline: RunningTimeline, start: Date, profile: UserProfile, base: RunningFigures? = nil
    ) {
        let current = Basis(start: start, profile: profile, reorderings: builder.reorderings)
        let offset = builder.droppedCount
        let samples = builder.samples
        if basis != current || processed > offset + samples.count || processed < offset {
            if offset > 0, let base, base.processed == offset, base.basis?.start == start, base.basis?.profile == profile {
                self = base
                basis = current
            } else {
                reset(to: current)
                // Without the dropped samples' figures, from the samples kept only.
                processed = offset
            }
        }
        take(samples[(processed - offset)...], timeline: timeline, start: start)
    }

    /// Takes `samples`, the next ones in order after those taken so far (the samples a builder
    /// drops, for the `base` of ``follow(_:timeline:start:profile:base:)``).
    public mutating func advance(over samples: ArraySlice<CollectedSample>, timeline: RunningTimeline, start: Date, profile: UserProfile) {
        if basis?.start != start || basis?.profile != profile { reset(to: Basis(start: start, profile: profile, reorderings: 0)) }
        take(samples, timeline: timeline, start: start)
    }

    private mutating func take(_ samples: ArraySlice<CollectedSample>, timeline: RunningTimeline, start: Date) {
        for sample in samples where sample.endDate >= start {
            if sample.type == .heartRate {
                if let last = lastReading { settle(from: last, to: sample.endDate, timeline: timeline) }
                lastReading = (sample.endDate, sample.value)
            } else if sample.type == .activeEnergyBurned {
                deviceEnergy += sample.value
                deviceEnergyCount += 1
            }
        }
        processed += samples.count
    }

    /// The figures at `end` (now, for a live workout): the settled steps plus the open one from
    /// the last reading to `end` when it is not a gap.
    public func figures(at end: Date, timeline: RunningTimeline) -> Figures {
        var zoneSeconds = zoneSeconds
        var counted = counted
        var energy = equationEnergy
        if let last = lastReading {
            let seconds = timeline.activeSeconds(from: last.date, to: end)
            if seconds <= threshold {
                counted += seconds
                if let zones, let zone = zones.zone(for: last.value), let slot = zones.zones.firstIndex(of: zone) {
                    zoneSeconds[slot] += seconds
                }
                if let equation { energy += equation.kilocalories(heartRate: last.value, seconds: seconds) ?? 0 }
            }
        }
        let total: Double? =
            if equation != nil, counted > 0 { energy } else if deviceEnergyCount > 0 { deviceEnergy } else { nil }
        return Figures(zoneSeconds: zoneSeconds, energyKilocalories: total)
    }

    private mutating func reset(to basis: Basis) {
        self = RunningFigures()
        self.basis = basis
        zones = basis.profile.heartRateZones(on: basis.start)
        equation = ActiveEnergyEquation(profile: basis.profile, on: basis.start)
        threshold = basis.profile.gapThreshold
        zoneSeconds = Array(repeating: 0, count: zones?.zones.count ?? 0)
    }

    /// Counts the step from `reading` to the next reading at `next` (nothing when it is a gap).
    private mutating func settle(from reading: (date: Date, value: Double), to next: Date, timeline: RunningTimeline) {
        let seconds = timeline.activeSeconds(from: reading.date, to: next)
        guard seconds <= threshold else { return }
        counted += seconds
        if let zones, let zone = zones.zone(for: reading.value), let slot = zones.zones.firstIndex(of: zone) {
            zoneSeconds[slot] += seconds
        }
        if let equation { equationEnergy += equation.kilocalories(heartRate: reading.value, seconds: seconds) ?? 0 }
    }
}
