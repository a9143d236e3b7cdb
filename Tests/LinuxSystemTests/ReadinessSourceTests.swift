import Dispatch
import GatewayTesting
import LinuxSystem
import Synchronization
import XCTest

/// `ReadinessSource` on a real socket: the handler runs while data waits, not while suspended,
/// again after `resume()`, and `onCancel` runs even when the source is cancelled suspended.
final class ReadinessSourceTests: XCTestCase {
    func testSuspendPausesTheHandlerAndCancellingWhileSuspendedStillRunsOnCancel() async throws {
        let directory = try TestEnvironment.temporaryDirectory("readiness")
        let path = directory.appendingPathComponent("s.sock").path
        let listener = try UnixStreamSocket.make(nonBlocking: true)
        try UnixStreamSocket.bind(listener, to: path, mode: 0o600)
        try UnixStreamSocket.listen(listener, backlog: 4)
        let client = try UnixStreamSocket.connect(to: path)
        defer { client.close() }
        let server = try XCTUnwrap(try UnixStreamSocket.accept(listener))
        defer { listener.close() }

        let calls = Atomic<Int>(0)
        let cancelled = Atomic<Bool>(false)
        let queue = DispatchQueue(label: "readiness-test")
        let source = try ReadinessSource(
            descriptor: try XCTUnwrap(server.rawValue), queue: queue,
            onCancel: { cancelled.store(true, ordering: .relaxed); server.close() }
        ) {
            calls.add(1, ordering: .relaxed)
            while (try? server.read(maximum: 64))?.isEmpty == false {}
        }

        _ = try UnixStreamSocket.sendSome(client, [1])
        try await waitUntil("the handler to run for the first byte") { calls.load(ordering: .relaxed) >= 1 }

        source.suspend()
        XCTAssertTrue(source.isSuspended)
        queue.sync {}  // a call already queued has run
        let before = calls.load(ordering: .relaxed)
        _ = try UnixStreamSocket.sendSome(client, [2])
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(calls.load(ordering: .relaxed), before, "a suspended source must not call its handler")

        source.resume()
        try await waitUntil("the handler to run after resume") { calls.load(ordering: .relaxed) > before }

        source.suspend()
        source.cancel()
        XCTAssertTrue(source.isCancelled)
        try await waitUntil("onCancel to run for a source cancelled while suspended") {
            cancelled.load(ordering: .relaxed)
        }
    }
}
