import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// Every query against numbers computed by hand (written next to each assertion).
final class QueryTests: StoreTestCase {
    var heartRates: [QuantitySample] = []
    /// A heart rate written after later ones of its strap: kept as a sample of its own.
    var late: QuantitySample!

    override func setUp() async throws {
        try await super.setUp()
        let ids = makeIDs()
        heartRates = [
            try heartRate(ids, 60, at: 10),  // minute 0
            try heartRate(ids, 80, at: 20),  // minute 0
            try heartRate(ids, 100, at: 70),  // minute 1
            try heartRate(ids, 1.5, at: 190, unit: try HealthUnit("count/s")),  // minute 3: 90 count/min
        ]
        let stepSamples = [
            try steps(ids, 90, from: -1800, to: 900),  // E: 00:30 before t0 … 00:15, 1/3 of it in hour 0 → 30
            try steps(ids, 30, from: 600, to: 1200),  // B: hour 0
            try steps(ids, 120, from: 3000, to: 4200),  // A: 00:50 … 01:10, 60 in hour 0, 60 in hour 1
            try steps(ids, 45, from: 9000, to: 9000),  // C: instant at 02:30, hour 2
            try steps(ids, 300, from: 18000, to: 19800),  // D: 05:00 … 05:30, outside the first 4 hours
        ]
        // Written out of order, in two transactions.
        let writer = try HealthStore(path: path)
        try await writer.write((stepSamples + heartRates.reversed()).map(HealthRecord.quantity))
        late = try heartRate(ids, 200, at: -5000)
        try await writer.write([.quantity(late)])  // long before: outside ranges below
    }

    /// What a query reads of ``heartRates``, written newest first: 1.5 count/s at 190 s starts
    /// a series of its unit, 100 at 70 s one in count/min; 80 and 60 come after it and start
    /// before it, late: each a sample of its own, with its own uuid.
    func storedHeartRates() throws -> [QuantitySample] {
        Array(heartRates[0...1]) + (try storedQuantities([heartRates[2]])) + (try storedQuantities([heartRates[3]]))
    }

    func testSamplesInRangeAscendingAndDescendingWithLimit() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let all = try await store.samples(of: .heartRate, from: t0, to: at(3600))
        XCTAssertEqual(all, try storedHeartRates())  // ascending by start: 10, 20, 70, 190 s
        XCTAssertEqual(all.map(\.quantity), heartRates.map(\.quantity))

        let newestTwo = try await store.samples(of: .heartRate, from: t0, limit: 2, order: .descending)
        XCTAssertEqual(newestTwo.map(\.startDate), [at(190), at(70)])
        XCTAssertEqual(newestTwo.map(\.canonicalValue), [90, 100])

        // [20 s, 190 s): the start bound is inclusive, the end bound exclusive.
        let middle = try await store.samples(of: .heartRate, from: at(20), to: at(190))
        XCTAssertEqual(middle.map(\.canonicalValue), [80, 100])

