import GatewayRuntime
import RemoteSinkKit
import XCTest

/// An exhaustive search of the delivery window's behaviour: for windows of one to four batches,
/// every interleaving of answers (acknowledged, failed, failed with Retry-After, refused),
/// dead letters stored, time passing and a stop at any point, checked against a reference model
/// kept here. Not a sample: every reachable state is visited once (states are hashed).
///
/// Checked at every step:
/// - the committed cursor never passes a change that was neither acknowledged nor dead-lettered;
/// - the same-key rule: every attempt sends exactly the part the reference model expects (the
///   whole batch until the receiver refuses it, then its halves in order), and a retry sends
///   the part it retries;
/// - nothing is sent while the receiver's Retry-After lasts;
/// - once a batch was given up at the stop, no new batch begins.
///
/// Checked where no event is left: without a stop, the cursor is past every batch; with one,
/// the follower may return, and a restart from what the store then holds (the cursor, the
/// ranges begun, which were remembered) sends the oldest batch that is not done first, whole.
final class DeliveryWindowModelCheckTests: XCTestCase {
    /// One configuration: `batches` batches of two changes each, those in `poisoned` holding a
    /// change the receiver refuses (at index 1), up to `maxInFlight` in the window.
    struct Configuration: CustomStringConvertible {
        var batches: Int
        var poisoned: Set<Int>
        var maxInFlight: Int
        var description: String { "\(batches) batches, poisoned \(poisoned.sorted()), maxInFlight \(maxInFlight)" }
    }

