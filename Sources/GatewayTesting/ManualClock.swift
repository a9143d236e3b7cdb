public import Foundation
public import SampleBus
import Synchronization

/// A clock whose time moves only when a test calls ``advance(by:)``.
///
/// Sleepers wake when the clock passes their deadline. Tests use ``waitForSleepers(_:)`` to
/// wait for state ("the source is now sleeping") instead of sleeping themselves.
public final class ManualClock: GatewayClock {
    private struct Sleeper {
        var id: UInt64
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var elapsed: Duration = .zero
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let start: Date
    private let state = Mutex(State())

    public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        self.start = start
    }

    public func now() -> Date {
        start.addingTimeInterval(state.withLock { $0.elapsed.seconds })
    }

    /// Time elapsed since the start.
    public var elapsed: Duration { state.withLock { $0.elapsed } }

    /// How many tasks are sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    public func sleep(for duration: Duration) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    if duration <= .zero { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: state.elapsed + duration, continuation: continuation))
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    public func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.elapsed += duration
            let due = state.sleepers.filter { $0.deadline <= state.elapsed }
            state.sleepers.removeAll { $0.deadline <= state.elapsed }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits until at least `count` tasks sleep on the clock.
    public func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws {
        try await waitUntil(timeout: timeout, "\(count) sleeper(s) on the manual clock") {
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
