import BLEProfileKit
import BLETesting
import BLETransport
import ContinuousGlucose
import Foundation
import GatewayTime
import GATTDecoding
import GatewayRuntime
import GatewayTesting
import HealthModel
import SampleBus
import Synchronization
import XCTest

/// The `ble-cgm` source against the scripted fake transport, into a CollectingSink, on a
/// ManualClock.
final class CGMSourceTests: XCTestCase {
    static let service = BluetoothUUID.continuousGlucoseMonitoringService
    static let measurement = CGMCharacteristic.measurement.uuid
    static let racp = CGMCharacteristic.recordAccessControlPoint.uuid
    static let socp = CGMCharacteristic.specificOpsControlPoint.uuid
    static let startTime = CGMCharacteristic.sessionStartTime.uuid

    func harness(
        _ transport: FakeBLETransport, _ configuration: CGMConfiguration = .init(),
        clockTrust: ClockState = .synchronized(maximumErrorSeconds: 0.01)
    ) throws -> SourceHarness {
        try SourceHarness(name: "cgm", kind: CGMSource.kind, clock: transport.clock) { environment in
            var environment = environment
            environment.clockTrust = FixedClockTrust(clockTrust)
            return try CGMSource(settings: configuration.validated(in: environment), environment: environment, bluetooth: .scripted(transport, clock: environment.clock))
        }
    }

    /// Lets discovery find `profile`'s sensor and waits until the source asks it for records
    /// (the RACP write that ends every connection's set-up); returns that link.
    @discardableResult
    static func connect(_ profile: FakeProfile, on transport: FakeBLETransport, in h: SourceHarness) async throws -> FakeConnection {
        try await transport.connect(profile, in: h, until: "the request for every record") {
            $0.writes.contains { $0.0 == Self.racp }
        }
    }

    /// A record with trend and quality and its E2E-CRC: size 15 would be with status octets;
    /// here flags 0x03, size 12.
    static func record(_ offset: Int, _ milligrams: Int, crc: Bool = true) -> [UInt8] {
        let body: [UInt8] = [crc ? 12 : 10, 0x03, UInt8(milligrams & 0xFF), UInt8(milligrams >> 8), UInt8(offset & 0xFF), UInt8(offset >> 8)]
            + [0x02, 0xF0]  // trend 0.2 mg/dL/min
            + [0xE5, 0xF3]  // quality 99.7 %
        return crc ? E2ECRC.appending(to: body) : body
    }

    /// CGM Feature of a sensor with E2E-CRC, trend and quality; interstitial fluid, subcutaneous.
    static let featureWithE2E = E2ECRC.appending(to: [0x00, 0x90, 0x01, 0x59])
    /// 2027-01-15 06:00:00 local, UTC+1 (4 quarter hours), standard time: 05:00:00Z.
    static let sessionStart = E2ECRC.appending(to: [0xEB, 0x07, 1, 15, 6, 0, 0, 4, 0])
    static let startDate = Date(timeIntervalSince1970: 1_800_000_000 - 3 * 3600)  // 2027-01-15T05:00:00Z

    static func profile(
        address: String = "C0:FF:EE:18:1F:01", status: [UInt8] = E2ECRC.appending(to: [180, 0, 0, 0, 0]),
        sessionStart: [UInt8] = sessionStart, readOnly: Set<BluetoothUUID> = [], lacking: Set<BluetoothUUID> = []
    ) -> FakeProfile {
        FakeProfile(
            address: address, name: "Sensor", services: [service],
            characteristics: [
                service: CGMCharacteristic.allCases.map(\.uuid).filter { !lacking.contains($0) },
                .deviceInformationService: [.manufacturerName, .serialNumber],
            ],
            values: [
                CGMCharacteristic.feature.uuid: featureWithE2E, CGMCharacteristic.status.uuid: status,
                startTime: sessionStart, .manufacturerName: Array("Acme".utf8), .serialNumber: Array("CGM-7".utf8),
            ], readOnly: readOnly)
    }