    static let changesPerBatch = 2
    static let retryAfter = Duration.seconds(2)
    static let policy = DeliveryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(4), jitter: 0)

    /// A send the window asked for and the receiver has not answered.
    struct Send: Hashable {
        var slot: Int
        var part: Range<Int>
        var attempt: Int
    }

    struct State: Hashable {
        var window: DeliveryWindow
        var now: Duration = .zero
        var begun = 0
        var inFlight: Set<Send> = []
        /// Dead letters the window asked to store, not yet stored.
        var deadLettering: Set<Int> = []
        /// Per batch: which of its changes the receiver has, or which were dead-lettered.
        var acknowledged: Set<[Int]> = []
        var deadLettered: Set<[Int]> = []
        /// The reference model of each batch's parts still to deliver, the next first.
        var parts: [Int: [Range<Int>]] = [:]
        /// The part last sent per batch, and whether its answer asked for a retry.
        var lastSent: [Int: Range<Int>] = [:]
        var retrying: Set<Int> = []
        /// Retry answers already given per batch (one each, to keep the search finite).
        var failures: [Int: Int] = [:]
        /// The receiver's pause, as the reference model has it.
        var pausedUntil: Duration = .zero
        var stopped = false
        var gaveUp = false
        var committed: Int64 = 0
    }

    enum Move: Hashable {
        case begin
        case answer(Send, DeliveryOutcome)
        case storeDeadLetters(slot: Int)
        case advance
        case stop
    }

    func testEveryInterleavingKeepsTheCursorBehindWhatIsNotDoneAndRetriesTheSameRequest() throws {
        var configurations: [Configuration] = []
        for batches in 1...4 {
            for mask in 0..<(1 << batches) {
                let poisoned = Set((0..<batches).filter { mask & (1 << $0) != 0 })
                for maxInFlight in Set([1, 2, batches]) where maxInFlight <= batches {
                    configurations.append(Configuration(batches: batches, poisoned: poisoned, maxInFlight: maxInFlight))
                }
            }
        }
        var visitedTotal = 0
        var terminalTotal = 0
        for configuration in configurations {
            let (visited, terminal) = try explore(configuration)
            visitedTotal += visited
            terminalTotal += terminal
        }
        print("delivery window model check: \(configurations.count) configurations, \(visitedTotal) states, \(terminalTotal) end states")
        XCTAssertGreaterThan(visitedTotal, 10_000, "the search visited fewer states than its configurations can reach")
    }

    /// Depth-first over every move from every state; returns the states visited and the end
    /// states (no move left).
    func explore(_ configuration: Configuration) throws -> (visited: Int, terminal: Int) {
        let initial = State(window: DeliveryWindow(committed: 0, maxInFlight: configuration.maxInFlight, policy: Self.policy))
        var visited: Set<State> = [initial]
        var stack = [initial]
        var terminal = 0
        while let state = stack.popLast() {
            let moves = self.moves(state, configuration)
            if moves.isEmpty {
                terminal += 1
                try checkEnd(state, configuration)
                continue
            }
            for move in moves {
                let next = try apply(move, to: state, configuration)
                if visited.insert(next).inserted { stack.append(next) }
            }
        }
        return (visited.count, terminal)
    }

    /// Batch `i` covers the anchors (2i, 2i + 2].
    static func through(_ batch: Int) -> Int64 { Int64(changesPerBatch * (batch + 1)) }

    func moves(_ state: State, _ configuration: Configuration) -> [Move] {
        var moves: [Move] = []
        if state.begun < configuration.batches, state.window.canBegin { moves.append(.begin) }
        for send in state.inFlight.sorted(by: { ($0.slot, $0.part.lowerBound) < ($1.slot, $1.part.lowerBound) }) {
            if configuration.poisoned.contains(send.slot), send.part.contains(1) {
                moves.append(.answer(send, .rejected(status: 400, answer: "refused")))
                continue
            }
            moves.append(.answer(send, .delivered))
            if state.failures[send.slot, default: 0] < 1 {
                moves.append(.answer(send, .retry(reason: "HTTP 503", status: 503, retryAfter: nil)))
                moves.append(.answer(send, .retry(reason: "HTTP 503", status: 503, retryAfter: Self.retryAfter)))
            }
        }
        for slot in state.deadLettering.sorted() { moves.append(.storeDeadLetters(slot: slot)) }
        if let wake = state.window.nextWake {
            XCTAssertGreaterThan(wake, state.now, "a due part was not sent")
            moves.append(.advance)
        }
        if !state.stopped { moves.append(.stop) }
        return moves
    }

    func apply(_ move: Move, to state: State, _ configuration: Configuration) throws -> State {
        var state = state
        let actions: [DeliveryWindow.Action]
        switch move {
        case .begin:
            let batch = state.begun
            state.begun += 1
            state.parts[batch] = [0..<Self.changesPerBatch]
            let begun = state.window.begin(
                after: Self.through(batch) - Int64(Self.changesPerBatch), through: Self.through(batch), count: Self.changesPerBatch,
                now: state.now)
            XCTAssertEqual(begun.slot, batch)
            XCTAssertFalse(state.gaveUp, "a batch began after one was given up at the stop")
            actions = begun.actions
        case .answer(let send, let outcome):
            state.inFlight.remove(send)
            var parts = state.parts[send.slot] ?? []
            state.retrying.remove(send.slot)
            switch outcome {
            case .delivered:
                for change in send.part { state.acknowledged.insert([send.slot, change]) }
                parts.removeFirst()
            case .rejected:
                if send.part.count > 1 {
                    let middle = send.part.lowerBound + send.part.count / 2
                    parts.replaceSubrange(0..<1, with: [send.part.lowerBound..<middle, middle..<send.part.upperBound])
                }
            case .retry(_, _, let retryAfter):
                state.failures[send.slot, default: 0] += 1
                state.retrying.insert(send.slot)
                if let retryAfter { state.pausedUntil = max(state.pausedUntil, state.now + retryAfter) }
            case .authentication:
                break
            }
            state.parts[send.slot] = parts
            actions = state.window.answer(slot: send.slot, outcome: outcome, now: state.now, random: 0.5)
        case .storeDeadLetters(let slot):
            state.deadLettering.remove(slot)
            if let part = state.parts[slot]?.first {
                for change in part { state.deadLettered.insert([slot, change]) }
                state.parts[slot]?.removeFirst()
            }
            actions = state.window.deadLettered(slot: slot, now: state.now)
        case .advance:
            state.now = max(state.now, state.window.nextWake ?? state.now)
            actions = state.window.advance(to: state.now)
        case .stop:
            state.stopped = true
            actions = state.window.requestStop(now: state.now)
        }
        for action in actions {
            switch action {
            case .send(let slot, let part, let attempt):
                XCTAssertGreaterThanOrEqual(state.now, state.pausedUntil, "sent during the receiver's Retry-After")
                XCTAssertEqual(part, state.parts[slot]?.first, "batch \(slot) sent a part the reference model does not expect")
                if attempt > 1 {
                    XCTAssertEqual(state.lastSent[slot], part, "a retry of batch \(slot) is not the same request")
                    XCTAssertTrue(state.retrying.contains(slot), "attempt \(attempt) of batch \(slot) without a failed answer")
                }
                XCTAssertFalse(state.gaveUp && state.stopped, "sent after a batch was given up at the stop")
                state.lastSent[slot] = part
                state.inFlight.insert(Send(slot: slot, part: part, attempt: attempt))
            case .deadLetter(let slot, let part, _, _):
                XCTAssertEqual(part.count, 1, "dead letters are single changes")
                XCTAssertEqual(part, state.parts[slot]?.first)
                state.deadLettering.insert(slot)
            case .commit(let through, _):
                XCTAssertGreaterThan(through, state.committed)
                state.committed = through
            case .abandoned:
                XCTAssertTrue(state.stopped, "a batch was given up without a stop")
                state.gaveUp = true
            case .pause, .resume, .retrying, .reauthenticating, .splitting, .recovered:
                break
            }
        }
        try checkCursor(state, configuration)
        return state
    }

    func isDone(_ slot: Int, _ state: State) -> Bool {
        (0..<Self.changesPerBatch).allSatisfy { state.acknowledged.contains([slot, $0]) || state.deadLettered.contains([slot, $0]) }
    }

    func checkCursor(_ state: State, _ configuration: Configuration) throws {
        XCTAssertEqual(state.window.committed, state.committed)
        for batch in 0..<state.begun where Self.through(batch) <= state.committed {
            guard isDone(batch, state) else {
                XCTFail("\(configuration): the cursor \(state.committed) passed batch \(batch), which is not done")
                throw CheckFailed()
            }
        }
    }

    func checkEnd(_ state: State, _ configuration: Configuration) throws {
        if !state.stopped {
            XCTAssertEqual(state.committed, Self.through(configuration.batches - 1), "\(configuration): stuck without a stop")
            return
        }
        XCTAssertTrue(state.inFlight.isEmpty && state.deadLettering.isEmpty)
        if state.gaveUp {
            XCTAssertTrue(state.window.isFinished, "\(configuration): a batch was given up but the follower does not return")
        }
        // A restart: the ranges begun beyond the cursor, less those remembered at the stop, are
        // sent again in order; the first is the oldest batch that is not done, whole. What is
        // remembered is done, and what is done is remembered.
        let remembered = Set(state.window.acknowledgedAhead.map { Int($0) / Self.changesPerBatch })
        let resent = (0..<state.begun).filter { Self.through($0) > state.committed && !remembered.contains($0) }
        for batch in (0..<state.begun) where Self.through(batch) > state.committed {
            XCTAssertEqual(
                remembered.contains(batch), isDone(batch, state), "\(configuration): batch \(batch) done \(isDone(batch, state)), remembered \(remembered.contains(batch))")
        }
        if let first = resent.first {
            XCTAssertFalse(isDone(first, state))
            XCTAssertEqual(Self.through(first) - Int64(Self.changesPerBatch), state.committed, "the next start does not begin at the cursor")
        }
    }

    struct CheckFailed: Error {}
}
