public import BLETransport
/// The life of one followed device across link losses, as a pure value: inputs are events,
/// outputs are the next action. The source performs the actions with the transport and the
/// injected clock; tests drive the machine directly.
///
/// Never gives up: every failure leads to a backoff and another attempt, or to waiting for the
/// device to be discovered again when its object is gone.
public struct ReconnectStateMachine: Sendable, Hashable {
    /// Where the device is in its life cycle.
    public enum State: Hashable, Sendable {
        case idle
        case connecting
        case connected
        case backingOff(Duration)
        case awaitingRediscovery
    }

    /// What the driver must do next.
    public enum Action: Hashable, Sendable {
        /// Call `connect(to:)`.
        case connect
        /// Sleep on the clock, then report ``delayElapsed(devicePresent:)``.
        case sleep(Duration)
        /// Wait until discovery reports the device again, then report ``rediscovered()``.
        case awaitRediscovery
    }

    /// The backoff settings.
    public let policy: ReconnectPolicy
    /// The current state.
    public private(set) var state: State = .idle
    /// Consecutive failures since the last connection that delivered data.
    public private(set) var failedAttempts = 0
    /// Connections made so far (the first one included).
    public private(set) var connections = 0
    /// Link losses so far; each one is a gap in the heartbeat series.
    public private(set) var gaps = 0
    /// Whether "no Bluetooth" was already logged for the current outage.
    public private(set) var unavailableReported = false

    /// A machine for a device not yet connected.
    public init(policy: ReconnectPolicy) {
        self.policy = policy
    }

    /// Starts following a device that discovery just reported.
    public mutating func start() -> Action {
        state = .connecting
        return .connect
    }

    /// The connection is up (GATT services resolved). The failure count is kept until the
    /// connection proves healthy (``receivedData()``), so a link that drops right after every
    /// connect, or whose subscription fails, still backs off.
    public mutating func connected() {
        state = .connected
        connections += 1
        unavailableReported = false
    }

    /// The connection delivered a notification: it is healthy, the backoff starts over.
    public mutating func receivedData() {
        failedAttempts = 0
    }

    /// A connection attempt failed with `code`.
    /// - Returns: `.awaitRediscovery` when the device object is gone (`.notFound`) or discovery
    ///   said it was lost; otherwise a backoff sleep (`.inProgress`, `.connectFailed`,
    ///   `.unavailable` and anything else are all retried).
    public mutating func connectFailed(_ code: BLETransportError.Code, devicePresent: Bool) -> Action {
        failedAttempts += 1
        if code == .notFound || !devicePresent {
            state = .awaitingRediscovery
            return .awaitRediscovery
        }
        let delay = policy.delay(afterFailures: failedAttempts)
        state = .backingOff(delay)
        return .sleep(delay)
    }

    /// Whether an `.unavailable` failure should be logged: true once per outage.
    public mutating func shouldLogUnavailable() -> Bool {
        defer { unavailableReported = true }
        return !unavailableReported
    }

    /// The link dropped (the notification streams ended, `.disconnected`, or the subscription
    /// failed). After a healthy connection the wait is `initialDelay`; otherwise the backoff
    /// continues to grow.
    public mutating func linkLost(devicePresent: Bool) -> Action {
        gaps += 1
        failedAttempts += 1
        guard devicePresent else {
            state = .awaitingRediscovery
            return .awaitRediscovery
        }
        let delay = policy.delay(afterFailures: failedAttempts)
        state = .backingOff(delay)
        return .sleep(delay)
    }

    /// A backoff sleep ended.
    public mutating func delayElapsed(devicePresent: Bool) -> Action {
        guard devicePresent else {
            state = .awaitingRediscovery
            return .awaitRediscovery
        }
        state = .connecting
        return .connect
    }

    /// Discovery reported the device again while the machine waited for it.
    public mutating func rediscovered() -> Action {
        state = .connecting
        return .connect
    }
}
