import BLEProfileKit
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
        let executable = try bus.executable()
        let result = try await executable.run(["scan", "--adapter", "hci0", "--timeout", "2"])
        await bus.stop()
        XCTAssertEqual(result.status, 0, result.standardError)
        XCTAssertTrue(result.standardOutput.contains("A0:9E:1A:00:00:01"), result.standardOutput)
        XCTAssertTrue(result.standardOutput.contains("Polar H10 SCAN"), result.standardOutput)
        XCTAssertFalse(result.standardOutput.contains("11:22:33:44:55:66"), result.standardOutput)
    }

    /// A heart-rate monitor and a glucose meter: both listed with their kind and source, and the
    /// entries scan prints for them are accepted by `config check`. `--kind` narrows the list,
    /// and an unknown kind is a usage error.
    func testScanListsEveryKindTheCatalogReadsWithEntriesConfigCheckAccepts() async throws {
        let bus = try await PrivateBlueZ()
        try await bus.addAdapter()
        _ = try await bus.addMonitor("A0:9E:1A:00:00:02", name: "Polar H10 SCAN")
        _ = try await bus.addGlucoseMeter("C0:FF:EE:00:00:01", name: "Meter SCAN")
        let executable = try bus.executable()
        let all = try await executable.run(["scan", "--adapter", "hci0", "--timeout", "2"])
        let glucose = try await executable.run(["scan", "--adapter", "hci0", "--timeout", "2", "--kind", "glucose-meter"])
        let unknown = try await executable.run(["scan", "--kind", "toaster", "--timeout", "1"])
        await bus.stop()
        XCTAssertEqual(all.status, 0, all.standardError)
        let lines = all.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("A0:9E:1A:00:00:02") && $0.hasSuffix("heart-rate-monitor  ble-heart-rate") }, all.standardOutput)
        XCTAssertTrue(lines.contains { $0.hasPrefix("C0:FF:EE:00:00:01") && $0.hasSuffix("glucose-meter       ble-health") }, all.standardOutput)
        let entries = lines.filter { $0.hasPrefix("  {") }.map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(Set(entries), [
            #"{"kind": "ble-heart-rate", "config": {"devices": ["A0:9E:1A:00:00:02"]}}"#,
            #"{"kind": "ble-health", "config": {"devices": ["C0:FF:EE:00:00:01"]}}"#,
        ])
        let directory = try TestEnvironment.temporaryDirectory("healthgate-scan-entries")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("scanned.json")
        try "{\"sources\": [\(entries.joined(separator: ", "))]}".write(to: file, atomically: true, encoding: .utf8)
        let check = try await executable.run(["config", "check", file.path])
        XCTAssertEqual(check.status, 0, check.standardOutput + check.standardError)

        XCTAssertEqual(glucose.status, 0, glucose.standardError)
        XCTAssertTrue(glucose.standardOutput.contains("C0:FF:EE:00:00:01"), glucose.standardOutput)
        XCTAssertFalse(glucose.standardOutput.contains("A0:9E:1A:00:00:02"), glucose.standardOutput)
        XCTAssertEqual(unknown.status, 64, unknown.standardError)
        XCTAssertTrue(unknown.standardError.contains(#"unknown --kind "toaster" (one of: heart-rate-monitor, foot-pod"#), unknown.standardError)
    }

    /// A strap broadcasting heart rate and a scale broadcasting a weighing while scan runs: listed
    /// with their last reading and the source that reads them; --kind narrows to one of them.
    func testScanListsAdvertisersWithTheirLastReading() async throws {
        let bus = try await PrivateBlueZ()
        try await bus.addAdapter()
        let executable = try bus.executable()
        // Advertising until scan has run (it starts scanning at some point of the first second).
        let advertising = Task {
            var counter: UInt8 = 0
            while !Task.isCancelled {
                counter &+= 1
                try await bus.advertise(
                    "A0:9E:1A:12:34:56", name: "Polar H10 1A2B3C4D", manufacturer: [0x006B: [0x03 | (counter % 8) << 2, 0, 75, 72]])
                // xiaomi-ble's test_Xiaomi_Scale2 payload: 85.15 kg, 428 ohms, stabilised.
                try await bus.advertise(
                    "C8:47:8C:01:02:03", name: "MIBFS",
                    service: [0x181B: [0x02, 0x26, 0xB2, 0x07, 0x05, 0x04, 0x0F, 0x02, 0x01, 0xAC, 0x01, 0x86, 0x42]])
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let all = try await executable.run(["scan", "--adapter", "hci0", "--timeout", "2"])
        let straps = try await executable.run(["scan", "--adapter", "hci0", "--timeout", "2", "--kind", "ble-polar-broadcast"])
        advertising.cancel()
        _ = await advertising.result
        await bus.stop()
        XCTAssertEqual(all.status, 0, all.standardError)
        let lines = all.standardOutput.split(separator: "\n").map(String.init)
        XCTAssertTrue(
            lines.contains { $0.hasPrefix("A0:9E:1A:12:34:56") && $0.contains("72 bpm, contact yes, battery ok") && $0.hasSuffix("ble-polar-broadcast") },
            all.standardOutput)
        XCTAssertTrue(
            lines.contains { $0.hasPrefix("C8:47:8C:01:02:03") && $0.contains("85.15 kg, 428 ohms") && $0.hasSuffix("ble-mi-scale") },
            all.standardOutput)
        XCTAssertTrue(lines.contains(#"  {"kind": "ble-polar-broadcast", "config": {"devices": ["A0:9E:1A:12:34:56"]}}"#), all.standardOutput)
        XCTAssertEqual(straps.status, 0, straps.standardError)
        XCTAssertTrue(straps.standardOutput.contains("A0:9E:1A:12:34:56"), straps.standardOutput)
        XCTAssertFalse(straps.standardOutput.contains("C8:47:8C:01:02:03"), straps.standardOutput)
    }

    func testScanWithoutBluetoothdExitsUnavailable() async throws {
        let bus = try await PrivateBlueZ(withBluetoothd: false)
        let executable = try bus.executable()
        let result = try await executable.run(["scan", "--timeout", "2"])
        await bus.stop()
        XCTAssertEqual(result.status, 69, result.standardOutput + result.standardError)
        XCTAssertTrue(result.standardError.contains("no Bluetooth"), result.standardError)
    }
}
