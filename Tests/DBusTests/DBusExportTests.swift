@testable import DBus
import Foundation
import GatewayTesting
import XCTest

/// Objects exported with ``DBusConnection/export(path:bufferLimit:)``, called by another
/// connection over a real dbus-daemon.
final class DBusExportTests: XCTestCase {
    func testCallsAreAnsweredAndTheObjectGoesWithItsStream() async throws {
        let bus = try await PrivateDBusDaemon()
        let server = try DBusConnection(address: bus.address)
        let client = try DBusConnection(address: bus.address)
        let name = try await server.uniqueName()
        XCTAssertTrue(name.hasPrefix(":"), name)
        let calls = try await server.export(path: "/org/healthgate/test")
        let serving = Task {
            for try await call in calls {
                switch call.member {
                case "Echo": call.reply(call.arguments + [.string(call.sender ?? "?")])
                case "Refuse": call.fail(name: "org.healthgate.Error.Refused", message: "no")
                default: break  // released unanswered
                }
            }
        }
        func call(_ member: String, _ arguments: [DBusValue] = []) async throws -> [DBusValue] {
            try await client.call(
                destination: name, path: "/org/healthgate/test", interface: "org.healthgate.Test", member: member,
                arguments: arguments, timeout: .seconds(5))
        }
        let clientName = try await client.uniqueName()
        let echoed = try await call("Echo", [.uint32(7), .objectPath("/a/b")])
        XCTAssertEqual(echoed.count, 3)
        XCTAssertEqual(echoed.first?.integer, 7)
        XCTAssertEqual(echoed.dropFirst().first?.string, "/a/b")
        XCTAssertEqual(echoed.last?.string, clientName, "the caller's unique name")
        do {
            _ = try await call("Refuse")
            XCTFail("an error reply was taken for a value")
        } catch let error as DBusError {
            XCTAssertEqual(error.name, "org.healthgate.Error.Refused")
            XCTAssertEqual(error.message, "no")
        }
        do {
            _ = try await call("Ignore")
            XCTFail("an unanswered call returned a value")
        } catch let error as DBusError {
            XCTAssertEqual(error.name, DBusError.noReply, "released unanswered: NoReply at once, not a timeout")
        }
        // The stream's consumer stops: the object is no longer exported.
        serving.cancel()
        try await waitUntil("the object to go") { await server.core.inFlight().isEmpty }
        do {
            _ = try await call("Echo")
            XCTFail("a removed object answered")
        } catch let error as DBusError {
            XCTAssertTrue([DBusError.unknownObject, DBusError.unknownMethod].contains(error.name), error.name)
        }
        server.close()
        client.close()
        await bus.stop()
    }
}
