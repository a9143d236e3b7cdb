import FoundationEssentials

/// Decides which repeated warnings reach the log: the first of each kind at once, then at most
/// one per ``interval`` per kind, carrying the count of those held back in between.
///
/// Why: a line that floods garbage produced more log than input (5.4 bytes of warnings per byte
/// read). Every occurrence is still counted in the source's status; only the log is thinned.
/// Pure and deterministic (dates in, decisions out), so it is tested without a clock.
struct WarningLimiter<Kind: Hashable>: Sendable where Kind: Sendable {
    /// The shortest time between two logged warnings of one kind.
    let interval: TimeInterval
    private var lastLogged: [Kind: Date] = [:]
    private var held: [Kind: Int] = [:]
    /// Warnings held back so far, every kind.
    private(set) var suppressedTotal = 0

    init(interval: TimeInterval = 10) {
        self.interval = interval
    }

    /// Whether a warning of `kind` at `date` is logged; if so, how many of its kind were held
    /// back since the last one logged.
    mutating func admit(_ kind: Kind, at date: Date) -> (log: Bool, heldBack: Int) {
        if let last = lastLogged[kind], date.timeIntervalSince(last) < interval, date >= last {
            held[kind, default: 0] += 1
            suppressedTotal += 1
            return (false, 0)
        }
        lastLogged[kind] = date
        let heldBack = held.removeValue(forKey: kind) ?? 0
        return (true, heldBack)
    }
}
