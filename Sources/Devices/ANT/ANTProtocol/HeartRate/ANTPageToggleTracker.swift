/// Decides whether a strap's page-specific bytes (1–3) can be believed, from its page-change
/// toggle. Pure: one per strap.
///
/// A current strap flips bit 7 of byte 0 every fourth message; a legacy one never does and its
/// bytes 0–3 are undefined. So page-specific bytes are trusted only once the toggle has been
/// seen to change, and no longer when it then stays put for more than ``maximumRun`` messages
/// in a row (the strap stopped toggling), until it changes again. Heart rate, beat time and
/// beat count are read from every message either way.
public struct ANTPageToggleTracker: Hashable, Sendable {
    /// Messages with the same toggle after which the strap counts as not toggling: twice the
    /// profile's four, so a repeated message never withdraws trust.
    public static let maximumRun = 8

    private var lastToggle: Bool?
    private var run = 0
    private var changed = false

    /// A tracker that has seen nothing.
    public init() {}

    /// Records the toggle of one message and says whether its page-specific bytes are trusted.
    public mutating func observe(toggle: Bool) -> Bool {
        defer { lastToggle = toggle }
        guard let last = lastToggle else {
            run = 1
            return false
        }
        if toggle != last {
            changed = true
            run = 1
        } else {
            run += 1
        }
        return changed && run <= Self.maximumRun
    }

    /// Whether the last message's page-specific bytes were trusted.
    public var isTrusted: Bool { changed && run <= Self.maximumRun && lastToggle != nil }

    /// Forgets everything (the strap was lost).
    public mutating func reset() { self = Self() }
}
