import BLEProfileKit
import BLETesting
import BLETransport
import FitnessEquipment
import Foundation
import GatewayTesting
import HealthModel
import GatewayRuntime
import SampleBus
import XCTest

/// The `ble-fitness` source against the scripted fake transport and against the demo's
/// simulated bike, into a CollectingSink, on a ManualClock.
final class FitnessEquipmentSourceTests: XCTestCase {
    static let csc = FitnessCharacteristic.cscMeasurement.uuid
    static let power = FitnessCharacteristic.cyclingPowerMeasurement.uuid

    /// A bike with a combined speed/cadence sensor and power meter, Device Information and battery.
    static func bike(address: String = "C0:FF:EE:00:02:01") -> FakeProfile {
        FakeProfile(
            address: address, name: "KICKR BIKE 1A2B", services: [.cyclingSpeedAndCadenceService, .cyclingPowerService],
            characteristics: [
                .cyclingSpeedAndCadenceService: [csc, FitnessCharacteristic.cscFeature.uuid],
                .cyclingPowerService: [power],
                .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber],
                .batteryService: [.batteryLevel],
            ],
            values: [
                .manufacturerName: Array("Wahoo Fitness".utf8), .modelNumber: Array("KICKR BIKE".utf8),
                .serialNumber: Array("WF1A2B3C".utf8), .batteryLevel: [64],
            ])
    }

    static func le(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }

    /// CSC Measurement with wheel and crank data (flags 0x03).
    static func cscPayload(wheels: Int, wheelTime: Int, cranks: Int, crankTime: Int) -> [UInt8] {
        [0x03] + le(wheels, 4) + le(wheelTime, 2) + le(cranks, 2) + le(crankTime, 2)
    }

    func harness(_ transport: FakeBLETransport, _ configuration: FitnessEquipmentConfiguration = .init()) throws -> SourceHarness {
        try SourceHarness(name: "bike", kind: FitnessEquipmentSource.kind, clock: transport.clock) { environment in
            try FitnessEquipmentSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
    }

    /// The source on the simulated transport with `settings`, named `name`, on a manual clock.
    func simulatedHarness(_ name: String, _ settings: FitnessSimulationConfiguration) throws -> SourceHarness {
        let configuration = FitnessEquipmentConfiguration(transport: .simulated, profile: FitnessProfileConfiguration(simulation: settings))
        return try SourceHarness(name: name, kind: FitnessEquipmentSource.kind, clock: ManualClock()) { environment in
            try FitnessEquipmentSource(
                settings: configuration.validated(in: environment), environment: environment)
        }
    }

    /// Advances the harness's clock one second at a time, each once the simulator and the
    /// source both sleep.
    static func advance(_ h: SourceHarness, seconds: Int) async throws {
        for second in 1...seconds {
            try await h.waitFor("two sleepers before second \(second)") { h.clock.sleeperCount == 2 }
            h.clock.advance(by: .seconds(1))
        }
    }

    /// Speed, cadence and distance from the CSC counters at the configured wheel circumference,
    /// power from the power meter, every sample naming the device; after a link loss the
    /// counters are a new baseline, so the jump across the gap is no distance.
    func testBikeSamplesDeviceFactsAndAReconnectWithoutADistanceJump() async throws {
        let profile = Self.bike()
        let transport = FakeBLETransport(profiles: [profile])
        let h = try harness(transport, FitnessEquipmentConfiguration(profile: FitnessProfileConfiguration(wheelCircumferenceMillimeters: 2000)))
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscription") {
                $0.isSubscribed(Self.csc) && $0.isSubscribed(Self.power)
            }
            link.send(Self.cscPayload(wheels: 100, wheelTime: 0, cranks: 10, crankTime: 0), on: Self.csc)
            h.clock.advance(by: .seconds(1))
            // 4 wheel revolutions × 2 m in 1 s, 1 crank revolution in 1 s.
            link.send(Self.cscPayload(wheels: 104, wheelTime: 1024, cranks: 11, crankTime: 1024), on: Self.csc)
            link.send([0x00, 0x00] + Self.le(231, 2), on: Self.power)
            try await h.waitFor("speed, distance, cadence and power") { h.quantities.count == 4 }

            let second = try await transport.reconnect(link, in: h, until: "the second subscription") { $0.isSubscribed(Self.csc) }
            // The sensor counted on while disconnected: 5 000 revolutions later.
            second.send(Self.cscPayload(wheels: 5104, wheelTime: 30000, cranks: 911, crankTime: 30000), on: Self.csc)
            h.clock.advance(by: .seconds(1))
            second.send(Self.cscPayload(wheels: 5106, wheelTime: 31024, cranks: 912, crankTime: 31024), on: Self.csc)
            try await h.waitFor("the second connection's samples") { h.quantities.count == 7 }
        }
        XCTAssertEqual(h.quantities(.cyclingSpeed).map(\.canonicalValue), [8, 4])
        XCTAssertEqual(h.quantities(.distanceCycling).map(\.canonicalValue), [8, 4])
        XCTAssertEqual(h.quantities(.cyclingCadence).map(\.canonicalValue), [60, 60])
        XCTAssertEqual(h.quantities(.cyclingPower).map(\.canonicalValue), [231])
        let power = try XCTUnwrap(h.quantities(.cyclingPower).first)
        XCTAssertEqual(power.device?.name, "KICKR BIKE 1A2B")
        XCTAssertEqual(power.device?.manufacturer, "Wahoo Fitness")
        XCTAssertEqual(power.device?.localIdentifier, "Wahoo Fitness/WF1A2B3C")
        XCTAssertEqual(power.metadata[.bleAddress], .string("C0:FF:EE:00:02:01"))
        XCTAssertEqual(power.metadata[.batteryLevel], .integer(64))
        XCTAssertEqual(h.current.details["C0:FF:EE:00:02:01.connections"], "2")
        XCTAssertEqual(h.current.details["C0:FF:EE:00:02:01.battery"], "64%")
        XCTAssertTrue(h.logs.entries.contains {
            $0.message.contains("subscribed to CSC Measurement (0x2A5B), Cycling Power Measurement (0x2A63)")
                && $0.device?.contains("KICKR BIKE 1A2B") == true
        }, "\(h.logs.entries.map(\.message))")
    }

    /// An indoor bike (Fitness Machine 0x1826): Indoor Bike Data maps to speed, cadence and
    /// power; its Fitness Machine Status notifications are logged with the device.
    func testIndoorBikeDataAndMachineStatus() async throws {
        let indoorBike = FitnessCharacteristic.indoorBikeData.uuid
        let status = FitnessCharacteristic.fitnessMachineStatus.uuid
        let profile = FakeProfile(
            address: "C0:FF:EE:00:02:05", name: "Trainer", services: [.fitnessMachineService],
            characteristics: [.fitnessMachineService: [indoorBike, status, FitnessCharacteristic.fitnessMachineFeature.uuid]])
        let transport = FakeBLETransport(profiles: [profile])
        let h = try harness(transport)
        try await h.run { h in
            try await transport.connect(profile, in: h, until: "subscription") {
                $0.isSubscribed(indoorBike) && $0.isSubscribed(status)
            }
            let link = try XCTUnwrap(transport.latest(profile.address))
            link.send([0x04], on: status)
            // Flags 0x0044: speed (bit 0 clear), cadence (bit 2), power (bit 6): 30.00 km/h, 90 rpm, 250 W.
            link.send([0x44, 0x00] + Self.le(3000, 2) + Self.le(180, 2) + Self.le(250, 2), on: indoorBike)
            try await h.waitFor("speed, cadence and power") { h.quantities.count == 3 }
        }
        XCTAssertEqual(try XCTUnwrap(h.quantities(.cyclingSpeed).first?.canonicalValue), 30 / 3.6, accuracy: 1e-9)
        XCTAssertEqual(h.quantities(.cyclingCadence).map(\.canonicalValue), [90])
        XCTAssertEqual(h.quantities(.cyclingPower).map(\.canonicalValue), [250])
        XCTAssertTrue(h.logs.entries.contains {
            $0.message.contains("machine status: startedOrResumedByUser") && $0.device?.contains("Trainer") == true
        }, "\(h.logs.entries.map(\.message))")
    }

    /// A bad payload is logged with its bytes and the device, counted in the status, and the
    /// notifications after it still map.
    func testBadPayloadIsReportedAndTheStreamGoesOn() async throws {
        let profile = Self.bike()
        let transport = FakeBLETransport(profiles: [profile])
        let h = try harness(transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscription") { $0.isSubscribed(Self.power) }
            link.send([0x00], on: Self.power)
            link.send([0x00, 0x00] + Self.le(180, 2), on: Self.power)
            try await h.waitFor("the power sample") { h.quantities(.cyclingPower).count == 1 }
        }
        XCTAssertEqual(h.quantities(.cyclingPower).first?.canonicalValue, 180)
        XCTAssertEqual(h.current.details["C0:FF:EE:00:02:01.badPayloads"], "1")
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("bad payload 00:") && $0.device?.contains("KICKR") == true },
            "\(h.logs.entries.map(\.message))")
    }

    /// A device that advertises a fitness service but has none of the measurements is an error
    /// with what is missing, and is retried with backoff rather than ending the source.
    func testADeviceWithoutMeasurementsIsReportedAndRetried() async throws {
        let profile = FakeProfile(
            address: "C0:FF:EE:00:02:09", name: "Odd sensor", services: [.cyclingPowerService],
            characteristics: [.cyclingPowerService: [FitnessCharacteristic.cyclingPowerFeature.uuid]])
        let transport = FakeBLETransport(profiles: [profile])
        let h = try harness(transport)
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(profile.peripheral))
            try await h.waitFor("the first attempt") { transport.attempts(profile.address) == 1 }
            try await h.waitFor("the error") { h.current.lastError?.contains("none of CSC Measurement") == true }
            // The error is reported before the backoff's sleep begins: time moves only once it
            // sleeps (a second moved before it slept was slept through again: ci79).
            try await h.waitFor("the backoff") { h.clock.sleeperCount == 1 }
            h.clock.advance(by: .seconds(1))
            try await h.waitFor("the retry") { transport.attempts(profile.address) == 2 }
        }
        XCTAssertTrue(h.quantities.isEmpty)
    }

    /// The demo's simulated bike through the real source, decoders and counter arithmetic:
    /// about 30 km/h, 88 rpm and 200 W, and the distance adds up to speed × time.
    func testSimulatedBikeProducesRealSamples() async throws {
        let h = try simulatedHarness("bike", FitnessSimulationConfiguration(bikes: 1, notificationsPerSecond: 1))
        try await h.run { h in
            try await Self.advance(h, seconds: 20)
            try await h.waitFor("20 power samples") { h.quantities(.cyclingPower).count == 20 }
            try await h.waitFor("speeds") { h.quantities(.cyclingSpeed).count >= 18 }
        }
        let speeds = h.quantities(.cyclingSpeed).map(\.canonicalValue)
        XCTAssertTrue(speeds.allSatisfy { (6.5...10.0).contains($0) }, "\(speeds)")
        let cadences = h.quantities(.cyclingCadence).map(\.canonicalValue)
        XCTAssertFalse(cadences.isEmpty)
        XCTAssertTrue(cadences.allSatisfy { (75...100).contains($0) }, "\(cadences)")
        let watts = h.quantities(.cyclingPower).map(\.canonicalValue)
        XCTAssertTrue(watts.allSatisfy { (140...260).contains($0) }, "\(watts)")
        let distance = h.quantities(.distanceCycling).map(\.canonicalValue).reduce(0, +)
        // Whole wheel revolutions over the 19 s after the first reading, at 8.3 ± 1.2 m/s.
        XCTAssertTrue((19 * 6.5...19 * 10.0).contains(distance), "\(distance) m")
        let sample = try XCTUnwrap(h.quantities(.cyclingPower).first)
        XCTAssertEqual(sample.device?.name, "healthgate demo bike")
        XCTAssertEqual(sample.device?.localIdentifier, "healthgate/SIM-BIKE-0001")
    }

    /// The simulated rower (a Fitness Machine sending Rower Data) through the real source:
    /// stroke rate, speed from the pace, power, and the distance as the growth of the machine's
    /// total.
    func testSimulatedRowerProducesRowingSamples() async throws {
        let h = try simulatedHarness("rower", FitnessSimulationConfiguration(bikes: 0, rowers: 1, notificationsPerSecond: 1))
        try await h.run { h in
            try await Self.advance(h, seconds: 10)
            try await h.waitFor("ten stroke rates") { h.quantities(.rowingStrokeRate).count == 10 }
            try await h.waitFor("nine distances") { h.quantities(.distanceRowing).count == 9 }
        }
        XCTAssertEqual(Set(h.quantities(.rowingStrokeRate).map(\.canonicalValue)), [26])
        let speeds = h.quantities(.rowingSpeed).map(\.canonicalValue)
        XCTAssertTrue(speeds.allSatisfy { (3.8...4.6).contains($0) }, "\(speeds)")
        let watts = h.quantities(.rowingPower).map(\.canonicalValue)
        XCTAssertTrue(watts.allSatisfy { (155...205).contains($0) }, "\(watts)")
        // Whole metres of 4.2 m/s over the 9 s after the first record.
        XCTAssertEqual(h.quantities(.distanceRowing).map(\.canonicalValue).reduce(0, +), 38, accuracy: 1)
        XCTAssertEqual(h.quantities(.rowingPower).first?.device?.name, "healthgate demo rower")
    }

    /// The configuration contract: strict keys with a suggestion, ranges with units.
    func testConfigurationIsStrictAndRangeChecked() throws {
        XCTAssertThrowsError(try FitnessEquipmentConfiguration(profile: FitnessProfileConfiguration(wheelCircumferenceMillimeters: 20)).validate()) { error in
            XCTAssertTrue("\(error)".contains("wheelCircumferenceMillimeters"), "\(error)")
            XCTAssertTrue("\(error)".contains("500"), "\(error)")
        }
        XCTAssertThrowsError(try FitnessEquipmentConfiguration(transport: .simulated, profile: FitnessProfileConfiguration(simulation: .init(bikes: 0))).validate())
        let decoded = try ConfigurationDecoder.decode(
            FitnessEquipmentConfiguration.self, from: .object(["wheelCircumferenceMillimeters": .number(2096)]))
        XCTAssertEqual(decoded.wheelCircumferenceMillimeters, 2096)
        XCTAssertThrowsError(try ConfigurationDecoder.decode(
            FitnessEquipmentConfiguration.self, from: .object(["wheelCircumference": .number(2096)]))) { error in
            XCTAssertTrue("\(error)".contains("wheelCircumferenceMillimeters"), "did-you-mean: \(error)")
        }
    }

    func testSampleConfigDecodesAndBuilds() throws {
        let configurations = try FitnessProfile.sampleSourceConfigurations(count: 2, environmentName: "bike")
        XCTAssertEqual(configurations[0].devices, .matching([.name("KICKR*"), .address("C0:FF:EE:12:34:56")]))
        XCTAssertEqual(configurations[0].wheelCircumferenceMillimeters, 2096)
        XCTAssertEqual(configurations[0].effectiveMaxDevices, 3)
        XCTAssertEqual(configurations[1].transport, .simulated)
        XCTAssertEqual(configurations[1].effectiveMaxDevices, 1)
    }
}
