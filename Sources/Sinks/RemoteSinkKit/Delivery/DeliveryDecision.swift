/// What the delivery does next with a batch, decided from the outcome of one attempt.
public enum DeliveryDecision: Sendable, Hashable {
    /// The receiver has the batch: the follower's cursor may pass it.
    case acknowledge
    /// Send the same batch (same key) again after `delay`; `fromServer` when the delay is the
    /// server's Retry-After.
    case retry(after: Duration, reason: String, fromServer: Bool)
    /// The credentials are refused: keep the batch, report, send it again after `delay`.
    case reauthenticate(after: Duration, status: Int)
    /// The receiver refused a batch of several changes: split it into halves (each with its own
    /// key) and deliver each.
    case bisect(status: Int, answer: String)
    /// The receiver refused a single change: store it as a dead letter and go on.
    case deadLetter(status: Int, answer: String)
    /// A graceful stop is under way and the batch would have to wait: leave it; the cursor stays
    /// before it and the next start sends it again. `pause` is the receiver's own Retry-After,
    /// kept for the next start like any other.
    case stop(reason: String, pause: Duration? = nil)
}

extension DeliveryPolicy {
    /// The decision for `outcome`, the outcome of attempt number `attempt` (1-based) to send a
    /// batch of `batchCount` changes. `stopping` is whether a graceful stop was asked for;
    /// `random` (in 0..<1) draws the backoff's jitter. Pure: no I/O, no clock.
    public func decision(
        for outcome: DeliveryOutcome, batchCount: Int, attempt: Int, stopping: Bool, random: Double
    ) -> DeliveryDecision {
        switch outcome {
        case .delivered:
            return .acknowledge
        case .rejected(let status, let answer):
            return batchCount > 1 ? .bisect(status: status, answer: answer) : .deadLetter(status: status, answer: answer)
        case .retry(let reason, _, let retryAfter):
            if stopping { return .stop(reason: reason, pause: retryAfter) }
            return .retry(after: retryAfter ?? delay(attempt: attempt, random: random), reason: reason, fromServer: retryAfter != nil)
        case .authentication(let status):
            if stopping { return .stop(reason: "authentication failed (\(status))") }
            return .reauthenticate(after: delay(attempt: attempt, random: random), status: status)
        }
    }
}
