import BLEProfileKit
import BLETesting
import BLETransport
import Foundation
import GatewayTesting
import GatewayTime
import HealthDevices
import HealthModel
import GatewayRuntime
import SampleBus
import XCTest

/// The `ble-health` source against the scripted fake transport and against the demo's simulated
/// scale and cuff, into a CollectingSink, on a ManualClock.
final class HealthDeviceSourceTests: XCTestCase {
    static let weight = HealthCharacteristic.weightMeasurement
    static let pressure = HealthCharacteristic.bloodPressureMeasurement
    static let glucose = HealthCharacteristic.glucoseMeasurement

    func harness(
        _ transport: FakeBLETransport, _ configuration: HealthDeviceConfiguration = .init(), height: Double? = nil,
        clockTrust: ClockState = .synchronized(maximumErrorSeconds: 0.01)
    ) throws -> SourceHarness {
        try SourceHarness(name: "health", kind: HealthDeviceSource.kind, clock: transport.clock) { environment in
            var environment = environment
            environment.user.heightMeters = height
            environment.clockTrust = FixedClockTrust(clockTrust)
            return try HealthDeviceSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
    }

    static func dateTime(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int) -> [UInt8] {
        [UInt8(y & 0xFF), UInt8(y >> 8), UInt8(mo), UInt8(d), UInt8(h), UInt8(mi), UInt8(s)]
    }

    /// A weight scale with a Current Time whose clock reads `clock` (a ``dateTime(_:_:_:_:_:_:)``;
    /// day of week 5, no fractions, no adjust reason), read-only when `readOnly` holds it.
    static func clockedScale(
        _ address: String, _ name: String, clock: [UInt8], readOnly: Set<BluetoothUUID> = []
    ) -> FakeProfile {
        FakeProfile(
            address: address, name: name, services: [.weightScaleService],
            characteristics: [.weightScaleService: [Self.weight.uuid], .currentTimeService: [.currentTime]],
            values: [.currentTime: clock + [5, 0, 0]], readOnly: readOnly)
    }

    /// A scale whose clock runs 2 minutes fast and that sends no height: the weight is stored at
    /// the corrected time with the device's own time stamp and the offset as metadata, and the
    /// body mass index comes from the profile's height.
    func testScaleWithAFastClockAndBMIFromTheProfileHeight() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))  // 2027-01-15T08:00:00Z
        let profile = FakeProfile(
            address: "C0:FF:EE:00:03:01", name: "Body Scale", services: [.weightScaleService],
            characteristics: [
                .weightScaleService: [Self.weight.uuid], .currentTimeService: [.currentTime],
                .deviceInformationService: [.manufacturerName, .serialNumber],
            ],
            values: [
                .currentTime: Self.dateTime(2027, 1, 15, 8, 2, 0) + [5, 0, 0],
                .manufacturerName: Array("Acme".utf8), .serialNumber: Array("SC-1234".utf8),
            ])
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let h = try harness(transport, height: 1.80)
        try await h.run { h in
            try await transport.connect(profile, in: h, until: "subscription") { $0.isSubscribed(Self.weight.uuid) }
            h.clock.advance(by: .seconds(30))
            // 81.0 kg (16200 × 0.005), measured at 08:01:00 on the device's clock (07:59:00 UTC).
            let link = try XCTUnwrap(transport.latest(profile.address))
            link.send([0x06, 0x48, 0x3F] + Self.dateTime(2027, 1, 15, 8, 1, 0) + [0x02], on: Self.weight.uuid)
            try await h.waitFor("weight and BMI") { h.quantities.count == 2 }
        }
        let mass = try XCTUnwrap(h.quantities(.bodyMass).first)
        XCTAssertEqual(mass.canonicalValue, 81, accuracy: 1e-9)
        XCTAssertEqual(mass.startDate, Date(timeIntervalSince1970: 1_800_000_000 - 60))
        XCTAssertEqual(mass.metadata[ClinicalRecordMapper.deviceTimestampKey], .string("2027-01-15T08:01:00-00:00"))
        XCTAssertEqual(mass.metadata[ClinicalRecordMapper.clockOffsetKey], .double(-120))
        XCTAssertEqual(mass.metadata[ClinicalRecordMapper.userIndexKey], .integer(2))
        XCTAssertEqual(mass.metadata[.bleAddress], .string("C0:FF:EE:00:03:01"))
        XCTAssertEqual(mass.device?.localIdentifier, "Acme/SC-1234")
        let bmi = try XCTUnwrap(h.quantities(.bodyMassIndex).first)
        XCTAssertEqual(bmi.canonicalValue, 81 / (1.8 * 1.8), accuracy: 1e-9)
        XCTAssertEqual(bmi.metadata[ClinicalRecordMapper.bmiComputedKey], .bool(true))
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("clock off by +120 s") }, "\(h.logs.entries.map(\.message))")
    }

    /// A scale whose clock runs 2 minutes fast and takes writes: the gateway sets it to its own
    /// time (Exact Time 256, adjust reason "manual time update") before it subscribes, and logs
    /// it. A record stamped before the set keeps the offset read at connection (-120 s), one of
    /// the last two minutes before the set too (read with the new clock it would lie in the
    /// future), and one stamped after the set takes the new clock's offset (0).
    func testAFastClockIsSetAndRecordsBeforeAndAfterTheSetTakeTheirOwnOffsets() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))  // 2027-01-15T08:00:00Z
        let profile = Self.clockedScale("C0:FF:EE:00:03:03", "Body Scale", clock: Self.dateTime(2027, 1, 15, 8, 2, 0))
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let h = try harness(transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscription") { $0.isSubscribed(Self.weight.uuid) }
            XCTAssertEqual(link.writes.map(\.0), [.currentTime])
            XCTAssertEqual(link.writes.first?.1, [0xEB, 0x07, 0x01, 0x0F, 0x08, 0x00, 0x00, 0x05, 0x00, 0x01])
            h.clock.advance(by: .seconds(30))
            // 07:58:00 and 08:01:30 on the old clock (07:56:00 and 07:59:30 UTC), 08:00:20 on the new one.
            for (minute, second, hour) in [(58, 0, 7), (1, 30, 8), (0, 20, 8)] {
                link.send([0x06, 0x48, 0x3F] + Self.dateTime(2027, 1, 15, hour, minute, second) + [0x01], on: Self.weight.uuid)
            }
            try await h.waitFor("three weights") { h.quantities(.bodyMass).count == 3 }
        }
        let weights = h.quantities(.bodyMass)
        XCTAssertEqual(
            weights.map(\.startDate.timeIntervalSince1970),
            [TimeInterval(1_800_000_000 - 240), TimeInterval(1_800_000_000 - 30), TimeInterval(1_800_000_020)])
        XCTAssertEqual(weights.map { $0.metadata[ClinicalRecordMapper.clockOffsetKey] }, [.double(-120), .double(-120), .double(0)])
        XCTAssertTrue(
            h.logs.entries.contains {
                $0.message.contains("set the device's clock to 2027-01-15T08:00:00Z (UTC); it was off by +120 s")
            }, "\(h.logs.entries.map(\.message))")
        XCTAssertEqual(h.current.details["C0:FF:EE:00:03:03.clockSet"], "2027-01-15T08:00:00Z")
    }

    /// A read-only Current Time: the write is refused, which is logged, and the records keep the
    /// offset read at connection. A clock within 2 s is not written at all.
    func testAReadOnlyClockKeepsItsOffsetAndARightClockIsLeftAlone() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let readOnly = Self.clockedScale("C0:FF:EE:00:03:04", "Old Scale", clock: Self.dateTime(2027, 1, 15, 8, 2, 0), readOnly: [.currentTime])
        let right = Self.clockedScale("C0:FF:EE:00:03:05", "Good Scale", clock: Self.dateTime(2027, 1, 15, 8, 0, 1))
        let transport = FakeBLETransport(profiles: [readOnly, right], clock: clock)
        let h = try harness(transport)
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(readOnly.peripheral))
            transport.emit(.found(right.peripheral))
            try await h.waitFor("subscriptions") {
                transport.latest(readOnly.address)?.isSubscribed(Self.weight.uuid) == true
                    && transport.latest(right.address)?.isSubscribed(Self.weight.uuid) == true
            }
            let link = try XCTUnwrap(transport.latest(readOnly.address))
            link.send([0x06, 0x48, 0x3F] + Self.dateTime(2027, 1, 15, 8, 1, 0) + [0x01], on: Self.weight.uuid)
            try await h.waitFor("the weight") { h.quantities(.bodyMass).count == 1 }
            XCTAssertEqual(transport.latest(right.address)?.writes.isEmpty, true, "a clock 1 s off is left alone")
        }
        let weight = try XCTUnwrap(h.quantities(.bodyMass).first)
        XCTAssertEqual(weight.startDate, Date(timeIntervalSince1970: 1_800_000_000 - 60))
        XCTAssertEqual(weight.metadata[ClinicalRecordMapper.clockOffsetKey], .double(-120))
        XCTAssertTrue(
            h.logs.entries.contains { $0.message.contains("the device's clock does not take the gateway's time") },
            "\(h.logs.entries.map(\.message))")
        XCTAssertNil(h.current.details["C0:FF:EE:00:03:04.clockSet"])
    }

    /// A gateway whose clock is not synchronised (booted at 1970, say) writes no Current Time,
    /// even into a clock it sees 56 years ahead of its own, and takes the device's set clock as
    /// right: the weight is stored at the device's time stamp, with offset 0. Once the kernel
    /// says the clock is synchronised, the next connection sets a clock that is off as before.
    func testAnUnsynchronizedGatewayClockIsNeverWrittenIntoADevice() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 60))  // 1970-01-01T00:01:00Z
        let profile = Self.clockedScale("C0:FF:EE:00:03:06", "Right Scale", clock: Self.dateTime(2027, 1, 15, 8, 0, 0))
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let h = try harness(transport, clockTrust: .unsynchronized)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscription") { $0.isSubscribed(Self.weight.uuid) }
            link.send([0x06, 0x48, 0x3F] + Self.dateTime(2027, 1, 15, 7, 59, 0) + [0x01], on: Self.weight.uuid)
            try await h.waitFor("the weight") { h.quantities(.bodyMass).count == 1 }
            XCTAssertEqual(link.writes.count, 0, "no Current Time written: \(link.writes)")
        }
        let weight = try XCTUnwrap(h.quantities(.bodyMass).first)
        XCTAssertEqual(weight.startDate, Date(timeIntervalSince1970: 1_800_000_000 - 60), "the device's own time")
        XCTAssertEqual(weight.metadata[ClinicalRecordMapper.clockOffsetKey], .double(0))
        XCTAssertTrue(
            h.logs.entries.contains { $0.message.contains("the gateway's clock is not synchronized: the device's clock is left as it is") },
            "\(h.logs.entries.map(\.message))")
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("clock not compared (the gateway's is not synchronized)") })
    }

    /// A cuff: one bloodPressure correlation with its two members and the pulse as heart rate;
    /// a truncated payload is reported with its bytes and the next one still maps.
    func testCuffGivesACorrelationAndPulseAndABadPayloadIsReported() async throws {
        let profile = FakeProfile(
            address: "C0:FF:EE:00:04:01", name: "BP Cuff", services: [.bloodPressureService],
            characteristics: [.bloodPressureService: [Self.pressure.uuid]])
        let transport = FakeBLETransport(profiles: [profile])
        let h = try harness(transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscription") { $0.isSubscribed(Self.pressure.uuid) }
            link.send([0x04, 0x78], on: Self.pressure.uuid)
            // flags 0x04 (pulse): 128/82 mmHg, MAP 97, pulse 71, SFLOAT exponent 0.
            link.send([0x04, 0x80, 0x00, 0x52, 0x00, 0x61, 0x00, 0x47, 0x00], on: Self.pressure.uuid)
            try await h.waitFor("the correlation and the pulse") { h.sink.records.count == 2 }
            XCTAssertEqual(link.writes.count, 0, "no clock service: nothing to set")
        }
        let correlations = h.sink.records.compactMap { record -> CorrelationSample? in
            if case .correlation(let correlation) = record { correlation } else { nil }
        }
        XCTAssertEqual(correlations.count, 1)
        XCTAssertEqual(correlations.first?.objects.map(\.type), [.bloodPressureSystolic, .bloodPressureDiastolic])
        XCTAssertEqual(correlations.first?.objects.map(\.canonicalValue), [128, 82])
        XCTAssertEqual(correlations.first?.metadata[.bleAddress], .string("C0:FF:EE:00:04:01"))
        XCTAssertEqual(h.quantities(.heartRate).map(\.canonicalValue), [71])
        XCTAssertEqual(h.current.details["C0:FF:EE:00:04:01.badPayloads"], "1")
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("bad payload 0478") }, "\(h.logs.entries.map(\.message))")
    }

    /// A glucose meter: the source asks for every stored record through the Record Access
    /// Control Point, each record arrives as a blood glucose sample with a sync identifier built
    /// from its sequence number, and the last sequence number is a checkpoint committed with the
    /// records: the next connection asks only for the records after it.
    func testGlucoseMeterIsAskedForItsRecordsWhichKeepTheirSequenceNumbers() async throws {
        let racp = BluetoothUUID.recordAccessControlPoint
        let profile = FakeProfile(
            address: "C0:FF:EE:00:05:01", name: "Meter", services: [.glucoseService],
            characteristics: [.glucoseService: [Self.glucose.uuid, racp]])
        let transport = FakeBLETransport(profiles: [profile])
        let h = try harness(transport)
        // flags 0x02 (concentration in kg/L, type and location), sequence, base time, SFLOAT, type/location.
        @Sendable func record(_ sequence: Int, _ milligrams: Int) -> [UInt8] {
            [0x02, UInt8(sequence & 0xFF), UInt8(sequence >> 8)] + Self.dateTime(2027, 1, 14, 7, sequence, 0)
                + [UInt8(milligrams & 0xFF), 0xB0 | UInt8(milligrams >> 8), 0x11]
        }
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(profile.peripheral))
            try await h.waitFor("the request for every record") {
                transport.latest(profile.address)?.writes.contains { $0.0 == racp && $0.1 == [0x01, 0x01] } == true
            }
            let link = try XCTUnwrap(transport.latest(profile.address))
            XCTAssertTrue(link.isSubscribed(racp), "indications of the control point are on before the request")
            link.send(record(7, 95), on: Self.glucose.uuid)
            link.send(record(8, 142), on: Self.glucose.uuid)
            // Response: op code 0x06, operand: request 0x01, success 0x01.
            link.send([0x06, 0x00, 0x01, 0x01], on: racp)
            try await h.waitFor("two records") { h.quantities(.bloodGlucose).count == 2 }
            try await h.waitFor("the response logged") { h.logs.entries.contains { $0.message.contains("record access: 06000101") } }

            // The next connection asks only for records after the last one delivered (9 and on),
            // from the checkpoint committed with record 8.
            let second = try await transport.reconnect(link, in: h, until: "the second request") {
                $0.writes.contains { $0.0 == racp && $0.1 == [0x01, 0x03, 0x01, 0x09, 0x00] }
            }
            second.send(record(9, 120), on: Self.glucose.uuid)
            try await h.waitFor("the third record") { h.quantities(.bloodGlucose).count == 3 }
        }
        let samples = h.quantities(.bloodGlucose)
        XCTAssertEqual(samples.map(\.quantity.value), [95, 142, 120], "the digits the meter sent (10^-5 kg/L), no binary noise")
        XCTAssertEqual(samples.map { $0.metadata[ClinicalRecordMapper.sequenceNumberKey] }, [.integer(7), .integer(8), .integer(9)])
        XCTAssertEqual(Set(samples.compactMap(\.metadata.syncIdentifier)).count, 3)
        XCTAssertTrue(samples.allSatisfy { $0.metadata.syncIdentifier?.hasPrefix("C0:FF:EE:00:05:01/") == true })
    }

    /// A body composition scale that splits each record across two indications: the parts are
    /// joined and stored as one record; a first part whose second never comes (the link drops)
    /// is reported and stores nothing; the next connection's records are whole again.
    func testBodyCompositionRecordsSplitAcrossIndicationsAreJoinedAndAHalfIsNeverStored() async throws {
        let composition = HealthCharacteristic.bodyCompositionMeasurement
        let profile = FakeProfile(
            address: "C0:FF:EE:00:03:02", name: "BC Scale", services: [.bodyCompositionService],
            characteristics: [.bodyCompositionService: [composition.uuid]])
        let transport = FakeBLETransport(profiles: [profile])
        let h = try harness(transport, height: 1.74)
        let stamp = Self.dateTime(2027, 1, 15, 7, 30, 0)
        // Part 1: flags 0x1046 (time stamp, user 1, fat free mass 56.2 kg, Multiple Packet),
        // body fat 22.4 %. Part 2: flags 0x1406 (time stamp, user 1, weight 72.4 kg, Multiple Packet).
        let first: [UInt8] = [0x46, 0x10, 0xE0, 0x00] + stamp + [0x01, 0xE8, 0x2B]
        let second: [UInt8] = [0x06, 0x14, 0xE0, 0x00] + stamp + [0x01, 0x90, 0x38]
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscription") { $0.isSubscribed(composition.uuid) }
            link.send(first, on: composition.uuid)
            link.send(second, on: composition.uuid)
            try await h.waitFor("one joined record") { h.quantities.count == 4 }
            link.send(first, on: composition.uuid)
            link.dropLink()
            try await h.waitFor("the half reported") { h.current.details["C0:FF:EE:00:03:02.badPayloads"] == "1" }
            try await h.waitFor("the backoff") { h.clock.sleeperCount == 1 }
            h.clock.advance(by: .seconds(1))
            try await h.waitFor("the second connection") {
                transport.connections(profile.address).count == 2
                    && transport.latest(profile.address)?.isSubscribed(composition.uuid) == true
            }
            let again = try XCTUnwrap(transport.latest(profile.address))
            again.send(second, on: composition.uuid)
            again.send(first, on: composition.uuid)
            try await h.waitFor("a second joined record") { h.quantities.count == 8 }
        }
        func rounded(_ type: QuantityType) -> [Double] { h.quantities(type).map { ($0.canonicalValue * 1e9).rounded() / 1e9 } }
        XCTAssertEqual(rounded(.bodyFatPercentage), [22.4, 22.4])
        XCTAssertEqual(rounded(.leanBodyMass), [56.2, 56.2])
        XCTAssertEqual(rounded(.bodyMass), [72.4, 72.4])
        let bmi = h.quantities(.bodyMassIndex)
        XCTAssertEqual(bmi.count, 2)
        XCTAssertEqual(bmi.first?.canonicalValue ?? 0, 72.4 / (1.74 * 1.74), accuracy: 1e-9)
        XCTAssertEqual(bmi.first?.metadata[ClinicalRecordMapper.bmiComputedKey], .bool(true))
        XCTAssertTrue(
            h.logs.entries.contains { $0.message.contains("incomplete Body Composition Measurement record (1 part") },
            "\(h.logs.entries.map(\.message))")
    }

    /// The source on the simulated transport with `settings`, on a manual clock, for a user of
    /// `heightMeters` when given.
    func simulatedHarness(_ settings: HealthSimulationConfiguration, heightMeters: Double? = nil) throws -> SourceHarness {
        let configuration = HealthDeviceConfiguration(transport: .simulated, profile: HealthProfileConfiguration(simulation: settings))
        return try SourceHarness(name: "health", kind: HealthDeviceSource.kind, clock: ManualClock()) { environment in
            var environment = environment
            if let heightMeters { environment.user.heightMeters = heightMeters }
            return try HealthDeviceSource(
                settings: configuration.validated(in: environment), environment: environment)
        }
    }

    /// The demo's simulated scale and cuff through the real source and decoders: their clocks
    /// run 90 s fast and the samples land at the true time.
    func testSimulatedScaleAndCuffProduceRealRecords() async throws {
        let h = try simulatedHarness(
            HealthSimulationConfiguration(
                scales: 1, cuffs: 1, thermometers: 0, oximeters: 0, glucoseMeters: 0, measurementIntervalSeconds: 5),
            heightMeters: 1.7)
        try await h.run { h in
            for step in 1...3 {
                try await h.waitFor("three sleepers before step \(step)") { h.clock.sleeperCount == 3 }
                h.clock.advance(by: .seconds(5))
            }
            try await h.waitFor("three weights") { h.quantities(.bodyMass).count == 3 }
            try await h.waitFor("three body compositions") { h.quantities(.leanBodyMass).count == 3 }
            try await h.waitFor("three pressures") {
                h.sink.records.filter { if case .correlation = $0 { true } else { false } }.count == 3
            }
        }
        let weights = h.quantities(.bodyMass)
        XCTAssertTrue(weights.allSatisfy { (72.0...72.8).contains($0.canonicalValue) }, "\(weights.map(\.canonicalValue))")
        XCTAssertEqual(h.quantities(.bodyMassIndex).count, 3)
        let fat = h.quantities(.bodyFatPercentage)
        XCTAssertEqual(fat.count, 3, "the scale's body composition records")
        XCTAssertTrue(fat.allSatisfy { (21.8...23.0).contains($0.canonicalValue) }, "\(fat.map(\.canonicalValue))")
        XCTAssertEqual(h.quantities(.leanBodyMass).count, 3)
        // Stamped by the fast device clock, stored at the true time: when each reading arrived.
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let expected = [5.0, 10, 15].map { start.addingTimeInterval($0) }
        XCTAssertEqual(weights.map(\.startDate), expected)
        XCTAssertEqual(h.quantities(.heartRate).map(\.startDate), expected, "the cuff's pulse")
        XCTAssertEqual(h.quantities(.bodyMass).first?.device?.localIdentifier, "healthgate/SIM-SCALE-0001")
        XCTAssertEqual(h.quantities(.bodyMass).first?.metadata[ClinicalRecordMapper.clockOffsetKey], .double(-SimulatedHealthTransport.clockError))
    }

    /// The demo's simulated thermometer, pulse oximeter and glucose meter through the real source
    /// and decoders: temperatures in °C from the mouth, SpO2 and pulse, and the glucose meter's
    /// three stored records downloaded once through the Record Access Control Point, then each
    /// record it takes as it takes it, every sample at the true time (the clocks run 90 s fast).
    func testSimulatedThermometerOximeterAndGlucoseMeterProduceRealRecords() async throws {
        let h = try simulatedHarness(HealthSimulationConfiguration(
            scales: 0, cuffs: 0, thermometers: 1, oximeters: 1, glucoseMeters: 1, measurementIntervalSeconds: 5))
        try await h.run { h in
            try await h.waitFor("the stored glucose records") { h.quantities(.bloodGlucose).count == 3 }
            for step in 1...2 {
                // Discovery, the thermometer, the oximeter and the glucose meter wait on the clock.
                try await h.waitFor("four sleepers before step \(step)") { h.clock.sleeperCount == 4 }
                h.clock.advance(by: .seconds(5))
            }
            try await h.waitFor("two temperatures") { h.quantities(.bodyTemperature).count == 2 }
            try await h.waitFor("two saturations") { h.quantities(.oxygenSaturation).count == 2 }
            try await h.waitFor("five glucose records") { h.quantities(.bloodGlucose).count == 5 }
        }
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let expected = [5.0, 10].map { start.addingTimeInterval($0) }

        let temperatures = h.quantities(.bodyTemperature)
        XCTAssertEqual(temperatures.map(\.quantity.unit), [.degreeCelsius, .degreeCelsius])
        XCTAssertTrue(temperatures.allSatisfy { (36.5...37.1).contains($0.quantity.value) }, "\(temperatures.map(\.quantity))")
        XCTAssertEqual(temperatures.map { $0.metadata[ClinicalRecordMapper.temperatureTypeKey] }, [.string("mouth"), .string("mouth")])
        XCTAssertEqual(temperatures.map(\.startDate), expected)
        XCTAssertEqual(temperatures.first?.device?.localIdentifier, "healthgate/SIM-THERMO-0001")
        XCTAssertEqual(temperatures.first?.metadata[ClinicalRecordMapper.clockOffsetKey], .double(-SimulatedHealthTransport.clockError))

        let saturations = h.quantities(.oxygenSaturation)
        XCTAssertEqual(saturations.map(\.quantity.unit), [.percent, .percent])
        XCTAssertTrue(saturations.allSatisfy { (95...99).contains($0.quantity.value) }, "\(saturations.map(\.quantity))")
        XCTAssertEqual(saturations.map(\.startDate), expected)
        let pulses = h.quantities(.heartRate)
        XCTAssertEqual(pulses.count, 2, "the oximeter's pulse rate")
        XCTAssertTrue(pulses.allSatisfy { (60...68).contains($0.quantity.value) }, "\(pulses.map(\.quantity))")
        XCTAssertEqual(saturations.first?.device?.localIdentifier, "healthgate/SIM-OXI-0001")

        let glucose = h.quantities(.bloodGlucose)
        XCTAssertEqual(glucose.map { $0.metadata[ClinicalRecordMapper.sequenceNumberKey] }, (1...5).map { .integer($0) })
        XCTAssertTrue(glucose.allSatisfy { $0.quantity.unit == .milligramPerDeciliter }, "\(glucose.map(\.quantity))")
        XCTAssertTrue(glucose.allSatisfy { (95...130).contains($0.quantity.value) }, "\(glucose.map(\.quantity))")
        // Records 1-3 were stored 10 s, 5 s and 0 s before the gateway connected.
        XCTAssertEqual(glucose.map(\.startDate), [-10.0, -5, 0, 5, 10].map { start.addingTimeInterval($0) })
        XCTAssertEqual(Set(glucose.compactMap(\.metadata.syncIdentifier)).count, 5)
        XCTAssertEqual(glucose.first?.device?.localIdentifier, "healthgate/SIM-GLUCOSE-0001")
        let messages = h.logs.entries.map(\.message)
        XCTAssertEqual(messages.filter { $0.contains("asked for every stored glucose record") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.contains("record access: 06000101") }.count, 1, "\(messages)")
    }

    /// The simulated glucose meter's memory outlives its link: after the link drops, the next
    /// connection asks for the records after the checkpoint and gets exactly the one taken
    /// meanwhile, so no record is stored twice.
    func testSimulatedGlucoseMeterSendsOnlyNewRecordsOnTheNextConnection() async throws {
        let settings = HealthSimulationConfiguration(
            scales: 0, cuffs: 0, thermometers: 0, oximeters: 0, glucoseMeters: 1, measurementIntervalSeconds: 5)
        // The simulated meter behind a transport that can drop its links, as the gateway's Bluetooth.
        let configuration = HealthDeviceConfiguration(maxDevices: 1)
        let clock = ManualClock()
        let transport = LinkDroppingTransport(SimulatedHealthTransport(clock: clock, settings: settings))
        let h = try SourceHarness(name: "health", kind: HealthDeviceSource.kind, clock: clock) { environment in
            try HealthDeviceSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
        try await h.run { h in
            try await h.waitFor("the stored records") { h.quantities(.bloodGlucose).count == 3 }
            try await h.waitFor("the meter waiting for its next record") { h.clock.sleeperCount == 2 }
            await transport.dropLinks()
            // Record 4 is taken while the link is down; the meter's stream then ends.
            h.clock.advance(by: .seconds(5))
            try await h.waitFor("the end of the link") { h.logs.entries.contains { $0.message.contains("notifications ended") } }
            try await h.waitFor("the backoff") { h.clock.sleeperCount == 2 && transport.connections == 1 }
            h.clock.advance(by: .seconds(1))
            try await h.waitFor("the record taken meanwhile") { h.quantities(.bloodGlucose).count == 4 }
            try await h.waitFor("the second answer") {
                h.logs.entries.filter { $0.message.contains("record access: 06000101") }.count == 2
            }
        }
        XCTAssertEqual(transport.connections, 2)
        let glucose = h.quantities(.bloodGlucose)
        XCTAssertEqual(glucose.map { $0.metadata[ClinicalRecordMapper.sequenceNumberKey] }, (1...4).map { .integer($0) })
        XCTAssertTrue(
            h.logs.entries.contains { $0.message.contains("asked for the stored glucose records after sequence number 3") },
            "\(h.logs.entries.map(\.message))")
    }

    func testConfigurationIsRangeCheckedAndSampleConfigBuilds() throws {
        XCTAssertThrowsError(try HealthDeviceConfiguration(profile: HealthProfileConfiguration(simulation: .init(measurementIntervalSeconds: 0))).validate()) { error in
            XCTAssertTrue("\(error)".contains("simulation.measurementIntervalSeconds"), "\(error)")
        }
        let none = HealthSimulationConfiguration(scales: 0, cuffs: 0, thermometers: 0, oximeters: 0, glucoseMeters: 0)
        XCTAssertThrowsError(try HealthDeviceConfiguration(transport: .simulated, profile: HealthProfileConfiguration(simulation: none)).validate()) { error in
            XCTAssertTrue("\(error)".contains("simulates no device"), "\(error)")
        }
        for key in ["scales", "cuffs", "thermometers", "oximeters", "glucoseMeters"] {
            for count in [-1, 17] {
                let json = Data(#"{"transport": "simulated", "simulation": {"\#(key)": \#(count)}}"#.utf8)
                let configuration = try JSONDecoder().decode(HealthDeviceConfiguration.self, from: json)
                XCTAssertThrowsError(try configuration.validate(), "\(key) \(count)") { error in
                    XCTAssertTrue("\(error)".contains("simulation.\(key)"), "\(error)")
                }
            }
            let json = Data(#"{"transport": "simulated", "simulation": {"\#(key)": 16}}"#.utf8)
            XCTAssertNoThrow(try JSONDecoder().decode(HealthDeviceConfiguration.self, from: json).validate(), key)
        }
        let defaults = HealthSimulationConfiguration()
        XCTAssertEqual(defaults.counts.map(\.count), [1, 1, 1, 1, 1], "one device of each kind")
        XCTAssertEqual(HealthDeviceConfiguration(transport: .simulated).effectiveMaxDevices, 5)
        let demo = try XCTUnwrap(HealthDeviceSource.demo).configuration.decodeStrictly(HealthDeviceConfiguration.self)
        XCTAssertEqual(demo.simulation, defaults, "the demo simulates one of each")
        try HealthProfile.sampleSourceConfigurations(count: 2, environmentName: "health")
    }
}
