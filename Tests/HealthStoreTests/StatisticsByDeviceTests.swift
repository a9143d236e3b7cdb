import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// Statistics separated by device, against values worked out by hand next to each assertion.
final class StatisticsByDeviceTests: StoreTestCase {
    /// The strap as the statistics report it: the identifying fields, without the firmware version.
    let strapIdentity = Device(name: "Polar H10", manufacturer: "Polar", model: "H10", localIdentifier: "AA:BB:CC:DD:EE:FF")
    let tickr = Device(name: "TICKR", manufacturer: "Wahoo", model: "TICKR", localIdentifier: "11:22:33:44:55:66")
    let pedometerA = Device(name: "pedometer", localIdentifier: "usb-1")
    let pedometerB = Device(name: "pedometer", localIdentifier: "usb-2")

    func stepSample(_ ids: SampleIDGenerator, _ count: Double, from start: Double, to end: Double, device: Device) throws
        -> HealthRecord
    {
        .quantity(try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(count, .count), start: at(start), end: at(end),
            device: device))
    }

    func writeHeartRates() async throws {
        let ids = makeIDs()
        var updatedStrap = strap
        updatedStrap.firmwareVersion = "3.2"  // the same strap after a firmware update: the same device
        try await HealthStore(path: path).write([
            .quantity(try heartRate(ids, 60, at: 10)),
            .quantity(try heartRate(ids, 100, at: 50, device: tickr)),
            .quantity(try heartRate(ids, 70, at: 100, device: updatedStrap)),
            .quantity(try heartRate(ids, 110, at: 200, device: tickr)),
            .quantity(try heartRate(ids, 120, at: 300, device: tickr)),
            .quantity(try heartRate(ids, 80, at: 3000, device: nil)),
            .quantity(try heartRate(ids, 90, at: 4000, device: tickr)),  // hour 1 has the TICKR only
        ])
    }

    /// Checks the count, average, extremes and most recent value of `statistics`, one assertion
    /// each, so a failure names the figure.
    func assertFigures(
        _ statistics: QuantityStatistics, count: Int, average: Double, minimum: Double, maximum: Double,
        mostRecent: Double, at mostRecentDate: Date, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(statistics.sampleCount, count, file: file, line: line)
        XCTAssertEqual(statistics.average, average, file: file, line: line)
        XCTAssertEqual(statistics.minimum, minimum, file: file, line: line)
        XCTAssertEqual(statistics.maximum, maximum, file: file, line: line)
        XCTAssertEqual(statistics.mostRecent, mostRecent, file: file, line: line)
        XCTAssertEqual(statistics.mostRecentDate, mostRecentDate, file: file, line: line)
    }

    func testDiscreteHoursPerDeviceAndOverall() async throws {
        try await writeHeartRates()
        let store = try HealthStore(path: path, access: .readOnly)
        let hours = try await store.statisticsCollectionByDevice(
            of: .heartRate, from: t0, to: at(3 * 3600), anchor: t0, interval: .seconds(3600))
        XCTAssertEqual(hours.count, 3)

        // Hour 0, overall: 60, 100, 70, 110, 120, 80; average 540 / 6 = 90 (the devices' averages
        // 65, 110 and 80 would average 85), min 60, max 120, the most recent 80 at 3000 s.
        let first = hours[0]
        assertFigures(first.overall, count: 6, average: 90, minimum: 60, maximum: 120, mostRecent: 80, at: at(3000))
        // Devices by name, the samples without a device last.
        XCTAssertEqual(first.devices.map(\.device), [strapIdentity, tickr, nil])
        let polar = try XCTUnwrap(first.statistics(for: strap))  // firmware 3.1 and 3.2 together
        // Average (60 + 70) / 2.
        assertFigures(polar, count: 2, average: 65, minimum: 60, maximum: 70, mostRecent: 70, at: at(100))
        let wahoo = try XCTUnwrap(first.statistics(for: tickr))
        // Average (100 + 110 + 120) / 3.
        assertFigures(wahoo, count: 3, average: 110, minimum: 100, maximum: 120, mostRecent: 120, at: at(300))
        let unknown = try XCTUnwrap(first.statistics(for: nil))
        XCTAssertEqual(unknown.sampleCount, 1)
        XCTAssertEqual(unknown.average, 80)
        XCTAssertEqual(wahoo.startDate, t0)
        XCTAssertEqual(wahoo.endDate, at(3600))

        // Hour 1: the TICKR alone; overall and device are the one sample of 90.
        XCTAssertEqual(hours[1].devices.map(\.device), [tickr])
        XCTAssertEqual(hours[1].overall.sampleCount, 1)
        XCTAssertEqual(hours[1].overall.average, 90)
        XCTAssertEqual(hours[1].devices.first?.statistics.average, 90)
        XCTAssertEqual(hours[1].devices.first?.statistics.mostRecentDate, at(4000))
        XCTAssertNil(hours[1].statistics(for: strap))

        // Hour 2: empty, reported, no devices.
        XCTAssertEqual(hours[2].overall.sampleCount, 0)
        XCTAssertNil(hours[2].overall.average)
        XCTAssertEqual(hours[2].devices, [])

        // The overall values are the unseparated statistics.
        let plain = try await store.statisticsCollection(
            of: .heartRate, from: t0, to: at(3 * 3600), anchor: t0, interval: .seconds(3600))
        XCTAssertEqual(hours.map(\.overall), plain)
    }

    func testCumulativeSumsAddUpWithSplitSamples() async throws {
        let ids = makeIDs()
        try await HealthStore(path: path).write([
            try stepSample(ids, 120, from: 3000, to: 4200, device: pedometerA),  // 60 in hour 0, 60 in hour 1
            try stepSample(ids, 30, from: 1800, to: 1800, device: pedometerB),  // no duration: 30 in hour 0
            try stepSample(ids, 90, from: 6600, to: 7500, device: pedometerB),  // 600 s → 60 in hour 1, 300 s → 30 in hour 2
        ])
        let store = try HealthStore(path: path, access: .readOnly)
        let hours = try await store.statisticsCollectionByDevice(
            of: .stepCount, from: t0, to: at(4 * 3600), anchor: t0, interval: .seconds(3600))
        XCTAssertEqual(hours.map(\.overall.sum), [90, 120, 30, nil])
        XCTAssertEqual(hours.map(\.overall.sampleCount), [2, 2, 1, 0])
        XCTAssertEqual(hours.map { $0.devices.map(\.device) }, [[pedometerA, pedometerB], [pedometerA, pedometerB], [pedometerB], []])
        XCTAssertEqual(try XCTUnwrap(hours[0].statistics(for: pedometerA)?.sum), 60, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(hours[0].statistics(for: pedometerB)?.sum), 30, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(hours[1].statistics(for: pedometerA)?.sum), 60, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(hours[1].statistics(for: pedometerB)?.sum), 60, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(hours[2].statistics(for: pedometerB)?.sum), 30, accuracy: 1e-9)
        XCTAssertEqual(hours[2].statistics(for: pedometerB)?.sampleCount, 1)
        for hour in hours where !hour.devices.isEmpty {
            let total = hour.devices.reduce(0) { $0 + ($1.statistics.sum ?? 0) }
            XCTAssertEqual(total, try XCTUnwrap(hour.overall.sum), accuracy: 1e-9)
        }

        // One statistics over the whole range: 120 for A, 120 for B, 240 overall.
        let whole = try await store.statisticsByDevice(of: .stepCount, from: t0, to: at(4 * 3600))
        XCTAssertEqual(whole.overall.sum, 240)
        XCTAssertEqual(whole.devices.map(\.statistics.sum), [120, 120])
        XCTAssertEqual(whole.devices.map(\.statistics.sampleCount), [1, 2])
    }

    func testCalendarDaysAndFilters() async throws {
        try await writeHeartRates()
        let store = try HealthStore(path: path, access: .readOnly)
        // Berlin is at +01:00 in January: 16 January runs 15 Jan 23:00 … 16 Jan 23:00 UTC and holds every sample.
        let berlin = try XCTUnwrap(TimeZone(identifier: "Europe/Berlin"))
        let days = try await store.statisticsCollectionByDevice(
            of: .heartRate, from: at(-3600), to: at(23 * 3600), anchor: at(-3600), interval: CalendarInterval(.day),
            timeZone: berlin)
        XCTAssertEqual(days.count, 1)
        XCTAssertEqual(days[0].overall.sampleCount, 7)
        XCTAssertEqual(days[0].overall.average, 630.0 / 7)  // 60 + 100 + 70 + 110 + 120 + 80 + 90
        XCTAssertEqual(days[0].statistics(for: tickr)?.average, 105)  // (100 + 110 + 120 + 90) / 4
        XCTAssertEqual(days[0].statistics(for: tickr)?.mostRecent, 90)

        // A filter narrows both the overall values and the devices.
        let wahooOnly = try await store.statisticsByDevice(
            of: .heartRate, from: t0, to: at(7200), filter: SampleFilter(manufacturer: "Wahoo"))
        XCTAssertEqual(wahooOnly.overall.sampleCount, 4)
        XCTAssertEqual(wahooOnly.devices.map(\.device), [tickr])

        do {
            _ = try await store.statisticsByDevice(of: .heartRate, from: t0, to: t0)
            XCTFail("an empty range must be refused")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
        }
    }
}
