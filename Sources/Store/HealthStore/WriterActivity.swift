/// How far the store's writer has got: the calls it has begun and ended (a transaction, a
/// checkpoint, a batch of a migration or of retention). A call that has begun and not ended is
/// in progress, waiting for a lock included; what the watchdog watches (``HealthStore/writerActivity``).
public struct WriterActivity: Sendable, Hashable {
    /// Calls begun on the writer.
    public var begun: UInt64 = 0
    /// Calls that ended, committed or failed.
    public var ended: UInt64 = 0
    /// When the call in progress began, on the store's monotonic clock (the `uptime` it was
    /// opened with); nil when none is.
    public var busySince: Duration?

    public init(begun: UInt64 = 0, ended: UInt64 = 0, busySince: Duration? = nil) {
        self.begun = begun
        self.ended = ended
        self.busySince = busySince
    }

    /// Whether a call is in progress.
    public var isBusy: Bool { begun > ended }
}
