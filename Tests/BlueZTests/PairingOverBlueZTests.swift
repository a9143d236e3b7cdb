import SampleBus
import BLEProfileKit
import BLETransport
@testable import BlueZ
import DBus
import Foundation
import GatewayTesting
import HealthDevices
import HealthModel
import GatewayRuntime
import XCTest

/// Pairing with devices that require bonding, against the mock BlueZ: its Device1.Pair asks the
/// agent registered by the caller's connection for the passkey, as bluetoothd does, and its GATT
/// refuses everything until the device is paired.
final class PairingOverBlueZTests: XCTestCase {
    static let passkey: Int32 = 24_680

    /// A `ble-health` source whose meter entry carries the passkey: it pairs once, reads the
    /// stored records, and reconnects after a dropped link without pairing again (the bond is
    /// BlueZ's).
    func testTheSourcePairsWithTheConfiguredPasskeyOnceAndReadsTheRecords() async throws {
        try await withHealthSource(pairing: DevicePairing(passkey: UInt32(Self.passkey))) { bluez, meter, run in
            try await waitUntil(timeout: .seconds(20), "the stored records of the bonded meter") { run.glucose().count == 2 }
            var state = try await bluez.pairingState(meter)
            XCTAssertTrue(state.paired)
            XCTAssertTrue(state.trusted, "the paired device is marked trusted")
            XCTAssertEqual(state.passkeyRequests, 1)
            XCTAssertTrue(run.logs.entries.contains { $0.message.contains("paired; BlueZ keeps the bond") })

            try await bluez.dropLink(meter)
            try await bluez.addGlucoseRecord(meter, GlucoseOverBlueZTests.record(3, 101))
            try await waitUntil(timeout: .seconds(20), "the record after the reconnection") { run.glucose().count == 3 }
            state = try await bluez.pairingState(meter)
            XCTAssertEqual(state.passkeyRequests, 1, "a bonded device is not paired again")
        }
    }

    /// A wrong passkey: the pairing fails with a message that names the passkey, nothing is read
    /// and nothing is stored, and the source keeps retrying.
    func testAWrongPasskeyIsReportedAndNothingIsRead() async throws {
        try await withHealthSource(pairing: DevicePairing(passkey: 111_111)) { bluez, meter, run in
            try await waitUntil(timeout: .seconds(20), "two failed pairings") {
                run.logs.entries.filter { $0.message.contains("pairing failed (org.bluez.Error.AuthenticationFailed)") }.count >= 2
            }
            let failure = try XCTUnwrap(run.logs.entries.first { $0.message.contains("pairing failed") })
            XCTAssertTrue(failure.message.contains("check the passkey"), failure.message)
            XCTAssertTrue(run.board.status(of: "health")?.lastError?.contains("pairing failed") ?? false)
            let state = try await bluez.pairingState(meter)
            XCTAssertFalse(state.paired)
            XCTAssertEqual(run.glucose().count, 0)
        }
    }

    /// `"pair": true` without a passkey for a device that asks for one: the agent refuses and
    /// says what to configure.
    func testAMissingPasskeyIsRefusedWithAHint() async throws {
        try await withHealthSource(pairing: DevicePairing()) { bluez, meter, run in
            try await waitUntil(timeout: .seconds(20), "the agent's refusal and the failed pairing") {
                run.logs.entries.contains { $0.message.contains("asks for a passkey and none is configured") }
                    && run.logs.entries.contains { $0.message.contains("pairing failed (org.bluez.Error.AuthenticationRejected)") }
            }
            let state = try await bluez.pairingState(meter)
            XCTAssertFalse(state.paired)
        }
    }

