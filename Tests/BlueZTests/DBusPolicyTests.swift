import BlueZ
import Foundation
import GatewayTesting
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// The shipped D-Bus policy (udev-rules/dbus-healthgate.conf) against the table of every call
/// healthgate makes to bluetoothd (``BlueZMethod``): on a real dbus-daemon whose default policy is
/// the system bus's (method calls denied unless a rule allows them), each call in the table
/// passes for the service user and for the `bluetooth` group, the rest of BlueZ's API is
/// refused, and the file grants nothing but the table.
final class DBusPolicyTests: XCTestCase {
    /// `interface.member` of every call in the table.
    static let called = Set(BlueZMethod.allCases.map { "\($0.interface).\($0.member)" })

    /// BlueZ's API beyond the table (BlueZ doc/org.bluez.*.rst), with the bus's own read-only
    /// calls on bluetoothd's objects: each must be refused.
    static let bluezAPI = [
        "org.bluez.Adapter1.GetDiscoveryFilters", "org.bluez.Adapter1.ConnectDevice",
        "org.bluez.Device1.ConnectProfile", "org.bluez.Device1.DisconnectProfile",
        "org.bluez.AgentManager1.RequestDefaultAgent", "org.bluez.AgentManager1.UnregisterAgent",
        "org.bluez.GattCharacteristic1.AcquireWrite", "org.bluez.GattManager1.RegisterApplication",
        "org.bluez.GattManager1.UnregisterApplication", "org.bluez.LEAdvertisingManager1.RegisterAdvertisement",
        "org.bluez.ProfileManager1.RegisterProfile",
        "org.bluez.Media1.RegisterEndpoint", "org.bluez.Battery1.Refresh",
        "org.freedesktop.DBus.Properties.GetAll", "org.freedesktop.DBus.Introspectable.Introspect",
    ]

    func testTheTableNamesEachCallOnce() {
        XCTAssertEqual(Self.called.count, BlueZMethod.allCases.count)
        XCTAssertTrue(Self.called.isDisjoint(with: Self.bluezAPI), "a call of the table is in the refused list")
        XCTAssertEqual(Set(BlueZWritableProperty.allCases.map { "\($0.interface).\($0.name)" }),
                       ["org.bluez.Adapter1.Powered", "org.bluez.Device1.Trusted"])
    }

