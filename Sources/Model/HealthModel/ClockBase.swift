import FoundationEssentials

/// The time line a gateway's wall-clock dates sit on: this boot, and the wall clock less the time
/// since boot (CLOCK_BOOTTIME). The second number changes only when the wall clock steps, so a
/// date read from the gateway's clock, less this base, is the monotonic time it was read at: when
/// the clock steps (synchronisation after booting in 1970, an administrator's `date -s`), every
/// date taken on the old base is moved onto the new one by the difference, and durations between
/// them stay what the monotonic clock measured.
public struct ClockBase: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The kernel's boot id (`/proc/sys/kernel/random/boot_id`): monotonic times of another boot
    /// cannot be compared with this one's.
    public var bootID: String
    /// CLOCK_REALTIME − CLOCK_BOOTTIME, in milliseconds.
    public var wallMinusBootMilliseconds: Int64

    public init(bootID: String, wallMinusBootMilliseconds: Int64) {
        self.bootID = bootID
        self.wallMinusBootMilliseconds = wallMinusBootMilliseconds
    }

    /// Seconds a date on `other` moves to sit on this base (nil for another boot).
    public func seconds(from other: ClockBase) -> Double? {
        guard other.bootID == bootID else { return nil }
        return Double(wallMinusBootMilliseconds - other.wallMinusBootMilliseconds) / 1000
    }

    public var description: String { "boot \(bootID), wall − boot \(wallMinusBootMilliseconds) ms" }
}

extension MetadataKey {
    /// ``ClockBase/bootID`` of the gateway clock a record's dates were read from.
    public static let bootID: MetadataKey = "healthgate.bootID"
    /// ``ClockBase/wallMinusBootMilliseconds`` of that clock, an integer.
    public static let clockBase: MetadataKey = "healthgate.clockBaseMilliseconds"
    /// Seconds the gateway moved the record's dates by when its clock stepped (a double; the sum
    /// when it stepped more than once).
    public static let clockCorrected: MetadataKey = "healthgate.clockCorrectedSeconds"
    /// `true` on a record whose dates come from the device's own clock (a meter's time stamp, a
    /// sensor's session start): a step of the gateway's clock does not move them.
    public static let deviceClock: MetadataKey = "healthgate.deviceClock"
}

extension Metadata {
    /// The gateway clock the record's dates were read from, when it says.
    public var clockBase: ClockBase? {
        get {
            guard case .string(let boot)? = self[.bootID], case .integer(let base)? = self[.clockBase] else { return nil }
            return ClockBase(bootID: boot, wallMinusBootMilliseconds: base)
        }
        set {
            self[.bootID] = newValue.map { .string($0.bootID) }
            self[.clockBase] = newValue.map { .integer($0.wallMinusBootMilliseconds) }
        }
    }

    /// Whether the dates come from the device's own clock (``MetadataKey/deviceClock``).
    public var isDeviceClock: Bool { self[.deviceClock] == .bool(true) }

    /// The metadata of a record moved by `seconds` onto `base`: the base replaced, the
    /// correction added up.
    func moved(by seconds: Double, onto base: ClockBase) -> Metadata {
        var moved = self
        moved.clockBase = base
        var total = seconds
        if case .double(let earlier)? = self[.clockCorrected] { total += earlier }
        moved[.clockCorrected] = .double((total * 1000).rounded() / 1000)
        return moved
    }
}

extension HealthRecord {
    /// The gateway clock base of the record's dates (nil for dates from a device's clock or from
    /// elsewhere).
    public var clockBase: ClockBase? {
        switch self {
        case .quantity(let sample): sample.metadata.clockBase
        case .quantitySeries(let series): series.metadata.clockBase
        case .heartbeatSeries(let series): series.metadata.clockBase
        case .workout(let workout): workout.metadata.clockBase
        case .correlation(let correlation): correlation.metadata.clockBase
        }
    }

