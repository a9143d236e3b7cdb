import AsyncPrimitives
import Dispatch
import GatewayTesting
import XCTest

final class QueueExecutorTests: XCTestCase {
    actor Confined {
        private let executor: QueueExecutor
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        private var count = 0

        init(executor: QueueExecutor) { self.executor = executor }

        func increment() -> Int {
            // Blocking work here would hold this queue's thread, not a cooperative one.
            dispatchPrecondition(condition: .onQueue(executor.queue))
            count += 1
            return count
        }
    }

    func testActorMethodsRunOnTheQueueOneAtATime() async {
        let executor = QueueExecutor(label: "test.confined")
        let confined = Confined(executor: executor)
        let results = await withTaskGroup(of: Int.self, returning: [Int].self) { group in
            for _ in 0..<200 { group.addTask { await confined.increment() } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(results.sorted(), Array(1...200))
    }

    func testRunReturnsValuesAndTypedErrorsFromTheQueue() async {
        struct Failure: Error, Equatable { var code: Int }
        let executor = QueueExecutor(label: "test.run")
        let value = await executor.run { () -> Bool in
            dispatchPrecondition(condition: .onQueue(executor.queue))
            return true
        }
        XCTAssertTrue(value)
        do {
            _ = try await executor.run { () throws(Failure) -> Int in throw Failure(code: 7) }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error, Failure(code: 7))
        }
    }
}

final class AsyncConditionTests: XCTestCase {
    func testWaitReturnsAtOnceWhenThePredicateHolds() async throws {
        let condition = AsyncCondition(5)
        try await condition.wait { $0 == 5 }
        XCTAssertEqual(condition.waiterCount, 0)
    }

    func testUpdateWakesOnlyTheWaitersWhosePredicateHolds() async throws {
        let condition = AsyncCondition(0)
        let woken = AsyncCondition<[Int]>([])
        let low = Task {
            try await condition.wait { $0 >= 1 }
            woken.update { $0.append(1) }
        }
        let high = Task {
            try await condition.wait { $0 >= 2 }
            woken.update { $0.append(2) }
        }
        try await waitUntil("two waiters") { condition.waiterCount == 2 }
        condition.set(1)
        try await low.value
        XCTAssertEqual(woken.value, [1])
        XCTAssertEqual(condition.waiterCount, 1)
        condition.update { $0 += 1 }
        try await high.value
        XCTAssertEqual(woken.value, [1, 2])
    }

    func testCancellingAWaiterRemovesItAndThrows() async throws {
        let condition = AsyncCondition(false)
        let waiter = Task { try await condition.wait { $0 } }
        try await waitUntil("the waiter") { condition.waiterCount == 1 }
        waiter.cancel()
        do {
            try await waiter.value
            XCTFail("a cancelled wait returned")
        } catch is CancellationError {}
        XCTAssertEqual(condition.waiterCount, 0)
    }

    func testAWaitInACancelledTaskThrowsWithoutWaiting() async throws {
        let condition = AsyncCondition(false)
        let waiter = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await condition.wait { $0 }
        }
        do {
            try await waiter.value
            XCTFail("a cancelled wait returned")
        } catch is CancellationError {}
        XCTAssertEqual(condition.waiterCount, 0)
    }
}

final class RaceTests: XCTestCase {
    /// Lets the sleep `racing` waits on run out (`duration` on `clock`); whether it won the
    /// race, a failure saying the outcome when it did not.
    private func sleepWins(
        _ racing: Task<RaceOutcome<Int>, any Error>, after duration: Duration, on clock: ManualClock,
        file: StaticString = #filePath, line: UInt = #line
    ) async throws -> Bool {
        try await clock.waitForSleepers(1)
        clock.advance(by: duration)
        let outcome = try await racing.value
        guard case .timedOut = outcome else {
            XCTFail("\(outcome)", file: file, line: line)
            return false
        }
        return true
    }

    func testTheEventWinsAndTheSleepIsCancelled() async throws {
        let clock = ManualClock()
        let outcome = try await race(sleep: { try await clock.sleep(for: .seconds(10)) }, event: { 42 })
        guard case .event(42) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertEqual(clock.sleeperCount, 0)
    }

    func testTheSleepWinsAndTheEventIsCancelled() async throws {
        let clock = ManualClock()
        let gate = AsyncCondition(false)
        let cancelled = AsyncCondition(false)
        let racing = Task {
            try await race(
                sleep: { try await clock.sleep(for: .seconds(10)) },
                event: { () async throws -> Int in
                    do {
                        try await gate.wait { $0 }
                    } catch {
                        cancelled.set(true)
                        throw error
                    }
                    return 1
                })
        }
        guard try await sleepWins(racing, after: .seconds(10), on: clock) else { return }
        XCTAssertTrue(cancelled.value, "the losing event was not cancelled")
        XCTAssertEqual(gate.waiterCount, 0)
    }

    func testAnEventErrorIsRethrown() async throws {
        struct Broken: Error {}
        let clock = ManualClock()
        do {
            _ = try await race(sleep: { try await clock.sleep(for: .seconds(1)) }, event: { () async throws -> Int in throw Broken() })
            XCTFail("no error")
        } catch is Broken {}
    }

    /// The event blocks a thread as a read from a hung disk does (no cancellation reaches it):
    /// the sleep's outcome comes back at once, the event's thread still blocked.
    func testAbandoningTheSleepWinsWithoutWaitingForAnEventThatCannotBeCancelled() async throws {
        let clock = ManualClock()
        let blocked = DispatchSemaphore(value: 0)
        let released = AsyncCondition(false)
        let racing = Task {
            try await raceAbandoning(sleep: { try await clock.sleep(for: .seconds(1)) }) { () async -> Int in
                await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        blocked.wait()
                        continuation.resume()
                    }
                }
                released.set(true)
                return 7
            }
        }
        guard try await sleepWins(racing, after: .seconds(1), on: clock) else { return }
        XCTAssertFalse(released.value, "the call waited for the event")
        blocked.signal()
        try await released.wait { $0 }
    }

    func testAbandoningTheEventWinsAndAnErrorIsRethrown() async throws {
        struct Broken: Error {}
        let clock = ManualClock()
        let outcome = try await raceAbandoning(sleep: { try await clock.sleep(for: .seconds(10)) }) { 42 }
        guard case .event(42) = outcome else { return XCTFail("\(outcome)") }
        do {
            _ = try await raceAbandoning(sleep: { try await clock.sleep(for: .seconds(10)) }) { () async throws -> Int in throw Broken() }
            XCTFail("no error")
        } catch is Broken {}
    }
}
