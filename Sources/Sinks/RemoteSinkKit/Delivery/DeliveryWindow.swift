/// The delivery window of a ``Follower`` as a pure state machine: the batches begun and not yet
/// passed, what each waits for, and how far the cursor may be committed. Events go in (a batch
/// begun, an answer, a dead letter stored, a stop, a retention skip, time passing); actions come
/// out (send, store dead letters, commit the cursor, report). No I/O, no
/// clock: times are readings of a monotonic clock (``GatewayClock/uptime()``) passed in.
///
/// **Its invariant:** the committed cursor never passes a change that was neither acknowledged
/// nor dead-lettered, whatever order answers come in. The cursor moves through a batch only once
/// every batch up to it is done; a batch given up at a stop stays before the cursor, so the next
/// start sends it again (from its range committed in the store, under its key); the batches after
/// it that were acknowledged (``acknowledgedAhead``) are remembered in the store at the stop and
/// not sent again.
///
/// **A retry is the same request:** a part of a batch is sent again exactly as it was until it is
/// acknowledged, dead-lettered or given up. A batch changes shape only when the receiver refuses
/// it: it is split in halves (each then its own request with its own key) down to the refused
/// change.
///
/// **Retry-After pauses the receiver:** when an answer carries the receiver's own delay, nothing
/// is sent to it before that time, in any batch; answers to requests already in flight still
/// count.
///
/// A value the driver owns and changes from its one task.
public struct DeliveryWindow: Sendable, Hashable {
    /// What the driver does next.
    public enum Action: Sendable, Hashable {
        /// Send `part` (indices into the batch's changes) of batch `slot`; attempt `attempt` of
        /// that part. Answer with ``DeliveryWindow/answer(slot:outcome:now:random:)``.
        case send(slot: Int, part: Range<Int>, attempt: Int)
        /// Store `part` of batch `slot` as dead letters (the receiver refused it alone), then
        /// report ``DeliveryWindow/deadLettered(slot:now:)``.
        case deadLetter(slot: Int, part: Range<Int>, status: Int, answer: String)
        /// Commit the cursor through `anchor`: every change up to it was acknowledged or
        /// dead-lettered; `records` were delivered in the batches it passes.
        case commit(through: Int64, records: Int)
        /// Nothing may be sent to the receiver before `until` (its Retry-After).
        case pause(until: Duration)
        /// The pause is over.
        case resume
        /// Reports: a part failed and is sent again after `delay`.
        case retrying(slot: Int, count: Int, attempt: Int, delay: Duration, reason: String, fromServer: Bool)
        /// Reports: the credentials were refused; sent again after `delay`.
        case reauthenticating(slot: Int, delay: Duration, status: Int)
        /// Reports: the receiver refused a part of `count` changes; it is split in halves.
        case splitting(slot: Int, count: Int, status: Int)
        /// Reports: a part was acknowledged after `attempts` attempts.
        case recovered(slot: Int, attempts: Int)
        /// Reports: a stop is under way while batch `slot` would have to wait; it is given up and
        /// sent again at the next start.
        case abandoned(slot: Int, reason: String)
    }

    /// A batch begun and not yet passed by the cursor.
    struct Slot: Sendable, Hashable {
        enum State: Sendable, Hashable {
            /// The next part waits to be sent at `notBefore`; `attempt` is its attempt number.
            case ready(notBefore: Duration, attempt: Int)
            case sending(attempt: Int)
            case deadLettering
            case done
            /// Given up at a stop.
            case abandoned
        }

        var id: Int
        /// The range (`after`, `through`]; (0, 0] for the dead letters sent again, which are
        /// not on the cursor.
        var after: Int64
        var through: Int64
        /// The parts still to deliver, the next first.
        var parts: [Range<Int>]
        var state: State
        var records = 0
    }

    public let maxInFlight: Int
    public let policy: DeliveryPolicy
    /// The cursor as committed in the store.
    public private(set) var committed: Int64
    /// Nothing is sent before this time (the receiver's Retry-After).
    public private(set) var pausedUntil: Duration?
    /// Whether a graceful stop was requested.
    public private(set) var stopRequested = false
    /// Whether a batch was given up at the stop: no batch begins any more.
    public private(set) var halted = false
    private(set) var slots: [Slot] = []
    /// The batch of dead letters being sent again, apart from the cursor.
    private(set) var detached: Slot?
    private var nextID = 0

    /// A window whose cursor is committed at `committed`, paused until `pausedUntil` when the
    /// receiver asked for a pause before the last stop.
    public init(committed: Int64, maxInFlight: Int, policy: DeliveryPolicy, pausedUntil: Duration? = nil) {
        self.committed = committed
        self.maxInFlight = max(1, maxInFlight)
        self.policy = policy
        self.pausedUntil = pausedUntil
    }

    // MARK: Questions

