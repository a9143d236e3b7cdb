import Dispatch
import Foundation
import Glibc
import LinuxSystem
import Synchronization
import XCTest

/// `ReadinessSource` churned the way a socket server drives it: on each socket a read watch,
/// suspended and resumed as requests come and go, and a write watch made whenever a send would
/// block and cancelled once it went through; the peer hangs up at any point, the owner cancels
/// every watch and closes the socket in the last `onCancel`, and the next round's sockets reuse
/// the numbers. A failure is the process dying in libdispatch (see ReadinessSource.swift), or a
/// socket whose watches never finished.
///
/// Bounded: `HEALTHGATE_STRESS_SECONDS` (default 3) of rounds. Set it higher for a soak.
final class ReadinessSourceStressTests: XCTestCase {
    func testWatchesOnSocketsThatHangUpAtAnyPointAllFinishAndCloseTheirSocket() throws {
        let budget = StressBudget.seconds(default: 3)
        let deadline = ContinuousClock.now + budget
        // Several serial queues, so that handlers (and whatever libdispatch does on a source's
        // target queue) run on worker threads beside its manager thread.
        let queues = (0..<4).map { DispatchQueue(label: "readiness-stress-\($0)") }
        var rounds = 0
        var sockets = 0
        let watches = Tally()
        repeat {
            let group = DispatchGroup()
            var peers: [Int32] = []
            var churners: [SocketChurner] = []
            // 80 pairs: beyond libdispatch's 64 muxnote buckets, so descriptors share buckets.
            for index in 0..<80 {
                let (local, peer) = try Self.socketPair(sendBuffer: 4096)
                let churner = try SocketChurner(descriptor: local, queue: queues[index % queues.count], group: group, watches: watches)
                churner.start()
                churners.append(churner)
                peers.append(peer)
            }
            sockets += peers.count
            // The peers read a little, at random, so that write watches fire and are replaced,
            // then hang up in a random order, some at once.
            var open = peers.shuffled()
            while !open.isEmpty {
                for peer in open { Self.talk(peer) }
                let leaving = open.prefix(Int.random(in: 0...max(1, open.count / 4)))
                for peer in leaving { Glibc.close(peer) }
                open.removeFirst(leaving.count)
            }
            let finished = group.wait(timeout: .now() + 20)
            let stuck = churners.filter { !$0.descriptorClosed }.map(\.summary)
            XCTAssertEqual(finished, .success, "round \(rounds): watches never finished: \(stuck.prefix(4))")
            if finished != .success { break }
            for churner in churners {
                XCTAssertTrue(churner.descriptorClosed, "round \(rounds): a socket was left open")
            }
            rounds += 1
        } while ContinuousClock.now < deadline
        XCTAssertGreaterThan(rounds, 0)
        print("ReadinessSourceStressTests: \(rounds) rounds, \(sockets) sockets, \(watches.value) watches in \(budget)")
    }

