import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// Calendar statistics collections across daylight-saving changes, in Europe/Berlin (last Sunday of
/// March and October, at 01:00 UTC) and America/New_York (second Sunday of March, first of
/// November, at 02:00 local). Every expected bound and value is worked out by hand next to it.
final class CalendarStatisticsTests: StoreTestCase {
    let ids = StoreTestCase.makeIDs()

    func utc(_ text: String) throws -> Date {
        try XCTUnwrap(ISO8601DateFormatter().date(from: text), text)
    }

    func zone(_ identifier: String) throws -> TimeZone {
        try XCTUnwrap(TimeZone(identifier: identifier), identifier)
    }

    func stepSample(_ count: Double, _ start: String, _ end: String) throws -> HealthRecord {
        .quantity(try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(count, .count), start: try utc(start),
            end: try utc(end), device: Device(name: "pedometer", localIdentifier: "usb-1")))
    }

    func heartRateSample(_ bpm: Double, _ time: String) throws -> HealthRecord {
        .quantity(try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: try utc(time),
            end: try utc(time), device: strap))
    }

    func testBerlinSpringForwardDayIsOneBucketOf23Hours() async throws {
        try await HealthStore(path: path).write([
            try stepSample(10, "2026-03-28T23:30:00Z", "2026-03-28T23:30:00Z"),  // 00:30 CET on the 29th
            try stepSample(120, "2026-03-29T21:00:00Z", "2026-03-29T23:00:00Z"),  // 23:00–01:00 CEST: 60 / 60
            try stepSample(7, "2026-03-29T22:30:00Z", "2026-03-29T22:30:00Z"),  // 00:30 CEST on the 30th
            try heartRateSample(70, "2026-03-29T01:30:00Z"),  // 03:30 CEST on the 29th
            try heartRateSample(90, "2026-03-29T21:59:00Z"),  // 23:59 CEST on the 29th
        ])
        let store = try HealthStore(path: path, access: .readOnly)
        let berlin = try zone("Europe/Berlin")
        // Local midnight of 28 March (CET, +01:00) as the anchor; the range is 28 … 31 March local.
        let anchor = try utc("2026-03-27T23:00:00Z")
        let days = try await store.statisticsCollection(
            of: .stepCount, from: anchor, to: try utc("2026-03-30T22:00:00Z"), anchor: anchor,
            interval: CalendarInterval(.day), timeZone: berlin)
        XCTAssertEqual(days.map(\.startDate), [
            try utc("2026-03-27T23:00:00Z"), try utc("2026-03-28T23:00:00Z"), try utc("2026-03-29T22:00:00Z"),
        ])
        XCTAssertEqual(days.map(\.endDate), [
            try utc("2026-03-28T23:00:00Z"), try utc("2026-03-29T22:00:00Z"), try utc("2026-03-30T22:00:00Z"),
        ])
        XCTAssertEqual(days.map { $0.endDate.timeIntervalSince($0.startDate) / 3600 }, [24, 23, 24])
        // 28th: empty but reported. 29th: 10 + 60. 30th: 60 + 7.
        XCTAssertEqual(days.map(\.sampleCount), [0, 2, 2])
        XCTAssertEqual(days.map(\.sum), [nil, 70, 67])

        let heart = try await store.statisticsCollection(
            of: .heartRate, from: try utc("2026-03-28T23:00:00Z"), to: try utc("2026-03-29T22:00:00Z"),
            anchor: anchor, interval: CalendarInterval(.day), timeZone: berlin)
        XCTAssertEqual(heart.count, 1)
        XCTAssertEqual(heart.first?.average, 80)  // (70 + 90) / 2, both on the 23-hour day
        XCTAssertEqual(heart.first?.mostRecent, 90)
    }

    func testBerlinFallBackDayIsOneBucketOf25Hours() async throws {
        try await HealthStore(path: path).write([
            try stepSample(25, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"),  // the whole 25-hour day
            try stepSample(5, "2026-10-25T22:30:00Z", "2026-10-25T22:30:00Z"),  // 23:30 CET on the 25th
            try stepSample(3, "2026-10-25T23:00:00Z", "2026-10-25T23:00:00Z"),  // 00:00 CET on the 26th
        ])
        let store = try HealthStore(path: path, access: .readOnly)
        // The anchor is any local midnight: 1 October (CEST, +02:00), weeks before the change.
        let days = try await store.statisticsCollection(
            of: .stepCount, from: try utc("2026-10-25T12:00:00Z"), to: try utc("2026-10-26T12:00:00Z"),
            anchor: try utc("2026-09-30T22:00:00Z"), interval: CalendarInterval(.day), timeZone: try zone("Europe/Berlin"))
        XCTAssertEqual(days.map(\.startDate), [try utc("2026-10-24T22:00:00Z"), try utc("2026-10-25T23:00:00Z")])
        XCTAssertEqual(days.map { $0.endDate.timeIntervalSince($0.startDate) / 3600 }, [25, 24])
        XCTAssertEqual(days.map(\.sum), [30, 3])

        // Hours count in absolute time: the 25-hour day has 25 hour buckets.
        let hours = try await store.statisticsCollection(
            of: .stepCount, from: try utc("2026-10-24T22:00:00Z"), to: try utc("2026-10-25T23:00:00Z"),
            anchor: try utc("2026-10-24T22:00:00Z"), interval: CalendarInterval(.hour), timeZone: try zone("Europe/Berlin"))
        XCTAssertEqual(hours.count, 25)
        XCTAssertEqual(hours.map(\.sampleCount), Array(repeating: 1, count: 24) + [2])
        XCTAssertEqual(try XCTUnwrap(hours.last?.sum), 1 + 5, accuracy: 1e-9)
    }

    func testNewYorkSpringAndAutumnDays() async throws {
        try await HealthStore(path: path).write([
            try stepSample(11, "2026-03-08T04:30:00Z", "2026-03-08T04:30:00Z"),  // 23:30 EST on the 7th
            try stepSample(13, "2026-03-08T05:30:00Z", "2026-03-08T05:30:00Z"),  // 00:30 EST on the 8th
            try stepSample(17, "2026-03-09T03:30:00Z", "2026-03-09T03:30:00Z"),  // 23:30 EDT on the 8th
            try stepSample(19, "2026-03-09T04:30:00Z", "2026-03-09T04:30:00Z"),  // 00:30 EDT on the 9th
            try stepSample(23, "2026-11-02T04:30:00Z", "2026-11-02T04:30:00Z"),  // 23:30 EST on 1 November
            try stepSample(29, "2026-11-01T04:30:00Z", "2026-11-01T04:30:00Z"),  // 00:30 EDT on 1 November
        ])
        let store = try HealthStore(path: path, access: .readOnly)
        let newYork = try zone("America/New_York")
        let anchor = try utc("2026-01-01T05:00:00Z")  // local midnight, 1 January (EST, -05:00)
        let march = try await store.statisticsCollection(
            of: .stepCount, from: try utc("2026-03-07T05:00:00Z"), to: try utc("2026-03-10T04:00:00Z"),
            anchor: anchor, interval: CalendarInterval(.day), timeZone: newYork)
        XCTAssertEqual(march.map(\.startDate), [
            try utc("2026-03-07T05:00:00Z"), try utc("2026-03-08T05:00:00Z"), try utc("2026-03-09T04:00:00Z"),
        ])
        XCTAssertEqual(march.map { $0.endDate.timeIntervalSince($0.startDate) / 3600 }, [24, 23, 24])
        XCTAssertEqual(march.map(\.sum), [11, 30, 19] as [Double?])  // 11, 13 + 17, 19

        let november = try await store.statisticsCollection(
            of: .stepCount, from: try utc("2026-11-01T04:00:00Z"), to: try utc("2026-11-02T05:00:00Z"),
            anchor: anchor, interval: CalendarInterval(.day), timeZone: newYork)
        XCTAssertEqual(november.map(\.startDate), [try utc("2026-11-01T04:00:00Z")])
        XCTAssertEqual(november.map { $0.endDate.timeIntervalSince($0.startDate) / 3600 }, [25])
        XCTAssertEqual(november.map(\.sum), [52] as [Double?])  // 23 + 29

        // Months have their calendar lengths: March 2026 in New York is 31 days less the lost hour.
        let months = try await store.statisticsCollection(
            of: .stepCount, from: try utc("2026-03-01T05:00:00Z"), to: try utc("2026-04-01T04:00:00Z"),
            anchor: anchor, interval: CalendarInterval(.month), timeZone: newYork)
        XCTAssertEqual(months.map { $0.endDate.timeIntervalSince($0.startDate) / 3600 }, [743] as [Double])  // 31 × 24 − 1
        XCTAssertEqual(months.map(\.sum), [60] as [Double?])  // 11 + 13 + 17 + 19
    }

    func testInvalidCalendarIntervalsAreRejected() async throws {
        try await HealthStore(path: path).write([try stepSample(1, "2026-03-01T00:00:00Z", "2026-03-01T00:00:00Z")])
        let store = try HealthStore(path: path, access: .readOnly)
        let utcZone = try zone("UTC")
        do {
            _ = try await store.statisticsCollection(
                of: .stepCount, from: t0, to: at(60), anchor: t0, interval: CalendarInterval(.day, count: 0),
                timeZone: utcZone)
            XCTFail("a zero interval count must be rejected")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        do {
            _ = try await store.statisticsCollection(
                of: .stepCount, from: t0, to: at(86400 * 800), anchor: t0, interval: CalendarInterval(.minute),
                timeZone: utcZone)
            XCTFail("more than a million buckets must be rejected")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
    }
}