    /// Whether another batch may begin: the window has room and no batch was given up.
    public var canBegin: Bool { !halted && slots.count < maxInFlight }
    /// Whether no batch is in the window (dead letters aside).
    public var isEmpty: Bool { slots.isEmpty }
    /// How many batches are in the window.
    public var count: Int { slots.count }
    /// Whether dead letters are being sent again.
    public var isRetryingDeadLetters: Bool { detached != nil }
    /// Whether a stop was requested, a batch was given up, and no answer or dead letter is
    /// outstanding: the follower may return (the cursor stays before what was given up).
    public var isFinished: Bool {
        halted && !(slots + (detached.map { [$0] } ?? [])).contains { $0.state.isOutstanding }
    }
    /// The batches done while an older one is not (by the anchor each starts after): what the
    /// driver remembers in the store when it stops, so that the next start does not send them
    /// again. (Not at each answer: that would cost a transaction per batch answered out of order,
    /// and after a crash the batch is only sent again under its key.)
    public var acknowledgedAhead: [Int64] {
        slots.filter { $0.state == .done }.map(\.after)
    }
    /// Whether the receiver is paused at `now`.
    public func isPaused(at now: Duration) -> Bool { pausedUntil.map { now < $0 } ?? false }
    /// The earliest time at which a waiting part becomes due (call ``advance(to:)`` then).
    public var nextWake: Duration? {
        let due = (slots + (detached.map { [$0] } ?? [])).compactMap { slot -> Duration? in
            guard case .ready(let notBefore, _) = slot.state else { return nil }
            return max(notBefore, pausedUntil ?? notBefore)
        }
        return due.min()
    }

    // MARK: Events

    /// A batch of `count` changes in (`after`, `through`] was begun (its range committed in the
    /// store). Returns its slot and what to do: send it at once unless the receiver is paused; an
    /// empty batch is done at once.
    /// - Precondition: ``canBegin``; batches begin in anchor order.
    public mutating func begin(after: Int64, through: Int64, count: Int, now: Duration) -> (slot: Int, actions: [Action]) {
        let id = nextID
        nextID += 1
        // An empty batch (nothing the receiver carries, or acknowledged before the last stop)
        // is done at once.
        let parts = count > 0 ? [0..<count] : []
        slots.append(
            Slot(id: id, after: after, through: through, parts: parts, state: parts.isEmpty ? .done : .ready(notBefore: now, attempt: 1)))
        return (id, settle(now: now))
    }

    /// Dead letters marked for retry are sent again as a batch of `count` changes apart from the
    /// cursor: its answers move nothing.
    /// - Precondition: not ``isRetryingDeadLetters``, `count > 0`.
    public mutating func beginDeadLetterRetry(count: Int, now: Duration) -> (slot: Int, actions: [Action]) {
        let id = nextID
        nextID += 1
        detached = Slot(id: id, after: 0, through: 0, parts: [0..<count], state: .ready(notBefore: now, attempt: 1))
        return (id, settle(now: now))
    }

    /// Whether the dead letters sent again are all done (acknowledged, or refused and stored
    /// again); ends that batch when so, or when it was given up.
    public mutating func finishDeadLetterRetry() -> Bool? {
        guard let detached else { return nil }
        switch detached.state {
        case .done:
            self.detached = nil
            return true
        case .abandoned:
            self.detached = nil
            return false
        default:
            return nil
        }
    }

    /// The receiver's answer to the attempt sent for batch `slot`; `random` (in 0..<1) draws the
    /// backoff's jitter. An answer for a batch no longer in the window (skipped by retention) is
    /// ignored.
    public mutating func answer(slot id: Int, outcome: DeliveryOutcome, now: Duration, random: Double) -> [Action] {
        var actions: [Action] = []
        if var slot = slot(id), case .sending(let attempt) = slot.state, let part = slot.parts.first {
            let decision = policy.decision(
                for: outcome, batchCount: part.count, attempt: attempt, stopping: stopRequested, random: random)
            switch decision {
            case .acknowledge:
                slot.records += part.count
                if attempt > 1 { actions.append(.recovered(slot: id, attempts: attempt)) }
                slot.parts.removeFirst()
                slot.state = slot.parts.isEmpty ? .done : .ready(notBefore: now, attempt: 1)
            case .deadLetter(let status, let answer):
                slot.state = .deadLettering
                actions.append(.deadLetter(slot: id, part: part, status: status, answer: answer))
            case .bisect(let status, _):
                actions.append(.splitting(slot: id, count: part.count, status: status))
                let middle = part.lowerBound + part.count / 2
                slot.parts.replaceSubrange(0..<1, with: [part.lowerBound..<middle, middle..<part.upperBound])
                slot.state = .ready(notBefore: now, attempt: 1)
            case .retry(let delay, let reason, let fromServer):
                actions.append(.retrying(slot: id, count: part.count, attempt: attempt, delay: delay, reason: reason, fromServer: fromServer))
                slot.state = .ready(notBefore: now + delay, attempt: attempt + 1)
                if fromServer { actions += pause(until: now + delay) }
            case .reauthenticate(let delay, let status):
                actions.append(.reauthenticating(slot: id, delay: delay, status: status))
                slot.state = .ready(notBefore: now + delay, attempt: attempt + 1)
            case .stop(let reason, let delay):
                slot.state = .abandoned
                halted = true
                // A pause asked for during the stop binds the next start as any other.
                if let delay { actions += pause(until: now + delay) }
                actions.append(.abandoned(slot: id, reason: reason))
            }
            replace(slot)
        }
        return actions + settle(now: now)
    }

