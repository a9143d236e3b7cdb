import BlueZ
import Foundation
import GatewayTesting
import XCTest

/// What a person meets without Bluetooth (issue #45): `scan` and `pair` name what is missing
/// and how to install or start it, `status` shows the source waiting for Bluetooth, and the
/// troubleshooting tables list every such message.
final class WithoutBluetoothTests: XCTestCase {
    /// `DBUS_SYSTEM_BUS_ADDRESS` names a socket nobody listens on.
    func testScanAndPairWithoutASystemBusSayWhatToInstall() async throws {
        let directory = try TestEnvironment.temporaryDirectory("healthgate-nobus")
        defer { try? FileManager.default.removeItem(at: directory) }
        var executable = try HealthgateExecutable()
        let address = "unix:path=\(directory.path)/missing"
        executable.environment["DBUS_SYSTEM_BUS_ADDRESS"] = address
        let scan = try await executable.run(["scan", "--timeout", "2"])
        let pair = try await executable.run(["pair", "AA:BB:CC:DD:EE:FF", "--timeout", "2"])
        let expected = "no Bluetooth: " + BluetoothAbsence.noSystemBus(address: address).message
        for result in [scan, pair] {
            XCTAssertEqual(result.status, 69, result.standardOutput + result.standardError)
            XCTAssertTrue(result.standardError.contains(expected), result.standardError)
            XCTAssertTrue(result.standardError.contains("apt install dbus; systemctl start dbus"), result.standardError)
            XCTAssertFalse(result.standardError.contains("ENOENT"), result.standardError)
        }
    }

    func testScanAndPairWithoutBluetoothdSayWhatToInstall() async throws {
        let bus = try await PrivateBlueZ(withBluetoothd: false)
        let executable = try bus.executable()
        let scan = try await executable.run(["scan", "--timeout", "2"])
        let pair = try await executable.run(["pair", "AA:BB:CC:DD:EE:FF", "--timeout", "2"])
        await bus.stop()
        for result in [scan, pair] {
            XCTAssertEqual(result.status, 69, result.standardOutput + result.standardError)
            XCTAssertTrue(
                result.standardError.contains("no Bluetooth: bluetoothd is not running (org.bluez is not on the system bus): "
                    + "apt install bluez; systemctl start bluetooth"), result.standardError)
        }
    }

    func testScanWithoutAnAdapterSaysWhatToDo() async throws {
        let bus = try await PrivateBlueZ()
        let executable = try bus.executable()
        let any = try await executable.run(["scan", "--timeout", "2"])
        let named = try await executable.run(["scan", "--adapter", "hci1", "--timeout", "2"])
        await bus.stop()
        XCTAssertEqual(any.status, 69, any.standardError)
        XCTAssertTrue(any.standardError.contains("no Bluetooth: " + BluetoothAbsence.noAdapter(nil).message), any.standardError)
        XCTAssertEqual(named.status, 69, named.standardError)
        XCTAssertTrue(named.standardError.contains("no Bluetooth: " + BluetoothAbsence.noAdapter("hci1").message), named.standardError)
    }

    /// A gateway whose Bluetooth source finds no bluetoothd: `status` shows the source as
    /// waiting, with the reason, not as running.
    func testStatusShowsABluetoothSourceWithoutBluetoothdAsWaiting() async throws {
        let bus = try await PrivateBlueZ(withBluetoothd: false)
        let executable = try bus.executable()
        let config = executable.root.appendingPathComponent("bluetooth.json")
        try Data(#"{"sources": [{"kind": "ble-heart-rate", "name": "strap"}]}"#.utf8).write(to: config)
        let daemon = try executable.start(["run", "--config", config.path])
        var table: HealthgateExecutable.Result?
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let status = try await executable.run(["status"])
            if status.status == 0, status.standardOutput.contains("strap: waiting for") {
                table = status
                break
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        daemon.send(SIGTERM)
        let stopped = try await daemon.waitForExit(timeout: .seconds(30))
        await bus.stop()
        let output = try XCTUnwrap(table, "status never showed the source waiting: \(stopped.standardError)").standardOutput
        let row = try XCTUnwrap(output.split(separator: "\n").first { $0.hasPrefix("strap ") }, output)
        // NAME KIND ROLE STATE …
        XCTAssertEqual(row.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first, "waiting", output)
        // The line is wrapped to 80 columns, continuation lines indented under the plugin.
        XCTAssertTrue(
            output.replacingOccurrences(of: "\n    ", with: " ")
                .contains("strap: waiting for Bluetooth: " + BluetoothAbsence.noBluetoothd.message), output)
    }

    /// Every message a person can meet is in the users' troubleshooting table and the BlueZ
    /// module's.
    func testTheTroubleshootingTablesListEveryMessage() throws {
        let root = HealthgateExecutable.packageRoot()
        for page in ["docs/installing-and-operating.md", "Sources/Devices/Bluetooth/BlueZ/README.md"] {
            let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
            for absence in BluetoothAbsence.examples {
                XCTAssertTrue(text.contains("`no Bluetooth: \(absence.message)`"), "\(page) lacks \(absence.message)")
            }
        }
    }
}
