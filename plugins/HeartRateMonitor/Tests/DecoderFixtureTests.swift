import BLEProfileKit
import BLETesting
import Foundation
import GatewayTesting
import GATTDecoding
import HealthModel
import HeartRateMonitor
import GatewayRuntime
import XCTest

/// The decoders against payloads published by independent projects' test suites
/// (Fixtures/*.json cite each one), every truncation of each, and long payloads.
final class DecoderFixtureTests: XCTestCase {
    typealias FixtureFile = GATTFixtureFile<[String: JSONValue]>

    func load(_ name: String) throws -> FixtureFile {
        try FixtureFile.load(name, from: fixturesDirectory(besideTestsOf: #filePath))
    }

    /// A decoded value in the JSON shape of `healthgate decode` (the same keys), for comparison.
    static func json(_ m: HeartRateMeasurement) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        object["heartRate"] = .number(Double(m.heartRate))
        object["sensorContact"] = .string(m.sensorContact.rawValue)
        object["energyExpended"] = m.energyExpended.map { JSONValue.number(Double($0)) } ?? .null
        object["rrIntervals"] = .array(m.rrIntervals.map { JSONValue.number(Double($0)) })
        object["rrIntervalsSeconds"] = .array(m.rrIntervalsSeconds.map { JSONValue.number($0) })
        return object
    }

    static func json(_ m: RSCMeasurement) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        object["instantaneousSpeed"] = .number(m.instantaneousSpeed)
        object["instantaneousCadence"] = .number(Double(m.instantaneousCadence))
        object["strideLength"] = m.strideLength.map { JSONValue.number($0) } ?? .null
        object["totalDistance"] = m.totalDistance.map { JSONValue.number($0) } ?? .null
        object["isRunning"] = .bool(m.isRunning)
        return object
    }

    /// Every proper prefix fails with a specific error that points inside the prefix.
    func assertEveryTruncationFails<T>(
        _ bytes: [UInt8], _ name: String, _ decode: ([UInt8]) throws(GATTDecodingError) -> T
    ) {
        assertEveryTruncationFails(bytes, name, decode) { _, _ in false }
    }

    /// Every proper prefix fails with a specific error that points inside the prefix, except
    /// those `accept` vouches for.
    func assertEveryTruncationFails<T>(
        _ bytes: [UInt8], _ name: String, _ decode: ([UInt8]) throws(GATTDecodingError) -> T,
        accept: (Int, T) -> Bool
    ) {
        for length in 0..<bytes.count {
            let prefix = Array(bytes.prefix(length))
            do {
                let value = try decode(prefix)
                XCTAssertTrue(accept(length, value), "\(name): prefix of \(length) byte(s) decoded to \(value)")
            } catch {
                XCTAssertTrue([.truncated, .oddLength].contains(error.code), "\(name)/\(length): \(error)")
                XCTAssertEqual(error.offset + error.available, length, "\(name)/\(length): \(error)")
                XCTAssertGreaterThan(error.needed, error.available, "\(name)/\(length): \(error)")
                XCTAssertFalse(error.field.isEmpty)
                XCTAssertTrue(error.description.contains(error.field), error.description)
            }
        }
    }

    /// The RR count is implied by the length (HRS §3.1.1.5), so a prefix cut exactly between two
    /// intervals is itself a valid measurement with fewer intervals: it must decode to exactly
    /// the first intervals and the same other fields. Every other prefix must fail.
    func assertHeartRateTruncations(_ bytes: [UInt8], _ name: String) throws {
        let full = try HeartRateMeasurementDecoder.decode(bytes)
        let rrStart = bytes.count - 2 * full.rrIntervals.count
        assertEveryTruncationFails(bytes, name, HeartRateMeasurementDecoder.decode) { length, value in
            guard !full.rrIntervals.isEmpty, length >= rrStart + 2, (length - rrStart) % 2 == 0 else { return false }
            var expected = full
            expected.rrIntervals = RRIntervals(full.rrIntervals.prefix((length - rrStart) / 2))
            return value == expected
        }
    }

    func testHeartRateMeasurementFixtures() throws {
        let file = try load("heart-rate-measurement.json")
        XCTAssertGreaterThanOrEqual(file.valid.count, 10)
        for fixture in file.valid {
            let bytes = try HexPayload.parse(fixture.hex)
            let decoded = try HeartRateMeasurementDecoder.decode(bytes)
            XCTAssertEqual(Self.json(decoded), fixture.expected, fixture.name)
            let viaPointer = try bytes.withUnsafeBytes { try HeartRateMeasurementDecoder.decodeResult($0).get() }
            XCTAssertEqual(viaPointer, decoded)
            try assertHeartRateTruncations(bytes, fixture.name)
        }
        for fixture in file.invalid {
            XCTAssertThrowsError(try HeartRateMeasurementDecoder.decode(try HexPayload.parse(fixture.hex))) { error in
                guard let error = error as? GATTDecodingError else { return XCTFail("\(error)") }
                XCTAssertEqual(FixtureFile.ExpectedError(error), fixture.error, fixture.name)
            }
        }
    }

