import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// Statistics over quantity series are the statistics of their quantities, each counted as a
/// sample: the same, to the bit, as those of the same readings stored as plain samples, and as
/// a naive computation over the readings, for random ranges and buckets (series crossing bucket
/// edges and the range's start included), overall and by device.
final class QuantitySeriesStatisticsTests: StoreTestCase {
    /// A discrete bucket computed the naive way: every reading whose start is in it. In the
    /// store's microseconds, as it dates readings and buckets.
    struct Naive: Equatable {
        var count = 0
        var average: Double?
        var minimum: Double?
        var maximum: Double?
        var mostRecent: Double?
        var mostRecentMicroseconds: Int64?

        /// Over `readings` ordered by start date.
        init(_ readings: [QuantitySample], from start: Date, to end: Date) {
            let (low, high) = (StoreTime.microseconds(start), StoreTime.microseconds(end))
            func first(atOrAfter micros: Int64) -> Int {
                var (lower, upper) = (0, readings.count)
                while lower < upper {
                    let middle = (lower + upper) / 2
                    if StoreTime.microseconds(readings[middle].startDate) < micros { lower = middle + 1 } else { upper = middle }
                }
                return lower
            }
            let inside = readings[first(atOrAfter: low)..<max(first(atOrAfter: low), first(atOrAfter: high))]
            count = inside.count
            guard !inside.isEmpty else { return }
            let values = inside.map(\.canonicalValue)
            average = values.reduce(0, +) / Double(values.count)
            minimum = values.min()
            maximum = values.max()
            let newest = inside.max { $0.startDate < $1.startDate }
            mostRecent = newest?.canonicalValue
            mostRecentMicroseconds = newest.map { StoreTime.microseconds($0.startDate) }
        }

        /// The values `options` asks for; the others nil, as a query that does not ask leaves them.
        func only(_ options: StatisticsOptions) -> Naive {
            var values = self
            if !options.contains(.average) { values.average = nil }
            if !options.contains(.minimum) { values.minimum = nil }
            if !options.contains(.maximum) { values.maximum = nil }
            if !options.contains(.mostRecent) { (values.mostRecent, values.mostRecentMicroseconds) = (nil, nil) }
            return values
        }

        init(_ statistics: QuantityStatistics) {
            count = statistics.sampleCount
            average = statistics.average
            minimum = statistics.minimum
            maximum = statistics.maximum
            mostRecent = statistics.mostRecent
            mostRecentMicroseconds = statistics.mostRecentDate.map(StoreTime.microseconds)
        }
    }

    /// The readings of ``ClassReadings`` again, each with a sync identifier of its own: every one
    /// a plain sample with its own uuid.
    func asPlainSamples(_ readings: [QuantitySample]) -> [QuantitySample] {
        readings.map { reading in
            var sample = reading
            sample.metadata.syncIdentifier = "plain-\(reading.id)"
            sample.metadata.syncVersion = 1
            return sample
        }
    }

