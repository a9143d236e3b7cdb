import Dispatch
import Glibc
import GatewayTesting
import LinuxSystem
import Synchronization
import XCTest

/// The rules a `ReadinessSet` keeps, on socket pairs: one watch for both directions with either
/// suspended; a hang-up while every direction is suspended reported on resume; `cancel()` taking
/// the descriptor out before it returns, so that a number closed and reused at once is a new
/// watch the old one never hears about; `close()` running every `onCancel`.
final class ReadinessSetTests: XCTestCase {
    private let queue = DispatchQueue(label: "readiness-set-test")

    func testOneWatchReportsWritingOnlyWhileResumedAndReadingBesideIt() async throws {
        let set = try ReadinessSet(queue: queue)
        defer { set.close() }
        let (local, peer) = try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
        defer { Glibc.close(peer) }
        let seen = Mutex<[ReadinessSource.Event]>([])
        let watch = try ReadinessSource(
            descriptor: local, in: set, events: [.readable, .writable], suspended: [.writable],
            onCancel: { Glibc.close(local) }
        ) { event in
            seen.withLock { $0.append(event) }
            if event == .readable { ReadinessSourceStressTests.drain(local) }
        }
        defer { watch.cancel() }
        XCTAssertTrue(watch.isSuspended(.writable))
        XCTAssertFalse(watch.isSuspended)

        ReadinessSourceStressTests.talk(peer)
        try await waitUntil("the read half to report the byte") { seen.withLock { $0.contains(.readable) } }
        // An empty socket has room, yet the suspended write half said nothing.
        queue.sync {}
        XCTAssertFalse(seen.withLock { $0.contains(.writable) })

        watch.resume(.writable)
        try await waitUntil("the write half to report room once resumed") { seen.withLock { $0.contains(.writable) } }
        watch.suspend(.writable)
        queue.sync {}
        let count = seen.withLock { $0.count }
        ReadinessSourceStressTests.talk(peer)
        try await waitUntil("reading to go on while writing is suspended") { seen.withLock { $0.count > count } }
        XCTAssertEqual(seen.withLock { Array($0[count...]) }.filter { $0 == .writable }, [])
    }

    func testAHangUpWhileEveryDirectionIsSuspendedIsReportedOnResume() async throws {
        let set = try ReadinessSet(queue: queue)
        defer { set.close() }
        let (local, peer) = try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
        let calls = Atomic<Int>(0)
        let watch = try ReadinessSource(
            descriptor: local, in: set, events: [.readable, .writable], suspended: [.writable],
            onCancel: { Glibc.close(local) }
        ) { _ in calls.add(1, ordering: .relaxed) }
        defer { watch.cancel() }
        watch.suspend()
        XCTAssertTrue(watch.isSuspended)
        Glibc.close(peer)
        // The hang-up is reported once to nobody (everything is suspended) and held.
        queue.sync {}
        XCTAssertEqual(calls.load(ordering: .relaxed), 0, "a suspended watch must not call its handler")
        watch.resume(.readable)
        try await waitUntil("the hang-up to reach the read half on resume") { calls.load(ordering: .relaxed) > 0 }
    }

    func testCancelTakesTheDescriptorOutBeforeItReturnsSoItsNumberCanBeReusedAtOnce() async throws {
        let set = try ReadinessSet(queue: queue)
        defer { set.close() }
        let (local, peer) = try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
        defer { Glibc.close(peer) }
        let oldCalls = Atomic<Int>(0)
        let oldCancelled = Atomic<Bool>(false)
        let old = try ReadinessSource(
            descriptor: local, in: set, events: [.readable],
            onCancel: { oldCancelled.store(true, ordering: .relaxed) }
        ) { _ in oldCalls.add(1, ordering: .relaxed) }
        // On the queue no handler runs, so the descriptor may be closed right after cancel():
        // its number is then free, and the next socket gets it.
        let reused = try queue.sync { () throws -> (Int32, Int32) in
            old.cancel()
            Glibc.close(local)
            return try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
        }
        defer { Glibc.close(reused.1) }
        XCTAssertEqual(reused.0, local, "the number was not reused; the test proves less")
        XCTAssertTrue(old.isCancelled)
        XCTAssertEqual(set.count, 0)
        let newCalls = Atomic<Int>(0)
        let new = try ReadinessSource(
            descriptor: reused.0, in: set, events: [.readable], onCancel: { Glibc.close(reused.0) }
        ) { _ in
            newCalls.add(1, ordering: .relaxed)
            ReadinessSourceStressTests.drain(reused.0)
        }
        defer { new.cancel() }
        ReadinessSourceStressTests.talk(reused.1)
        try await waitUntil("the new watch to report") { newCalls.load(ordering: .relaxed) > 0 }
        try await waitUntil("the old watch's onCancel") { oldCancelled.load(ordering: .relaxed) }
        XCTAssertEqual(oldCalls.load(ordering: .relaxed), 0, "the old watch heard about the new socket")
        XCTAssertNil(set.rearmFailure)
    }

    func testCloseRunsEveryOnCancelAndRefusesNewWatches() async throws {
        let set = try ReadinessSet(queue: queue)
        let closed = Atomic<Int>(0)
        var peers: [Int32] = []
        var watches: [ReadinessSource] = []
        for _ in 0..<3 {
            let (local, peer) = try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
            peers.append(peer)
            watches.append(
                try ReadinessSource(
                    descriptor: local, in: set, events: [.readable],
                    onCancel: { Glibc.close(local); closed.add(1, ordering: .relaxed) }
                ) { _ in })
        }
        defer { peers.forEach { Glibc.close($0) } }
        XCTAssertEqual(set.count, 3)
        set.close()
        try await waitUntil("every onCancel") { closed.load(ordering: .relaxed) == 3 }
        XCTAssertTrue(watches.allSatisfy(\.isCancelled))
        let (local, peer) = try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
        defer { Glibc.close(local); Glibc.close(peer) }
        XCTAssertThrowsError(try ReadinessSource(descriptor: local, in: set, events: [.readable]) { _ in }) {
            XCTAssertEqual($0 as? Errno, .badFileDescriptor)
        }
    }
}
