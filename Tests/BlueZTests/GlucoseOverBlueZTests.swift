import GatewayRuntime
import BLEProfileKit
import BlueZ
import Foundation
import GatewayTesting
import HealthDevices
import HealthModel
import XCTest

/// The `ble-health` source over the BlueZ transport against a mocked glucose meter: the stored
/// records come through the Record Access Control Point (indications through StartNotify, the
/// records through AcquireNotify), all of them the first time, and on the next connection only
/// those after the checkpoint the first ones committed.
final class GlucoseOverBlueZTests: XCTestCase {
    /// Glucose Measurement: flags 0x02 (concentration in kg/L with type and location), the
    /// sequence number, a base time, `milligrams` mg/dL as an SFLOAT (exponent −5), capillary blood
    /// from a finger.
    static func record(_ sequence: Int, _ milligrams: Int) -> [UInt8] {
        [0x02, UInt8(sequence & 0xFF), UInt8(sequence >> 8), 0xEB, 0x07, 1, 14, 7, UInt8(sequence), 0]
            + [UInt8(milligrams & 0xFF), 0xB0 | UInt8(milligrams >> 8), 0x11]
    }

    func testRecordsBeforeAndAfterTheCheckpoint() async throws {
        let bluez = try await PrivateBlueZ()
        do {
            try await bluez.addAdapter()
            let meter = try await bluez.addGlucoseMeter("AA:BB:CC:DD:EE:40")
            for (sequence, value) in [(1, 92), (2, 118), (3, 131)] {
                try await bluez.addGlucoseRecord(meter, Self.record(sequence, value))
            }
            let configuration = HealthDeviceConfiguration(
                transport: .bluez, adapter: "hci0",
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(100)))
            try await HealthSourceOverBlueZ.run(on: bluez, configuration: configuration) { run in
                let glucose = run.glucose
                let racp = PrivateBlueZ.recordAccessControlPoint(meter)
                try await waitUntil(timeout: .seconds(20), "the three stored records") { glucose().count == 3 }
                let firstRequests = try await bluez.written(racp)
                XCTAssertEqual(firstRequests, [[0x01, 0x01]], "no checkpoint yet: every record")
                // Two records more while the meter is away; the next connection asks from 4 (the
                // link's GATT objects are new, so is their list of writes).
                try await bluez.dropLink(meter)
                for (sequence, value) in [(4, 104), (5, 99)] {
                    try await bluez.addGlucoseRecord(meter, Self.record(sequence, value))
                }
                try await waitUntil(timeout: .seconds(20), "the two new records") { glucose().count == 5 }
                let requests = try await bluez.written(racp)
                XCTAssertEqual(requests, [[0x01, 0x03, 0x01, 0x04, 0x00]], "records from sequence number 4")
                let sequences = glucose().compactMap { sample -> Int64? in
                    if case .integer(let value) = sample.metadata[ClinicalRecordMapper.sequenceNumberKey] { value } else { nil }
                }
                XCTAssertEqual(sequences, [1, 2, 3, 4, 5], "each record once")
                XCTAssertEqual(glucose().map { ($0.quantity.value * 1e6).rounded() / 1e6 }, [92, 118, 131, 104, 99])
                XCTAssertEqual(glucose().first?.device?.localIdentifier, "Healthgate Labs/GM-000042")
                XCTAssertTrue(run.logs.entries.contains { $0.message.contains("record access: 06000101") })
            }
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }
}
