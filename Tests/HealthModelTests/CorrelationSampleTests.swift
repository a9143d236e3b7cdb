import Foundation
import HealthModel
import XCTest

/// The blood-pressure correlation: exactly one systolic and one diastolic sample, and its JSON.
final class CorrelationSampleTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 16, milliseconds: { 1_800_000_000_000 })
    private let start = Date(timeIntervalSince1970: 1_800_000_000)
    private let cuff = Device(name: "BP7000", manufacturer: "Omron", localIdentifier: "00:5F:BF:12:34:56")

    private func pressure(_ type: QuantityType, _ value: Double, unit: HealthUnit = .millimeterOfMercury, at offset: Double = 0) throws -> QuantitySample {
        try QuantitySample(
            id: ids.next(), type: type, quantity: Quantity(value, unit), start: start.addingTimeInterval(offset),
            end: start.addingTimeInterval(offset), device: cuff)
    }

    func testBloodPressureHoldsOneSystolicAndOneDiastolicInTheirOrder() throws {
        let systolic = try pressure(.bloodPressureSystolic, 121)
        let diastolic = try pressure(.bloodPressureDiastolic, 79, at: 1)
        var metadata = Metadata()
        metadata.syncIdentifier = "cuff-00:5F:BF:12:34:56-seq-7"
        metadata.syncVersion = 1
        let reading = try CorrelationSample(
            id: ids.next(), type: .bloodPressure, start: start, end: start.addingTimeInterval(1),
            objects: [diastolic, systolic], device: cuff, metadata: metadata)
        XCTAssertEqual(reading.objects.map(\.type), [.bloodPressureSystolic, .bloodPressureDiastolic])
        XCTAssertEqual(reading.object(of: .bloodPressureSystolic), systolic)
        XCTAssertEqual(reading.object(of: .bloodPressureDiastolic), diastolic)
        XCTAssertNil(reading.object(of: .heartRate))
        XCTAssertEqual(reading.syncIdentifier, "cuff-00:5F:BF:12:34:56-seq-7")
        let convenience = try CorrelationSample.bloodPressure(id: ids.next(), systolic: systolic, diastolic: diastolic)
        XCTAssertEqual(convenience.startDate, start)
        XCTAssertEqual(convenience.endDate, start.addingTimeInterval(1))
        XCTAssertEqual(CorrelationType.named("bloodPressure"), .bloodPressure)
        XCTAssertEqual(CorrelationType.bloodPressure.memberTypes, [.bloodPressureSystolic, .bloodPressureDiastolic])
    }

    func testAnythingButExactlyOneOfEachMemberIsRejected() throws {
        let systolic = try pressure(.bloodPressureSystolic, 121)
        let diastolic = try pressure(.bloodPressureDiastolic, 79)
        let expected = SampleError.correlationMembers(
            type: "bloodPressure", expected: "one bloodPressureSystolic and one bloodPressureDiastolic sample")
        let wrong: [[QuantitySample]] = [
            [], [systolic], [diastolic], [systolic, systolic], [systolic, diastolic, try pressure(.bloodPressureDiastolic, 80)],
            [systolic, diastolic, try pressure(.heartRate, 60, unit: .countPerMinute)],
        ]
        for objects in wrong {
            XCTAssertThrowsError(
                try CorrelationSample(id: ids.next(), type: .bloodPressure, start: start, end: start, objects: objects),
                "\(objects.map(\.type))"
            ) { XCTAssertEqual($0 as? SampleError, expected) }
        }
        XCTAssertEqual(expected.description, "a bloodPressure correlation holds exactly one bloodPressureSystolic and one bloodPressureDiastolic sample")
        let late = try pressure(.bloodPressureDiastolic, 79, at: 5)
        XCTAssertThrowsError(
            try CorrelationSample(
                id: ids.next(), type: .bloodPressure, start: start, end: start.addingTimeInterval(1), objects: [systolic, late])
        ) { XCTAssertEqual($0 as? SampleError, .memberOutsideCorrelation(type: "bloodPressure")) }
        XCTAssertThrowsError(
            try CorrelationSample(
                id: ids.next(), type: .bloodPressure, start: start, end: start.addingTimeInterval(-1), objects: [systolic, diastolic])
        ) { XCTAssertEqual($0 as? SampleError, .endBeforeStart) }
    }

    func testCorrelationRoundTripsThroughHealthJSONAsARecord() throws {
        let reading = try CorrelationSample.bloodPressure(
            id: ids.next(), systolic: try pressure(.bloodPressureSystolic, 16, unit: try HealthUnit("kPa")),
            diastolic: try pressure(.bloodPressureDiastolic, 80), device: cuff,
            metadata: [MetadataKey("healthgate.measurementStatus"): .integer(0)])
        let record = HealthRecord.correlation(reading)
        XCTAssertEqual(record.kind, .correlation)
        XCTAssertEqual(record.id, reading.id)
        XCTAssertEqual(record.device, cuff)
        let data = try HealthJSON.makeEncoder().encode(record)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix(#"{"kind":"correlation","sample":{"#), text)
        XCTAssertTrue(text.contains(#""type":"bloodPressure""#), text)
        XCTAssertTrue(text.contains(#""unit":"kPa""#), "members keep their recorded unit: \(text)")
        XCTAssertEqual(try HealthJSON.makeDecoder().decode(HealthRecord.self, from: data), record)
        XCTAssertEqual(reading.objects[0].canonicalValue, 120.00985213530501, accuracy: 1e-9)
    }

    func testInvalidCorrelationJSONNamesTheField() throws {
        let systolic = try pressure(.bloodPressureSystolic, 121)
        let encoder = HealthJSON.makeEncoder()
        let member = String(decoding: try encoder.encode(systolic), as: UTF8.self)
        let rows: [(String, String, String)] = [
            (#"{"uuid":"\#(ids.next().uuidString)","type":"bloodPressure","start":"2027-01-15T08:00:00Z","end":"2027-01-15T08:00:00Z","objects":[\#(member)]}"#,
             "objects", "holds exactly one bloodPressureSystolic"),
            (#"{"uuid":"\#(ids.next().uuidString)","type":"glucoseReading","start":"2027-01-15T08:00:00Z","end":"2027-01-15T08:00:00Z","objects":[]}"#,
             "type", "unknown correlation type \"glucoseReading\""),
        ]
        for (json, field, message) in rows {
            XCTAssertThrowsError(try HealthJSON.makeDecoder().decode(CorrelationSample.self, from: Data(json.utf8))) { error in
                guard case .dataCorrupted(let context)? = error as? DecodingError else { return XCTFail("\(error)") }
                XCTAssertEqual(context.codingPath.last?.stringValue, field)
                XCTAssertTrue(context.debugDescription.contains(message), context.debugDescription)
            }
        }
    }
}
