import Foundation
import GatewayTesting
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// The shipped D-Bus policy (udev-rules/dbus-healthgate.conf) on a real dbus-daemon whose
/// default policy is the system bus's (method calls denied unless a rule allows them): every
/// BlueZ method healthgate calls passes, and other BlueZ methods are refused.
final class DBusPolicyTests: XCTestCase {
    /// The methods Sources/BlueZ/BlueZClient.swift calls for the heart-rate plugin.
    static let called = [
        "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
        "org.bluez.Adapter1.SetDiscoveryFilter", "org.bluez.Adapter1.StartDiscovery",
        "org.bluez.Adapter1.StopDiscovery", "org.bluez.Device1.Connect", "org.bluez.Device1.Disconnect",
        "org.bluez.GattCharacteristic1.ReadValue", "org.bluez.GattCharacteristic1.WriteValue",
        "org.bluez.GattCharacteristic1.StartNotify", "org.bluez.GattCharacteristic1.StopNotify",
        "org.bluez.GattCharacteristic1.AcquireNotify",
    ]
    /// Methods healthgate never calls, some of them dangerous.
    static let notCalled = [
        "org.bluez.Adapter1.RemoveDevice", "org.bluez.Device1.Pair", "org.bluez.Device1.CancelPairing",
        "org.bluez.AgentManager1.RegisterAgent", "org.freedesktop.DBus.Properties.Set",
        "org.bluez.GattCharacteristic1.AcquireWrite", "org.bluez.GattManager1.RegisterApplication",
    ]

    func testPolicyAllowsExactlyTheBlueZMethodsHealthgateCalls() async throws {
        let directory = try TestEnvironment.temporaryDirectory("healthgate-dbus-policy")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The policy names the service user; here the test's own user stands in for it.
        let user = try XCTUnwrap(getpwuid(getuid())).pointee.pw_name.map { String(cString: $0) } ?? "root"
        let shipped = try String(
            contentsOf: HealthgateExecutable.packageRoot().appendingPathComponent("udev-rules/dbus-healthgate.conf"),
            encoding: .utf8)
        XCTAssertTrue(shipped.contains(#"<policy user="healthgate">"#))
        let policy = directory.appendingPathComponent("healthgate.conf")
        try shipped.replacingOccurrences(of: #"user="healthgate""#, with: "user=\"\(user)\"")
            .write(to: policy, atomically: true, encoding: .utf8)
        let socket = directory.appendingPathComponent("bus").path
        let address = "unix:path=\(socket)"
        let configuration = directory.appendingPathComponent("bus.conf")
        // The default context follows dbus's system.conf: calls denied, replies and signals
        // delivered; the stand-in for bluetoothd may own org.bluez.
        try """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
              "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <listen>\(address)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <deny own="*"/>
                <deny send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_requested_reply="true" send_type="method_return"/>
                <allow send_requested_reply="true" send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow receive_type="signal"/>
                <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
                <allow own="org.bluez"/>
              </policy>
              <include>\(policy.path)</include>
            </busconfig>
            """.write(to: configuration, atomically: true, encoding: .utf8)

        let daemon = try Self.start("/usr/bin/dbus-daemon", ["--config-file=\(configuration.path)", "--nofork", "--nopidfile"])
        defer { Self.stop(daemon) }
        try await waitUntil(timeout: .seconds(20), "the private bus") { FileManager.default.fileExists(atPath: socket) }
        // python3-dbusmock owning org.bluez answers every call with UnknownMethod: enough to tell
        // a delivered call from one the bus refused.
        let bluetoothd = try Self.start(
            "/usr/bin/python3", ["-m", "dbusmock", "--system", "org.bluez", "/", "org.freedesktop.DBus.ObjectManager"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"])
        defer { Self.stop(bluetoothd) }
        try await waitUntil(timeout: .seconds(20), "dbusmock owning org.bluez") {
            try Self.send(address, destination: "org.freedesktop.DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.bluez")
                .contains("boolean true")
        }

        for method in Self.called {
            let answer = try Self.send(address, destination: "org.bluez", method)
            XCTAssertFalse(answer.contains("AccessDenied"), "\(method) is refused: \(answer)")
            XCTAssertTrue(answer.contains("UnknownMethod"), "\(method) did not reach the stand-in: \(answer)")
        }
        for method in Self.notCalled {
            let answer = try Self.send(address, destination: "org.bluez", method)
            XCTAssertTrue(answer.contains("AccessDenied"), "\(method) is allowed: \(answer)")
        }
    }

    private static func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Process {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw SocketFailure("\(executable) is missing (scripts/install-dependencies installs it)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// SIGKILL: children of the test process inherit its blocked SIGTERM (Dispatch blocks it).
    private static func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// One call with dbus-send; its output and error text together.
    private static func send(_ address: String, destination: String, _ method: String, _ arguments: String...) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
        process.arguments = ["--bus=\(address)", "--print-reply", "--reply-timeout=5000", "--dest=\(destination)",
                             destination == "org.bluez" ? "/" : "/org/freedesktop/DBus", method] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
