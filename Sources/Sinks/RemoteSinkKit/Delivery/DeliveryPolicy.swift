import GatewayRuntime

/// What a receiver's answer (or the lack of one) means for the batch that was sent.
public enum DeliveryOutcome: Sendable, Hashable {
    /// The receiver has the changes (HTTP 2xx; every MQTT PUBACK accepting).
    case delivered
    /// No answer, a timeout, a server error or an answer to wait on (HTTP 5xx, 408, 429): send
    /// the same batch again later, after `retryAfter` when the receiver said so.
    case retry(reason: String, status: Int?, retryAfter: Duration?)
    /// The credentials are refused (HTTP 401, 403; MQTT "not authorized"). Keep the batch, back
    /// off, report.
    case authentication(status: Int)
    /// Something in the batch is refused (any other HTTP 4xx): split it to find the change.
    case rejected(status: Int, answer: String)
}

/// Turns outcomes into decisions and computes retry delays: exponential backoff with jitter,
/// the receiver's own delay (HTTP Retry-After) when it gave one. Every remote sink uses it.
public struct DeliveryPolicy: Sendable, Hashable {
    public var initialDelay: Duration
    public var maximumDelay: Duration
    public var jitter: Double
    /// A Retry-After longer than this is clamped, so a misconfigured server cannot park a
    /// follower for days.
    public var maximumRetryAfter: Duration = .seconds(3600)

    public init(initialDelay: Duration, maximumDelay: Duration, jitter: Double) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
    }

    /// The delay before retry number `attempt` (1-based): `initialDelay × 2^(attempt−1)`, at most
    /// `maximumDelay`, times a factor in `1 ± jitter` drawn from `random` (a value in 0..<1).
    public func delay(attempt: Int, random: Double) -> Duration {
        var seconds = initialDelay.seconds
        let cap = maximumDelay.seconds
        for _ in 1..<max(1, attempt) where seconds < cap { seconds *= 2 }
        seconds = min(seconds, cap)
        seconds *= 1 + jitter * (2 * random - 1)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
