import AsyncPrimitives
import FoundationEssentials
public import GatewayRuntime

/// One Bluetooth adapter's connection scheduler, shared by every Bluetooth LE source on it
/// (``BluetoothAdapters`` holds one per adapter for the gateway).
///
/// - One connection attempt at a time: BlueZ answers `InProgress` to a second one.
/// - A slot budget: at most `limits.connections` devices followed on the adapter at once, by
///   all its sources together (cheap dongles hold 5 to 7 links); a followed device keeps its
///   slot while it reconnects.
/// - Fair order: attempts are served first come, first served, so a device that keeps failing
///   goes to the back of the line behind devices that waited.
/// - A retry budget: at most `limits.failedAttemptsPerMinute` failed attempts in any minute; the
///   next attempt waits until the oldest failure is a minute old.
/// - A watchdog for a wedged adapter: `limits.inProgressLimit` InProgress answers in a row, or
///   discovery running with no advertisement seen for `limits.silentSeconds`, asks for one power
///   cycle (``Verdict/powerCycle(reason:)``); it is re-armed once the adapter sees a device again.
public final class AdapterScheduler: Sendable {
    /// The adapter's limits: the gateway's `bluetooth.adapterLimits`, the same for every adapter.
    public struct Limits: Sendable, Hashable {
        /// Links held at once.
        public var connections = 5
        /// Failed connection attempts allowed in any minute.
        public var failedAttemptsPerMinute = 30
        /// InProgress answers in a row that mean the adapter is wedged.
        public var inProgressLimit = 5
        /// Seconds of discovery without any advertisement that mean the adapter is wedged.
        public var silentSeconds: Double = 600

        /// Every limit at its default.
        public init() {}

        /// The limits given, every other at its default.
        public init(connections: Int? = nil, failedAttemptsPerMinute: Int? = nil, inProgressLimit: Int? = nil, silentSeconds: Double? = nil) {
            if let connections { self.connections = connections }
            if let failedAttemptsPerMinute { self.failedAttemptsPerMinute = failedAttemptsPerMinute }
            if let inProgressLimit { self.inProgressLimit = inProgressLimit }
            if let silentSeconds { self.silentSeconds = silentSeconds }
        }
    }

    /// What the watchdog concluded after an attempt or a check.
    public enum Verdict: Sendable, Hashable {
        case healthy
        /// Power-cycle the adapter once, for this reason.
        case powerCycle(reason: String)
    }

    /// A counted view of the scheduler, for status details.
    public struct Snapshot: Sendable, Hashable {
        public var devices: Int
        public var links: Int
        public var attempting: Bool
        public var waiting: Int
        public var failuresInLastMinute: Int
        public var powerCycles: Int
        /// The devices (upper-case addresses, sorted) this adapter hears that wait for one of its
        /// device slots: every adapter that hears them is full.
        public var waitingForSlot: [String] = []

        /// `3/5 devices, 2 links, 1 waiting, 3/30 failed attempts in the last minute, 0 power
        /// cycles`: the slots used, the links, whether an attempt runs (`connecting`), the devices
        /// waiting for their turn to connect, and, when any wait for a slot, `2 waiting for a slot
        /// (AA:…, BB:…)` after them.
        public func summary(_ limits: Limits) -> String {
            "\(devices)/\(limits.connections) devices, \(links) link\(links == 1 ? "" : "s")\(attempting ? ", connecting" : ""), "
                + "\(waiting) waiting, "
                + (waitingForSlot.isEmpty ? "" : "\(waitingForSlot.count) waiting for a slot (\(waitingForSlot.joined(separator: ", "))), ")
                + "\(failuresInLastMinute)/\(limits.failedAttemptsPerMinute) failed attempts in the last minute, "
                + "\(powerCycles) power cycle\(powerCycles == 1 ? "" : "s")"
        }
    }

    struct State: Sendable {
        var queue: [UInt64] = []
        var nextTicket: UInt64 = 0
        var attempting = false
        var links = 0
        var assigned = 0
        /// When attempts failed, on the monotonic clock (``GatewayClock/uptime()``).
        var failures: [Duration] = []
        var inProgressStreak = 0
        var powerCycles = 0
        /// When an advertisement was last seen, or discovery started seeing none.
        /// When discovery last saw a device, on the monotonic clock: a step of the wall clock
        /// neither fakes a silence nor hides one.
        var lastSeen: Duration
        /// Whether the watchdog may still power-cycle for the current episode.
        var armed = true
        /// Slots given back so far: what ``slotReleased(after:)`` waits on.
        var slotReleases: UInt64 = 0
        /// The devices waiting for a slot of this adapter (``waitsForSlot(_:_:)``).
        var waitingForSlot: Set<String> = []

        func mayStart(_ ticket: UInt64) -> Bool {
            queue.first == ticket && !attempting
        }
    }

    public let adapter: String
    public let limits: Limits
    private let clock: any GatewayClock
    private let state: AsyncCondition<State>

    public init(adapter: String, limits: Limits, clock: any GatewayClock) {
        self.adapter = adapter
        self.limits = limits
        self.clock = clock
        state = AsyncCondition(State(lastSeen: clock.uptime()))
    }

    /// A turn to connect: ``connected(_:)`` or ``failed(_:code:)`` ends it.
    public struct Attempt: Sendable {
        let ticket: UInt64
    }

