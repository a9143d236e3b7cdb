import Dispatch
import Glibc
import GatewayTesting
import LinuxSystem
import Synchronization
import XCTest

/// The rules a `ReadinessSet` keeps, on socket pairs: one watch for both directions with either
/// suspended; a hang-up while every direction is suspended reported on resume; a watch made
/// after a hang-up reporting it; `cancel()` taking
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

    /// The line server's pattern with a watch per direction: reading suspended from its own
    /// handler (a request in flight), the peer hangs up, then a write watch is made on the same
    /// socket. With one DispatchSource per descriptor and direction (libdispatch's shared muxnote,
    /// src/event/event_epoll.c) that write source never ran its handler, in 20 of 20 rounds;
    /// here each watch is a registration of its own.
    func testAWriteWatchMadeAfterAHangUpBesideASuspendedReadWatchStillReports() async throws {
        for round in 0..<20 {
            let (local, peer) = try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
            let read = Mutex<ReadinessSource?>(nil)
            let requested = Atomic<Bool>(false)
            let reading = try ReadinessSource(descriptor: local, queue: queue) {
                ReadinessSourceStressTests.drain(local)
                read.withLock { $0?.suspend() }
                requested.store(true, ordering: .relaxed)
            }
            read.withLock { $0 = reading }
            ReadinessSourceStressTests.talk(peer)
            try await waitUntil("round \(round): the request") { requested.load(ordering: .relaxed) }
            Glibc.close(peer)
            // A probe on another socket, made after the hang-up and already readable: epoll
            // reports in the order things became ready, so once it ran, the hang-up had been seen.
            let (other, otherPeer) = try ReadinessSourceStressTests.socketPair(sendBuffer: 4096)
            ReadinessSourceStressTests.talk(otherPeer)
            let probed = Atomic<Bool>(false)
            let probe = try ReadinessSource(descriptor: other, queue: queue) { probed.store(true, ordering: .relaxed) }
            try await waitUntil("round \(round): the probe") { probed.load(ordering: .relaxed) }
            probe.cancel()
            let wrote = Atomic<Bool>(false)
            let writing = try ReadinessSource(descriptor: local, event: .writable, queue: queue) {
                wrote.store(true, ordering: .relaxed)
            }
            try await waitUntil(timeout: .seconds(5), "round \(round): the write watch made after the hang-up") {
                wrote.load(ordering: .relaxed)
            }
            writing.cancel()
            reading.cancel()
            queue.sync {}
            for descriptor in [local, other, otherPeer] { Glibc.close(descriptor) }
        }
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