    /// Whether the record's dates come from the device's own clock (``MetadataKey/deviceClock``).
    public var isDatedByDeviceClock: Bool {
        switch self {
        case .quantity(let sample): sample.metadata.isDeviceClock
        case .quantitySeries(let series): series.metadata.isDeviceClock
        case .heartbeatSeries(let series): series.metadata.isDeviceClock
        case .workout(let workout): workout.metadata.isDeviceClock
        case .correlation(let correlation): correlation.metadata.isDeviceClock
        }
    }

    /// The record with every date moved onto `base`, when it was taken on another base of the
    /// same boot: shifted by the difference, its metadata saying by how much (a correlation's
    /// members too). nil when it needs no move (no base, another boot, the same base).
    public func rebased(onto base: ClockBase) -> HealthRecord? {
        guard let recorded = clockBase, let seconds = base.seconds(from: recorded), seconds != 0 else { return nil }
        let move = { (date: Date) in date.addingTimeInterval(seconds) }
        do {
            switch self {
            case .quantity(let sample):
                return .quantity(try sample.moved(by: seconds, onto: base))
            case .quantitySeries(let series):
                return .quantitySeries(try QuantitySeriesSample(
                    id: series.id, type: series.type, unit: series.unit,
                    quantities: series.quantities.map { SeriesQuantity(value: $0.value, start: move($0.startDate), end: move($0.endDate)) },
                    device: series.device, metadata: series.metadata.moved(by: seconds, onto: base)))
            case .heartbeatSeries(let series):
                return .heartbeatSeries(try HeartbeatSeriesSample(
                    id: series.id, start: move(series.startDate), end: move(series.endDate), beats: series.beats,
                    device: series.device, metadata: series.metadata.moved(by: seconds, onto: base)))
            case .correlation(let correlation):
                return .correlation(try CorrelationSample(
                    id: correlation.id, type: correlation.type, start: move(correlation.startDate),
                    end: move(correlation.endDate),
                    objects: try correlation.objects.map { (member) throws(SampleError) in
                        member.metadata.clockBase == nil ? try member.shifted(by: seconds) : try member.moved(by: seconds, onto: base)
                    },
                    device: correlation.device, metadata: correlation.metadata.moved(by: seconds, onto: base)))
            case .workout(var workout):
                workout.startDate = move(workout.startDate)
                workout.endDate = move(workout.endDate)
                for index in workout.events.indices {
                    workout.events[index].startDate = move(workout.events[index].startDate)
                    workout.events[index].endDate = move(workout.events[index].endDate)
                }
                for index in workout.activities.indices {
                    workout.activities[index].startDate = move(workout.activities[index].startDate)
                    workout.activities[index].endDate = workout.activities[index].endDate.map(move)
                    workout.activities[index].statistics = workout.activities[index].statistics.map { $0.shifted(by: seconds) }
                }
                workout.statistics = workout.statistics.map { $0.shifted(by: seconds) }
                workout.metadata = workout.metadata.moved(by: seconds, onto: base)
                return .workout(workout)
            }
        } catch {
            // Moving every date by the same amount keeps intervals and membership valid.
            preconditionFailure("a record moved in time stopped being valid: \(error)")
        }
    }
}

extension QuantitySample {
    /// The sample with both dates moved by `seconds`, metadata unchanged.
    func shifted(by seconds: Double) throws(SampleError) -> QuantitySample {
        try QuantitySample(
            id: id, type: type, quantity: quantity, start: startDate.addingTimeInterval(seconds),
            end: endDate.addingTimeInterval(seconds), device: device, metadata: metadata)
    }

    fileprivate func moved(by seconds: Double, onto base: ClockBase) throws(SampleError) -> QuantitySample {
        var sample = try shifted(by: seconds)
        sample.metadata = metadata.moved(by: seconds, onto: base)
        return sample
    }
}

extension QuantityStatistics {
    /// The statistics with their dates moved by `seconds`.
    func shifted(by seconds: Double) -> QuantityStatistics {
        QuantityStatistics(
            type: type, startDate: startDate.addingTimeInterval(seconds), endDate: endDate.addingTimeInterval(seconds),
            sampleCount: sampleCount, sum: sum, average: average, minimum: minimum, maximum: maximum,
            mostRecent: mostRecent, mostRecentDate: mostRecentDate?.addingTimeInterval(seconds))
    }
}
