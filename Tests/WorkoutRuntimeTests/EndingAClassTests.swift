import Foundation
import GatewayTesting
import HealthModel
import GatewayRuntime
import Synchronization
import Workouts
import WorkoutRuntime
import WorkoutsTesting
import XCTest

/// Ending a class (`workout end --all`, issue #48): every workout in progress ends, a participant
/// without one is listed and is no failure, a refused end is named, and no more than the group's
/// width of ends runs at once, answered in roster order.
final class EndingAClassTests: XCTestCase {
    static let names = (1...10).map { String(format: "P%02d", $0) }

    func makeGroup(_ store: HeldEndStore, allWidth: Int = ParticipantWorkouts.defaultAllWidth) throws -> ParticipantWorkouts {
        let configuration = JSONValue.array(Self.names.map { name in
            .object(["name": .string(name), "devices": .array([.string("strap-\(name)")])])
        })
        let roster = try ParticipantRoster.decode(configuration, defaultProfile: UserProfile(maximumHeartRate: 190))
        return ParticipantWorkouts(
            roster: roster, store: store, clock: ManualClock(), ids: SampleIDGenerator(seed: 5),
            logger: Logger(label: "class", sink: RecordingLogSink()), allWidth: allWidth)
    }

    func testEndingAllEndsEveryWorkoutInProgressAtMostFourAtOnceInRosterOrder() async throws {
        // P03 left before the end; P07's end is refused once by the store.
        let store = HeldEndStore(ends: Self.names.count - 1, width: 4, refusing: "P07")
        let group = try makeGroup(store)
        let started = try await group.handle(.start(activity: .highIntensityIntervalTraining), for: .all)
        XCTAssertEqual(started.workouts.map(\.participant), Self.names)
        _ = try await group.handle(.end, for: .participant("P03"))

        store.holdEnds()
        let ended = try await group.handle(.end, for: .all)
        XCTAssertEqual(store.mostAtOnce, 4, "ends overlap, four at a time (of \(Self.names.count - 1))")
        XCTAssertEqual(store.heldEnds, Self.names.count - 1)
        let endedNames = Self.names.filter { $0 != "P03" && $0 != "P07" }
        XCTAssertEqual(ended.workouts.map(\.participant), endedNames, "in roster order, whichever finished first")
        XCTAssertEqual(ended.workouts.map(\.state), Array(repeating: .ended, count: endedNames.count))
        XCTAssertEqual(ended.notInProgress, ["P03"])
        XCTAssertEqual(ended.errors.count, 1)
        XCTAssertTrue(ended.errors[0].hasPrefix("P07: "), ended.errors[0])
        XCTAssertTrue(ended.errors[0].contains("disk full"), ended.errors[0])
        XCTAssertEqual(group.statuses()["P07"]?.state, .running, "a refused end leaves the workout running")

        // Again: P07's end goes through, everyone else is listed.
        let again = try await group.handle(.end, for: .all)
        XCTAssertEqual(again.workouts.map(\.participant), ["P07"])
        XCTAssertEqual(again.notInProgress, Self.names.filter { $0 != "P07" })
        XCTAssertEqual(again.errors, [])

        // Nothing left in progress: the end, and every command that acts on a workout in
        // progress, fails as the single form does; status still answers.
        for request in [WorkoutControlRequest.end, .pause, .resume, .lap, .activity(.cycling)] {
            do {
                let answer = try await group.handle(request, for: .all)
                XCTFail("\(request.command) --all with no workout in progress answered \(answer)")
            } catch {
                XCTAssertEqual(error.code, .noSession, "\(request.command)")
                XCTAssertEqual(
                    error.message, "no participant's workout is in progress (participants: \(Self.names.joined(separator: ", ")))")
            }
        }
        let status = try await group.handle(.status, for: .all)
        XCTAssertEqual(status.workouts.count, Self.names.count)
        XCTAssertEqual(status.notInProgress, [])
    }

