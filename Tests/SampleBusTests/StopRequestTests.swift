import GatewayTesting
import SampleBus
import XCTest

/// What sinks see of a stop: a retry sleep cut short by a graceful stop, and actions run when the
/// stop is forced.
final class StopRequestTests: XCTestCase {
    func testSleepEndsWhenAStopIsRequested() async throws {
        let clock = ManualClock()
        let shutdown = ShutdownSignal()
        let stop = StopRequest(shutdown)
        let sleeper = Task { try await stop.sleep(for: .seconds(60), on: clock) }
        try await clock.waitForSleepers(1)
        XCTAssertFalse(stop.isRequested)
        shutdown.requestStop()
        let wake = try await sleeper.value
        XCTAssertEqual(wake, .stopRequested)
        XCTAssertEqual(clock.elapsed, .zero, "the backoff was not waited out")
        XCTAssertTrue(stop.isRequested)
        let after = try await stop.sleep(for: .seconds(60), on: clock)
        XCTAssertEqual(after, .stopRequested, "once stopping, a sleep returns at once")
    }

    func testSleepRunsItsCourseWithoutAStop() async throws {
        let clock = ManualClock()
        let stop = StopRequest(ShutdownSignal())
        let sleeper = Task { try await stop.sleep(for: .seconds(5), on: clock) }
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(5))
        let wake = try await sleeper.value
        XCTAssertEqual(wake, .elapsed)
    }

    func testCancellationThrows() async throws {
        let clock = ManualClock()
        let stop = StopRequest(ShutdownSignal())
        let sleeper = Task { try await stop.sleep(for: .seconds(5), on: clock) }
        try await clock.waitForSleepers(1)
        sleeper.cancel()
        do {
            _ = try await sleeper.value
            XCTFail("a cancelled sleep returned")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
    }

    func testForcedStopActionsRunOnceAndCanBeWithdrawn() {
        let shutdown = ShutdownSignal()
        let stop = StopRequest(shutdown)
        let runs = Locked(0)
        let withdrawn = Locked(0)
        stop.onForcedStop { runs.withLock { $0 += 1 } }
        stop.onForcedStop { withdrawn.withLock { $0 += 1 } }.cancel()
        shutdown.requestStop()
        XCTAssertEqual(runs.value, 0, "a graceful stop does not run them")
        shutdown.requestStop()
        shutdown.force()
        XCTAssertEqual(runs.value, 1)
        XCTAssertEqual(withdrawn.value, 0)
        stop.onForcedStop { runs.withLock { $0 += 1 } }
        XCTAssertEqual(runs.value, 2, "registered after the fact, it runs at once")
    }
}
