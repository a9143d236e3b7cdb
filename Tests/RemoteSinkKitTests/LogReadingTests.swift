@testable import HealthStore
@testable import RemoteSinkKit
import XCTest

/// The follower's knowledge of the log beyond its window, without a store: what it reads next,
/// when a partial batch's interval starts, and what a commit or a retention skip drops.
final class LogReadingTests: XCTestCase {
    func batch(after: Int64, through: Int64) -> FollowerBatch {
        FollowerBatch(after: after, through: through, changes: [], payloadIdentity: "test")
    }

    func begun(_ after: Int64, _ through: Int64, acknowledged: Bool = false) -> BegunBatch {
        BegunBatch(after: after, through: through, key: nil, acknowledged: acknowledged)
    }

    func testTheRangesBegunBeforeTheLastStopAreSentFirstOldestFirstAndReadingGoesOnAfterThem() {
        // A range the cursor passed already is not sent again.
        var reading = LogReading(from: 10, begun: [begun(0, 10), begun(10, 20), begun(20, 30, acknowledged: true)])
        XCTAssertEqual(reading.replay.map(\.after), [10, 20])
        XCTAssertEqual(reading.nextReplay()?.after, 10)
        XCTAssertEqual(reading.readFrom, 20)
        XCTAssertEqual(reading.nextReplay()?.acknowledged, true)
        XCTAssertEqual(reading.readFrom, 30)
        XCTAssertNil(reading.nextReplay())
        XCTAssertEqual(reading.readFrom, 30)
    }

    func testReadingGoesOnAfterEachBatchRead() {
        var reading = LogReading(from: 0)
        reading.read(batch(after: 0, through: 12))
        XCTAssertEqual(reading.readFrom, 12)
        XCTAssertEqual(reading.waitsAbove, 12)
    }

    /// A partial batch's interval starts once per read position; when it passes, the changes are
    /// due, and reading them ends the wait.
    func testAPartialBatchStartsItsIntervalOncePerReadPosition() {
        var reading = LogReading(from: 10)
        XCTAssertTrue(reading.waitForInterval(latest: 13))
        XCTAssertFalse(reading.waitForInterval(latest: 14), "the interval runs already")
        XCTAssertEqual(reading.waitsAbove, 14, "the waiter waits for commits after those seen, not after the read position")
        XCTAssertFalse(reading.partialDue)
        reading.intervalPassed()
        XCTAssertTrue(reading.partialDue)
        reading.read(batch(after: 10, through: 14))
        XCTAssertFalse(reading.partialDue)
        XCTAssertNil(reading.partialAfter)
        XCTAssertTrue(reading.waitForInterval(latest: 15), "a new read position waits its own interval")
    }

    /// An interval that ends after reading moved on (a full batch came meanwhile) does not make
    /// the changes at the new position due.
    func testAnIntervalThatEndsAfterReadingMovedOnMakesNothingDue() {
        var reading = LogReading(from: 10)
        XCTAssertTrue(reading.waitForInterval(latest: 13))
        reading.read(batch(after: 10, through: 40))
        reading.intervalPassed()
        XCTAssertFalse(reading.partialDue)
    }

    /// A commit drops the window's batches it passed; a dead-letter retry (range (0, 0]) stays.
    func testACommitDropsTheBatchesItPassedButNotADeadLetterRetry() {
        var reading = LogReading(from: 0)
        reading.batches = [0: batch(after: 0, through: 10), 1: batch(after: 10, through: 20), 2: batch(after: 0, through: 0)]
        reading.committed(through: 10)
        XCTAssertEqual(reading.batches.keys.sorted(), [1, 2])
        XCTAssertEqual(reading.readFrom, 0, "a commit does not move reading")
    }

    /// A retention skip moves reading to its target and drops the ranges and batches it passed.
    func testARetentionSkipDropsWhatItPassedAndReadingGoesOnFromIt() {
        var reading = LogReading(from: 0, begun: [begun(0, 10), begun(10, 20), begun(20, 30)])
        reading.batches = [0: batch(after: 0, through: 10), 1: batch(after: 0, through: 0)]
        reading.passed(20)
        XCTAssertEqual(reading.readFrom, 20)
        XCTAssertEqual(reading.replay.map(\.after), [20])
        XCTAssertEqual(reading.batches.keys.sorted(), [1])
        reading.read(batch(after: 20, through: 50))
        reading.passed(30)
        XCTAssertEqual(reading.readFrom, 50, "a skip never moves reading back")
    }

    /// The log no longer holds the read position: reading restarts where the follower's cursor
    /// was set.
    func testARestartMovesTheReadPosition() {
        var reading = LogReading(from: 40)
        reading.restart(at: 0)
        XCTAssertEqual(reading.readFrom, 0)
        reading.restart(at: 25)
        XCTAssertEqual(reading.readFrom, 25)
    }
}
