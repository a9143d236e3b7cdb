public import SampleBus

/// The receiving end of a remote sink: what turns a batch of the store's changes into requests
/// (HTTP) or messages (MQTT) and says what became of them. The ``Follower`` does the rest (the
/// cursor, ranges, retries, bisection, dead letters, retention), the same for every remote sink.
public protocol RemoteReceiver: Sendable {
    /// Where changes go, for logs and status: `https://repo.example/ingest`, `127.0.0.1:1883`.
    var destination: String { get }

    /// Readies the receiver (loads its library, starts connecting) when the follower starts.
    /// Never throws: a receiver that cannot get ready reports why (log and status) and fails
    /// each ``send(_:context:)`` with a retryable outcome until it can.
    func prepare(context: FollowerContext) async

    /// Every setting besides a batch's changes that shapes what ``send(_:context:)`` sends (its
    /// format and the options that change the bytes: the HTTP sink's `format`, its
    /// `quantitySeries` form, FHIR's patient reference, `gzip`), as a stable text. The follower mixes it into each batch's key
    /// (``BatchKey``), so that a key names one payload also when the operator changes the
    /// configuration between runs. The same settings must give the same text on every run.
    var payloadIdentity: String { get }

    /// Whether the receiver can carry `change` at all (FHIR has no heartbeat series). Changes it
    /// cannot carry are passed over: the cursor moves past them.
    func accepts(_ change: FollowedChange) -> Bool

    /// Sends one batch and waits for the receiver's answer. Never throws: every failure is an
    /// outcome. The same batch may be sent again (a retry, a restart): a receiver must build the
    /// same request from it, from its changes and its ``payloadIdentity``'s settings only, so
    /// that the batch's key names that one request.
    func send(_ batch: FollowerBatch, context: FollowerContext) async -> DeliveryOutcome

    /// Releases connections (the follower is stopping).
    func close() async
}

extension RemoteReceiver {
    public func close() async {}
}
