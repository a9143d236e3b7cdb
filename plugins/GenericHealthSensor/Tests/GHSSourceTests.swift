import BLEProfileKit
import BLETesting
import BLETransport
import Foundation
import GATTDecoding
import GatewayRuntime
import GatewayTesting
@testable import GenericHealthSensor
import HealthModel
import HealthStore
import SampleBus
import Synchronization
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

    /// The fake transport with `profile` on it, on a manual clock at ``now``.
    static func transport(_ profile: FakeProfile) -> FakeBLETransport {
        FakeBLETransport(profiles: [profile], clock: ManualClock(start: now))
    }

    /// Lets the source find and connect `profile`; returns the connection once the session wrote
    /// to the GHS Control Point (live observations started or stopped: the last request of a
    /// connection's start).
    @discardableResult
    static func connectUntilStarted(
        _ transport: FakeBLETransport, _ profile: FakeProfile, in h: SourceHarness, _ what: String
    ) async throws -> FakeConnection {
        try await transport.connect(profile, in: h, until: what) { $0.writes.contains { $0.0 == controlPoint } }
    }

    /// Runs the source on `transport` (with `configuration`) while `body` runs, handing `body`
    /// the connection to `profile` once the session wrote to the control point
    /// (``connectUntilStarted``, waiting for `what`); returns the harness, for the checks after
    /// the source stopped.
    @discardableResult
    func runConnected(
        _ transport: FakeBLETransport, _ profile: FakeProfile, _ configuration: GHSConfiguration = .init(),
        until what: String = "the request for live observations",
        _ body: @Sendable (_ h: SourceHarness, _ link: FakeConnection) async throws -> Void = { _, _ in }
    ) async throws -> SourceHarness {
        let h = try harness(transport, configuration)
        try await h.run { h in
            try await body(h, try await Self.connectUntilStarted(transport, profile, in: h, what))
        }
        return h
    }

    static func profile(
        address: String = "C0:FF:EE:18:40:01", lacking: Set<BluetoothUUID> = [], descriptors: [FakeDescriptor] = [],
        securityLevels: [UInt8] = [0x01, 0x01]
    ) -> FakeProfile {
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
                GHSCharacteristic.securityLevels.uuid: securityLevels,
                .manufacturerName: Array("Acme".utf8), .serialNumber: Array("GHS-7".utf8),
            ],
            descriptors: descriptors.isEmpty ? [:] : [GHSCharacteristic.healthSensorFeatures.uuid: descriptors])
    }

    static let schedule = GHSCharacteristic.observationSchedule.uuid
    static let validRange = GHSCharacteristic.validRangeAndAccuracy.uuid

    /// Health Sensor Features' descriptors as a pulse oximeter has them, in handle order: SpO2's
    /// schedule (1 s, 1 s) and range (0–100 % ± 1), the pulse rate's schedule (5 s, 5 s; refusing
    /// writes with `refusesPulseSchedule`) and range (30–250 /min ± 2).
    static func oximeterDescriptors(refusesPulseSchedule: BLETransportError.Code? = nil) -> [FakeDescriptor] {
        [
            FakeDescriptor(schedule, [0xB8, 0x4B, 0x02, 0x00, 1, 0, 0, 0, 1, 0, 0, 0]),
            FakeDescriptor(validRange, [0xB8, 0x4B, 0x02, 0x00, 0x20, 0x02, 0, 0, 0, 0, 100, 0, 0, 0, 1, 0, 0, 0]),
            FakeDescriptor(schedule, [0x1A, 0x48, 0x02, 0x00, 5, 0, 0, 0, 5, 0, 0, 0], refusesWrites: refusesPulseSchedule),
            FakeDescriptor(validRange, [0x1A, 0x48, 0x02, 0x00, 0xA0, 0x0A, 30, 0, 0, 0, 250, 0, 0, 0, 2, 0, 0, 0]),
        ]
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

    /// The connection's set-up: Features and Security Levels read, five subscriptions, the
    /// stored observations counted, then live observations asked for, and the stored ones once
    /// counted. Observations that come segmented (counters wrapping past 63) are reassembled and
    /// mapped; a lost segment drops its observation with a counted reason and the next one still
    /// arrives; the checkpoint makes the next connection count and ask only for the records after
    /// the last one stored.
    func testLiveAndStoredObservationsAreReassembledMappedAndCheckpointed() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile) { h, link in
            XCTAssertEqual(link.writes.map(\.0), [Self.racp, Self.controlPoint])
            XCTAssertEqual(link.writes.map(\.1), [[0x04, 0x01], [0x01]], "count every record, start live")
            for characteristic in [Self.live, Self.stored, Self.racp, Self.controlPoint, GHSCharacteristic.observationScheduleChanged.uuid] {
                XCTAssertTrue(link.isSubscribed(characteristic), "\(characteristic)")
            }
            link.send([0x05, 0x00, 1, 0, 0, 0], on: Self.racp)
            try await h.waitFor("the report request") { link.writes.count == 3 }
            XCTAssertEqual(link.writes.last?.1, [0x01, 0x01])
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
            try await h.waitFor("the responses logged") {
                h.logs.contains("control point: success") && h.logs.contains("record access: request 0x1: success")
            }
            // Nothing pending once the report's stall watch ended: the reconnect's backoff is then
            // the clock's one sleeper.
            try await h.waitFor("the end of the download") { h.current.details["C0:FF:EE:18:40:01.storedObservationsPending"] == "0" }

            try await transport.reconnect(link, in: h, until: "the count from record 8") {
                $0.writes.contains { $0.0 == Self.racp && $0.1 == [0x04, 0x03, 0x01, 8, 0, 0, 0] }
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
        XCTAssertEqual(spo2.first?.metadata.syncIdentifier, "Acme/GHS-7/ghs/2027-01-15T07:00:00.000Z/150456/numeric/544/object")
        XCTAssertTrue(h.quantities(.heartRate).isEmpty, "the pulse rate with a lost segment is not stored")
        let bad = h.logs.entries.filter { $0.message.contains("observation dropped") }
        XCTAssertEqual(bad.count, 1, "\(bad.map(\.message))")
        XCTAssertTrue(bad[0].message.contains("outOfOrder"), bad[0].message)
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.droppedObservations"], "outOfOrder 1")
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.observationTypes"], "MDC_PULS_OXIM_SAT_O2 (150456), MDC_PULS_OXIM_PULS_RATE (149530)")
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.securityLevels"], "mode 1 level 1")
    }

    /// Each observation lost is counted once, whatever its number of segments: a 28-segment
    /// object missing its 10th and a 3-segment one with its first two swapped are 2 drops and 2
    /// bad payloads (#78: each later segment counted again, 20 of each), and the observation after
    /// them is stored.
    func testEachLostObservationCountsOnce() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile) { h, link in
            var long = Self.segments([UInt8](repeating: 0, count: 28 * 19), counter: 5)
            XCTAssertEqual(long.count, 28)
            long.remove(at: 9)
            for segment in long { link.send(segment, on: Self.live) }
            var swapped = Self.segments(Self.numeric(149_530, unit: 2720, 71), size: 8, counter: 33)
            XCTAssertEqual(swapped.count, 3)
            swapped.swapAt(0, 1)
            for segment in swapped { link.send(segment, on: Self.live) }
            for segment in Self.segments(Self.numeric(150_456, unit: 544, 98), counter: 36) { link.send(segment, on: Self.live) }
            try await h.waitFor("the SpO2 after them") { h.quantities(.oxygenSaturation).count == 1 }
        }
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.droppedObservations"], "missingFirstSegment 1, outOfOrder 1")
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.badPayloads"], "2")
        XCTAssertEqual(h.logs.entries.filter { $0.message.contains("observation dropped") }.count, 2)
        XCTAssertTrue(h.quantities(.heartRate).isEmpty)
    }

    /// A blood pressure compound is a correlation with the mean in its metadata; a bundle's
    /// members take its time stamp; a sample array is a quantity series at its period; a type
    /// the table lacks is stored as a generic observation with its codes; a cuff-loose event
    /// derived from the pressure goes into its metadata; a string and a TLV-encoded observation
    /// are one observation each, their content in metadata.
    func testEveryObservationClassBecomesWhatTheTableSays() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile) { h, link in
            var counter = 0
            // One object at a time, each stored before the next: the transport keeps only the
            // newest 8 notifications, as a real one does.
            func send(_ object: [UInt8], until what: String, _ stored: @escaping @Sendable ([HealthRecord]) -> Bool) async throws {
                let made = ACOMEncoder.segments(object, size: 40, counter: counter)
                counter = made.next
                for segment in made.segments { link.send(segment, on: Self.live) }
                try await h.waitFor(what) { stored(h.sink.records) }
            }
            func has(_ type: String) -> @Sendable ([HealthRecord]) -> Bool { { $0.contains { $0.typeIdentifier == type } } }
            // A bundle: the pressure (object id 9, mmHg) and an event derived from it.
            let pressure = ACOMEncoder.compound([(150_021, 3872, 128, 0), (150_022, 3872, 84, 0), (150_023, 3872, 99, 0)])
            var pressureObject = ACOMEncoder.object(0x07, ACOMEncoder.Header(type: 150_020), value: pressure)
            // Object id 9: flags bit 4, after the type.
            pressureObject = Self.withObjectID(pressureObject, 9)
            let event = Self.derived(ACOMEncoder.object(0x05, ACOMEncoder.Header(type: 8_410_608), value: [0x01, 0xF0, 0x00, 0x03, 0x00]), from: 9)
            try await send(
                ACOMEncoder.object(0xFF, ACOMEncoder.Header(milliseconds2000: Self.ms(Self.now)), value: ACOMEncoder.bundle([pressureObject, event])),
                until: "the blood pressure", has("bloodPressure"))
            // A respiration rate in breaths per minute, and an unknown type in an unknown unit.
            try await send(Self.numeric(151_562, unit: 2784, 16), until: "the respiration rate", has("respiratoryRate"))
            try await send(Self.numeric(8_454_260, unit: 9, 42), until: "the generic observation", has("mdc.8454260.9"))
            // An ECG lead: 4 samples, 250 Hz, scale 0.5 mV, offset -1 mV.
            let ecg =
                ACOMEncoder.le(UInt16(4274)) + ACOMEncoder.float(mantissa: 5, exponent: -1) + ACOMEncoder.float(mantissa: -1, exponent: 0)
                + ACOMEncoder.float(mantissa: 4, exponent: -3) + [0x01, 0x01] + ACOMEncoder.le(UInt32(4)) + [0, 2, 4, 3]
            try await send(
                ACOMEncoder.object(0x04, ACOMEncoder.Header(type: 131_329, milliseconds2000: Self.ms(Self.now)), value: ecg),
                until: "the ECG series", has("mdc.131329.4274"))
            // A string, and a TLV-encoded observation: a uint16, text, the uint16's type again, a
            // uint8 sent in three bytes (kept as its bytes).
            try await send(
                ACOMEncoder.object(0x03, ACOMEncoder.Header(type: 68_218), value: [3, 0] + Array("Man".utf8)), until: "the string",
                has("mdc.68218.512"))
            let tlvs: [UInt8] =
                [4] + ACOMEncoder.le(UInt32(68_220)) + [2, 0, 0x06, 5, 0] + ACOMEncoder.le(UInt32(68_221)) + [3, 0, 0x19] + Array("abc".utf8)
                + ACOMEncoder.le(UInt32(68_220)) + [2, 0, 0x06, 6, 0] + ACOMEncoder.le(UInt32(68_222)) + [3, 0, 0x04, 0x62, 0, 0]
            try await send(ACOMEncoder.object(0x08, ACOMEncoder.Header(type: 8_454_261), value: tlvs), until: "the TLV-encoded observation", has("mdc.8454261.512"))
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
        let text = try XCTUnwrap(h.quantities.first { $0.type.identifier == "mdc.68218.512" })
        XCTAssertEqual(text.quantity.value, 1, "one observation")
        XCTAssertEqual(text.metadata.mdcValueKind, .text)
        XCTAssertEqual(text.metadata[.mdcText], .string("Man"))
        let attributes = try XCTUnwrap(h.quantities.first { $0.type.identifier == "mdc.8454261.512" })
        XCTAssertEqual(attributes.quantity.value, 1)
        XCTAssertEqual(attributes.metadata.mdcValueKind, .attributes)
        XCTAssertEqual(attributes.metadata[.mdcAttribute(68_220)], .integer(5))
        XCTAssertEqual(attributes.metadata[.mdcAttribute(68_220, occurrence: 2)], .integer(6))
        XCTAssertEqual(attributes.metadata[.mdcAttribute(68_221)], .string("abc"))
        XCTAssertEqual(attributes.metadata[.mdcAttribute(68_222)], .string("0x620000"), "a uint8 in three bytes, as sent")
        XCTAssertEqual(
            attributes.metadata.mdcAttributes.map(\.type), [68_220, 68_220, 68_221, 68_222], "by type, then occurrence")
        XCTAssertFalse(h.logs.entries.contains { $0.message.contains("not stored") }, "every observation of the test was stored")
    }

    /// A stored observation that cannot be placed in time (a tick counter) is not stored, and the
    /// log says why; `liveObservations: false` asks the sensor to stop sending live observations
    /// (GHS Control Point 0x02), as a sensor may send them unasked.
    func testUnplaceableStoredObservationsAndLiveObservationsStopped() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let configuration = try JSONDecoder().decode(GHSConfiguration.self, from: Data(#"{"liveObservations": false}"#.utf8))
        let h = try await runConnected(transport, profile, configuration, until: "the request to stop live observations") { h, link in
            // Tick counter (flags bit 0), 1 s resolution: 9-byte time stamp with flags 0x21.
            var ticks = Self.numeric(150_456, unit: 544, 97, at: nil)
            ticks[3] |= 0x02
            ticks.insert(contentsOf: [0x21, 0x10, 0x27, 0, 0, 0, 0, 0x00, 0x00], at: 9)
            ticks[1] = UInt8(ticks.count - 3)
            for segment in Self.segments(ACOMEncoder.le(UInt32(3)) + ticks) { link.send(segment, on: Self.stored) }
            for segment in Self.segments(ACOMEncoder.le(UInt32(4)) + Self.numeric(150_456, unit: 544, 95)) { link.send(segment, on: Self.stored) }
            try await h.waitFor("the placed one") { h.quantities(.oxygenSaturation).count == 1 }
        }
        let writes = try XCTUnwrap(transport.latest(profile.address)).writes
        XCTAssertEqual(writes.map(\.0), [Self.racp, Self.controlPoint])
        XCTAssertEqual(writes.map(\.1), [[0x04, 0x01], [0x02]], "count every record, stop live")
        XCTAssertTrue(h.logs.contains("asked the sensor to stop sending live observations (liveObservations is false)"))
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("cannot be placed (a tick counter)") }, "\(h.logs.entries.map(\.message))")
    }

    /// Each Observation Schedule and Valid Range and Accuracy descriptor of Health Sensor Features
    /// is read into `status` by its type and logged; one that does not decode is a bad payload and
    /// the others still count; a sensor without them reads as before (the other tests).
    func testFeatureDescriptorsAreReadIntoStatus() async throws {
        // A third schedule descriptor of 11 bytes: cut short.
        let descriptors = Self.oximeterDescriptors() + [FakeDescriptor(Self.schedule, [0x1A, 0x48, 0x02, 0x00, 5, 0, 0, 0, 5, 0, 0])]
        let profile = Self.profile(descriptors: descriptors)
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile)
        let details = h.current.details
        XCTAssertEqual(details["C0:FF:EE:18:40:01.schedule.150456"], "measurement period 1 s, update interval 1 s")
        XCTAssertEqual(details["C0:FF:EE:18:40:01.schedule.149530"], "measurement period 5 s, update interval 5 s")
        XCTAssertEqual(details["C0:FF:EE:18:40:01.validRange.150456"], "0–100 % ± 1")
        XCTAssertEqual(details["C0:FF:EE:18:40:01.validRange.149530"], "30–250 /min ± 2")
        XCTAssertEqual(details["C0:FF:EE:18:40:01.badPayloads"], "1")
        let messages = h.logs.entries.map(\.message)
        XCTAssertTrue(messages.contains("observation schedule of MDC_PULS_OXIM_SAT_O2 (150456): measurement period 1 s, update interval 1 s"), "\(messages)")
        XCTAssertTrue(messages.contains("valid range of MDC_PULS_OXIM_PULS_RATE (149530): 30–250 /min ± 2"), "\(messages)")
        XCTAssertTrue(messages.contains { $0.contains("bad payload") && $0.contains("Observation Schedule descriptor (0x2910)") }, "\(messages)")
        XCTAssertEqual(try XCTUnwrap(transport.latest(profile.address)).descriptorWrites, [], "nothing configured, nothing written")
    }

    /// A stored observation `number`: SpO2 95 %, `number` minutes ago.
    static func storedObservation(_ number: UInt32) -> [UInt8] {
        ACOMEncoder.le(number) + numeric(150_456, unit: 544, 95, at: now.addingTimeInterval(-Double(number) * 60))
    }

    /// The stored observations are counted first (RACP op code 0x04, every record), the report
    /// asked for only once the count (2) arrives; fewer observations than announced are a
    /// warning with both numbers and a status detail, not an error.
    func testTheCountComesBeforeTheReportAndAShortfallIsAWarning() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile) { h, link in
            XCTAssertEqual(link.writes.filter { $0.0 == Self.racp }.map(\.1), [[0x04, 0x01]], "a count, no report yet")
            link.send([0x05, 0x00, 2, 0, 0, 0], on: Self.racp)
            try await h.waitFor("the report request") { link.writes.filter { $0.0 == Self.racp }.count == 2 }
            XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.storedObservationsPending"], "2")
            XCTAssertEqual(link.writes.filter { $0.0 == Self.racp }.map(\.1), [[0x04, 0x01], [0x01, 0x01]])
            // One of the two arrives.
            for segment in Self.segments(Self.storedObservation(5)) { link.send(segment, on: Self.stored) }
            link.send([0x06, 0x00, 0x01, 0x01], on: Self.racp)
            try await h.waitFor("the shortfall") { h.logs.contains("announced 2 stored observations and sent 1") }
            try await h.waitFor("the end of the download") { h.current.details["C0:FF:EE:18:40:01.storedObservationsPending"] == "0" }
        }
        XCTAssertEqual(h.quantities(.oxygenSaturation).count, 1)
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.storedObservationsMissing"], "1 of 2")
        XCTAssertTrue(h.logs.entries.contains { $0.level == .info && $0.message == "the sensor holds 2 stored observations" })
        XCTAssertTrue(h.logs.entries.contains { $0.level == .warning && $0.message.contains("announced 2 stored observations and sent 1") })
        XCTAssertFalse(h.logs.entries.contains { $0.message.contains("refused") }, "\(h.logs.entries.map(\.message))")
    }

    /// After a checkpoint the count is of the records after it (operator 0x03, filter type 0x01,
    /// record number 42); a count of 0 asks for nothing, and the log says since which record.
    func testAZeroCountAsksForNoReport() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let durable = CommittedCheckpoints()
        durable.commit(SourceCheckpoint(namespace: "ble-ghs", key: "Acme/GHS-7", payload: Data(#"{"lastRecordNumber":41}"#.utf8)))
        let h = try SourceHarness(name: "ghs", kind: GHSSource.kind, clock: transport.clock, durableCheckpoints: durable) { environment in
            try GHSSource(settings: GHSConfiguration().validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
        try await h.run { h in
            let link = try await Self.connectUntilStarted(transport, profile, in: h, "the request for live observations")
            link.send([0x05, 0x00, 0, 0, 0, 0], on: Self.racp)
            try await h.waitFor("the empty count logged") { h.logs.contains("nothing stored since record 41") }
            // A live reading after it: by then a report request would have been written.
            for segment in Self.segments(Self.numeric(150_456, unit: 544, 98)) { link.send(segment, on: Self.live) }
            try await h.waitFor("the live reading") { h.quantities(.oxygenSaturation).count == 1 }
        }
        let writes = try XCTUnwrap(transport.latest(profile.address)).writes.filter { $0.0 == Self.racp }.map(\.1)
        XCTAssertEqual(writes, [[0x04, 0x03, 0x01, 42, 0, 0, 0]], "the count from record 42, and no report")
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.storedObservationsPending"], "0")
    }

    /// A sensor that does not count (response code "op code not supported" for request 0x04) is
    /// asked for its records at once, with a notice, and its refusal is no error.
    func testARefusedCountFallsBackToTheReport() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile) { h, link in
            link.send([0x06, 0x00, 0x04, 0x02], on: Self.racp)
            try await h.waitFor("the report request") { link.writes.contains { $0.0 == Self.racp && $0.1 == [0x01, 0x01] } }
            for segment in Self.segments(Self.storedObservation(1)) { link.send(segment, on: Self.stored) }
            link.send([0x06, 0x00, 0x01, 0x01], on: Self.racp)
            try await h.waitFor("the reading") { h.quantities(.oxygenSaturation).count == 1 }
            try await h.waitFor("the report's end") { h.logs.contains("record access: request 0x1: success") }
        }
        XCTAssertEqual(try XCTUnwrap(transport.latest(profile.address)).writes.filter { $0.0 == Self.racp }.map(\.1), [[0x04, 0x01], [0x01, 0x01]])
        XCTAssertTrue(
            h.logs.entries.contains { $0.level == .notice && $0.message.contains("did not count its stored observations (opCodeNotSupported)") },
            "\(h.logs.entries.map(\.message))")
        XCTAssertNil(h.current.details["C0:FF:EE:18:40:01.storedObservationsMissing"], "no count, no shortfall")
        XCTAssertFalse(h.logs.entries.contains { $0.level >= .warning }, "\(h.logs.entries.filter { $0.level >= .warning }.map(\.message))")
    }

    /// A report that goes ``GHSSession/stallTimeout`` without a segment, counted from the request
    /// and then from each segment on the injected clock, is aborted (RACP 03 00): a warning names
    /// the last record, `status` counts it, and the abort's response is logged as information.
    func testAStalledReportIsAborted() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile) { h, link in
            @Sendable func aborted() -> Bool { link.writes.contains { $0.0 == Self.racp && $0.1.first == 0x03 } }
            link.send([0x05, 0x00, 3, 0, 0, 0], on: Self.racp)
            try await h.waitFor("the report request") { link.writes.contains { $0.1 == [0x01, 0x01] } }
            try await h.waitFor("the stall watch") { h.clock.sleeperCount == 1 }
            // Record 1 after 20 s: the watch counts from it.
            h.clock.advance(by: .seconds(20))
            for segment in Self.segments(Self.storedObservation(1)) { link.send(segment, on: Self.stored) }
            try await h.waitFor("record 1") { h.quantities(.oxygenSaturation).count == 1 }
            h.clock.advance(by: .seconds(10))
            try await h.waitFor("the watch waiting again, 30 s after the request") { h.clock.sleeperCount == 1 }
            XCTAssertFalse(aborted(), "10 s after record 1 is no stall")
            h.clock.advance(by: .seconds(20))
            try await h.waitFor("the abort") { aborted() }
            XCTAssertEqual(link.writes.last?.1, [0x03, 0x00])
            link.send([0x06, 0x00, 0x03, 0x01], on: Self.racp)
            try await h.waitFor("the abort's response") { h.logs.contains("record access: request 0x3: success") }
        }
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.storedDownloadsAborted"], "1")
        XCTAssertTrue(
            h.logs.entries.contains { $0.level == .warning && $0.message.contains("stalled after record 1") },
            "\(h.logs.entries.map(\.message))")
        XCTAssertTrue(h.logs.entries.contains { $0.level == .info && $0.message == "record access: request 0x3: success" })
    }

    /// The stored download's steps, without a transport: a count, the report's end with what
    /// arrived, an abort, and the indications that are not about it.
    func testStoredDownloadSteps() {
        let counted = GHSSession.StoredDownload(filter: .all)
        XCTAssertNil(counted.take(.response(request: 0x01, code: .success)), "no report asked for yet")
        XCTAssertEqual(counted.take(.numberOfRecords(2)), .report(announced: 2))
        counted.recordArrived(7)
        counted.recordArrived(6)
        XCTAssertEqual(counted.progress.lastRecord, 7)
        XCTAssertEqual(counted.take(.response(request: 0x01, code: .success)), .reportEnded(.success, announced: 2, received: 2))
        XCTAssertNil(counted.take(.response(request: 0x02, code: .success)), "an erase's response")

        let empty = GHSSession.StoredDownload(filter: .from(recordNumber: 3))
        XCTAssertEqual(empty.take(.response(request: 0x04, code: .noRecordsFound)), .nothingStored)
        XCTAssertNil(empty.take(.numberOfRecords(1)), "counted once")

        let uncounted = GHSSession.StoredDownload(filter: .all)
        XCTAssertEqual(uncounted.take(.response(request: 0x04, code: .opCodeNotSupported)), .reportUncounted(.opCodeNotSupported))
        XCTAssertEqual(uncounted.take(.response(request: 0x03, code: .success)), .aborted(.success))
        XCTAssertNil(uncounted.take(.response(request: 0x01, code: .procedureNotCompleted)), "over once aborted")
    }

    /// A durable sink's checkpoints as a test commits them, and how often they were read.
    final class CommittedCheckpoints: SourceCheckpointReader {
        let committed = Mutex<[String: SourceCheckpoint]>([:])
        private let readCount = Mutex(0)
        var reads: Int { readCount.withLock { $0 } }
        func commit(_ checkpoint: SourceCheckpoint) { committed.withLock { $0[checkpoint.key] = checkpoint } }
        func checkpoint(namespace: String, key: String) async throws -> SourceCheckpoint? {
            readCount.withLock { $0 += 1 }
            return committed.withLock { $0[key] }
        }
    }

    /// `deleteStoredObservations`: after the report's success the sensor is asked to erase the
    /// records up to the last one downloaded, only once the durable sink holds the checkpoint
    /// that covers it; while the store has not committed it, nothing is erased.
    func testStoredObservationsAreErasedOnlyOnceCommitted() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let configuration = try JSONDecoder().decode(GHSConfiguration.self, from: Data(#"{"deleteStoredObservations": true}"#.utf8))
        let durable = CommittedCheckpoints()
        let h = try SourceHarness(name: "ghs", kind: GHSSource.kind, clock: transport.clock, durableCheckpoints: durable) { environment in
            try GHSSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
        try await h.run { h in
            let link = try await Self.connectUntilStarted(transport, profile, in: h, "the request for live observations")
            link.send([0x05, 0x00, 2, 0, 0, 0], on: Self.racp)
            try await h.waitFor("the report request") { link.writes.contains { $0.1 == [0x01, 0x01] } }
            for number in [3, 4] as [UInt32] {
                let object = ACOMEncoder.le(number) + Self.numeric(150_456, unit: 544, 95, at: Self.now.addingTimeInterval(-Double(number) * 60))
                for segment in Self.segments(object) { link.send(segment, on: Self.stored) }
            }
            link.send([0x06, 0x00, 0x01, 0x01], on: Self.racp)
            try await h.waitFor("two readings") { h.quantities(.oxygenSaturation).count == 2 }
            // The connection read the checkpoint once; the erase's first look is the second read,
            // after the report's stall watch ended, so the clock's one sleeper is the erase's wait.
            try await h.waitFor("the erase's first look") { durable.reads >= 2 }
            try await h.waitFor("the wait for the commit") { h.clock.sleeperCount >= 1 }
            XCTAssertFalse(link.writes.contains { $0.1.first == 0x02 }, "nothing erased before the store holds it")
            // The store commits record 4's checkpoint.
            durable.commit(SourceCheckpoint(namespace: "ble-ghs", key: "Acme/GHS-7", payload: Data(#"{"lastRecordNumber":4}"#.utf8)))
            h.clock.advance(by: .seconds(1))
            try await h.waitFor("the delete") { link.writes.contains { $0.1.first == 0x02 } }
            XCTAssertEqual(durable.reads, 3, "one look before the commit, one after")
        }
        let writes = try XCTUnwrap(transport.latest(profile.address)).writes.map(\.1)
        XCTAssertEqual(writes.last, [0x02, 0x02, 0x01, 4, 0, 0, 0], "delete, at most record 4")
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("erase its stored observations up to record 4") })
    }

    /// Without a sink that stores checkpoints nothing is ever durable: the sensor keeps its
    /// observations and the log and the status say why.
    func testWithoutADurableSinkNothingIsErased() async throws {
        let profile = Self.profile()
        let transport = Self.transport(profile)
        let configuration = try JSONDecoder().decode(GHSConfiguration.self, from: Data(#"{"deleteStoredObservations": true}"#.utf8))
        let h = try await runConnected(transport, profile, configuration) { h, link in
            link.send([0x05, 0x00, 1, 0, 0, 0], on: Self.racp)
            try await h.waitFor("the report request") { link.writes.contains { $0.1 == [0x01, 0x01] } }
            for segment in Self.segments(ACOMEncoder.le(UInt32(9)) + Self.numeric(150_456, unit: 544, 95)) { link.send(segment, on: Self.stored) }
            link.send([0x06, 0x00, 0x01, 0x01], on: Self.racp)
            try await h.waitFor("the reading") { h.quantities(.oxygenSaturation).count == 1 }
            // Nothing pending once the report's stall watch ended: then the erase's wait is the
            // clock's one sleeper.
            try await h.waitFor("the end of the download") { h.current.details["C0:FF:EE:18:40:01.storedObservationsPending"] == "0" }
            for _ in 0..<GHSSession.commitWait.polls {
                try await h.waitFor("the wait") { h.clock.sleeperCount >= 1 || h.logs.entries.contains { $0.message.contains("keeps its stored observations") } }
                h.clock.advance(by: .milliseconds(250))
            }
            try await h.waitFor("the warning") { h.logs.entries.contains { $0.message.contains("keeps its stored observations") } }
            XCTAssertFalse(link.writes.contains { $0.1.first == 0x02 })
        }
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.storedObservationsKept"], "record 9 not committed in time")
    }

    /// A sensor whose LE GATT Security Levels ask for an encrypted link (mode 1 level 3) while
    /// its devices entry asks for no pairing: the log and the status say how to pair it, and the
    /// connection goes on (a bond made once by hand is BlueZ's, which the gateway cannot see).
    func testASensorThatNeedsABondSaysHowToPairIt() async throws {
        let profile = Self.profile(securityLevels: [0x01, 0x03])
        let transport = Self.transport(profile)
        let h = try await runConnected(transport, profile)
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.securityLevels"], "mode 1 level 3")
        XCTAssertEqual(h.current.details["C0:FF:EE:18:40:01.pairing"], "required (mode 1 level 3): healthgate pair C0:FF:EE:18:40:01")
        XCTAssertTrue(
            h.logs.entries.contains { $0.message.contains("requires LE security mode 1 level 3") && $0.message.contains("healthgate pair C0:FF:EE:18:40:01") },
            "\(h.logs.entries.map(\.message))")
    }

    /// A configured schedule is written to its type's descriptor (found by the type, not the
    /// order of the configuration) as the twelve bytes GHS defines, after the subscriptions and
    /// before the requests; a refused one is a warning and a status detail, and the connection
    /// goes on to store observations; a type the sensor does not list is a warning naming it.
    func testConfiguredSchedulesAreWrittenAndARefusalIsLoggedWithoutEndingTheConnection() async throws {
        let profile = Self.profile(descriptors: Self.oximeterDescriptors(refusesPulseSchedule: .failed))
        let transport = Self.transport(profile)
        let configuration = try JSONDecoder().decode(GHSConfiguration.self, from: Data("""
            {"schedules": [
              {"type": 149530, "measurementPeriodSeconds": 10, "updateIntervalSeconds": 30},
              {"type": 150456, "measurementPeriodSeconds": 0.5, "updateIntervalSeconds": 2},
              {"type": 150364, "measurementPeriodSeconds": 60, "updateIntervalSeconds": 60}
            ]}
            """.utf8))
        let h = try await runConnected(transport, profile, configuration) { h, link in
            XCTAssertEqual(link.writes.map(\.0), [Self.racp, Self.controlPoint], "the connection went on")
            for segment in Self.segments(Self.numeric(150_456, unit: 544, 98)) { link.send(segment, on: Self.live) }
            try await h.waitFor("an SpO2 reading") { h.quantities(.oxygenSaturation).count == 1 }
            XCTAssertEqual(transport.connections(profile.address).count, 1)
        }
        let writes = try XCTUnwrap(transport.latest(profile.address)).descriptorWrites
        XCTAssertEqual(writes.map(\.descriptor), [Self.schedule, Self.schedule])
        XCTAssertEqual(writes.map(\.characteristic), [GHSCharacteristic.healthSensorFeatures.uuid, GHSCharacteristic.healthSensorFeatures.uuid])
        XCTAssertEqual(writes.map(\.index), [1, 0], "each type's own descriptor")
        XCTAssertEqual(writes.map(\.refused), [true, false])
        // 149530; 10 and 30 as FLOATs: mantissa 1 and 3, exponent 1 (the largest exponent that
        // keeps the value exact), least significant byte first.
        XCTAssertEqual(writes[0].value, [0x1A, 0x48, 0x02, 0x00, 0x01, 0x00, 0x00, 0x01, 0x03, 0x00, 0x00, 0x01])
        // 150456; 0.5 (mantissa 5, exponent -1); 2.
        XCTAssertEqual(writes[1].value, [0xB8, 0x4B, 0x02, 0x00, 0x05, 0x00, 0x00, 0xFF, 0x02, 0x00, 0x00, 0x00])

        let details = h.current.details
        XCTAssertEqual(details["C0:FF:EE:18:40:01.schedule.150456"], "measurement period 0.5 s, update interval 2 s")
        XCTAssertEqual(details["C0:FF:EE:18:40:01.schedule.149530"], "measurement period 5 s, update interval 5 s", "the sensor's own")
        let refused = try XCTUnwrap(details["C0:FF:EE:18:40:01.scheduleRefused.149530"])
        XCTAssertTrue(refused.hasPrefix("measurement period 10 s, update interval 30 s: "), refused)
        XCTAssertTrue(refused.contains("ATT error"), refused)
        let warnings = h.logs.entries.filter { $0.level == .warning }.map(\.message)
        XCTAssertTrue(
            warnings.contains { $0.hasPrefix("the sensor refused the observation schedule of MDC_PULS_OXIM_PULS_RATE (149530) (measurement period 10 s, update interval 30 s)") },
            "\(warnings)")
        XCTAssertTrue(warnings.contains { $0.contains("does not list observation type MDC_TEMP_BODY (150364)") }, "\(warnings)")
        XCTAssertTrue(
            h.logs.contains("wrote the observation schedule of MDC_PULS_OXIM_SAT_O2 (150456): measurement period 0.5 s, update interval 2 s"))
    }

    /// The simulated oximeter's Health Sensor Features carries a schedule and a range per type;
    /// a written schedule reads back, is indicated on Observation Schedule Changed and outlives
    /// the connection; a period of 0 and a range write are refused, and the link stays up.
    func testSimulatedSensorsTakeSchedules() async throws {
        let clock = ManualClock(start: Self.now)
        let transport = SimulatedGHSTransport(clock: clock, settings: GHSSimulationConfiguration(oximeters: 1, cuffs: 0, observationIntervalSeconds: 5))
        let features = GHSCharacteristic.healthSensorFeatures.uuid
        let link = try await transport.connect(to: "02:00:00:00:0A:01")
        let schedules = try await link.readDescriptors(Self.schedule, of: features, in: Self.service)
        XCTAssertEqual(try schedules.map { try GHSSession.summary(GHSObservationSchedule.decode($0)) }, Array(repeating: "measurement period 5 s, update interval 5 s", count: 2))
        XCTAssertEqual(try schedules.map { try GHSObservationSchedule.decode($0).type }, [150_456, 151_562])
        let ranges = try await link.readDescriptors(Self.validRange, of: features, in: Self.service).map { try GHSValidRangeAndAccuracy.decode($0) }
        XCTAssertEqual(ranges.map(GHSSession.summary), ["70–100 % ± 2", "4–60 /min ± 2"])

        let faster = GHSObservationSchedule(type: 151_562, measurementPeriodSeconds: 1, updateIntervalSeconds: 2)
        try await link.writeDescriptor(faster.encoded, to: Self.schedule, at: 1, of: features, in: Self.service)
        let reread = try await link.readDescriptors(Self.schedule, of: features, in: Self.service)
        XCTAssertEqual(reread.last, faster.encoded)
        var indications = try await link.notifications(of: GHSCharacteristic.observationScheduleChanged.uuid, in: Self.service).makeAsyncIterator()
        let indicated = try await indications.next()
        XCTAssertEqual(indicated?.characteristic, GHSCharacteristic.observationScheduleChanged.uuid)
        XCTAssertEqual(indicated?.value, faster.encoded)

        for (value, index, descriptor) in [
            (GHSObservationSchedule(type: 150_456, measurementPeriodSeconds: 0, updateIntervalSeconds: 1).encoded, 0, Self.schedule),
            // The respiration rate's schedule to SpO2's descriptor; a read-only range.
            (faster.encoded, 0, Self.schedule), ([0], 0, Self.validRange),
        ] {
            do {
                try await link.writeDescriptor(value, to: descriptor, at: index, of: features, in: Self.service)
                XCTFail("\(value) to \(descriptor) #\(index) was taken")
            } catch let error as BLETransportError {
                XCTAssertEqual(error.code, .failed, "\(error)")
            }
        }
        await link.disconnect()
        let again = try await transport.connect(to: "02:00:00:00:0A:01")
        let kept = try await again.readDescriptors(Self.schedule, of: features, in: Self.service)
        XCTAssertEqual(kept, [GHSObservationSchedule(type: 150_456, measurementPeriodSeconds: 5, updateIntervalSeconds: 5).encoded, faster.encoded])
    }

    /// `schedules` as the sample configuration writes it, and what it refuses, named by key path.
    func testSchedulesConfigurationAndItsErrors() throws {
        let gateway = try TestEnvironment.sampleConfiguration()
        let sample = try XCTUnwrap(gateway.sources.first).config.decodeStrictly(GHSConfiguration.self)
        XCTAssertEqual(
            sample.profile.schedules,
            [GHSScheduleConfiguration(type: 150_456, measurementPeriodSeconds: 1, updateIntervalSeconds: 5)])
        XCTAssertEqual(sample.profile.schedules.first?.schedule.encoded, [0xB8, 0x4B, 0x02, 0x00, 1, 0, 0, 0, 5, 0, 0, 0])

        func keyPath(_ schedules: String) -> String? {
            do {
                let value = try JSONDecoder().decode(JSONValue.self, from: Data(#"{"schedules": \#(schedules)}"#.utf8))
                try value.decodeStrictly(GHSConfiguration.self).validate()
                return nil
            } catch let error as DecodingError {
                return error.keyPath
            } catch let error as PluginConfigurationError {
                return error.keyPath
            } catch {
                return "\(error)"
            }
        }
        XCTAssertNil(keyPath(#"[{"type": 150456, "measurementPeriodSeconds": 0.25, "updateIntervalSeconds": 3600}]"#))
        XCTAssertEqual(keyPath(#"[{"type": 150456, "measurementPeriodSeconds": 0, "updateIntervalSeconds": 1}]"#), "schedules[0].measurementPeriodSeconds")
        XCTAssertEqual(
            keyPath(#"[{"type": 150456, "measurementPeriodSeconds": 1, "updateIntervalSeconds": 1}, {"type": 149530, "measurementPeriodSeconds": 1, "updateIntervalSeconds": -2}]"#),
            "schedules[1].updateIntervalSeconds")
        XCTAssertEqual(keyPath(#"[{"type": 150456, "measurementPeriodSeconds": 1}]"#), "schedules[0].updateIntervalSeconds")
        XCTAssertEqual(keyPath(#"[{"type": 0, "measurementPeriodSeconds": 1, "updateIntervalSeconds": 1}]"#), "schedules[0].type")
        XCTAssertEqual(keyPath(#"[{"type": 1.5, "measurementPeriodSeconds": 1, "updateIntervalSeconds": 1}]"#), "schedules[0].type")
        XCTAssertEqual(keyPath(#"[{"type": 150456, "measurementPeriod": 1, "updateIntervalSeconds": 1}]"#), "schedules[0].measurementPeriod")
        XCTAssertEqual(
            keyPath(#"[{"type": 150456, "measurementPeriodSeconds": 1, "updateIntervalSeconds": 1}, {"type": 150456, "measurementPeriodSeconds": 2, "updateIntervalSeconds": 2}]"#),
            "schedules[1].type")
        XCTAssertEqual(keyPath(#"{"type": 150456}"#), "schedules")

        // Built in code, the kit's check names the same paths.
        let built = GHSConfiguration(profile: GHSProfileConfiguration(schedules: [
            GHSScheduleConfiguration(type: 150_456, measurementPeriodSeconds: 1, updateIntervalSeconds: .infinity)
        ]))
        XCTAssertThrowsError(try built.validate()) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "schedules[0].updateIntervalSeconds", "\(error)")
        }
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