    /// The same rule for pause and lap: the workouts in progress take it, the others are listed.
    func testPausingAllPausesTheWorkoutsInProgressAndListsTheOthers() async throws {
        let store = HeldEndStore(ends: 0, width: 1, refusing: nil)
        let group = try makeGroup(store)
        for name in ["P02", "P05"] { _ = try await group.handle(.start(activity: .running), for: .participant(name)) }
        let paused = try await group.handle(.pause, for: .all)
        XCTAssertEqual(paused.workouts.map(\.participant), ["P02", "P05"])
        XCTAssertEqual(paused.workouts.map(\.state), [.paused, .paused])
        XCTAssertEqual(paused.notInProgress, Self.names.filter { $0 != "P02" && $0 != "P05" })
        XCTAssertEqual(paused.errors, [])
        let lap = try await group.handle(.lap, for: .all)
        XCTAssertEqual(lap.workouts.map(\.participant), ["P02", "P05"])
        // start --all is not such a command: one already running is refused.
        let start = try await group.handle(.start(activity: .running), for: .all)
        XCTAssertEqual(start.workouts.count, Self.names.count - 2)
        XCTAssertEqual(start.notInProgress, [])
        XCTAssertEqual(start.errors.map { String($0.prefix(5)) }, ["P02: ", "P05: "])
    }
}

/// A workout store that holds each workout's end (its journal append) until `width` ends are
/// held at once, or as many as can still come (`ends` in all), and then 0.2 s more: so the most
/// ends held at once is the most the group ran at once, and a group running more than `width`
/// shows them. An end that never meets company is released after 10 s (then ``mostAtOnce`` is
/// below `width`).
/// Blocking is fine here: the controllers call the store from their own serial queues.
final class HeldEndStore: WorkoutStateStoreDecorator, ParticipantAssignmentStore {
    private struct Counts {
        var holding = false
        var atOnce = 0
        var most = 0
        var held = 0
        var released = 0
        var refusing: String?
    }

    let inner = VolatileWorkoutStore()
    private let ends: Int
    private let width: Int
    private let counts: Mutex<Counts>
    /// Signalled whenever ``counts`` changes; the counts themselves stay in the mutex.
    private let changed = NSCondition()

    init(ends: Int, width: Int, refusing: String?) {
        self.ends = ends
        self.width = width
        counts = Mutex(Counts(refusing: refusing))
    }

    /// From now on, every end is held.
    func holdEnds() { counts.withLock { $0.holding = true } }
    /// The most ends held at once.
    var mostAtOnce: Int { counts.withLock { $0.most } }
    /// The ends held so far.
    var heldEnds: Int { counts.withLock { $0.held } }

    func append(_ entries: [WorkoutJournalEntry], from index: Int, of definition: WorkoutDefinition) throws(WorkoutError) {
        guard entries.contains(where: { $0.action == .end }), counts.withLock({ $0.holding }) else {
            return try inner.append(entries, from: index, of: definition)
        }
        changed.lock()
        counts.withLock { counts in
            counts.held += 1
            counts.atOnce += 1
            counts.most = max(counts.most, counts.atOnce)
        }
        changed.broadcast()
        let deadline = Date(timeIntervalSinceNow: 10)
        while counts.withLock({ $0.atOnce < min(width, ends - $0.released) }), changed.wait(until: deadline) {}
        // The width is reached. A group that does not bound its ends has more on their way: they
        // show within a moment (this window watches for an arrival that must not happen, so no
        // state can be waited for instead).
        let window = Date(timeIntervalSinceNow: 0.2)
        while counts.withLock({ $0.atOnce <= width }), changed.wait(until: window) {}
        let refused = counts.withLock { counts in
            counts.atOnce -= 1
            counts.released += 1
            guard counts.refusing == definition.participant else { return false }
            counts.refusing = nil
            return true
        }
        changed.broadcast()
        changed.unlock()
        if refused { throw WorkoutError(.persistence, "disk full") }
        try inner.append(entries, from: index, of: definition)
    }

    func participantAssignments() throws(WorkoutError) -> [ParticipantAssignment] { try inner.participantAssignments() }
    func assign(_ assignment: ParticipantAssignment, at date: Date) throws(WorkoutError) { try inner.assign(assignment, at: date) }
    func unassign(_ devices: [String], at date: Date) throws(WorkoutError) { try inner.unassign(devices, at: date) }
    var currentAttribution: ReadingAttribution? { inner.currentAttribution }
}
