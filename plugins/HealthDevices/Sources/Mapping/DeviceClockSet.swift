public import FoundationEssentials

/// The gateway set a device's clock during a connection: when, and the offset of the clock
/// after it. ``ClinicalRecordMapper`` uses it to tell the records the device stamped before the
/// set (with the offset read at connection) from those it stamped after (with this offset).
///
/// The rule: a time stamp is the new clock's when, read with the new offset, it is not before
/// the set (1 s of tolerance: time stamps are whole seconds) and not after the record arrived
/// (1 s of tolerance). Every other time stamp is the old clock's.
///
/// Its limit: when the old clock ran fast by d seconds, a record stamped in the last d seconds
/// before the set also reads as "not before the set" on the new clock. The arrival time tells it
/// apart when it arrives within d seconds of the set (read with the new offset it would lie in
/// the future), as records pushed or downloaded on connection do; one that arrives later is
/// taken for the new clock's and is off by d.
public struct DeviceClockSet: Hashable, Sendable {
    /// The gateway's time just before it wrote the device's clock.
    public var at: Date
    /// Seconds to add to a time stamp of the new clock (read as if UTC): 0 for a clock set to UTC.
    public var offset: TimeInterval

    public init(at: Date, offset: TimeInterval = 0) {
        self.at = at
        self.offset = offset
    }

    /// Whether `timestamp` was stamped by the clock as the gateway set it; see the rule above.
    public func stampedAfter(_ timestamp: DeviceTimestamp, receivedAt: Date) -> Bool {
        let instant = timestamp.wallClockSeconds + offset
        return instant >= at.timeIntervalSince1970 - 1 && instant <= receivedAt.timeIntervalSince1970 + 1
    }
}
