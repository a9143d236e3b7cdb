public import GatewayRuntime
import AsyncPrimitives

/// A plugin's read-only view of the gateway's stop request (``ShutdownSignal``), on
/// ``SinkContext/stopRequest``.
///
/// A graceful stop lets sinks drain, so a sink does not see it as cancellation; what it must not
/// do during one is wait on a timer. Sinks race their backoff and retry sleeps against the stop
/// with ``sleep(for:on:)``, and may register ``onForcedStop(_:)`` to interrupt a blocked call
/// when the stop is forced.
public struct StopRequest: Sendable {
    private let signal: ShutdownSignal?

    /// The view of `signal`.
    public init(_ signal: ShutdownSignal) {
        self.signal = signal
    }

    private init() {
        signal = nil
    }

    /// A stop that never comes: for a sink run outside a gateway (tests, benchmarks).
    public static let never = StopRequest()

    /// Whether a graceful (or forced) stop has been requested.
    public var isRequested: Bool { (signal?.stage ?? .running) >= .stopping }

    /// Returns when a stop is requested, or when the calling task is cancelled.
    public func wait() async {
        guard let signal else {
            // Never stopped: wait for cancellation only.
            await ShutdownSignal().wait(for: .stopping)
            return
        }
        await signal.wait(for: .stopping)
    }

    /// How a ``sleep(for:on:)`` ended.
    public enum Wake: Sendable, Hashable {
        /// The whole duration passed.
        case elapsed
        /// A stop was requested first (or before the call).
        case stopRequested
    }

    /// Sleeps for `duration` on `clock`, unless a stop is requested first: a backoff or retry
    /// wait that a graceful stop cuts short.
    /// - Throws: `CancellationError` when the task is cancelled (a forced stop cancels sinks).
    public func sleep(for duration: Duration, on clock: any GatewayClock) async throws -> Wake {
        guard let signal else {
            try await clock.sleep(for: duration)
            return .elapsed
        }
        if isRequested { return .stopRequested }
        let outcome = try await race(sleep: { try await clock.sleep(for: duration) }) {
            await signal.wait(for: .stopping)
        }
        // `wait(for:)` also returns when cancelled; then the race throws CancellationError.
        try Task.checkCancellation()
        switch outcome {
        case .event: return .stopRequested
        case .timedOut: return .elapsed
        }
    }

    /// Runs `action` when the stop is forced (second signal or deadline), synchronously, from
    /// the thread that forces it: for interrupting a blocked call (`sqlite3_interrupt`, closing
    /// a descriptor). `action` must be quick and must not block. Cancel the returned observation
    /// when the resource it touches goes away.
    @discardableResult
    public func onForcedStop(_ action: @escaping @Sendable () -> Void) -> ShutdownSignal.Observation {
        guard let signal else { return ShutdownSignal.Observation(cancel: {}) }
        return signal.onStage(.forced, action)
    }
}