    func testRSCMeasurementFixtures() throws {
        let file = try load("rsc-measurement.json")
        for fixture in file.valid {
            let bytes = try HexPayload.parse(fixture.hex)
            XCTAssertEqual(Self.json(try RSCMeasurementDecoder.decode(bytes)), fixture.expected, fixture.name)
            assertEveryTruncationFails(bytes, fixture.name, RSCMeasurementDecoder.decode)
        }
        for fixture in file.invalid {
            XCTAssertThrowsError(try RSCMeasurementDecoder.decode(try HexPayload.parse(fixture.hex))) { error in
                guard let error = error as? GATTDecodingError else { return XCTFail("\(error)") }
                XCTAssertEqual(FixtureFile.ExpectedError(error), fixture.error, fixture.name)
            }
        }
    }

    func testBodySensorLocationFixtures() throws {
        let file = try load("body-sensor-location.json")
        for fixture in file.valid {
            let bytes = try HexPayload.parse(fixture.hex)
            let location = try BodySensorLocationDecoder.decode(bytes)
            let object: [String: JSONValue] = ["location": .string(location.name), "value": .number(Double(location.rawValue))]
            XCTAssertEqual(object, fixture.expected)
            assertEveryTruncationFails(bytes, fixture.name, BodySensorLocationDecoder.decode)
        }
        for fixture in file.invalid {
            XCTAssertThrowsError(try BodySensorLocationDecoder.decode(try HexPayload.parse(fixture.hex))) { error in
                guard let error = error as? GATTDecodingError else { return XCTFail("\(error)") }
                XCTAssertEqual(FixtureFile.ExpectedError(error), fixture.error, fixture.name)
            }
        }
        // Every defined code maps onto HealthModel's location; 7…255 are reserved.
        for code in 0...6 {
            XCTAssertEqual(try BodySensorLocationDecoder.decode([UInt8(code)]).rawValue, code)
        }
        XCTAssertEqual(try BodySensorLocationDecoder.decode([0x01]), .chest)
        XCTAssertThrowsError(try BodySensorLocationDecoder.decode([7])) { error in
            XCTAssertEqual((error as? GATTDecodingError)?.code, .reservedValue)
            XCTAssertEqual((error as? GATTDecodingError)?.value, 7)
        }
    }

    func testBatteryLevelFixtures() throws {
        let file = try load("battery-level.json")
        for fixture in file.valid {
            let bytes = try HexPayload.parse(fixture.hex)
            let object: [String: JSONValue] = ["batteryLevel": .number(Double(try BatteryLevelDecoder.decode(bytes)))]
            XCTAssertEqual(object, fixture.expected)
            assertEveryTruncationFails(bytes, fixture.name, BatteryLevelDecoder.decode)
        }
        for fixture in file.invalid {
            XCTAssertThrowsError(try BatteryLevelDecoder.decode(try HexPayload.parse(fixture.hex))) { error in
                guard let error = error as? GATTDecodingError else { return XCTFail("\(error)") }
                XCTAssertEqual(FixtureFile.ExpectedError(error), fixture.error, fixture.name)
            }
        }
        XCTAssertEqual(try BatteryLevelDecoder.decode([0]), 0)
        XCTAssertThrowsError(try BatteryLevelDecoder.decode([0xFF]))
    }

    /// RR intervals are stored inline up to 12 and in an array beyond; both behave as one list.
    func testRRIntervalsAcrossTheInlineCapacity() {
        for count in [0, 1, 4, 5, 9, 12, 13, 20] {
            let values: [UInt16] = (0..<count).map { UInt16(0xFFFF - $0 * 977) }
            var appended = RRIntervals()
            for value in values { appended.append(value) }
            XCTAssertEqual(Array(appended), values, "\(count) values")
            XCTAssertEqual(appended.count, count)
            XCTAssertEqual(appended, RRIntervals(values))
            XCTAssertEqual(appended.hashValue, RRIntervals(values).hashValue)
            XCTAssertEqual(appended.description, values.description)
            if count > 0 {
                XCTAssertNotEqual(appended, RRIntervals(values.dropLast()), "a shorter list differs")
                XCTAssertEqual(appended.last, values.last)
            }
        }
        XCTAssertEqual([1024, 980] as RRIntervals, RRIntervals([1024, 980]))
    }

