import BLEProfileKit
import BLETransport
import Foundation
import GatewayRuntime
import GatewayTesting
import SampleBus
import XCTest

/// What the kit makes of a profile's declaration: `maxDevices`' default and the schema's words
/// for it, the refusal of a simulation of no device, the profile's own checks, the demo's entry,
/// and the simulated transport its `simulation` block makes, with the connection parts every
/// simulator shares.
final class BluetoothProfileTests: XCTestCase {
    /// Two beacons by default, the first advertising Heart Rate, the second only Battery.
    struct BeaconSimulation: BluetoothSimulation {
        var beacons = 2

        init() {}

        static var configurationKeys: [ConfigurationKey<Self>] { [.simulatedCount("beacons", \.beacons, "Simulated beacons")] }

        var deviceCount: Int { beacons }

        func devices(clock: any GatewayClock) -> SimulatedDevices {
            let peripherals = (0..<beacons).map { index in
                DiscoveredPeripheral(
                    address: "02:00:00:00:0A:0\(index + 1)", name: "beacon \(index + 1)",
                    serviceUUIDs: [index == 0 ? .heartRateService : .batteryService])
            }
            return SimulatedDevices(peripherals, peripheral: { $0 }) { BeaconConnection(address: $0.address) }
        }
    }

    /// The shared parts, and nothing that writes or notifies.
    final class BeaconConnection: SimulatedConnection {
        let link: SimulatedLink
        let gatt = SimulatedGATTDatabase(
            services: [.batteryService: [.batteryLevel], .deviceInformationService: [.modelNumber]], readable: [.batteryLevel: [64]])

        init(address: String) {
            link = SimulatedLink(address: address)
        }

        func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
        }

        func notifications(of characteristics: [GATTCharacteristicID]) async throws -> AsyncThrowingStream<BLENotification, any Error> {
            throw BLETransportError(.notSupported, device: address, "nothing notifies")
        }
    }

    struct BeaconConfiguration: BluetoothProfileConfiguration {
        var strict = false
        var simulation = BeaconSimulation()

        init() {}

        static var configurationKeys: [ConfigurationKey<Self>] {
            [ConfigurationKey("strict", \.strict, .boolean, "Refused with the simulated transport"), .simulation(\.simulation)]
        }

        func validate(simulated: Bool) throws(PluginConfigurationError) {
            if strict, simulated { throw PluginConfigurationError(keyPath: "strict", reason: "not with the simulated transport") }
        }
    }

    enum BeaconProfile: BluetoothProfile {
        typealias Configuration = BeaconConfiguration
        static let kind = "ble-beacon"
        static let summary = "Beacons."
        static let deviceKinds = [BluetoothDeviceKind("beacon", advertising: .heartRateService, called: "beacons")]
        static let maxDevicesWithBlueZ = 3
        static let demo: BluetoothProfileDemo? = BluetoothProfileDemo(name: "demo-beacon")

        static func follow(_ session: PeripheralSession, configuration: BeaconConfiguration, environment: PluginEnvironment) async throws {}
    }

    typealias BeaconSourceConfiguration = BluetoothSourceConfiguration<BeaconProfile>

    func testMaxDevicesDefaultsToTheProfilesOrEverySimulatedDevice() throws {
        XCTAssertEqual(BeaconSourceConfiguration().effectiveMaxDevices, 3)
        XCTAssertEqual(BeaconSourceConfiguration(transport: .simulated).effectiveMaxDevices, 2)
        var five = BeaconConfiguration()
        five.simulation.beacons = 5
        XCTAssertEqual(BeaconSourceConfiguration(transport: .simulated, profile: five).effectiveMaxDevices, 5)
        XCTAssertEqual(BeaconSourceConfiguration(transport: .simulated, maxDevices: 1).effectiveMaxDevices, 1)
        let maxDevices = try XCTUnwrap(
            BeaconSourceConfiguration.configurationObject(defaults: BeaconSourceConfiguration()).properties.first { $0.name == "maxDevices" })
        XCTAssertEqual(maxDevices.description, "How many devices to follow at once; absent: 3 with bluez, every simulated device when simulated")
    }

    func testASimulationOfNoDeviceAndTheProfilesOwnChecksAreRefused() throws {
        var none = BeaconConfiguration()
        none.simulation.beacons = 0
        XCTAssertThrowsError(try BeaconSourceConfiguration(transport: .simulated, profile: none).validate()) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "simulation", "\(error)")
            XCTAssertTrue("\(error)".contains("simulates no device"), "\(error)")
        }
        XCTAssertNoThrow(try BeaconSourceConfiguration(profile: none).validate(), "bluez simulates nothing")
        let strict = BeaconConfiguration().with { $0.strict = true }
        XCTAssertThrowsError(try BeaconSourceConfiguration(transport: .simulated, profile: strict).validate()) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "strict", "\(error)")
        }
        XCTAssertNoThrow(try BeaconSourceConfiguration(profile: strict).validate())
    }

    /// The demo runs the simulator with the `simulation` block's defaults.
    func testTheDemoIsTheSimulatorWithItsDefaults() throws {
        let demo = try XCTUnwrap(BluetoothSource<BeaconProfile>.demo)
        XCTAssertEqual(demo.name, "demo-beacon")
        let configuration = try demo.configuration.decodeStrictly(BeaconSourceConfiguration.self)
        XCTAssertEqual(configuration, BeaconSourceConfiguration(transport: .simulated))
        XCTAssertNoThrow(try configuration.validate())
    }

    func testTheSimulatedTransportDiscoversAndConnectsTheSimulationsDevices() async throws {
        let transport = SimulatedCentralTransport<BeaconSimulation>(clock: ManualClock())
        XCTAssertEqual(transport.peripherals.map(\.address), ["02:00:00:00:0A:01", "02:00:00:00:0A:02"])
        var discovery = transport.discover(services: [.heartRateService]).makeAsyncIterator()
        let first = try await discovery.next()
        XCTAssertEqual(first, .found(transport.peripherals[0]), "only the device advertising a wanted service")

        let connection = try await transport.connect(to: "02:00:00:00:0a:02")
        XCTAssertEqual(connection.address, "02:00:00:00:0A:02")
        let hasBattery = await connection.hasCharacteristic(.batteryLevel, in: .batteryService)
        let hasHeartRate = await connection.hasCharacteristic(.heartRateMeasurement, in: .heartRateService)
        XCTAssertTrue(hasBattery)
        XCTAssertFalse(hasHeartRate)
        let battery = try await connection.read(.batteryLevel, in: .batteryService)
        XCTAssertEqual(battery, [64])
        let percentage = await connection.batteryPercentage()
        XCTAssertEqual(percentage, 64)
        XCTAssertEqual(connection.droppedNotifications, 0)
        await assertThrows(.notSupported) { _ = try await connection.read(.modelNumber, in: .deviceInformationService) }
        await connection.disconnect()
        await assertThrows(.disconnected) { _ = try await connection.read(.batteryLevel, in: .batteryService) }
        await assertThrows(.notFound) { _ = try await transport.connect(to: "02:00:00:00:0A:03") }
    }

    private func assertThrows(
        _ code: BLETransportError.Code, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            XCTFail("no error, expected \(code)", file: file, line: line)
        } catch {
            XCTAssertEqual((error as? BLETransportError)?.code, code, "\(error)", file: file, line: line)
        }
    }
}