    /// The receiver asked for a pause until `until`: it holds unless a longer one does.
    private mutating func pause(until: Duration) -> [Action] {
        guard pausedUntil.map({ until > $0 }) ?? true else { return [] }
        pausedUntil = until
        return [.pause(until: until)]
    }

    /// The dead letters of batch `slot`'s current part are stored: the part is done.
    public mutating func deadLettered(slot id: Int, now: Duration) -> [Action] {
        if var slot = slot(id), slot.state == .deadLettering {
            slot.parts.removeFirst()
            slot.state = slot.parts.isEmpty ? .done : .ready(notBefore: now, attempt: 1)
            replace(slot)
        }
        return settle(now: now)
    }

    /// A graceful stop was requested: a batch that waits (a backoff, a pause) is given up at once
    /// and the window halts; batches sending on count when their answers come. Without a waiting
    /// batch the follower goes on sending what the store holds.
    public mutating func requestStop(now: Duration) -> [Action] {
        stopRequested = true
        return settle(now: now)
    }

    /// Retention moved the cursor to `anchor` (committed by the driver): the batches through it
    /// leave the window, and answers for them are ignored.
    public mutating func skip(through anchor: Int64, now: Duration) -> [Action] {
        committed = max(committed, anchor)
        slots.removeAll { $0.through <= anchor }
        return settle(now: now)
    }

    /// Time passed: sends the parts that are due.
    public mutating func advance(to now: Duration) -> [Action] {
        settle(now: now)
    }

    // MARK: Transitions

    /// Batch `id`, if it is still in the window.
    private func slot(_ id: Int) -> Slot? {
        if let detached, detached.id == id { return detached }
        return slots.first { $0.id == id }
    }

    /// Puts `slot` back in its place.
    private mutating func replace(_ slot: Slot) {
        if detached?.id == slot.id {
            detached = slot
        } else if let index = slots.firstIndex(where: { $0.id == slot.id }) {
            slots[index] = slot
        }
    }

    /// After every event: gives up what waits once stopping, commits the finished prefix, and
    /// sends what is due.
    private mutating func settle(now: Duration) -> [Action] {
        var actions: [Action] = []
        let paused = isPaused(at: now)
        if stopRequested {
            // A part waiting for its time (a backoff, the receiver's pause) would have to wait: the
            // stop gives it up. Once one is given up nothing more is sent: the cursor cannot pass
            // it, and the receiver is failing.
            for index in slots.indices {
                guard case .ready(let notBefore, let attempt) = slots[index].state else { continue }
                if halted || paused || notBefore > now || attempt > 1 {
                    slots[index].state = .abandoned
                    halted = true
                    actions.append(.abandoned(slot: slots[index].id, reason: "stopping"))
                }
            }
            if case .ready = detached?.state {
                detached?.state = .abandoned
            }
            // Giving up one batch halts the window: give up the ready ones before it too.
            if halted {
                for index in slots.indices where slots[index].state.isReady {
                    slots[index].state = .abandoned
                    actions.append(.abandoned(slot: slots[index].id, reason: "stopping"))
                }
            }
        }
        // The cursor passes the done prefix only.
        var through: Int64?
        var records = 0
        while let first = slots.first, first.state == .done {
            slots.removeFirst()
            through = first.through
            records += first.records
        }
        if let through, through > committed {
            committed = through
            actions.append(.commit(through: through, records: records))
        }
        // Send what is due, unless the receiver asked for a pause.
        if !paused {
            if pausedUntil != nil {
                pausedUntil = nil
                actions.append(.resume)
            }
            for index in slots.indices {
                guard case .ready(let notBefore, let attempt) = slots[index].state, notBefore <= now, let part = slots[index].parts.first
                else { continue }
                slots[index].state = .sending(attempt: attempt)
                actions.append(.send(slot: slots[index].id, part: part, attempt: attempt))
            }
            if var slot = detached, case .ready(let notBefore, let attempt) = slot.state, notBefore <= now, let part = slot.parts.first {
                slot.state = .sending(attempt: attempt)
                detached = slot
                actions.append(.send(slot: slot.id, part: part, attempt: attempt))
            }
        }
        return actions
    }
}

extension DeliveryWindow.Slot.State {
    /// Waiting on something outside the window: an answer, or a dead letter being stored.
    var isOutstanding: Bool {
        switch self {
        case .sending, .deadLettering: true
        default: false
        }
    }

    var isReady: Bool {
        if case .ready = self { return true }
        return false
    }
}
