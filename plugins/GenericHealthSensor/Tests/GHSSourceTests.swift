import BLEProfileKit
import BLETesting
import BLETransport
import Foundation
import GATTDecoding
import GatewayRuntime
import GatewayTesting
@testable import GenericHealthSensor
import HealthModel
import SampleBus
import XCTest

/// The `ble-ghs` source against the scripted fake transport, into a CollectingSink, on a
/// ManualClock: what it asks the sensor, how it reassembles and maps observations, what it
/// refuses, and the checkpoint of stored observations.
final class GHSSourceTests: XCTestCase {
    static let service = BluetoothUUID.genericHealthSensorService
    static let live = GHSCharacteristic.liveHealthObservations.uuid
    static let stored = GHSCharacteristic.storedHealthObservations.uuid
    static let racp = GHSCharacteristic.recordAccessControlPoint.uuid
    static let controlPoint = GHSCharacteristic.controlPoint.uuid
    /// 2027-01-15T08:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    func harness(_ transport: FakeBLETransport, _ configuration: GHSConfiguration = .init()) throws -> SourceHarness {
        try SourceHarness(name: "ghs", kind: GHSSource.kind, clock: transport.clock) { environment in
            try GHSSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
    }

    static func profile(address: String = "C0:FF:EE:18:40:01", lacking: Set<BluetoothUUID> = []) -> FakeProfile {
        let characteristics: [GHSCharacteristic] = [
            .healthSensorFeatures, .liveHealthObservations, .storedHealthObservations, .recordAccessControlPoint, .controlPoint,
            .observationScheduleChanged, .securityLevels,
        ]
        return FakeProfile(
            address: address, name: "Oximeter", services: [service],
            characteristics: [
                service: characteristics.map(\.uuid).filter { !lacking.contains($0) },
                .deviceInformationService: [.manufacturerName, .serialNumber],
            ],
            values: [
                // SpO2 and pulse rate; a pulse oximeter (MDC_DEV_SPEC_PROFILE_PULS_OXIM), version 1.
                GHSCharacteristic.healthSensorFeatures.uuid: [0x01, 0x02, 0xB8, 0x4B, 0x02, 0x00, 0x1A, 0x48, 0x02, 0x00, 0x01, 0x04, 0x10, 0x01],
                GHSCharacteristic.securityLevels.uuid: [0x01, 0x01],
                .manufacturerName: Array("Acme".utf8), .serialNumber: Array("GHS-7".utf8),
            ])
    }

    /// Milliseconds since 2000 of `date`.
    static func ms(_ date: Date) -> UInt64 { UInt64((date.timeIntervalSince1970 - 946_684_800) * 1000) }

    static func numeric(_ type: UInt32, unit: UInt16, _ mantissa: Int, exponent: Int = 0, at date: Date? = now) -> [UInt8] {
        ACOMEncoder.object(
            0x01, ACOMEncoder.Header(type: type, milliseconds2000: date.map(ms)), value: ACOMEncoder.numeric(unit: unit, mantissa: mantissa, exponent: exponent))
    }

    /// `object` cut into segments of `size` bytes with counters from `counter` on.
    static func segments(_ object: [UInt8], size: Int = 19, counter: Int = 0) -> [[UInt8]] {
        ACOMEncoder.segments(object, size: size, counter: counter).segments
    }

