@testable import DBus
import Foundation
import GatewayTesting
import XCTest

/// ``DBusConnection/signals(matchingAny:bufferLimit:)`` over a real dbus-daemon: the signals any
/// of the rules match, on one stream in the order they were sent, and no other; the rules the
/// BlueZ connection follows a device by (its path's namespace; InterfacesAdded/Removed naming it
/// or an object below it).
final class DBusSignalRulesTests: XCTestCase {
    func testTheSignalsOfAnyRuleArriveInOrderAndNoOthers() async throws {
        let bus = try await PrivateDBusDaemon()
        let connection = try DBusConnection(address: bus.address)
        let objectManager = "org.freedesktop.DBus.ObjectManager"
        var signals: AsyncThrowingStream<DBusSignal, any Error>? = try await connection.signals(matchingAny: [
            DBusMatchRule(pathNamespace: "/a/dev"),
            DBusMatchRule(interface: objectManager, arg0Path: "/a/dev"),
            DBusMatchRule(interface: objectManager, arg0Path: "/a/dev/"),
        ])
        // path, interface.member, the object path argument: sent one after another.
        let sent: [(String, String, String?)] = [
            ("/a/dev", "org.healthgate.Test.Changed", nil),
            ("/a/other", "org.healthgate.Test.Changed", nil),
            ("/a/device2", "org.healthgate.Test.Changed", nil),  // a longer name, not below /a/dev
            ("/", "\(objectManager).InterfacesRemoved", "/a/dev/char1"),
            ("/", "\(objectManager).InterfacesRemoved", "/a/other"),
            ("/", "\(objectManager).InterfacesRemoved", "/a/device2/char1"),
            ("/", "\(objectManager).InterfacesAdded", "/a/dev"),
            ("/a/dev/service1/char1", "org.healthgate.Test.Changed", nil),
            ("/a/dev", "org.healthgate.Test.End", nil),
        ]
        for (path, member, argument) in sent {
            let send = Process()
            send.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
            send.arguments = ["--bus=\(bus.address)", "--type=signal", path, member] + (argument.map { ["objpath:\($0)"] } ?? [])
            try send.run()
            send.waitUntilExit()
            XCTAssertEqual(send.terminationStatus, 0, "dbus-send \(path) \(member)")
        }
        var received: [String] = []
        for try await signal in try XCTUnwrap(signals) {
            received.append("\(signal.path) \(signal.member)" + (signal.arguments.first?.string.map { " \($0)" } ?? ""))
            if signal.member == "End" { break }
        }
        XCTAssertEqual(received, [
            "/a/dev Changed", "/ InterfacesRemoved /a/dev/char1", "/ InterfacesAdded /a/dev", "/a/dev/service1/char1 Changed",
            "/a/dev End",
        ])
        // The stream is let go: every match goes with it.
        signals = nil
        try await waitUntil("the matches to go") { await connection.core.inFlight().isEmpty }
        connection.close()
        await bus.stop()
    }

    /// One message that several matches fit is decoded once and reaches each of them whole.
    func testASignalTwoSubscriptionsMatchReachesBothWhole() async throws {
        let bus = try await PrivateDBusDaemon()
        let connection = try DBusConnection(address: bus.address)
        var byPath: AsyncThrowingStream<DBusSignal, any Error>? = try await connection.signals(matching: DBusMatchRule(pathNamespace: "/a"))
        var byInterface: AsyncThrowingStream<DBusSignal, any Error>? = try await connection.signals(
            matching: DBusMatchRule(interface: "org.healthgate.Test"))
        for (index, text) in ["first", "second", "end"].enumerated() {
            let send = Process()
            send.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
            send.arguments = ["--bus=\(bus.address)", "--type=signal", "/a/b", "org.healthgate.Test.Said", "string:\(text)", "uint32:\(index)"]
            try send.run()
            send.waitUntilExit()
            XCTAssertEqual(send.terminationStatus, 0)
        }
        for stream in [try XCTUnwrap(byPath), try XCTUnwrap(byInterface)] {
            var said: [String] = []
            for try await signal in stream {
                said.append("\(signal.arguments.first?.string ?? "?") \(signal.arguments.last?.integer ?? -1)")
                if signal.arguments.first?.string == "end" { break }
            }
            XCTAssertEqual(said, ["first 0", "second 1", "end 2"])
        }
        byPath = nil
        byInterface = nil
        try await waitUntil("the matches to go") { await connection.core.inFlight().isEmpty }
        connection.close()
        await bus.stop()
    }
}
