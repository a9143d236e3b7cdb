import Foundation
import HealthModel
import Workouts
import XCTest

/// The transition table, checked for every (state, action) pair, both on the pure table and on a
/// real session driven into each state.
final class SessionStateMachineTests: XCTestCase {
    enum Expected: Equatable {
        case to(WorkoutSessionState)
        case record
        case ignored
        case invalid
        case ended
    }

    /// Every pair, written out. `record` keeps the state and records an event or an activity.
    static let table: [WorkoutSessionState: [WorkoutAction: Expected]] = [
        .notStarted: [
            .prepare: .to(.prepared), .start: .to(.running), .pause: .invalid, .resume: .invalid,
            .lap: .invalid, .marker: .invalid, .segment: .invalid, .beginActivity: .invalid,
            .stop: .invalid, .end: .invalid,
        ],
        .prepared: [
            .prepare: .invalid, .start: .to(.running), .pause: .invalid, .resume: .invalid,
            .lap: .invalid, .marker: .invalid, .segment: .invalid, .beginActivity: .invalid,
            .stop: .invalid, .end: .to(.ended),
        ],
        .running: [
            .prepare: .invalid, .start: .invalid, .pause: .to(.paused), .resume: .ignored,
            .lap: .record, .marker: .record, .segment: .record, .beginActivity: .record,
            .stop: .to(.stopped), .end: .to(.ended),
        ],
        .paused: [
            .prepare: .invalid, .start: .invalid, .pause: .ignored, .resume: .to(.running),
            .lap: .record, .marker: .record, .segment: .record, .beginActivity: .record,
            .stop: .to(.stopped), .end: .to(.ended),
        ],
        .stopped: [
            .prepare: .invalid, .start: .invalid, .pause: .invalid, .resume: .invalid,
            .lap: .invalid, .marker: .invalid, .segment: .invalid, .beginActivity: .invalid,
            .stop: .invalid, .end: .to(.ended),
        ],
        .ended: Dictionary(uniqueKeysWithValues: WorkoutAction.allCases.map { ($0, Expected.ended) }),
    ]

    /// How to bring a new session into each state.
    static let paths: [WorkoutSessionState: [WorkoutAction]] = [
        .notStarted: [], .prepared: [.prepare], .running: [.start], .paused: [.start, .pause],
        .stopped: [.start, .stop], .ended: [.start, .end],
    ]

    func testTableCoversEveryPair() {
        XCTAssertEqual(Set(Self.table.keys), Set(WorkoutSessionState.allCases))
        for state in WorkoutSessionState.allCases {
            XCTAssertEqual(Set(Self.table[state]?.keys.map { $0 } ?? []), Set(WorkoutAction.allCases), "\(state)")
        }
    }

    func testTransitionTable() {
        for state in WorkoutSessionState.allCases {
            for action in WorkoutAction.allCases {
                let expected = Self.table[state]?[action]
                do {
                    let transition = try state.transition(for: action)
                    switch transition {
                    case .moveTo(let next): XCTAssertEqual(expected, .to(next), "\(state) + \(action)")
                    case .record: XCTAssertEqual(expected, .record, "\(state) + \(action)")
                    case .ignored: XCTAssertEqual(expected, .ignored, "\(state) + \(action)")
                    }
                } catch {
                    XCTAssertEqual(error.state, state)
                    XCTAssertEqual(error.action, action)
                    XCTAssertEqual(expected, error.code == .sessionEnded ? .ended : .invalid, "\(state) + \(action): \(error)")
                    XCTAssertEqual(error.code, state == .ended ? .sessionEnded : .invalidTransition)
                }
            }
        }
    }