    /// The connection's set-up: Features and Security Levels read, five subscriptions, every
    /// stored observation asked for, then live observations. Observations that come segmented
    /// (counters wrapping past 63) are reassembled and mapped; a lost segment drops its
    /// observation with a counted reason and the next one still arrives; the checkpoint makes the
    /// next connection ask only for the records after the last one stored.
    func testLiveAndStoredObservationsAreReassembledMappedAndCheckpointed() async throws {
        let clock = ManualClock(start: Self.now)
        let profile = Self.profile()
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let h = try harness(transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "the request for live observations") {
                $0.writes.contains { $0.0 == Self.controlPoint }
            }
            XCTAssertEqual(link.writes.map(\.0), [Self.racp, Self.controlPoint])
            XCTAssertEqual(link.writes.map(\.1), [[0x01, 0x01], [0x01]])
            for characteristic in [Self.live, Self.stored, Self.racp, Self.controlPoint, GHSCharacteristic.observationScheduleChanged.uuid] {
                XCTAssertTrue(link.isSubscribed(characteristic), "\(characteristic)")
            }
            // Stored record 7: SpO2 96 % an hour ago, counters 62, 63, 0.
            let stored = ACOMEncoder.le(UInt32(7)) + Self.numeric(150_456, unit: 544, 96, at: Self.now.addingTimeInterval(-3600))
            for segment in Self.segments(stored, size: 12, counter: 62) { link.send(segment, on: Self.stored) }
            link.send([0x06, 0x00, 0x01, 0x01], on: Self.racp)
            link.send([0x80], on: Self.controlPoint)
            // Live: a pulse rate whose middle segment is lost, then a whole SpO2.
            let lost = Self.segments(Self.numeric(149_530, unit: 2720, 71), size: 8, counter: 10)
            XCTAssertEqual(lost.count, 3)
            link.send(lost[0], on: Self.live)
            link.send(lost[2], on: Self.live)
            for segment in Self.segments(Self.numeric(150_456, unit: 544, 98), counter: 13) { link.send(segment, on: Self.live) }
            try await h.waitFor("two SpO2 readings") { h.quantities(.oxygenSaturation).count == 2 }
            try await h.waitFor("the responses logged") { h.logs.entries.contains { $0.message.contains("control point: success") } }

            try await transport.reconnect(link, in: h, until: "the request from record 8") {
                $0.writes.contains { $0.0 == Self.racp && $0.1 == [0x01, 0x03, 0x01, 8, 0, 0, 0] }
            }
        }
        let spo2 = h.quantities(.oxygenSaturation)
        XCTAssertEqual(spo2.map(\.quantity.value), [96, 98])
        XCTAssertEqual(spo2.map(\.startDate), [Self.now.addingTimeInterval(-3600), Self.now])
        XCTAssertEqual(spo2.first?.metadata[.ghsRecordNumber], .integer(7))
        XCTAssertEqual(spo2.first?.metadata[.mdcObservationType], .integer(150_456))
        XCTAssertEqual(spo2.first?.metadata[.mdcUnit], .integer(544))
        XCTAssertEqual(spo2.first?.metadata[.deviceTimestamp], .string("2027-01-15T07:00:00.000Z"))
        XCTAssertEqual(spo2.first?.metadata[.mdcDeviceSpecializations], .string("528388:1"))
        XCTAssertEqual(spo2.first?.metadata.syncIdentifier, "Acme/GHS-7/ghs/2027-01-15T07:00:00.000Z/150456/0")
        XCTAssertTrue(h.quantities(.heartRate).isEmpty, "the pulse rate with a lost segment is not stored")
        let bad = h.logs.entries.filter { $0.message.contains("observation dropped") }
        XCTAssertEqual(bad.count, 1, "\(bad.map(\.message))")
        XCTAssertTrue(bad[0].message.contains("outOfOrder"), bad[0].message)
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.droppedObservations"], "outOfOrder 1")
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.observationTypes"], "MDC_PULS_OXIM_SAT_O2 (150456), MDC_PULS_OXIM_PULS_RATE (149530)")
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.securityLevels"], "mode 1 level 1")
    }

    /// A blood pressure compound is a correlation with the mean in its metadata; a bundle's
    /// members take its time stamp; a sample array is a quantity series at its period; a type
    /// the table lacks is stored as a generic observation with its codes; a cuff-loose event
    /// derived from the pressure goes into its metadata; a string is named, not stored.
    func testEveryObservationClassBecomesWhatTheTableSays() async throws {
        let clock = ManualClock(start: Self.now)
        let profile = Self.profile()
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let h = try harness(transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "the request for live observations") {
                $0.writes.contains { $0.0 == Self.controlPoint }
            }
            var counter = 0
            func send(_ object: [UInt8]) {
                let made = ACOMEncoder.segments(object, size: 40, counter: counter)
                counter = made.next
                for segment in made.segments { link.send(segment, on: Self.live) }
            }
            // A bundle: the pressure (object id 9, mmHg) and an event derived from it.
            let pressure = ACOMEncoder.compound([(150_021, 3872, 128, 0), (150_022, 3872, 84, 0), (150_023, 3872, 99, 0)])
            var pressureObject = ACOMEncoder.object(0x07, ACOMEncoder.Header(type: 150_020), value: pressure)
            // Object id 9: flags bit 4, after the type.
            pressureObject = Self.withObjectID(pressureObject, 9)
            let event = Self.derived(ACOMEncoder.object(0x05, ACOMEncoder.Header(type: 8_410_608), value: [0x01, 0xF0, 0x00, 0x03, 0x00]), from: 9)
            send(ACOMEncoder.object(0xFF, ACOMEncoder.Header(milliseconds2000: Self.ms(Self.now)), value: ACOMEncoder.bundle([pressureObject, event])))
            // A respiration rate in breaths per minute, and an unknown type in an unknown unit.
            send(Self.numeric(151_562, unit: 2784, 16))
            send(Self.numeric(8_454_260, unit: 9, 42))
            // An ECG lead: 4 samples, 250 Hz, scale 0.5 mV, offset -1 mV.
            let ecg =
                ACOMEncoder.le(UInt16(4274)) + ACOMEncoder.float(mantissa: 5, exponent: -1) + ACOMEncoder.float(mantissa: -1, exponent: 0)
                + ACOMEncoder.float(mantissa: 4, exponent: -3) + [0x01, 0x01] + ACOMEncoder.le(UInt32(4)) + [0, 2, 4, 3]
            send(ACOMEncoder.object(0x04, ACOMEncoder.Header(type: 131_329, milliseconds2000: Self.ms(Self.now)), value: ecg))
            // A string: nothing to store.
            send(ACOMEncoder.object(0x03, ACOMEncoder.Header(type: 68_218), value: [3, 0] + Array("Man".utf8)))
            try await h.waitFor("the ECG series") { h.sink.records.contains { if case .quantitySeries = $0 { true } else { false } } }
            try await h.waitFor("the string named") { h.logs.entries.contains { $0.message.contains("has no number to store") } }
        }
        let records = h.sink.records
        let correlations = records.compactMap { if case .correlation(let c) = $0 { c } else { nil } }
        XCTAssertEqual(correlations.count, 1)
        let bp = try XCTUnwrap(correlations.first)
        XCTAssertEqual(bp.object(of: .bloodPressureSystolic)?.quantity.value, 128)
        XCTAssertEqual(bp.object(of: .bloodPressureDiastolic)?.quantity.value, 84)
        XCTAssertEqual(bp.metadata[.meanArterialPressure], .double(99))
        XCTAssertEqual(bp.metadata[.mdcEvents], .string("196848"), "cuff loose (3::240) as sent, derived from the pressure")
        XCTAssertEqual(bp.startDate, Self.now, "the bundle's time stamp")
        XCTAssertEqual(h.quantities(.respiratoryRate).map(\.quantity.value), [16])
        let generic = h.quantities.filter { $0.type.identifier == "mdc.8454260.9" }
        XCTAssertEqual(generic.map(\.quantity.value), [42])
        XCTAssertEqual(generic.first?.quantity.unit, .count)
        let series = records.compactMap { if case .quantitySeries(let s) = $0 { s } else { nil } }
        XCTAssertEqual(series.count, 1)
        let lead = try XCTUnwrap(series.first)
        XCTAssertEqual(lead.type.identifier, "mdc.131329.4274")
        XCTAssertEqual(lead.unit, .millivolt)
        XCTAssertEqual(lead.quantities.map(\.value), [-1, 0, 1, 0.5])
        XCTAssertEqual(lead.quantities.map(\.startDate), (0..<4).map { Self.now.addingTimeInterval(Double($0) * 0.004) })
        XCTAssertFalse(records.contains { $0.typeIdentifier.hasPrefix("mdc.8410608") }, "the event is in the pressure's metadata, not a record")
    }

    /// A stored observation that cannot be placed in time (a tick counter) is not stored, and the
    /// log says why; `liveObservations: false` writes no GHS Control Point request.
    func testUnplaceableStoredObservationsAndNoLiveRequest() async throws {
        let clock = ManualClock(start: Self.now)
        let profile = Self.profile()
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let configuration = try JSONDecoder().decode(GHSConfiguration.self, from: Data(#"{"liveObservations": false}"#.utf8))
        let h = try harness(transport, configuration)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "the request for every stored observation") {
                $0.writes.contains { $0.0 == Self.racp }
            }
            // Tick counter (flags bit 0), 1 s resolution: 9-byte time stamp with flags 0x21.
            var ticks = Self.numeric(150_456, unit: 544, 97, at: nil)
            ticks[3] |= 0x02
            ticks.insert(contentsOf: [0x21, 0x10, 0x27, 0, 0, 0, 0, 0x00, 0x00], at: 9)
            ticks[1] = UInt8(ticks.count - 3)
            for segment in Self.segments(ACOMEncoder.le(UInt32(3)) + ticks) { link.send(segment, on: Self.stored) }
            for segment in Self.segments(ACOMEncoder.le(UInt32(4)) + Self.numeric(150_456, unit: 544, 95)) { link.send(segment, on: Self.stored) }
            try await h.waitFor("the placed one") { h.quantities(.oxygenSaturation).count == 1 }
        }
        XCTAssertEqual(try XCTUnwrap(transport.latest(profile.address)).writes.map(\.0), [Self.racp])
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("cannot be placed (a tick counter)") }, "\(h.logs.entries.map(\.message))")
    }

    /// `object` with object id `id` (flags bit 4, written after the type: no time stamp).
    static func withObjectID(_ object: [UInt8], _ id: UInt32) -> [UInt8] {
        var bytes = object
        bytes[3] |= 0x10
        bytes.insert(contentsOf: ACOMEncoder.le(id), at: 9)
        let length = UInt16(bytes.count - 3)
        bytes[1] = UInt8(length & 0xFF)
        bytes[2] = UInt8(length >> 8)
        return bytes
    }

    /// `object` derived from object `id` (flags bit 7, after the type: no other field between).
    static func derived(_ object: [UInt8], from id: UInt32) -> [UInt8] {
        var bytes = object
        bytes[3] |= 0x80
        bytes.insert(contentsOf: [0x01] + ACOMEncoder.le(id), at: 9)
        let length = UInt16(bytes.count - 3)
        bytes[1] = UInt8(length & 0xFF)
        bytes[2] = UInt8(length >> 8)
        return bytes
    }
}
