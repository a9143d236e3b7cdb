import Foundation
import HealthStore
import SerialPedometer
import XCTest

final class StepCounterTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    struct Row {
        var line: UInt
        var steps: UInt32
        var distance: Double?
        var after: TimeInterval
        var event: StepCounterEvent
        var counted: UInt64?
        var meters: Double?
        var gap = false
        /// The distance baseline kept when the reading has no distance.
        var kept: Double?
    }

    /// Feeds rows in order (each `after` seconds after t0) and checks every advance.
    func check(_ rows: [Row], from initial: StepCounterState? = nil, counter: StepCounter = StepCounter()) {
        var state = initial
        for row in rows {
            let date = t0.addingTimeInterval(row.after)
            let advance = counter.advance(from: state, steps: row.steps, distanceMeters: row.distance, at: date)
            XCTAssertEqual(advance.event, row.event, "event", line: row.line)
            XCTAssertEqual(advance.delta?.steps, row.counted, "steps", line: row.line)
            XCTAssertEqual(advance.delta?.distanceMeters, row.meters, "meters", line: row.line)
            if let delta = advance.delta, let previous = state {
                XCTAssertEqual(delta.start, min(previous.date, date), "start is the previous reading", line: row.line)
                XCTAssertEqual(delta.end, date, "end is this reading", line: row.line)
                XCTAssertEqual(delta.spansGap, row.gap, "gap", line: row.line)
            }
            XCTAssertEqual(
                advance.state, StepCounterState(steps: row.steps, distanceMeters: row.distance ?? row.kept, date: date),
                line: row.line)
            state = advance.state
        }
    }

    func testIncreasesAreCountedOverTheTrueInterval() {
        check([
            Row(line: #line, steps: 500, distance: 10, after: 0, event: .baseline, counted: nil),
            Row(line: #line, steps: 520, distance: 25, after: 10, event: .counted, counted: 20, meters: 15),
            Row(line: #line, steps: 520, distance: 25, after: 20, event: .counted, counted: nil),
            // A reading without distance keeps the distance baseline: the next one with distance
            // counts everything since 25 m.
            Row(line: #line, steps: 530, distance: nil, after: 30, event: .counted, counted: 10, meters: nil, kept: 25),
            Row(line: #line, steps: 531, distance: 34.75, after: 31, event: .counted, counted: 1, meters: 9.75),
        ])
    }

    func testRebootStartsANewBaselineAndCountsStepsSinceBoot() {
        check([
            Row(line: #line, steps: 9000, distance: 6000, after: 0, event: .baseline, counted: nil),
            Row(line: #line, steps: 9010, distance: 6007, after: 5, event: .counted, counted: 10, meters: 7),
            // Reboot: the counter restarts at zero; 4 steps since, never a negative count.
            Row(line: #line, steps: 4, distance: 3, after: 10, event: .reset, counted: 4, meters: 3),
            Row(line: #line, steps: 10, distance: 7.5, after: 15, event: .counted, counted: 6, meters: 4.5),
            // Reboot straight to zero: a reset with nothing to count.
            Row(line: #line, steps: 0, distance: 0, after: 20, event: .reset, counted: nil),
            Row(line: #line, steps: 3, distance: 2, after: 25, event: .counted, counted: 3, meters: 2),
            // A reboot reported without distance: the device counts distance from zero as well.
            Row(line: #line, steps: 1, distance: nil, after: 30, event: .reset, counted: 1, kept: 0),
            Row(line: #line, steps: 5, distance: 4, after: 35, event: .counted, counted: 4, meters: 4),
        ])
    }

    func testWrapAroundCountsTheModularDifference() {
        check([
            Row(line: #line, steps: 4_294_967_290, distance: nil, after: 0, event: .baseline, counted: nil),
            Row(line: #line, steps: 4_294_967_295, distance: nil, after: 1, event: .counted, counted: 5),
            Row(line: #line, steps: 3, distance: nil, after: 2, event: .wrapped, counted: 4),
            Row(line: #line, steps: 100, distance: nil, after: 3, event: .counted, counted: 97),
        ])
        // Beyond the tolerance a decrease is a reboot, not a wrap.
        check([
            Row(line: #line, steps: 4_294_000_000, distance: nil, after: 0, event: .baseline, counted: nil),
            Row(line: #line, steps: 5, distance: nil, after: 1, event: .reset, counted: 5),
        ], counter: StepCounter(wrapTolerance: 1000))
    }

    func testResumingFromStoredStateAfterAGatewayRestart() {
        // The stored state is the last reading before the gateway stopped; the first reading
        // after the restart counts from it: nothing lost, nothing twice.
        let stored = StepCounterState(steps: 700, distanceMeters: 500, date: t0)
        check([
            Row(line: #line, steps: 760, distance: 545, after: 60, event: .counted, counted: 60, meters: 45),
        ], from: stored)
    }

    func testLongGapsAreOneTruthfulIntervalFlaggedAsAGap() {
        check([
            Row(line: #line, steps: 100, distance: nil, after: 0, event: .baseline, counted: nil),
            Row(line: #line, steps: 5100, distance: nil, after: 3 * 3600, event: .counted, counted: 5000, gap: true),
            Row(line: #line, steps: 5110, distance: nil, after: 3 * 3600 + 900, event: .counted, counted: 10, gap: false),
            Row(line: #line, steps: 5120, distance: nil, after: 3 * 3600 + 1801, event: .counted, counted: 10, gap: true),
        ])
    }

    func testAClockStepBackwardsGivesAZeroLengthInterval() {
        let counter = StepCounter()
        let previous = StepCounterState(steps: 10, date: t0)
        let advance = counter.advance(from: previous, steps: 15, distanceMeters: nil, at: t0.addingTimeInterval(-30))
        XCTAssertEqual(advance.delta?.steps, 5)
        XCTAssertEqual(advance.delta?.start, t0.addingTimeInterval(-30))
        XCTAssertEqual(advance.delta?.end, t0.addingTimeInterval(-30))
    }

    func testCheckpointPayloadRoundTripsAndRejectsGarbage() throws {
        let state = StepCounterState(steps: 42, distanceMeters: 1.5, date: t0.addingTimeInterval(0.123456))
        let checkpoint = try CounterCheckpoint.make(state, key: "SN1")
        XCTAssertEqual(checkpoint.namespace, "serial-pedometer")
        XCTAssertEqual(checkpoint.key, "SN1")
        XCTAssertEqual(try CounterCheckpoint.state(in: checkpoint), state)
        let garbage = SourceCheckpoint(namespace: "serial-pedometer", key: "SN1", payload: Data("{not json".utf8))
        XCTAssertThrowsError(try CounterCheckpoint.state(in: garbage)) { error in
            XCTAssertTrue("\(error)".contains("counter checkpoint SN1"), "\(error)")
        }
    }
}
