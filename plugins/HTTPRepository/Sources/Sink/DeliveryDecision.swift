/// What the delivery does next with a batch, decided from the outcome of one attempt.
public enum DeliveryDecision: Sendable, Hashable {
    /// The repository has the batch: delete it from the outbox.
    case acknowledge
    /// Send the same batch (same key) again after `delay`; `fromServer` when the delay is the
    /// server's Retry-After.
    case retry(after: Duration, reason: String, fromServer: Bool)
    /// The credentials are refused: keep the batch, report, send it again after `delay`.
    case reauthenticate(after: Duration, status: Int)
    /// The repository refused a batch of several records: split it into halves (stored with
    /// derived keys) and deliver each.
    case bisect(status: Int, answer: String)
    /// The repository refused a single record: move it to the dead letters.
    case deadLetter(status: Int, answer: String)
    /// A graceful stop is under way and the batch would have to wait: leave it in the outbox for
    /// the next start.
    case stop(reason: String)
}

extension DeliveryPolicy {
    /// The decision for `outcome`, the outcome of attempt number `attempt` (1-based) to send a
    /// batch of `batchCount` records. `stopping` is whether a graceful stop was asked for;
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
            if stopping { return .stop(reason: reason) }
            return .retry(after: retryAfter ?? delay(attempt: attempt, random: random), reason: reason, fromServer: retryAfter != nil)
        case .authentication(let status):
            if stopping { return .stop(reason: "authentication failed (\(status))") }
            return .reauthenticate(after: delay(attempt: attempt, random: random), status: status)
        }
    }

    /// The outcome of a request that got no answer (refused connection, timeout, TLS failure):
    /// always worth retrying.
    public static func outcome(of error: HTTPTransportError) -> DeliveryOutcome {
        .retry(reason: error.description, status: nil, retryAfter: nil)
    }
}
