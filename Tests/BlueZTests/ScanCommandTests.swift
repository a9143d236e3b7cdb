import BLECentral
import Foundation
import GatewayTesting
import XCTest

/// `healthgate scan` against the private BlueZ: discovery raced against its timeout.
final class ScanCommandTests: XCTestCase {
    func testScanListsTheMonitorsSeenWhenTheTimeoutEnds() async throws {
        let bus = try await PrivateBlueZ()
        try await bus.addAdapter()
        _ = try await bus.addMonitor("A0:9E:1A:00:00:01", name: "Polar H10 SCAN")
        try await bus.addOtherDevice("11:22:33:44:55:66", name: "Some Speaker")
        var executable = try HealthgateExecutable()
        executable.environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        let result = try await executable.run(["scan", "--adapter", "hci0", "--timeout", "2"])
        await bus.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("A0:9E:1A:00:00:01"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("Polar H10 SCAN"), result.standardOutput)
        XCTAssertFalse(result.standardOutput.contains("11:22:33:44:55:66"), result.standardOutput)
    }

    func testScanWithoutBluetoothdExitsUnavailable() async throws {
        let bus = try await PrivateBlueZ(withBluetoothd: false)
        var executable = try HealthgateExecutable()
        executable.environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        let result = try await executable.run(["scan", "--timeout", "2"])
        await bus.stop()
        XCTAssertEqual(result.status, 69, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardError.contains("no Bluetooth"), result.standardError)
    }
}
