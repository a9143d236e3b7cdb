public import Foundation
public import GatewayRuntime
import AsyncPrimitives
public import GatewayTime
public import HealthModel
import Synchronization

/// A clock whose time moves only when a test calls ``advance(by:)``.
///
/// Sleepers wake when the clock passes their deadline. Tests use ``waitForSleepers(_:)`` to
/// wait for state ("the source is now sleeping") instead of sleeping themselves.
public final class ManualClock: GatewayClock {
    /// The wall clock at elapsed time zero: moved by ``step(by:)``, as an administrator or a time
    /// synchronisation daemon steps a real clock, while the elapsed (monotonic) time goes on.
    private let start: Mutex<Date>
    /// Time elapsed since the start; sleepers wait for it to reach their deadline.
    private let time = AsyncCondition(Duration.zero)

    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.start = Mutex(start)
    }

    public func now() -> Date {
        start.withLock { $0 }.addingTimeInterval(time.value.seconds)
    }

    /// Time elapsed since the start.
    public var elapsed: Duration { time.value }

    /// The monotonic time: ``elapsed``, which ``step(by:)`` leaves alone.
    public func uptime() -> Duration { time.value }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { time.waiterCount }

    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let deadline = time.value + duration
        try await time.wait { $0 >= deadline }
    }

    /// Steps the wall clock by `seconds` (either way); the monotonic time, and every sleeper's
    /// deadline, stay.
    public func step(by seconds: Double) {
        start.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// The wall clock less the monotonic time: what ``ManualClockTrust`` reports as its base.
    public var wallMinusElapsed: Date { start.withLock { $0 } }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    public func advance(by duration: Duration) {
        time.update { $0 += duration }
    }

    /// Waits until at least `count` tasks sleep on the clock.
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil(timeout: timeout, "\(String(count: count, "sleeper")) on the manual clock") {
            self.sleeperCount >= count
        }
    }
}

/// Polls `condition` until it holds, yielding between checks; fails after `timeout` of real time.
/// This waits for state, it does not sleep for a guessed duration.
public func waitUntil(
    timeout: Duration = .seconds(10), _ what: String = "condition",
    _ condition: @Sendable () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        if ContinuousClock.now > deadline { throw WaitTimeout(what: what) }
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// ``waitUntil(timeout:_:_:)`` gave up.
public struct WaitTimeout: Error, CustomStringConvertible {
    public let what: String
    public init(what: String) { self.what = what }
    public var description: String { "timed out waiting for \(what)" }
}

/// The clock pair's other half for a ``ManualClock``: its synchronisation state, set by the test,
/// and its base (the manual clock's wall time less its elapsed time, on one made-up boot).
public final class ManualClockTrust: ClockTrust {
    public let clock: ManualClock
    public let bootID: String
    private let current: Mutex<ClockState>

    public init(clock: ManualClock, state: ClockState = .unsynchronized, bootID: String = "manual-boot") {
        self.clock = clock
        self.bootID = bootID
        current = Mutex(state)
    }

    /// Sets the state, as timesyncd clearing (or the kernel setting) STA_UNSYNC.
    public func set(_ state: ClockState) { current.withLock { $0 = state } }

    public func state() -> ClockState { current.withLock { $0 } }

    public func clockBase() -> ClockBase {
        ClockBase(
            bootID: bootID,
            wallMinusBootMilliseconds: Int64((clock.wallMinusElapsed.timeIntervalSince1970 * 1000).rounded()))
    }
}
