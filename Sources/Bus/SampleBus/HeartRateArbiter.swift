public import GatewayRuntime
public import HealthModel
import Synchronization

/// Feeds each wearer's heart rate once when a strap is heard on several paths at once
/// (connected and broadcasting; a dual ANT+/Bluetooth strap a participant lists both ways).
///
/// The bus runs every published batch through it before any sink sees the batch
/// (``SamplePublisher``), so the store, the workouts and the board all get the same one copy.
/// Heart-rate samples and heartbeat series are decided by ``HeartRatePathChoice`` on the
/// injected clock's monotonic time; every other record passes. `group` names the wearer a
/// device's records belong to (the executable passes the participant wearing it, else the
/// strap's own identity); nil: the records pass undecided.
///
/// Isolation: the choice lives in a `Mutex`; `admit` may be called from any task.
public final class HeartRateArbiter: Sendable {
    private let clock: any GatewayClock
    private let group: @Sendable (Device) -> String?
    private let choice: Mutex<(choice: HeartRatePathChoice, dropped: Int)>

    /// An arbiter deciding on `clock`'s monotonic time.
    /// - Parameters:
    ///   - group: the wearer of a device's records; by default the strap
    ///     (``HealthModel/Device/strapIdentity``), so the two paths of one Polar strap are one.
    ///   - choice: the rule and its handover time.
    public init(
        clock: any GatewayClock, choice: HeartRatePathChoice = HeartRatePathChoice(),
        group: @escaping @Sendable (Device) -> String? = HeartRateArbiter.strapGroup
    ) {
        self.clock = clock
        self.group = group
        self.choice = Mutex((choice, 0))
    }

    /// The default grouping: the strap's own identity.
    public static let strapGroup: @Sendable (Device) -> String? = { $0.strapIdentity.map { "strap:\($0.canonical)" } }

    /// Heart-rate records dropped because another path fed their wearer.
    public var droppedCount: Int { choice.withLock { $0.dropped } }

    /// Times a wearer's feeding path changed (``HeartRatePathChoice/handovers``).
    public var handoverCount: Int { choice.withLock { $0.choice.handovers } }

    /// Both counts at once, as `healthgate status` and `/metrics` report them.
    public var counts: Counts { choice.withLock { Counts(droppedReadings: $0.dropped, handovers: $0.choice.handovers) } }

    /// What the arbiter did so far.
    public struct Counts: Hashable, Sendable, Codable {
        /// Heart-rate records (readings and heartbeat series) dropped as another path's copy.
        public var droppedReadings: Int
        /// Times a wearer's feeding path changed.
        public var handovers: Int

        /// Creates counts.
        public init(droppedReadings: Int, handovers: Int) {
            self.droppedReadings = droppedReadings
            self.handovers = handovers
        }
    }

    /// The path that feeds `group` now.
    public func owner(of group: String) -> DeviceIdentity? { choice.withLock { $0.choice.owner(of: group) } }

    /// `records` without the heart rate another path of the same wearer feeds. Order is kept.
    /// A batch's heart rate and its heartbeat series carry RR together: a path that brings a
    /// series in the batch is decided as carrying RR for all of its records there, so a
    /// connection coming back takes its wearer over with its first heart rate, not its second.
    public func admit(_ records: [HealthRecord]) -> [HealthRecord] {
        // Most batches carry no heart rate, or only the one path's: decide without copying then.
        var kept: [HealthRecord]?
        var seriesPaths: Set<DeviceIdentity> = []
        for record in records {
            if case .heartbeatSeries(let series) = record, let path = series.device?.pathIdentity { seriesPaths.insert(path) }
        }
        for (index, record) in records.enumerated() {
            let device: Device?
            switch record {
            case .quantity(let sample) where sample.type == .heartRate: device = sample.device
            case .heartbeatSeries(let series): device = series.device
            default:
                kept?.append(record)
                continue
            }
            guard let device, let path = device.pathIdentity, let key = group(device) else {
                kept?.append(record)
                continue
            }
            let now = clock.uptime()
            let carriesRR = seriesPaths.contains(path)
            let decision = choice.withLock { state in
                let decision = state.choice.decide(group: key, path: path, carriesRR: carriesRR, at: now)
                if decision == .drop { state.dropped += 1 }
                return decision
            }
            switch decision {
            case .pass: kept?.append(record)
            case .drop: if kept == nil { kept = Array(records[..<index]) }
            }
        }
        return kept ?? records
    }
}
