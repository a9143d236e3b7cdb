import FoundationEssentials
import HealthModel

/// A session's wait for its device to say who it is: the readings that arrive before then are
/// held (at most `pendingLimit`, the oldest dropped beyond) and counted under the identity the
/// device gives, or under the transport's when the wait times out or the line ends first.
///
/// Events in, decisions out: no I/O and no clock, so every order of answer, timeout, reading and
/// end is tested without a port. A reading is counted once, by whoever receives it from here.
struct IdentificationStateMachine {
    /// A reading held, with the time it arrived.
    typealias Held = (reading: PedometerReading, date: Date)

    /// The identity readings are counted under now: the transport's, until the device answers.
    private(set) var device: Device
    /// Whether readings are counted as they arrive: the device answered, the wait timed out, or
    /// no question was asked.
    private(set) var isIdentified: Bool
    private let transportDevice: Device
    private let pendingLimit: Int
    private var pending: [Held] = []

    /// `asks`: whether the session asks the device who it is (else readings are counted at once).
    init(transportDevice: Device, asks: Bool, pendingLimit: Int) {
        self.transportDevice = transportDevice
        device = transportDevice
        isIdentified = !asks
        self.pendingLimit = pendingLimit
    }

    /// What to do with a reading that arrived.
    enum ReadingDecision: Equatable {
        /// Count it now, under ``device``.
        case count
        /// Held until the device is identified.
        case held
        /// Held, and the oldest held reading dropped to make room: count it as dropped.
        case heldDroppingOldest
    }

    /// A reading arrived at `date`.
    mutating func received(_ reading: PedometerReading, at date: Date) -> ReadingDecision {
        guard !isIdentified else { return .count }
        pending.append((reading, date))
        guard pending.count > pendingLimit else { return .held }
        pending.removeFirst()
        return .heldDroppingOldest
    }

    /// The device said who it is.
    /// - Returns: whether to announce the identity (it is new, or the first), and the readings
    ///   held until now, to count under the new ``device``.
    mutating func identified(as identity: PedometerIdentity) -> (announce: Bool, release: [Held]) {
        let updated = PedometerSession.device(transportDevice, identifiedAs: identity)
        let announce = updated != device || !isIdentified
        device = updated
        isIdentified = true
        return (announce, takePending())
    }

    /// The wait timed out.
    /// - Returns: the readings held, to count under the transport's identity; nil when the
    ///   device had answered already (nothing changes).
    mutating func timedOut() -> [Held]? {
        guard !isIdentified else { return nil }
        isIdentified = true
        return takePending()
    }

    /// The session ends: the readings still held, counted under the transport's identity
    /// rather than lost.
    mutating func ending() -> [Held] {
        takePending()
    }

    private mutating func takePending() -> [Held] {
        defer { pending.removeAll() }
        return pending
    }
}
