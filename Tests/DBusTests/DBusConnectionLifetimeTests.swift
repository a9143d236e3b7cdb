@testable import DBus
import Foundation
import GatewayTesting
import Glibc
import XCTest

/// What a dropped bus leaves behind: every call and match in flight must be released, because
/// a client such as the BlueZ transport opens a new connection after each drop.
final class DBusConnectionLifetimeTests: XCTestCase {
    /// libsystemd is loaded when a connection opens: without it, opening fails with an error that
    /// names the library and what to install.
    func testAMissingLibsystemdIsAClearError() throws {
        XCTAssertThrowsError(try DBusConnection(address: "unix:path=/nonexistent", library: SDBusLibrary(path: "libsystemd-missing.so.0"))) { error in
            let text = String(describing: error)
            XCTAssertTrue(text.contains("libsystemd-missing.so.0"), text)
            XCTAssertTrue(text.contains("apt install libsystemd0"), text)
        }
    }

    func testCallsAndMatchesInFlightAreReleasedWhenTheBusDrops() async throws {
        let bus = try await PrivateDBusDaemon()
        let connection = try DBusConnection(address: bus.address)
        let signals = try await connection.signals(matching: DBusMatchRule(interface: "org.healthgate.Nothing"))
        // A stopped daemon answers nothing, so the call stays in flight until the bus drops.
        bus.signal(SIGSTOP)
        let call = Task {
            try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus.Peer", member: "Ping")
        }
        try await waitUntil("the call and the match to be in flight") { await connection.core.inFlight().count == 2 }
        weak var firstObject: AnyObject?
        weak var secondObject: AnyObject?
        do {
            let objects = await connection.core.inFlight()
            firstObject = objects[0]
            secondObject = objects[1]
        }
        bus.signal(SIGKILL)
        bus.signal(SIGCONT)
        // sd-bus may answer the call itself ("Connection terminated") before it reports the drop.
        do {
            _ = try await call.value
            XCTFail("a call to a killed bus returned")
        } catch is DBusError {}
        do {
            for try await _ in signals {}
            XCTFail("the signal stream ended without the bus's error")
        } catch {}
        XCTAssertFalse(connection.isOpen)
        // inFlight() runs on the bus's actor, after the job that failed everything has finished.
        let left = await connection.core.inFlight()
        XCTAssertTrue(left.isEmpty)
        // The consumers above resume before the bus queue lets go of the objects it failed:
        // give it a moment (a leaked object never goes).
        for _ in 0..<200 where firstObject != nil || secondObject != nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        XCTAssertNil(firstObject, "a call or match in flight when the bus dropped is still alive")
        XCTAssertNil(secondObject, "a call or match in flight when the bus dropped is still alive")
        await bus.stop()
    }
}