    /// Takes one of the adapter's device slots; false when all are taken.
    public func claimSlot() -> Bool {
        state.update { state in
            guard state.assigned < limits.connections else { return false }
            state.assigned += 1
            return true
        }
    }

    /// Gives a device slot back (the device is no longer followed), and wakes every
    /// ``slotReleased(after:)``.
    public func releaseSlot() {
        state.update { state in
            state.assigned = max(0, state.assigned - 1)
            state.slotReleases &+= 1
        }
    }

    /// Whether a device slot is free now (``claimSlot()`` may still lose it to another source).
    public var hasFreeSlot: Bool { state.value.assigned < limits.connections }

    /// How many slots were given back so far: the generation ``slotReleased(after:)`` takes.
    public var slotReleaseCount: UInt64 { state.value.slotReleases }

    /// Waits until a slot is given back after `generation` (a ``slotReleaseCount`` read
    /// earlier) and returns the new count: a waiting device's wake-up, with no polling. Throws
    /// `CancellationError` when cancelled.
    public func slotReleased(after generation: UInt64) async throws -> UInt64 {
        try await state.wait { $0.slotReleases != generation }
        return state.value.slotReleases
    }

    /// Marks `device` (its upper-case address) as waiting for one of this adapter's slots, or no
    /// longer: shown in ``snapshot`` and `status`, nothing else.
    public func waitsForSlot(_ device: String, _ waiting: Bool) {
        state.update { state in
            if waiting { state.waitingForSlot.insert(device) } else { state.waitingForSlot.remove(device) }
        }
    }

    /// Waits for this device's turn (first in line, no other attempt running, room in the retry
    /// budget) and starts the attempt. Cancellation leaves the line.
    public func beginAttempt() async throws -> Attempt {
        let ticket = state.update { state -> UInt64 in
            state.nextTicket += 1
            state.queue.append(state.nextTicket)
            return state.nextTicket
        }
        do {
            while true {
                try await state.wait { $0.mayStart(ticket) }
                let now = clock.uptime()
                let budgetWait = state.update { state -> Duration? in
                    state.failures.removeAll { (now - $0).seconds >= 60 }
                    guard state.mayStart(ticket) else { return .zero }
                    if state.failures.count >= limits.failedAttemptsPerMinute, let oldest = state.failures.first {
                        return .seconds(max(0.01, 60 - (now - oldest).seconds))
                    }
                    state.queue.removeFirst()
                    state.attempting = true
                    return nil
                }
                guard let budgetWait else { return Attempt(ticket: ticket) }
                if budgetWait > .zero { try await clock.sleep(for: budgetWait) }
            }
        } catch {
            state.update { $0.queue.removeAll { $0 == ticket } }
            throw error
        }
    }

    /// The attempt connected: the link holds a slot until ``released()``.
    public func connected(_ attempt: Attempt) {
        state.update { state in
            state.attempting = false
            state.links += 1
            state.inProgressStreak = 0
        }
    }

    /// The attempt failed; counts it against the retry budget, and an InProgress answer against
    /// the watchdog (any other failure ends a streak of them).
    public func failed(_ attempt: Attempt, inProgress: Bool) -> Verdict {
        let now = clock.uptime()
        return state.update { state -> Verdict in
            state.attempting = false
            state.failures.append(now)
            guard inProgress else {
                state.inProgressStreak = 0
                return .healthy
            }
            state.inProgressStreak += 1
            guard state.inProgressStreak >= limits.inProgressLimit, state.armed else { return .healthy }
            state.armed = false
            state.powerCycles += 1
            state.inProgressStreak = 0
            return .powerCycle(reason: "\(limits.inProgressLimit) InProgress answers in a row")
        }
    }

    /// The attempt was cancelled before it ended: the turn passes on, nothing is counted.
    public func abandoned(_ attempt: Attempt) {
        state.update { $0.attempting = false }
    }

    /// A link ended: its slot is free.
    public func released() {
        state.update { $0.links = max(0, $0.links - 1) }
    }

    /// Discovery reported an advertisement: the adapter works; re-arms the watchdog, whose
    /// InProgress count starts again if it had fired.
    public func sawAdvertisement() {
        let now = clock.uptime()
        state.update { state in
            state.lastSeen = now
            if !state.armed { state.inProgressStreak = 0 }
            state.armed = true
        }
    }

    /// The silence check, run periodically while discovery runs: a power cycle when nothing
    /// was seen for `silentSeconds` (once per silence).
    public func checkSilence() -> Verdict {
        let now = clock.uptime()
        return state.update { state -> Verdict in
            let silent = (now - state.lastSeen).seconds
            guard silent >= limits.silentSeconds, state.armed else { return .healthy }
            state.armed = false
            state.powerCycles += 1
            return .powerCycle(reason: "discovery saw no device for \(Int(silent)) s")
        }
    }

    public var snapshot: Snapshot {
        let now = clock.uptime()
        let value = state.value
        return Snapshot(
            devices: value.assigned, links: value.links, attempting: value.attempting, waiting: value.queue.count,
            failuresInLastMinute: value.failures.filter { (now - $0).seconds < 60 }.count,
            powerCycles: value.powerCycles, waitingForSlot: value.waitingForSlot.sorted())
    }
}