        let unbounded = try await store.samples(of: .heartRate)
        XCTAssertEqual(unbounded, [late] + (try storedHeartRates()))
        let none = try await store.samples(of: .runningSpeed)
        XCTAssertEqual(none, [])
    }

    func testMostRecentSample() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let latest = try await store.mostRecentSample(of: .heartRate)
        XCTAssertEqual(latest, try storedHeartRates().last)
        XCTAssertEqual(latest?.quantity, heartRates[3].quantity)
        let earliestRate = try await store.earliestSampleDate(of: .heartRate)
        XCTAssertEqual(earliestRate, at(-5000))
        let missing = try await store.mostRecentSample(of: .runningSpeed)
        XCTAssertNil(missing)
        let earliest = try await store.earliestSampleDate(of: .stepCount)
        XCTAssertEqual(earliest, at(-1800))
    }

    func testDiscreteStatisticsOverARange() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let stats = try await store.statistics(of: .heartRate, from: t0, to: at(240))
        XCTAssertEqual(stats.sampleCount, 4)
        XCTAssertEqual(stats.average, 82.5)  // (60 + 80 + 100 + 90) / 4
        XCTAssertEqual(stats.minimum, 60)
        XCTAssertEqual(stats.maximum, 100)
        XCTAssertEqual(stats.mostRecent, 90)
        XCTAssertEqual(stats.mostRecentDate, at(190))
        XCTAssertNil(stats.sum)
        XCTAssertEqual(stats.startDate, t0)
        XCTAssertEqual(stats.endDate, at(240))
    }

    func testOptionsComputeOnlyWhatIsAskedFor() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let average = try await store.statistics(of: .heartRate, from: t0, to: at(240), options: .average)
        XCTAssertEqual(average.sampleCount, 4)
        XCTAssertEqual(average.average, 82.5)  // (60 + 80 + 100 + 90) / 4, as with every option
        XCTAssertNil(average.minimum)
        XCTAssertNil(average.maximum)
        XCTAssertNil(average.mostRecent)
        XCTAssertNil(average.mostRecentDate)

        let minutes = try await store.statisticsCollection(
            of: .heartRate, from: t0, to: at(240), anchor: t0, interval: .seconds(60), options: [.maximum, .mostRecent])
        XCTAssertEqual(minutes.map(\.sampleCount), [2, 1, 0, 1])
        XCTAssertEqual(minutes.map(\.maximum), [80, 100, nil, 90])
        XCTAssertEqual(minutes.map(\.mostRecentDate), [at(20), at(70), nil, at(190)])
        XCTAssertEqual(minutes.map(\.average), [nil, nil, nil, nil])
        XCTAssertEqual(minutes.map(\.minimum), [nil, nil, nil, nil])

        let sum = try await store.statistics(of: .stepCount, from: t0, to: at(4 * 3600), options: .sum)
        XCTAssertEqual(sum.sum, 225)  // as without options: E 30 + B 30 + A 120 + C 45
    }

    func testOptionsOfTheOtherAggregationStyleAreRefused() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        for (type, options, named) in [
            (QuantityType.heartRate, StatisticsOptions.sum, "sum"), (.stepCount, [.sum, .average], "average"),
            (.stepCount, .mostRecent, "mostRecent"),
        ] {
            do {
                _ = try await store.statistics(of: type, from: t0, to: at(240), options: options)
                XCTFail("\(type) with \(named) was accepted")
            } catch {
                XCTAssertEqual(error.code, .invalidArgument)
                XCTAssertTrue(error.message.contains("\(type.identifier) is \(type.aggregationStyle.rawValue): \(named) does not apply"),
                              error.message)
            }
        }
        do {
            _ = try await store.statisticsCollection(
                of: .heartRate, from: t0, to: at(240), anchor: t0, interval: .seconds(60), options: [])
            XCTFail("no options was accepted")
        } catch {
            XCTAssertEqual(error.message, "no statistics asked for")
        }
    }

    func testDiscreteCollectionPerMinuteReportsEmptyMinutes() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let minutes = try await store.statisticsCollection(
            of: .heartRate, from: t0, to: at(240), anchor: t0, interval: .seconds(60))
        XCTAssertEqual(minutes.map(\.startDate), [t0, at(60), at(120), at(180)])
        XCTAssertEqual(minutes.map(\.endDate), [at(60), at(120), at(180), at(240)])
        XCTAssertEqual(minutes.map(\.sampleCount), [2, 1, 0, 1])
        XCTAssertEqual(minutes.map(\.average), [70, 100, nil, 90])  // (60 + 80) / 2 = 70
        XCTAssertEqual(minutes.map(\.minimum), [60, 100, nil, 90])
        XCTAssertEqual(minutes.map(\.maximum), [80, 100, nil, 90])
        XCTAssertEqual(minutes.map(\.mostRecent), [80, 100, nil, 90])
        XCTAssertEqual(minutes.map(\.mostRecentDate), [at(20), at(70), nil, at(190)])
        XCTAssertTrue(minutes[2].isEmpty)
    }

    func testCumulativeSumSplitsSamplesAcrossBucketEdgesInProportion() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let hours = try await store.statisticsCollection(
            of: .stepCount, from: t0, to: at(4 * 3600), anchor: t0, interval: .seconds(3600))
        XCTAssertEqual(hours.count, 4)
        // hour 0: E 30 + B 30 + A 60 = 120 (3 samples); hour 1: A 60; hour 2: C 45; hour 3: empty.
        XCTAssertEqual(hours.map(\.sum), [120, 60, 45, nil])
        XCTAssertEqual(hours.map(\.sampleCount), [3, 1, 1, 0])
        XCTAssertEqual(hours.map(\.average), [nil, nil, nil, nil])

        // One statistics over the same 4 hours: 120 + 60 + 45 = 225 from E, B, A, C.
        let total = try await store.statistics(of: .stepCount, from: t0, to: at(4 * 3600))
        XCTAssertEqual(total.sum, 225)
        XCTAssertEqual(total.sampleCount, 4)

        // Daily total: E 30 + B 30 + A 120 + C 45 + D 300 = 525.
        let days = try await store.statisticsCollection(
            of: .stepCount, from: t0, to: at(86400), anchor: t0, interval: .seconds(86400))
        XCTAssertEqual(days.map(\.sum), [525])
        XCTAssertEqual(days.map(\.sampleCount), [5])
    }

    func testBucketsAreWholeAndAlignedOnTheAnchor() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        // From 00:30 to 01:30 with hourly buckets anchored at midnight: the whole hours 0 and 1.
        let hours = try await store.statisticsCollection(
            of: .stepCount, from: at(1800), to: at(5400), anchor: t0, interval: .seconds(3600))
        XCTAssertEqual(hours.map(\.startDate), [t0, at(3600)])
        XCTAssertEqual(hours.map(\.sum), [120, 60])
        // An anchor after the range aligns backwards: anchor 01:00, range 00:30 … 00:45 → hour 0.
        let before = try await store.statisticsCollection(
            of: .stepCount, from: at(1800), to: at(2700), anchor: at(3600), interval: .seconds(3600))
        XCTAssertEqual(before.map(\.startDate), [t0])
        XCTAssertEqual(before.map(\.sum), [120])
    }

    func testEmptyRangeGivesEmptyBucketsNotNothing() async throws {
        let store = try HealthStore(path: path, access: .readOnly)
        let later = at(10 * 86400)
        let days = try await store.statisticsCollection(
            of: .heartRate, from: later, to: later.addingTimeInterval(3 * 86400), anchor: t0,
            interval: .seconds(86400))
        XCTAssertEqual(days.map(\.sampleCount), [0, 0, 0])
        XCTAssertEqual(days.map(\.startDate), [later, later.addingTimeInterval(86400), later.addingTimeInterval(2 * 86400)])
        let stats = try await store.statistics(of: .stepCount, from: later, to: later.addingTimeInterval(60))
        XCTAssertTrue(stats.isEmpty)
        XCTAssertNil(stats.sum)
    }
}
