/// When to send a checkpoint: only when the offset has advanced since the last one, and at most
/// once per ``interval``, so that a file read in many small batches does not make the gateway
/// commit a transaction per batch.
///
/// A pure state machine: offsets and instants in, a decision out.
public struct CheckpointPacer: Sendable {
    /// The shortest time between two checkpoints.
    public let interval: Duration
    /// The offset of the last checkpoint sent (or of the one resumed from).
    public private(set) var sent: Int
    /// When the last checkpoint was sent; nil: none yet in this run.
    private var sentAt: ContinuousClock.Instant?

    /// A pacer starting at `offset`: the resumed checkpoint's, which needs no sending again.
    public init(offset: Int, interval: Duration = .milliseconds(500)) {
        sent = offset
        self.interval = interval
    }

    /// Whether `consumed` is past the last checkpoint: one is still to be sent.
    public func isPending(consumed: Int) -> Bool { consumed > sent }

    /// The offset to send a checkpoint of now, given what is `consumed` at `now`; nil when the
    /// offset has not advanced or the last checkpoint is less than ``interval`` old.
    public mutating func checkpoint(consumed: Int, at now: ContinuousClock.Instant) -> Int? {
        guard isPending(consumed: consumed) else { return nil }
        if let sentAt, now - sentAt < interval { return nil }
        sent = consumed
        sentAt = now
        return consumed
    }

    /// Starts again at `offset` (the file was truncated): the next checkpoint is that of the new
    /// content, whenever its offset passes this one.
    public mutating func reset(offset: Int) {
        sent = offset
    }
}