    /// A connected, non-blocking pair whose first end sends into a `sendBuffer`-byte buffer.
    static func socketPair(sendBuffer: Int32) throws -> (Int32, Int32) {
        var ends: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &ends) == 0 else { throw Errno.lastError }
        var size = sendBuffer
        _ = setsockopt(ends[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(ends[1], SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        return (ends[0], ends[1])
    }

    /// Sends a byte (a request, for the read watch) and reads what `descriptor` holds now, up to
    /// a random amount (room, for the write watch), without blocking.
    static func talk(_ descriptor: Int32) {
        var byte: UInt8 = 0x0A
        _ = Glibc.send(descriptor, &byte, 1, Int32(MSG_NOSIGNAL))
        var buffer = [UInt8](repeating: 0, count: Int.random(in: 1...16_384))
        _ = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
    }
}

extension ReadinessSourceStressTests {
    /// Reads `descriptor` until it would block.
    static func drain(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ Glibc.read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}

/// A count shared by threads.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func add(_ amount: Int = 1) { count.add(amount, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// How long a stress test runs: `HEALTHGATE_STRESS_SECONDS`, else the test's default.
enum StressBudget {
    static func seconds(default value: Int) -> Duration {
        let text = ProcessInfo.processInfo.environment["HEALTHGATE_STRESS_SECONDS"]
        return .seconds(text.flatMap(Int.init).map { max(1, $0) } ?? value)
    }
}

/// One socket driven like a line-server connection, on a serial queue; all of its state is
/// touched on that queue only (the Mutex makes that checkable, not contended).
private final class SocketChurner: Sendable {
    private struct State {
        var read: ReadinessSource?
        var write: ReadinessSource?
        var liveWatches = 0
        var finished = false
        var closed = false
    }

    private let descriptor: Int32
    private let queue: DispatchQueue
    private let group: DispatchGroup
    private let watches: Tally
    private let state = Mutex(State())
    private static let chunk = [UInt8](repeating: 0x2A, count: 8192)

    init(descriptor: Int32, queue: DispatchQueue, group: DispatchGroup, watches: Tally) throws {
        self.descriptor = descriptor
        self.watches = watches
        self.queue = queue
        self.group = group
        group.enter()
    }

    var descriptorClosed: Bool { state.withLock { $0.closed } }

    /// Where a socket that never closed stands, for a failure message.
    var summary: String {
        state.withLock { state in
            "finished \(state.finished), live watches \(state.liveWatches), reading \(state.read.map { $0.isSuspended ? "suspended" : "on" } ?? "no"), write watch \(state.write != nil)"
        }
    }

    func start() {
        queue.async { [self] in
            let read = makeWatch(.readable) { [self] in readAvailable() }
            state.withLock { $0.read = read }
            send()
        }
    }

    /// A watch counted until its `onCancel`; nil when it could not be made (the socket is then
    /// finished, as a server refuses a connection it cannot watch).
    private func makeWatch(_ event: ReadinessSource.Event, onReady: @escaping @Sendable () -> Void) -> ReadinessSource? {
        state.withLock { $0.liveWatches += 1 }
        watches.add()
        do {
            return try ReadinessSource(
                descriptor: descriptor, event: event, queue: queue, onCancel: { [self] in watchCancelled() },
                onReady: onReady)
        } catch {
            state.withLock { $0.liveWatches -= 1 }
            return nil
        }
    }

    private func readAvailable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { continue }
            if count < 0 && errno == EAGAIN { break }
            return finish()
        }
        // As a server with a request in flight: stop reading for a moment, then go on.
        if Bool.random() {
            let read = state.withLock { $0.read }
            read?.suspend()
            queue.asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...500))) { read?.resume() }
        }
    }

    /// Sends until the socket is full, then waits for room with a new write watch; once there
    /// is room, that watch is cancelled and the next send makes another.
    private func send() {
        while true {
            let sent = Self.chunk.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 { continue }
            if sent < 0 && errno == EAGAIN { break }
            return finish()
        }
        let (finished, hasWriter) = state.withLock { ($0.finished, $0.write != nil) }
        guard !finished, !hasWriter else { return }
        guard let write = makeWatch(.writable, onReady: { [self] in roomToWrite() }) else { return finish() }
        state.withLock { $0.write = write }
    }

    private func roomToWrite() {
        let write = state.withLock { state -> ReadinessSource? in
            defer { state.write = nil }
            return state.write
        }
        write?.cancel()
        if !state.withLock({ $0.finished }) { send() }
    }

    private func finish() {
        let (read, write) = state.withLock { state -> (ReadinessSource?, ReadinessSource?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            defer { (state.read, state.write) = (nil, nil) }
            return (state.read, state.write)
        }
        read?.cancel()
        write?.cancel()
        closeIfNoWatches()
    }

    private func watchCancelled() {
        state.withLock { $0.liveWatches -= 1 }
        closeIfNoWatches()
    }

    /// Closes the socket once it is finished and every watch on it has run `onCancel`.
    private func closeIfNoWatches() {
        let close = state.withLock { state -> Bool in
            guard state.finished, state.liveWatches == 0, !state.closed else { return false }
            state.closed = true
            return true
        }
        guard close else { return }
        Glibc.close(descriptor)
        group.leave()
    }
}