    /// Each `<policy>` of the shipped file allows exactly the table, one narrow rule per call.
    func testTheShippedFileGrantsExactlyTheTable() throws {
        let policies = try Self.shippedPolicies()
        XCTAssertEqual(Set(policies.keys), [#"user="healthgate""#, #"group="bluetooth""#])
        for (head, rules) in policies {
            var granted: Set<String> = []
            for rule in rules {
                XCTAssertEqual(rule["send_destination"], "org.bluez", "\(head): \(rule)")
                XCTAssertEqual(rule["send_type"], "method_call", "\(head): \(rule)")
                XCTAssertEqual(Set(rule.keys), ["send_destination", "send_type", "send_interface", "send_member"], "\(head): \(rule)")
                let call = "\(rule["send_interface"] ?? "").\(rule["send_member"] ?? "")"
                XCTAssertTrue(granted.insert(call).inserted, "\(head) grants \(call) twice")
            }
            XCTAssertEqual(granted.subtracting(Self.called), [], "\(head) grants calls healthgate does not make")
            XCTAssertEqual(Self.called.subtracting(granted), [], "\(head) misses calls healthgate makes")
        }
    }

    /// The service user, then a member of the `bluetooth` group, on a real dbus-daemon.
    func testARealBusGrantsTheTableToTheUserAndTheGroupAndNothingElse() async throws {
        let user = try XCTUnwrap(getpwuid(getuid())).pointee.pw_name.map { String(cString: $0) } ?? "root"
        let group = try XCTUnwrap(getgrgid(getgid())).pointee.gr_name.map { String(cString: $0) } ?? "root"
        let shipped = try Self.shippedText()
        // As the service user: the test's user stands in for it.
        try await checkBus(policy: shipped.replacingOccurrences(of: #"user="healthgate""#, with: "user=\"\(user)\""), as: "user")
        // As a member of the group: the user rules name nobody, the group is the test's own.
        try await checkBus(
            policy: shipped.replacingOccurrences(of: #"user="healthgate""#, with: #"user="healthgate-nobody-\#(getpid())""#)
                .replacingOccurrences(of: #"group="bluetooth""#, with: "group=\"\(group)\""),
            as: "group")
    }

    private static func shippedText() throws -> String {
        try String(
            contentsOf: HealthgateExecutable.packageRoot().appendingPathComponent("udev-rules/dbus-healthgate.conf"),
            encoding: .utf8)
    }

    /// The shipped file's `<policy …>` elements: their head (`user="…"`) and the attributes of
    /// each `<allow>` inside, comments removed.
    private static func shippedPolicies() throws -> [String: [[String: String]]] {
        var text = try shippedText()
        while let open = text.range(of: "<!--"), let close = text.range(of: "-->", range: open.upperBound..<text.endIndex) {
            text.removeSubrange(open.lowerBound..<close.upperBound)
        }
        let attribute = try NSRegularExpression(pattern: #"([a-z_]+)="([^"]*)""#)
        func attributes(_ element: String) -> [String: String] {
            var found: [String: String] = [:]
            let range = NSRange(element.startIndex..., in: element)
            for match in attribute.matches(in: element, range: range) {
                if let name = Range(match.range(at: 1), in: element), let value = Range(match.range(at: 2), in: element) {
                    found[String(element[name])] = String(element[value])
                }
            }
            return found
        }
        var policies: [String: [[String: String]]] = [:]
        for chunk in text.components(separatedBy: "<policy ").dropFirst() {
            guard let headEnd = chunk.firstIndex(of: ">"), let bodyEnd = chunk.range(of: "</policy>") else {
                throw PolicyTestFailure("an unclosed <policy> in the shipped file")
            }
            let head = String(chunk[..<headEnd])
            let body = chunk[chunk.index(after: headEnd)..<bodyEnd.lowerBound]
            let elements = body.components(separatedBy: "<").dropFirst().map { String($0) }
            for element in elements {
                XCTAssertTrue(element.hasPrefix("allow "), "\(head): only <allow> rules are expected, found <\(element)")
            }
            policies[head] = elements.map(attributes)
        }
        return policies
    }

    private func checkBus(policy text: String, as who: String) async throws {
        let directory = try TestEnvironment.temporaryDirectory("healthgate-dbus-policy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let policy = directory.appendingPathComponent("healthgate.conf")
        try text.write(to: policy, atomically: true, encoding: .utf8)
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
        // python3-dbusmock owning org.bluez answers every call it does not implement with
        // UnknownMethod: enough to tell a delivered call from one the bus refused.
        let bluetoothd = try Self.start(
            "/usr/bin/python3", ["-m", "dbusmock", "--system", "org.bluez", "/", "org.freedesktop.DBus.ObjectManager"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"])
        defer { Self.stop(bluetoothd) }
        try await waitUntil(timeout: .seconds(20), "dbusmock owning org.bluez") {
            try Self.send(address, destination: "org.freedesktop.DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.bluez")
                .contains("boolean true")
        }

        for method in Self.called.sorted() {
            let answer = try Self.send(address, destination: "org.bluez", method)
            XCTAssertFalse(answer.contains("AccessDenied"), "\(who): \(method) is refused: \(answer)")
            // Delivered: dbusmock refuses the unknown method, or (Properties, which it
            // implements) fails on the missing arguments.
            XCTAssertTrue(
                answer.contains("UnknownMethod") || answer.contains("org.freedesktop.DBus.Python."),
                "\(who): \(method) did not reach the stand-in: \(answer)")
        }
        for method in Self.bluezAPI {
            let answer = try Self.send(address, destination: "org.bluez", method)
            XCTAssertTrue(answer.contains("AccessDenied"), "\(who): \(method) is allowed: \(answer)")
        }
    }

    private static func start(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> Process {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw PolicyTestFailure("\(executable) is missing (scripts/install-dependencies --test installs it)")
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
        try runProcessOutput(
            URL(fileURLWithPath: "/usr/bin/dbus-send"),
            ["--bus=\(address)", "--print-reply", "--reply-timeout=5000", "--dest=\(destination)",
             destination == "org.bluez" ? "/" : "/org/freedesktop/DBus", method] + arguments
        ).output
    }
}

/// A broken precondition of the policy test: a missing program, or a file that does not parse.
private struct PolicyTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