    /// The records a sensor sends, live or downloaded, become bloodGlucose samples at the
    /// session's start plus their offsets, with trend, quality and a sync identifier; a record
    /// whose E2E-CRC does not match and one without the CRC the sensor promised are not stored,
    /// and each is counted and logged naming the device. The last offset delivered is the
    /// checkpoint: the next connection asks only for the records after it.
    func testRecordsAreStoredAtSessionStartPlusOffsetAndBadCRCsAreNot() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let profile = Self.profile()
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let h = try harness(transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "the request for every record") {
                $0.writes.contains { $0.0 == Self.racp && $0.1 == [0x01, 0x01] }
            }
            XCTAssertTrue(link.isSubscribed(Self.measurement))
            XCTAssertTrue(link.isSubscribed(Self.racp), "the control point indicates before it is written")
            XCTAssertTrue(link.isSubscribed(Self.socp))
            // Two records in one notification, then one with a broken CRC, one without a CRC.
            link.send(Self.record(5, 98) + Self.record(10, 104), on: Self.measurement)
            var broken = Self.record(15, 111)
            broken[broken.count - 1] ^= 0x01
            link.send(broken, on: Self.measurement)
            link.send(Self.record(20, 117, crc: false), on: Self.measurement)
            link.send(Self.record(25, 121), on: Self.measurement)
            link.send([0x06, 0x00, 0x01, 0x01], on: Self.racp)
            try await h.waitFor("three records") { h.quantities(.bloodGlucose).count == 3 }
            try await h.waitFor("the response logged") { h.logs.entries.contains { $0.message.contains("record access: success") } }