    func testHeartRatePayloadLongerThanTwentyBytesDecodes() throws {
        // 1 flags + 1 HR + 2 energy + 15 RR intervals = 34 bytes, as with an ATT MTU of 40+.
        let intervals: [UInt16] = (0..<15).map { 800 + UInt16($0) * 3 }
        var payload: [UInt8] = [0x1E, 61, 0x10, 0x00]
        for rr in intervals { payload += [UInt8(rr & 0xFF), UInt8(rr >> 8)] }
        XCTAssertEqual(payload.count, 34)
        let decoded = try HeartRateMeasurementDecoder.decode(payload)
        XCTAssertEqual(decoded.heartRate, 61)
        XCTAssertEqual(decoded.energyExpended, 16)
        XCTAssertEqual(Array(decoded.rrIntervals), intervals)
        try assertHeartRateTruncations(payload, "long HRM")

        // Without the RR flag, trailing bytes are not RR intervals and are ignored.
        let trailing = try HeartRateMeasurementDecoder.decode([0x00, 70] + [UInt8](repeating: 0xAA, count: 30))
        XCTAssertEqual(trailing.heartRate, 70)
        XCTAssertEqual(trailing.rrIntervals, [])

        // RSC: bytes after the announced fields are ignored too.
        let rsc = try RSCMeasurementDecoder.decode([0x04, 0x00, 0x02, 90] + [UInt8](repeating: 0x55, count: 20))
        XCTAssertEqual(rsc.instantaneousSpeed, 2)
        XCTAssertEqual(rsc.instantaneousCadence, 90)
        XCTAssertTrue(rsc.isRunning)
        XCTAssertNil(rsc.strideLength)
    }

    func testOddRRFieldIsASpecificError() {
        // movisens' payload with its last byte cut: the second interval has one byte of two.
        XCTAssertThrowsError(try HeartRateMeasurementDecoder.decode([0x16, 0x48, 0x54, 0x01, 0xEC])) { error in
            guard let error = error as? GATTDecodingError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .oddLength)
            XCTAssertEqual(error.field, "rrIntervals")
            XCTAssertEqual(error.offset, 4)
            XCTAssertEqual(error.needed, 2)
            XCTAssertEqual(error.available, 1)
            XCTAssertEqual(
                error.description,
                "Heart Rate Measurement (0x2A37): field rrIntervals has an odd length: the interval at offset 4 needs 2 bytes, 1 available")
        }
        XCTAssertThrowsError(try HeartRateMeasurementDecoder.decode([0x09, 0x48])) { error in
            XCTAssertEqual((error as? GATTDecodingError)?.field, "heartRate")
            XCTAssertEqual((error as? GATTDecodingError)?.offset, 1)
        }
        XCTAssertThrowsError(try HeartRateMeasurementDecoder.decode([0x08, 0x48, 0x01])) { error in
            XCTAssertEqual((error as? GATTDecodingError)?.field, "energyExpended")
            XCTAssertEqual((error as? GATTDecodingError)?.needed, 2)
            XCTAssertEqual((error as? GATTDecodingError)?.available, 1)
        }
    }

    func testArbitraryBytesNeverCrash() {
        // Every flags value with every length up to 24 bytes, deterministic filler.
        var decoded = 0
        var rejected = 0
        for flags in 0...255 {
            for length in 0...24 {
                var payload = [UInt8(flags)] + (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ flags) }
                if length == 0 { payload = [] }
                if (try? HeartRateMeasurementDecoder.decode(payload)) != nil { decoded += 1 } else { rejected += 1 }
                if (try? RSCMeasurementDecoder.decode(payload)) != nil { decoded += 1 } else { rejected += 1 }
            }
        }
        XCTAssertGreaterThan(decoded, 0)
        XCTAssertGreaterThan(rejected, 0)
    }

    func testHexPayloadParsing() throws {
        XCTAssertEqual(try HexPayload.parse("16 48:54-01ec02"), [0x16, 0x48, 0x54, 0x01, 0xEC, 0x02])
        XCTAssertEqual(try HexPayload.parse("0x0aFF"), [0x0A, 0xFF])
        XCTAssertEqual(try HexPayload.parse(""), [])
        XCTAssertThrowsError(try HexPayload.parse("123"))
        XCTAssertThrowsError(try HexPayload.parse("1 2"))
        XCTAssertThrowsError(try HexPayload.parse("zz"))
        XCTAssertEqual(HexPayload.format([0x0A, 0xFF]), "0AFF")
    }
}