    func testEveryPairOnARealSession() throws {
        let ids = SampleIDGenerator(seed: 1)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        for state in WorkoutSessionState.allCases {
            for action in WorkoutAction.allCases {
                var session = WorkoutSession(id: ids.next(), activityType: .running, firstActivityID: ids.next())
                for (offset, step) in (Self.paths[state] ?? []).enumerated() {
                    try session.apply(step, at: t0.addingTimeInterval(Double(offset)))
                }
                XCTAssertEqual(session.state, state)
                let before = session
                let when = t0.addingTimeInterval(100)
                let expected = Self.table[state]?[action]
                do {
                    try session.apply(action, at: when, newActivity: (ids.next(), .cycling))
                    switch expected {
                    case .to(let next)?: XCTAssertEqual(session.state, next, "\(state) + \(action)")
                    case .record?:
                        XCTAssertEqual(session.state, state)
                        XCTAssertTrue(
                            session.events.count == before.events.count + 1
                                || session.activities.count == before.activities.count + 1, "\(state) + \(action) recorded nothing")
                    case .ignored?: XCTAssertEqual(session, before, "\(state) + \(action) must change nothing")
                    default: XCTFail("\(state) + \(action) should have thrown")
                    }
                } catch {
                    XCTAssertTrue(expected == .invalid || expected == .ended, "\(state) + \(action): \(error)")
                    XCTAssertEqual(session, before, "a refused action changes nothing")
                }
            }
        }
    }

    func testEndedSessionCannotRestart() throws {
        let ids = SampleIDGenerator(seed: 2)
        var session = WorkoutSession(id: ids.next(), activityType: .running, firstActivityID: ids.next())
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        try session.apply(.start, at: t0)
        try session.apply(.end, at: t0.addingTimeInterval(60))
        XCTAssertThrowsError(try session.apply(.start, at: t0.addingTimeInterval(61))) { error in
            XCTAssertEqual((error as? WorkoutError)?.code, .sessionEnded)
        }
        XCTAssertThrowsError(try session.apply(.resume, at: t0.addingTimeInterval(61)))
        XCTAssertEqual(session.endDate, t0.addingTimeInterval(60))
    }

    func testEventsIntervalsAndActivities() throws {
        let ids = SampleIDGenerator(seed: 3)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }
        var session = WorkoutSession(id: ids.next(), activityType: .running, firstActivityID: ids.next())
        try session.apply(.start, at: at(0))
        try session.apply(.lap, at: at(60))
        try session.apply(.pause, at: at(90))
        try session.apply(.pause, at: at(95))  // ignored: no second pause event
        try session.apply(.resume, at: at(100))
        try session.apply(.resume, at: at(101))  // ignored
        try session.apply(.lap, at: at(130))
        try session.apply(.segment, at: at(140), segmentStart: at(135))
        try session.apply(.beginActivity, at: at(150), newActivity: (ids.next(), .cycling))
        try session.apply(.marker, at: at(155))
        try session.apply(.end, at: at(200))

        XCTAssertEqual(session.events.map(\.type), [.lap, .pause, .resume, .lap, .segment, .marker])
        XCTAssertEqual(session.events[0].startDate, at(0))
        XCTAssertEqual(session.events[0].endDate, at(60))
        XCTAssertEqual(session.events[3].startDate, at(60), "a lap runs from the previous lap")
        XCTAssertEqual(session.events[3].endDate, at(130))
        XCTAssertEqual(session.events[4].startDate, at(135))
        XCTAssertEqual(session.runningIntervals, [RunningInterval(start: at(0), end: at(90)), RunningInterval(start: at(100), end: at(200))])
        // 90 s before the pause + 100 s after it.
        XCTAssertEqual(session.elapsedSeconds(at: at(500)), 190)
        XCTAssertEqual(session.activities.map(\.activityType), [.running, .cycling])
        XCTAssertEqual(session.activities[0].endDate, at(150))
        XCTAssertEqual(session.activities[1].startDate, at(150))
        XCTAssertEqual(session.activities[1].endDate, at(200))
    }

    func testDatesNeverRunBackwards() throws {
        let ids = SampleIDGenerator(seed: 4)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var session = WorkoutSession(id: ids.next(), activityType: .running, firstActivityID: ids.next())
        try session.apply(.start, at: t0)
        // The wall clock stepped back 30 s: the pause is clamped to the start, not before it.
        try session.apply(.pause, at: t0.addingTimeInterval(-30))
        XCTAssertEqual(session.runningIntervals.first?.end, t0)
        XCTAssertEqual(session.elapsedSeconds(at: t0.addingTimeInterval(100)), 0)
    }
}