            // Offsets from 26 on: the checkpoint committed with record 25.
            try await transport.reconnect(link, in: h, until: "the second request") {
                $0.writes.contains { $0.0 == Self.racp && $0.1 == [0x01, 0x03, 0x01, 26, 0] }
            }
        }
        let samples = h.quantities(.bloodGlucose)
        XCTAssertEqual(samples.map(\.quantity.value), [98, 104, 121])
        XCTAssertEqual(samples.map(\.startDate), [5, 10, 25].map { Self.startDate.addingTimeInterval(Double($0) * 60) })
        XCTAssertEqual(samples.map { $0.quantity.unit }, [.milligramPerDeciliter, .milligramPerDeciliter, .milligramPerDeciliter])
        let first = try XCTUnwrap(samples.first)
        XCTAssertEqual(first.metadata[.cgmTrend], .double(0.2))
        XCTAssertEqual(first.metadata[.cgmQuality], .double(99.7))
        XCTAssertEqual(first.metadata[.cgmTimeOffsetMinutes], .integer(5))
        XCTAssertEqual(first.metadata[.cgmSessionStart], .string("2027-01-15T05:00:00Z"))
        XCTAssertEqual(first.metadata[.mdcDeviceSpecializations], .string("4121:1"), "MDC_DEV_SPEC_PROFILE_CGM")
        XCTAssertEqual(first.metadata.syncIdentifier, "Acme/CGM-7/cgm/\(Int(Self.startDate.timeIntervalSince1970))/5")
        XCTAssertEqual(first.id, SampleID(syncIdentifier: "Acme/CGM-7/cgm/\(Int(Self.startDate.timeIntervalSince1970))/5", version: 1))
        let bad = h.logs.entries.filter { $0.message.contains("bad payload") }
        XCTAssertEqual(bad.count, 2, "\(bad.map(\.message))")
        XCTAssertTrue(bad.contains { $0.message.contains("E2E-CRC mismatch") && $0.message.contains("time offset 15") })
        XCTAssertTrue(bad.contains { $0.message.contains("has no E2E-CRC") && $0.message.contains("time offset 20") })
        XCTAssertTrue(bad.allSatisfy { $0.device == "Acme CGM-7" || $0.device?.contains("CGM-7") == true }, "\(bad.map { $0.device ?? "-" })")
    }

    /// A stopped sensor with no session start: `session: "start"` starts one and
    /// `communicationIntervalMinutes` sets the interval (both with the E2E-CRC the sensor
    /// wants), then the gateway writes the session start (its time, UTC), and counts the
    /// records from it.
    func testStartSessionSetIntervalAndSessionStartTime() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let unset = E2ECRC.appending(to: [0, 0, 0, 0, 0, 0, 0, 0, 0])
        let stopped = E2ECRC.appending(to: [0, 0, 0x01, 0, 0])
        let profile = Self.profile(status: stopped, sessionStart: unset)
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let configuration = try JSONDecoder().decode(
            CGMConfiguration.self, from: Data(#"{"session": "start", "communicationIntervalMinutes": 5}"#.utf8))
        let h = try harness(transport, configuration)
        try await h.run { h in
            let link = try await Self.connect(profile, on: transport, in: h)
            link.send(E2ECRC.appending(to: [0x1C, 0x1A, 0x01]), on: Self.socp)
            link.send(E2ECRC.appending(to: [0x1C, 0x01, 0x05]), on: Self.socp)
            link.send(Self.record(0, 100), on: Self.measurement)
            try await h.waitFor("the record") { h.quantities(.bloodGlucose).count == 1 }
            try await h.waitFor("the refusal logged") { h.logs.entries.contains { $0.message.contains("parameter out of range") } }
        }
        let writes = try XCTUnwrap(transport.latest(profile.address)).writes
        XCTAssertEqual(writes.map(\.0), [Self.socp, Self.socp, Self.startTime, Self.racp])
        XCTAssertEqual(writes[0].1, E2ECRC.appending(to: [0x1A]))
        XCTAssertEqual(writes[1].1, E2ECRC.appending(to: [0x01, 0x05]))
        // 2027-01-15T08:00:00Z, zone 0, standard time.
        XCTAssertEqual(writes[2].1, E2ECRC.appending(to: [0xEB, 0x07, 1, 15, 8, 0, 0, 0, 0]))
        XCTAssertEqual(writes[3].1, [0x01, 0x01])
        XCTAssertEqual(h.quantities(.bloodGlucose).first?.startDate, Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("asked the sensor to start the session") })
    }

    /// While the gateway's clock is not synchronised, a sensor without a session start gets none
    /// written: the records are counted from the gateway's time less the offset, and the log
    /// says why.
    func testAnUnsynchronizedClockWritesNoSessionStart() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let profile = Self.profile(sessionStart: E2ECRC.appending(to: [0, 0, 0, 0, 0, 0, 0, 0, 0]))
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let h = try harness(transport, clockTrust: .unsynchronized)
        try await h.run { h in
            try await Self.connect(profile, on: transport, in: h)
            transport.latest(profile.address)?.send(Self.record(180, 100), on: Self.measurement)
            try await h.waitFor("the record") { h.quantities(.bloodGlucose).count == 1 }
        }
        let writes = try XCTUnwrap(transport.latest(profile.address)).writes
        XCTAssertEqual(writes.map(\.0), [Self.racp], "no Session Start Time written")
        // The status said offset 180 min: the record at offset 180 is the gateway's now.
        XCTAssertEqual(h.quantities(.bloodGlucose).first?.startDate, Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("no session start time is written into the sensor") })
        XCTAssertNil(h.quantities(.bloodGlucose).first?.metadata[.deviceClock], "dated by the gateway's clock: moved when it steps")
    }

    /// A sensor without the Specific Ops Control Point cannot take a configured session action
    /// or interval: the log and the status say so, and its records still arrive, dated by its own
    /// session start (healthgate.deviceClock).
    func testASensorWithoutSpecificOpsSaysWhatItCannotDo() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let profile = Self.profile(lacking: [Self.socp])
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let configuration = try JSONDecoder().decode(
            CGMConfiguration.self, from: Data(#"{"session": "stop", "communicationIntervalMinutes": 5}"#.utf8))
        let h = try harness(transport, configuration)
        try await h.run { h in
            try await Self.connect(profile, on: transport, in: h)
            transport.latest(profile.address)?.send(Self.record(60, 100), on: Self.measurement)
            try await h.waitFor("the record") { h.quantities(.bloodGlucose).count == 1 }
        }
        XCTAssertTrue(
            h.logs.entries.contains {
                $0.message.contains("no CGM Specific Ops Control Point (0x2AAC): cannot stop the session, set the communication interval to 5 min as configured")
            }, "\(h.logs.entries.map(\.message))")
        XCTAssertEqual(try XCTUnwrap(transport.latest(profile.address)).writes.map(\.0), [Self.racp])
        let sample = try XCTUnwrap(h.quantities(.bloodGlucose).first)
        XCTAssertEqual(sample.startDate, Self.startDate.addingTimeInterval(3600))
        XCTAssertEqual(sample.metadata[.deviceClock], .bool(true), "dated by the sensor's own session start")
    }

    /// `session: "stop"` stops a running session; an unknown session action is refused with the
    /// values it may take, and the sample configuration builds.
    func testStopSessionAndConfiguration() async throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let profile = Self.profile()
        let transport = FakeBLETransport(profiles: [profile], clock: clock)
        let configuration = try JSONDecoder().decode(CGMConfiguration.self, from: Data(#"{"session": "stop"}"#.utf8))
        let h = try harness(transport, configuration)
        try await h.run { h in
            try await transport.connect(profile, in: h, until: "the stop") {
                $0.writes.contains { $0.0 == Self.socp && $0.1 == E2ECRC.appending(to: [0x1B]) }
            }
        }
        XCTAssertThrowsError(try JSONDecoder().decode(CGMConfiguration.self, from: Data(#"{"session": "begin"}"#.utf8))) { error in
            // The context's own text: how "\(error)" escapes it differs between toolchains.
            guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(context.debugDescription.contains(#""keep", "start", "stop""#), context.debugDescription)
        }
        XCTAssertThrowsError(try CGMConfiguration(profile: CGMProfileConfiguration(communicationIntervalMinutes: 0)).validate()) {
            XCTAssertTrue("\($0)".contains("communicationIntervalMinutes"), "\($0)")
        }
        try CGMProfile.sampleSourceConfigurations(count: 2, environmentName: "cgm")
    }
}
