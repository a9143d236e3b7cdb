import ANTHeartRate
import ANTProtocol
import Foundation
import GatewayRuntime
import GatewayTesting
import SerialDevices
import XCTest

/// `healthgate scan --kind ant` as the plugin offers it: through a simulated stick on a real pty,
/// with the key in the configuration directory, it lists every strap by its id with its serial
/// number (the simulated straps send page 2 soon after they start) and gives the `sources` entry
/// that reads the stick.
final class ScanTests: XCTestCase {
    func testTheScanListsEveryStrapWithItsIdAndTheSourceEntry() async throws {
        let directory = try TestEnvironment.temporaryDirectory("ant-scan")
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = ANTNetworkKey.random()
        let configDirectory = directory.appendingPathComponent("healthgate")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        try key.bytes.map { String(format: "%02x", $0) }.joined().write(
            to: configDirectory.appendingPathComponent("ant-network-key"), atomically: true, encoding: .utf8)
        let clock = SystemClock()
        let logs = RecordingLogSink()
        let stick = try SimulatedANTStick(straps: 4, networkKey: key, seed: "scan", clock: clock, logger: Logger(label: "stick", sink: logs))
        let play = Task { try await stick.run(hangUpAtEnd: false) }
        defer { play.cancel() }
        let scan = try XCTUnwrap(ANTHeartRateSource.scan)
        XCTAssertEqual(scan.name, "ant")
        let result = try await scan.run(SerialDeviceScanRequest(
            path: stick.devicePath, duration: .seconds(4), variables: ["XDG_CONFIG_HOME": directory.path], clock: clock,
            logger: Logger(label: "scan", sink: logs)))
        XCTAssertEqual(Set(result.rows.map { $0[0] }), Set(stick.straps.map(\.description)))
        XCTAssertEqual(result.rows.map { $0[1] }, result.rows.map { String(ANTDeviceIdentifier($0[0])?.deviceNumber ?? 0) })
        let serials = stick.serialNumbers
        XCTAssertEqual(serials.count, 4)
        for row in result.rows {
            let serial = try XCTUnwrap(ANTDeviceIdentifier(row[0]).flatMap { serials[$0] }, row[0])
            XCTAssertTrue(row[2].hasSuffix(", serial \(serial)"), row[2])
        }
        XCTAssertEqual(result.sources, [
            .object(["kind": .string("ant-heart-rate"), "name": .string("ant-class"), "config": .object(["path": .string(stick.devicePath)])])
        ])
    }

    func testAScanWithoutAKeyIsAConfigurationError() async throws {
        let scan = try XCTUnwrap(ANTHeartRateSource.scan)
        do {
            _ = try await scan.run(SerialDeviceScanRequest(
                path: "/dev/null", duration: .seconds(1), variables: ["XDG_CONFIG_HOME": "/nonexistent"], clock: SystemClock(),
                logger: Logger(label: "scan", sink: RecordingLogSink())))
            XCTFail("a scan without the key ran")
        } catch let error as PluginConfigurationError {
            XCTAssertEqual(error.keyPath, "networkKeyFile")
        }
    }
}
