import Foundation
import HealthModel
import XCTest

final class HealthJSONTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 3, milliseconds: { 1_800_000_000_000 })
    /// Microsecond-exact dates, so that a round trip through RFC 3339 is lossless.
    private let start = Date(timeIntervalSince1970: 1_800_000_000.123456)
    private var end: Date { start.addingTimeInterval(5.5) }

    private let device = Device(
        name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", hardwareVersion: "1.0",
        firmwareVersion: "5.0.0", softwareVersion: "1.1", localIdentifier: "A0:9E:1A:00:11:22",
        udiDeviceIdentifier: "(01)00012345678905")

    private func roundTrip<T: Codable & Equatable>(
        _ value: T, file: StaticString = #filePath, line: UInt = #line
    ) throws -> String {
        let data = try HealthJSON.makeEncoder().encode(value)
        let decoded = try HealthJSON.makeDecoder().decode(T.self, from: data)
        XCTAssertEqual(decoded, value, file: file, line: line)
        // Equal values encode to equal bytes (the HTTP sink's idempotency key relies on it).
        XCTAssertEqual(try HealthJSON.makeEncoder().encode(decoded), data, file: file, line: line)
        let pretty = try HealthJSON.makeEncoder(pretty: true).encode(value)
        XCTAssertEqual(try HealthJSON.makeDecoder().decode(T.self, from: pretty), value, file: file, line: line)
        return String(decoding: data, as: UTF8.self)
    }

    private func metadata() -> Metadata {
        var metadata: Metadata = ["healthgate.battery": .integer(87), "healthgate.rssi": .double(-61.5)]
        metadata.heartRateSensorLocation = .chest
        metadata.heartRateMotionContext = .active
        metadata.externalUUID = "ext-1"
        metadata.syncIdentifier = "polar-h10/2027-01-15T08"
        metadata.syncVersion = 3
        metadata["healthgate.contact"] = .bool(true)
        metadata["healthgate.note"] = .string("first run")
        return metadata
    }

    func testQuantitySampleRoundTrip() throws {
        let sample = try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(72, .countPerMinute), start: start,
            end: start, device: device, metadata: metadata())
        let text = try roundTrip(sample)
        XCTAssertTrue(text.contains(#""start":"2027-01-15T08:00:00.123456Z""#), text)
        XCTAssertTrue(text.contains(#""uuid":"\#(sample.id.uuidString)""#), text)
        XCTAssertTrue(text.contains(#""unit":"count/min""#), text)
        XCTAssertTrue(text.contains(#""type":"heartRate""#), text)
        XCTAssertTrue(text.contains(#""heartRateSensorLocation":"chest""#), text)
        XCTAssertEqual(sample.syncIdentifier, "polar-h10/2027-01-15T08")
        XCTAssertEqual(sample.syncVersion, 3)
    }

    func testExactEncodingOfAMinimalSample() throws {
        let sample = try QuantitySample(
            id: SampleID(high: 0x01a3_185c_5000_7001, low: 0x8000_0000_0000_0002), type: .stepCount,
            quantity: Quantity(12, .count), start: start, end: end)
        let data = try HealthJSON.makeEncoder().encode(sample)
        XCTAssertEqual(
            String(decoding: data, as: UTF8.self),
            #"{"end":"2027-01-15T08:00:05.623456Z","start":"2027-01-15T08:00:00.123456Z","#
                + #""type":"stepCount","unit":"count","uuid":"01a3185c-5000-7001-8000-000000000002","value":12}"#,
            "sorted keys, no metadata key when empty, no device key when absent")
    }

    func testSampleKeepsItsRecordedUnit() throws {
        let sample = try QuantitySample(
            id: ids.next(), type: .distanceWalkingRunning, quantity: Quantity(1.5, try HealthUnit("km")),
            start: start, end: end)
        _ = try roundTrip(sample)
        let decoded = try HealthJSON.makeDecoder().decode(
            QuantitySample.self, from: HealthJSON.makeEncoder().encode(sample))
        XCTAssertEqual(decoded.quantity.unit.unitString, "km")
        XCTAssertEqual(decoded.canonicalValue, 1500, accuracy: 1e-9)
    }

    func testHeartbeatSeriesRoundTrip() throws {
        var metadata = Metadata()
        metadata.heartRateSensorLocation = .wrist
        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: start, end: end,
            beats: [
                Heartbeat(timeSinceSeriesStart: 0, precededByGap: false),
                Heartbeat(timeSinceSeriesStart: 0.8125, precededByGap: false),
                Heartbeat(timeSinceSeriesStart: 3.25, precededByGap: true),
            ], device: device, metadata: metadata)
        _ = try roundTrip(series)
    }

    func testWorkoutRoundTrip() throws {
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: start,
            endDate: start.addingTimeInterval(1800), duration: 1740,
            events: [
                WorkoutEvent(type: .pause, startDate: start.addingTimeInterval(600)),
                WorkoutEvent(type: .resume, startDate: start.addingTimeInterval(660)),
                WorkoutEvent(
                    type: .segment, startDate: start, endDate: start.addingTimeInterval(900),
                    metadata: ["healthgate.lap": .integer(1)]),
            ],
            activities: [
                WorkoutActivity(
                    id: ids.next(), activityType: .running, startDate: start,
                    endDate: start.addingTimeInterval(1800),
                    statistics: [
                        QuantityStatistics(
                            type: .stepCount, startDate: start, endDate: start.addingTimeInterval(1800),
                            sampleCount: 30, sum: 5012)
                    ]),
                WorkoutActivity(id: ids.next(), activityType: .walking, startDate: start),
            ],
            statistics: [
                QuantityStatistics(
                    type: .heartRate, startDate: start, endDate: start.addingTimeInterval(1800),
                    sampleCount: 1800, average: 151.25, minimum: 92, maximum: 178, mostRecent: 160,
                    mostRecentDate: start.addingTimeInterval(1799)),
                QuantityStatistics(
                    type: .activeEnergyBurned, startDate: start, endDate: start,
                    sampleCount: 0),
            ],
            metadata: metadata())
        _ = try roundTrip(workout)
        XCTAssertEqual(workout.statistics(for: .heartRate)?.average, 151.25)
        XCTAssertEqual(workout.statistics(for: .activeEnergyBurned)?.isEmpty, true)
        XCTAssertNil(workout.statistics(for: .stepCount))
    }

    func testHealthRecordRoundTripForEveryKind() throws {
        let records: [HealthRecord] = [
            .quantity(
                try QuantitySample(
                    id: ids.next(), type: .activeEnergyBurned, quantity: Quantity(300, .kilojoule),
                    start: start, end: end, device: device)),
            .quantitySeries(
                try QuantitySeriesSample(
                    id: ids.next(), type: .heartRate, unit: .countPerMinute,
                    quantities: [
                        SeriesQuantity(value: 72, start: start, end: start),
                        SeriesQuantity(value: 73, start: start.addingTimeInterval(1.25), end: start.addingTimeInterval(1.25)),
                    ])),
            .heartbeatSeries(
                try HeartbeatSeriesSample(
                    id: ids.next(), start: start, end: end,
                    beats: [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)])),
            .workout(
                Workout(id: ids.next(), activityType: .cycling, startDate: start, endDate: end, duration: 5.5)),
            .correlation(
                try .bloodPressure(
                    id: ids.next(),
                    systolic: try QuantitySample(
                        id: ids.next(), type: .bloodPressureSystolic, quantity: Quantity(120, .millimeterOfMercury),
                        start: start, end: start),
                    diastolic: try QuantitySample(
                        id: ids.next(), type: .bloodPressureDiastolic, quantity: Quantity(80, .millimeterOfMercury),
                        start: start, end: start),
                    device: device)),
        ]
        XCTAssertEqual(records.map(\.kind), HealthRecordKind.allCases)
        for record in records {
            let text = try roundTrip(record)
            XCTAssertTrue(text.hasPrefix(#"{"kind":"\#(record.kind.rawValue)","sample":{"#), text)
        }
        XCTAssertEqual(records.map(\.id), records.map(\.id).sorted())
        XCTAssertEqual(records[0].device, device)
        XCTAssertNil(records[3].device)
    }

    func testMetadataTypedAndCustomKeys() throws {
        let metadata = metadata()
        XCTAssertEqual(metadata.heartRateSensorLocation, .chest)
        XCTAssertEqual(metadata.heartRateMotionContext, .active)
        XCTAssertEqual(metadata.externalUUID, "ext-1")
        XCTAssertEqual(metadata.syncVersion, 3)
        XCTAssertEqual(metadata["healthgate.battery"], .integer(87))
        XCTAssertEqual(metadata.count, 9)
        XCTAssertEqual(metadata.map(\.key), metadata.map(\.key).sorted(), "iterates in key order")

        let text = try roundTrip(metadata)
        XCTAssertEqual(
            text,
            #"{"externalUUID":"ext-1","healthgate.battery":87,"healthgate.contact":true,"#
                + #""healthgate.note":"first run","healthgate.rssi":-61.5,"heartRateMotionContext":"active","#
                + #""heartRateSensorLocation":"chest","syncIdentifier":"polar-h10/2027-01-15T08","#
                + #""syncVersion":3}"#)

        // The device's serial number under HealthKit's key, without its HK prefix.
        var serial = Metadata()
        serial.deviceSerialNumber = "A1B2C3D4"
        XCTAssertEqual(serial[.deviceSerialNumber], .string("A1B2C3D4"))
        XCTAssertEqual(try roundTrip(serial), #"{"deviceSerialNumber":"A1B2C3D4"}"#)

        // Removing a typed value removes its key.
        var changed = metadata
        changed.heartRateSensorLocation = nil
        XCTAssertNil(changed[.heartRateSensorLocation])
        XCTAssertEqual(changed.count, 8)
        // A value of the wrong shape reads as absent through the typed accessor, and survives.
        changed[.heartRateSensorLocation] = .string("elbow")
        XCTAssertNil(changed.heartRateSensorLocation)
        XCTAssertEqual(try roundTrip(changed).contains(#""heartRateSensorLocation":"elbow""#), true)
    }

    func testEverySensorLocationAndMotionContextByName() {
        for location in HeartRateSensorLocation.allCases {
            var metadata = Metadata()
            metadata.heartRateSensorLocation = location
            XCTAssertEqual(metadata.heartRateSensorLocation, location)
            XCTAssertEqual(HeartRateSensorLocation(name: location.name), location)
        }
        // Body Sensor Location codes (GATT 0x2A38).
        XCTAssertEqual(HeartRateSensorLocation.earLobe.rawValue, 5)
        XCTAssertEqual(HeartRateSensorLocation.foot.rawValue, 6)
        for context in HeartRateMotionContext.allCases {
            var metadata = Metadata()
            metadata.heartRateMotionContext = context
            XCTAssertEqual(metadata.heartRateMotionContext, context)
        }
        XCTAssertNil(HeartRateSensorLocation(name: "Chest"))
    }

    func testMetadataValueKinds() throws {
        let values: [MetadataValue] = [
            .string("x"), .string("12"), .string("true"), .integer(0), .integer(1), .integer(-7),
            .integer(Int64.max), .double(0.5), .double(-1e-9), .double(1.5e300), .bool(true), .bool(false),
        ]
        for value in values {
            let metadata: Metadata = ["k": value]
            _ = try roundTrip(metadata)
        }
        // JSON does not keep 2.0 apart from 2: an integral double comes back as an integer. The
        // bytes stay stable, which is what the HTTP sink's idempotency key needs.
        let integral: Metadata = ["k": .double(2)]
        let data = try HealthJSON.makeEncoder().encode(integral)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"k":2}"#)
        let decoded = try HealthJSON.makeDecoder().decode(Metadata.self, from: data)
        XCTAssertEqual(decoded["k"], .integer(2))
        XCTAssertEqual(try HealthJSON.makeEncoder().encode(decoded), data)
        XCTAssertThrowsError(try HealthJSON.makeEncoder().encode(["k": MetadataValue.double(.nan)] as Metadata),
                             "JSON has no NaN; the encoder refuses instead of writing garbage")
        XCTAssertThrowsError(
            try HealthJSON.makeDecoder().decode(Metadata.self, from: Data(#"{"k":[1,2]}"#.utf8))
        ) {
            guard case .dataCorrupted(let context)? = $0 as? DecodingError else { return XCTFail("\($0)") }
            XCTAssertEqual(context.codingPath.map(\.stringValue), ["k"])
        }
    }

    /// A sample whose unit does not fit its type is refused, and the error points at `unit`.
    func testDecodingASampleWithTheWrongUnitFailsClearly() throws {
        let json = #"""
            {"kind":"quantity","sample":{"uuid":"01a3185c-5000-7001-8000-000000000002",
             "type":"heartRate","value":72,"unit":"count",
             "start":"2027-01-15T08:00:00Z","end":"2027-01-15T08:00:00Z"}}
            """#
        XCTAssertThrowsError(try HealthJSON.makeDecoder().decode(HealthRecord.self, from: Data(json.utf8))) {
            guard case .dataCorrupted(let context)? = $0 as? DecodingError else { return XCTFail("\($0)") }
            XCTAssertEqual(context.codingPath.map(\.stringValue), ["sample", "unit"])
            XCTAssertEqual(
                context.debugDescription,
                "heartRate cannot be recorded in count; it needs a unit compatible with count/min")
        }
    }

    func testDecodingErrorsPointAtTheField() throws {
        func failure(_ key: String, _ value: String) -> DecodingError? {
            var fields = [
                "uuid": "01a3185c-5000-7001-8000-000000000002", "type": "stepCount", "unit": "count",
                "start": "2027-01-15T08:00:00Z", "end": "2027-01-15T08:00:01Z",
            ]
            fields[key] = value
            let json = "{" + fields.map { #""\#($0.key)":"\#($0.value)","# }.joined() + #""value":1}"#
            do {
                _ = try HealthJSON.makeDecoder().decode(QuantitySample.self, from: Data(json.utf8))
                return nil
            } catch {
                return error as? DecodingError
            }
        }
        let rows: [(String, String, String)] = [
            ("unit", "count//s", "more than one \"/\""),
            ("type", "bloodAlcoholContent", "unknown quantity type \"bloodAlcoholContent\""),
            ("start", "yesterday", "not an RFC 3339 date: yesterday"),
            ("uuid", "x", "not a UUID: x"),
            ("end", "2027-01-14T08:00:00Z", "end date is before its start date"),
        ]
        for (key, value, message) in rows {
            let override = "\(key)=\(value)"
            guard let error = failure(key, value) else {
                XCTFail("\(override) decoded")
                continue
            }
            guard case .dataCorrupted(let context) = error else {
                XCTFail("\(override): \(error)")
                continue
            }
            XCTAssertEqual(context.codingPath.map(\.stringValue), [key], override)
            XCTAssertTrue(context.debugDescription.contains(message), "\(override): \(context.debugDescription)")
        }
    }

    func testDecoderAcceptsOffsetsAndNoFraction() throws {
        let json = #"{"uuid":"01a3185c-5000-7001-8000-000000000002","type":"heartRate","value":60,"#
            + #""unit":"count/min","start":"2027-01-15T10:00:00+02:00","end":"2027-01-15T08:00:00.000Z"}"#
        let sample = try HealthJSON.makeDecoder().decode(QuantitySample.self, from: Data(json.utf8))
        XCTAssertEqual(sample.startDate, Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertEqual(sample.endDate, sample.startDate)
    }
}