    func testDiscreteStatisticsOfSeriesEqualThoseOfPlainSamplesAndANaiveComputation() async throws {
        let ids = makeIDs()
        let readings = try ClassReadings(seed: 15, straps: 6, seconds: 900, t0: t0, ids: ids)
        let seriesPath = path
        let plainPath = directory.appendingPathComponent("plain.sqlite").path
        let seriesStore = try HealthStore(path: seriesPath)
        try await readings.write(to: seriesStore)
        let plainStore = try HealthStore(path: plainPath)
        try await plainStore.write(asPlainSamples(readings.written).map(HealthRecord.quantity))
        XCTAssertGreaterThan(try count("quantity_series"), 60)
        XCTAssertEqual(try runProcess("/usr/bin/sqlite3", [plainPath, "SELECT count(*) FROM quantity_series"]).output, "0\n")

        var random = SeededRandom(seed: 1_500)
        let sorted = readings.written.sorted { $0.startDate < $1.startDate }
        let devices: [Device?] = Array(Set(readings.written.compactMap(\.device))) + [nil]
        let byStrap = devices.map { device in sorted.filter { $0.device == device } }
        for round in 0..<60 {
            let from = at(Double.random(in: -150...900, using: &random))
            let to = from.addingTimeInterval(Double.random(in: 0.5...700, using: &random))
            let anchor = at(Double.random(in: -60...60, using: &random))
            let interval = Duration.milliseconds([700, 7_000, 13_000, 60_000, 100_000, 400_000][round % 6])
            let label = "round \(round): \(from) … \(to), \(interval) from \(anchor)"
            // Every option alone or with another: a series' summary columns are read as they are asked for.
            let options: StatisticsOptions? = [nil, [.average], [.minimum, .maximum], [.average, .mostRecent]][round % 4]

            let series = try await seriesStore.statisticsCollection(
                of: .heartRate, from: from, to: to, anchor: anchor, interval: interval, options: options)
            let plain = try await plainStore.statisticsCollection(
                of: .heartRate, from: from, to: to, anchor: anchor, interval: interval, options: options)
            XCTAssertEqual(series, plain, label)
            XCTAssertLessThanOrEqual(try XCTUnwrap(series.first).startDate, from, label)
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(series.last).endDate, to, label)
            XCTAssertEqual(
                series.map(Naive.init),
                series.map { Naive(sorted, from: $0.startDate, to: $0.endDate).only(options ?? .discrete) }, label)

            // One statistics over the range, and by device.
            let whole = try await seriesStore.statistics(of: .heartRate, from: from, to: to)
            XCTAssertEqual(Naive(whole), Naive(sorted, from: from, to: to), label)
            let byDevice = try await seriesStore.statisticsCollectionByDevice(
                of: .heartRate, from: from, to: to, anchor: anchor, interval: interval)
            let plainByDevice = try await plainStore.statisticsCollectionByDevice(
                of: .heartRate, from: from, to: to, anchor: anchor, interval: interval)
            XCTAssertEqual(byDevice, plainByDevice, label)
            for bucket in byDevice {
                XCTAssertEqual(Naive(bucket.overall), Naive(sorted, from: bucket.overall.startDate, to: bucket.overall.endDate), label)
                for (device, own) in zip(devices, byStrap) {
                    let naive = Naive(own, from: bucket.overall.startDate, to: bucket.overall.endDate)
                    // A device's statistics name it by its identity (name, maker, model, local identifier).
                    let stored = bucket.devices.first { $0.device?.localIdentifier == device?.localIdentifier }
                    XCTAssertEqual(
                        stored.map { Naive($0.statistics) } ?? Naive([], from: from, to: to), naive,
                        "\(label), \(device?.name ?? "no device")")
                }
            }
        }
    }

    func testCumulativeSeriesSplitAcrossBucketsAsTheirQuantitiesWould() async throws {
        let ids = makeIDs()
        var random = SeededRandom(seed: 99)
        let pedometers = (0..<3).map { Device(name: "pedometer", localIdentifier: "usb-\($0)") }
        // Series of step counts written whole (from elsewhere): quantities lasting 0 … 30 s, some
        // overlapping, starting up to 200 s before t0.
        var series: [QuantitySeriesSample] = []
        for index in 0..<40 {
            var start = Double.random(in: -200...1_000, using: &random)
            let quantities = (0..<Int.random(in: 1...30, using: &random)).map { _ in
                let quantity = SeriesQuantity(
                    value: Double(Int.random(in: 0...60, using: &random)), start: at(start),
                    end: at(start + (random.chance(0.2) ? 0 : Double(Int.random(in: 1...30, using: &random)))))
                start += Double(Int.random(in: 0...20, using: &random))
                return quantity
            }
            series.append(try QuantitySeriesSample(
                id: ids.next(), type: .stepCount, unit: .count, quantities: quantities, device: pedometers[index % 3]))
        }
        let seriesStore = try HealthStore(path: path)
        try await seriesStore.write(series.map(HealthRecord.quantitySeries))
        let plainPath = directory.appendingPathComponent("plain.sqlite").path
        let plainStore = try HealthStore(path: plainPath)
        let samples = series.flatMap(\.quantitySamples)
        try await plainStore.write(samples.map(HealthRecord.quantity))

        // The naive rule: a quantity adds value × overlap / duration to a bucket, or its whole
        // value to the bucket holding its start when it lasts no time.
        func naive(_ samples: [QuantitySample], from start: Date, to end: Date) -> (sum: Double, count: Int) {
            let (low, high) = (StoreTime.microseconds(start), StoreTime.microseconds(end))
            var sum = 0.0
            var count = 0
            for sample in samples {
                let (begin, finish) = (StoreTime.microseconds(sample.startDate), StoreTime.microseconds(sample.endDate))
                if finish == begin {
                    if begin >= low, begin < high { sum += sample.quantity.value; count += 1 }
                    continue
                }
                let overlap = min(finish, high) - max(begin, low)
                if overlap > 0 {
                    sum += sample.quantity.value * Double(overlap) / Double(finish - begin)
                    count += 1
                }
            }
            return (sum, count)
        }
        for round in 0..<60 {
            let from = at(Double.random(in: -250...1_100, using: &random))
            let to = from.addingTimeInterval(Double.random(in: 1...900, using: &random))
            let anchor = at(Double.random(in: -60...60, using: &random))
            let interval = Duration.seconds([3, 17, 60, 250][round % 4])
            let label = "round \(round): \(from) … \(to), \(interval)"
            let fromSeries = try await seriesStore.statisticsCollection(of: .stepCount, from: from, to: to, anchor: anchor, interval: interval)
            let fromSamples = try await plainStore.statisticsCollection(of: .stepCount, from: from, to: to, anchor: anchor, interval: interval)
            XCTAssertEqual(fromSeries.map(\.sampleCount), fromSamples.map(\.sampleCount), label)
            for (bucket, plain) in zip(fromSeries, fromSamples) {
                let expected = naive(samples, from: bucket.startDate, to: bucket.endDate)
                XCTAssertEqual(bucket.sampleCount, expected.count, label)
                XCTAssertEqual(bucket.sum ?? 0, expected.sum, accuracy: 1e-9 * max(1, expected.sum), label)
                XCTAssertEqual(bucket.sum ?? 0, plain.sum ?? 0, accuracy: 1e-9 * max(1, expected.sum), label)
            }
            let byDevice = try await seriesStore.statisticsByDevice(of: .stepCount, from: from, to: to)
            for pedometer in pedometers {
                let expected = naive(samples.filter { $0.device == pedometer }, from: from, to: to)
                let stored = byDevice.devices.first { $0.device?.localIdentifier == pedometer.localIdentifier }
                XCTAssertEqual(stored?.statistics.sampleCount ?? 0, expected.count, label)
                XCTAssertEqual(stored?.statistics.sum ?? 0, expected.sum, accuracy: 1e-9 * max(1, expected.sum), label)
            }
        }
    }
}
