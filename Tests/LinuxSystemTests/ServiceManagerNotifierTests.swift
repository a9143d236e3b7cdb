import Foundation
import GatewayTesting
import LinuxSystem
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// systemd's notification protocol against real datagram sockets (``NotificationListener``),
/// bound as systemd binds its own: at a path, and in the abstract namespace (`@name`).
final class ServiceManagerNotifierTests: XCTestCase {
    func testNotificationsReachASocketBoundAtAPath() async throws {
        let directory = try TestEnvironment.temporaryDirectory("notify")
        defer { try? FileManager.default.removeItem(at: directory) }
        let listener = try NotificationListener(address: directory.appendingPathComponent("notify.sock").path)
        defer { listener.close() }
        let notifier = try XCTUnwrap(try ServiceManagerNotifier.from(environment: ["NOTIFY_SOCKET": listener.address]))
        XCTAssertNil(notifier.watchdogTimeout, "no WATCHDOG_USEC: no watchdog")
        try notifier.send(["READY=1", "STATUS=running"])
        try notifier.send(["WATCHDOG=1"])
        try await listener.wait("two notifications") { $0.count == 2 }
        XCTAssertEqual(listener.messages, ["READY=1\nSTATUS=running", "WATCHDOG=1"], "one datagram per notification")
    }

    func testNotificationsReachAnAbstractSocket() async throws {
        let listener = try NotificationListener(address: "@healthgate-notify-test-\(getpid())-\(UInt32.random(in: 0 ... .max))")
        defer { listener.close() }
        let notifier = try XCTUnwrap(try ServiceManagerNotifier.from(environment: ["NOTIFY_SOCKET": listener.address]))
        try notifier.send(["STOPPING=1"])
        try await listener.wait("the notification") { $0.count == 1 }
        XCTAssertEqual(listener.messages, ["STOPPING=1"])
    }

    func testTheWatchdogIsThisProcesssOnlyWhenSystemdSaysSo() throws {
        let socket = ["NOTIFY_SOCKET": "/run/systemd/notify"]
        XCTAssertNil(try ServiceManagerNotifier.from(environment: [:]), "not under systemd")
        XCTAssertEqual(
            try ServiceManagerNotifier.from(environment: socket.merging(["WATCHDOG_USEC": "60000000"]) { $1 })?.watchdogTimeout,
            .seconds(60))
        XCTAssertEqual(
            try ServiceManagerNotifier.from(
                environment: socket.merging(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "\(getpid())"]) { $1 })?.watchdogTimeout,
            .seconds(2))
        XCTAssertNil(
            try ServiceManagerNotifier.from(environment: socket.merging(["WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"]) { $1 })?
                .watchdogTimeout, "another process's watchdog")
        XCTAssertNil(try ServiceManagerNotifier.from(environment: socket.merging(["WATCHDOG_USEC": "0"]) { $1 })?.watchdogTimeout)
        XCTAssertThrowsError(try ServiceManagerNotifier.from(environment: ["NOTIFY_SOCKET": "vsock:2:1234"]))
        XCTAssertThrowsError(try ServiceManagerNotifier.from(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 200)]))
    }

    func testASocketNobodyListensAtIsAnError() throws {
        let directory = try TestEnvironment.temporaryDirectory("notify")
        defer { try? FileManager.default.removeItem(at: directory) }
        let notifier = try XCTUnwrap(
            try ServiceManagerNotifier.from(environment: ["NOTIFY_SOCKET": directory.appendingPathComponent("gone.sock").path]))
        XCTAssertThrowsError(try notifier.send(["WATCHDOG=1"])) { error in
            XCTAssertEqual(error as? Errno, .noSuchFile)
        }
    }
}
