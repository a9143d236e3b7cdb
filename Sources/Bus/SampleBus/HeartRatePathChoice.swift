public import HealthModel

/// Which path feeds a strap's heart rate when the strap is heard on several at once: a pure
/// state machine, events in (a heart-rate record from a path, at a monotonic time), decisions
/// out (pass it on or drop it). ``HeartRateArbiter`` drives it on the bus.
///
/// A **group** is one wearer's heart rate: a participant, or without one the strap itself
/// (``HealthModel/Device/strapIdentity``). A **path** is how the records came
/// (``HealthModel/Device/pathIdentity``): a connection's address, a broadcast's Polar id, an
/// ANT+ device number. The rule, per group:
/// - one path owns the group and its heart-rate records pass; the others' are dropped, so no
///   second copy of a heart rate reaches the bus;
/// - a path that carries RR intervals (it published a heartbeat series since it was last
///   silent) takes the group over at once from one that does not, and keeps it while it lasts;
/// - a path silent for longer than ``handoverAfter`` has dropped: the next record of another
///   path of the group takes over, so a handover happens within ``handoverAfter`` plus that
///   path's interval between records.
public struct HeartRatePathChoice: Sendable {
    /// What to do with a record.
    public enum Decision: Sendable, Equatable {
        /// The record is the group's: publish it.
        case pass
        /// Another path owns the group: drop the record.
        case drop
    }

    private struct Path {
        var lastHeard: Duration
        /// Whether the path sent a heartbeat series since it was last silent.
        var carriesRR: Bool
    }

    private struct Group {
        var paths: [DeviceIdentity: Path] = [:]
        var owner: DeviceIdentity?
        var lastHeard: Duration
    }

    /// How long the owning path may be silent before another takes over.
    public let handoverAfter: Duration
    /// Groups kept at most; past it, groups silent for longer than ``handoverAfter`` are
    /// forgotten (they start afresh when heard again, which changes no decision).
    public let groupLimit: Int
    private var groups: [String: Group] = [:]
    /// Times a group's feeding path changed from one path to another (a dropped path handed
    /// over, or a path with RR intervals took over); a group's first path is no handover.
    public private(set) var handovers = 0

    /// A choice with no path heard yet.
    /// - Parameter handoverAfter: at most 2 s minus a strap's interval between records for the
    ///   handover to happen within 2 s; 1.5 s by default (a strap notifies about once a second,
    ///   so one late notification does not hand the group over).
    public init(handoverAfter: Duration = .milliseconds(1500), groupLimit: Int = 256) {
        self.handoverAfter = handoverAfter
        self.groupLimit = groupLimit
    }

    /// Decides for one heart-rate record of `group` that came by `path` at `now` (a monotonic
    /// time; only differences matter). `carriesRR`: the record is a heartbeat series.
    public mutating func decide(group key: String, path: DeviceIdentity, carriesRR: Bool, at now: Duration) -> Decision {
        if groups[key] == nil, groups.count >= groupLimit { forgetSilentGroups(at: now) }
        var group = groups[key] ?? Group(lastHeard: now)
        // Paths silent too long have dropped: they carry no RR until they send a series again.
        group.paths = group.paths.filter { now - $0.value.lastHeard <= handoverAfter }
        var this = group.paths[path] ?? Path(lastHeard: now, carriesRR: false)
        this.lastHeard = now
        this.carriesRR = this.carriesRR || carriesRR
        let owner = group.owner.flatMap { group.paths[$0] }
        let decision: Decision
        if group.owner == path || owner == nil {
            if let previous = group.owner, previous != path { handovers += 1 }
            group.owner = path
            decision = .pass
        } else if let owner, this.carriesRR && !owner.carriesRR {
            handovers += 1
            group.owner = path
            decision = .pass
        } else {
            decision = .drop
        }
        group.paths[path] = this
        group.lastHeard = now
        groups[key] = group
        return decision
    }

    /// The path that owns `group` now, if any was heard.
    public func owner(of group: String) -> DeviceIdentity? { groups[group]?.owner }

    private mutating func forgetSilentGroups(at now: Duration) {
        groups = groups.filter { now - $0.value.lastHeard <= handoverAfter }
    }
}