    /// The agent answers only for the device being paired: bluetoothd asking about another one
    /// (a stranger trying to pair with the gateway) is rejected.
    func testTheAgentRejectsDevicesItIsNotPairing() async throws {
        let bluez = try await PrivateBlueZ()
        do {
            try await bluez.addAdapter()
            let meter = try await bluez.addGlucoseMeter("AA:BB:CC:DD:EE:51")
            try await bluez.requirePairing(meter, passkey: -1)
            let transport = BlueZTransport(
                connection: bluez.connection, adapter: "hci0", clock: SystemClock(),
                logger: Logger(label: "pair", sink: RecordingLogSink(), level: .debug))
            let paired = try await transport.pair(address: "AA:BB:CC:DD:EE:51", pairing: DevicePairing(), prompt: nil)
            XCTAssertTrue(paired, "just works")
            let state = try await bluez.pairingState(meter)
            XCTAssertEqual(state.passkeyRequests, 0, "just works asks for nothing")
            let again = try await transport.pair(address: "AA:BB:CC:DD:EE:51", pairing: DevicePairing(), prompt: nil)
            XCTAssertFalse(again, "already paired: nothing to do")

            let ourName = try await bluez.connection.uniqueName()
            do {
                _ = try await bluez.connection.call(
                    destination: ourName, path: "/org/healthgate/pairing_agent", interface: "org.bluez.Agent1",
                    member: "RequestPasskey", arguments: [.objectPath("/org/bluez/hci0/dev_66_55_44_33_22_11")])
                XCTFail("the agent gave a passkey for a device it is not pairing")
            } catch let error as DBusError {
                XCTAssertEqual(error.name, "org.bluez.Error.Rejected")
            }
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }

    /// `healthgate pair` with --passkey, again (already paired), and --forget.
    func testThePairCommand() async throws {
        let bluez = try await PrivateBlueZ()
        do {
            try await bluez.addAdapter()
            let meter = try await bluez.addGlucoseMeter("AA:BB:CC:DD:EE:52")
            try await bluez.requirePairing(meter, passkey: Self.passkey)
            let executable = try bluez.executable()

            let wrong = try await executable.run(["pair", "AA:BB:CC:DD:EE:52", "--passkey", "999999", "--timeout", "5"])
            XCTAssertEqual(wrong.status, 1, wrong.standardOutput + wrong.standardError)
            XCTAssertTrue(wrong.standardError.contains("pairing failed"), wrong.standardError)

            let first = try await executable.run(["pair", "aa:bb:cc:dd:ee:52", "--passkey", "24680", "--adapter", "hci0"])
            XCTAssertEqual(first.status, 0, first.standardError)
            XCTAssertTrue(first.standardOutput.contains("paired AA:BB:CC:DD:EE:52"), first.standardOutput)
            let state = try await bluez.pairingState(meter)
            XCTAssertTrue(state.paired && state.trusted)

            let second = try await executable.run(["pair", "AA:BB:CC:DD:EE:52"])
            XCTAssertEqual(second.status, 0, second.standardError)
            XCTAssertTrue(second.standardOutput.contains("already paired"), second.standardOutput)

            let forget = try await executable.run(["pair", "--forget", "AA:BB:CC:DD:EE:52"])
            XCTAssertEqual(forget.status, 0, forget.standardError)
            XCTAssertTrue(forget.standardOutput.contains("forgot AA:BB:CC:DD:EE:52"), forget.standardOutput)

            try await executable.assertRun(["pair", "AA:BB:CC:DD:EE:99", "--timeout", "1"], exits: 1, saying: "was not seen in 1 s")
            let usage = try await executable.run(["pair", "AA:BB:CC:DD:EE:52", "--passkey", "1234567"])
            XCTAssertEqual(usage.status, 64)
            XCTAssertTrue(usage.standardError.contains("six digits"), usage.standardError)
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }

    // MARK: Running a source against a bonded meter

    /// Runs a `ble-health` source over BlueZ following a meter that requires passkey
    /// ``passkey`` and stores two records, with `pairing` on its device entry.
    private func withHealthSource(
        pairing: DevicePairing, _ body: (PrivateBlueZ, String, HealthSourceOverBlueZ) async throws -> Void
    ) async throws {
        let bluez = try await PrivateBlueZ()
        do {
            try await bluez.addAdapter()
            let address = "AA:BB:CC:DD:EE:50"
            let meter = try await bluez.addGlucoseMeter(address)
            try await bluez.requirePairing(meter, passkey: Self.passkey)
            for (sequence, value) in [(1, 92), (2, 118)] {
                try await bluez.addGlucoseRecord(meter, GlucoseOverBlueZTests.record(sequence, value))
            }
            var configuration = HealthDeviceConfiguration(
                transport: .bluez, adapter: "hci0",
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(200)))
            configuration.devices = .matching([.address(address, pairing: pairing)])
            try await HealthSourceOverBlueZ.run(on: bluez, configuration: configuration) { run in
                try await body(bluez, meter, run)
            }
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }
}
