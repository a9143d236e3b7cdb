import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

/// What readers see of quantity series: each quantity as a sample of its own, merged with the
/// plain samples of its type, in the sample queries, the short reads, the change log, deletions
/// and a workout's read-back; against what the change log says the store holds.
final class QuantitySeriesQueryTests: StoreTestCase {
    func testSampleQueriesWithLimitsInEitherOrderEqualSortingEverything() async throws {
        let ids = makeIDs()
        // A dozen straps and readings without a device over 10 minutes: well over a hundred
        // series overlapping in time, and the samples of late and synced readings among them.
        let readings = try ClassReadings(seed: 57, straps: 12, seconds: 600, t0: t0, ids: ids)
        let store = try HealthStore(path: path)
        try await readings.write(to: store)
        let everything = try await store.everySample(of: .heartRate)
        XCTAssertEqual(everything.count, readings.written.count)
        XCTAssertGreaterThan(try count("quantity_series"), 130)
        XCTAssertGreaterThan(try count("samples"), 50)

        var random = SeededRandom(seed: 5)
        let reader = try HealthStore(path: path, access: .readOnly)
        for round in 0..<40 {
            let from: Date? = round % 5 == 0 ? nil : at(Double.random(in: -120...650, using: &random))
            let to: Date? = round % 7 == 0 ? nil : (from ?? t0).addingTimeInterval(Double.random(in: 1...400, using: &random))
            let limit: Int? = round % 6 == 0 ? nil : [1, 2, 7, 64, 65, 300, 5000][round % 7]
            let inRange = everything.filter { sample in
                (from.map { sample.startDate >= $0 } ?? true) && (to.map { sample.startDate < $0 } ?? true)
            }
            for order in SampleOrder.allCases {
                let sorted = order == .ascending ? inRange : inRange.reversed()
                let expected = limit.map { Array(sorted.prefix($0)) } ?? sorted
                let found = try await reader.samples(of: .heartRate, from: from, to: to, limit: limit, order: order)
                XCTAssertEqual(found, expected, "round \(round): \(String(describing: from)) … \(String(describing: to)), limit \(String(describing: limit)), \(order)")
            }
        }
        // One device, newest first, a page at a time.
        let strap = ClassReadings.straps[3]
        let own = everything.filter { $0.device == strap }
        let newest = try await reader.samples(
            of: .heartRate, limit: 10, order: .descending, filter: SampleFilter(localIdentifier: strap.localIdentifier))
        XCTAssertEqual(newest, Array(own.reversed().prefix(10)))
        let byMaker = try await reader.samples(of: .heartRate, from: at(100), to: at(200), filter: SampleFilter(manufacturer: "Garmin"))
        XCTAssertEqual(byMaker, everything.filter { $0.device?.manufacturer == "Garmin" && $0.startDate >= at(100) && $0.startDate < at(200) })

        // The short reads agree.
        let mostRecent = try await reader.mostRecentSample(of: .heartRate)
        XCTAssertEqual(mostRecent, everything.last)
        let earliest = try await reader.earliestSampleDate(of: .heartRate)
        XCTAssertEqual(earliest, everything.first?.startDate)
    }

    func testTheMostRecentSampleIsTheLatestQuantityOrSample() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        let series = try (0..<5).map { try heartRate(ids, 70 + Double($0), at: Double($0)) }
        try await store.write(series.map(HealthRecord.quantity))
        let reader = try HealthStore(path: path, access: .readOnly)
        let fromSeries = try await reader.mostRecentSample(of: .heartRate)
        XCTAssertEqual(fromSeries, try storedQuantities(series).last)
        // A late reading before the series: a sample, not the most recent, but the earliest.
        let early = try heartRate(ids, 99, at: -50)
        try await store.write([.quantity(early)])
        let still = try await reader.mostRecentSample(of: .heartRate)
        XCTAssertEqual(still, try storedQuantities(series).last)
        let earliest = try await reader.earliestSampleDate(of: .heartRate)
        XCTAssertEqual(earliest, at(-50))
        // A synced reading after the series: a sample, the most recent.
        var metadata = Metadata()
        metadata.syncIdentifier = "watch-9"
        let synced = try heartRate(ids, 88, at: 30, metadata: metadata)
        try await store.write([.quantity(synced)])
        let latest = try await reader.mostRecentSample(of: .heartRate)
        XCTAssertEqual(latest, synced)
        // Another strap's series reaching past it.
        let other = try (0..<3).map {
            try heartRate(ids, 60, at: 28.5 + Double($0), device: Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03"))
        }
        try await store.write(other.map(HealthRecord.quantity))
        let newest = try await reader.mostRecentSample(of: .heartRate)
        XCTAssertEqual(newest, try storedQuantities(other).last)
    }

    func testChangesWithTypeFiltersAndLimitsPageThroughSamplesSeriesAndTombstonesInAnchorOrder() async throws {
        let ids = makeIDs()
        let store = try HealthStore(path: path)
        var kept: [SampleID] = []
        for minute in 0..<4 {
            // A minute of heart rate over 3 transactions (the series run 0 … 60, 61 … 121,
            // 122 … 182 and 183 … 239 s: 60 s from the first start is still in), steps, a late
            // heart rate.
            for third in 0..<3 {
                let start = Double(minute * 60 + third * 20)
                let rates = try (0..<20).map { try heartRate(ids, 70, at: start + Double($0)) }
                try await store.write(rates.map(HealthRecord.quantity) + [.quantity(try steps(ids, 10, from: start, to: start + 20))])
            }
            let late = try heartRate(ids, 80, at: Double(minute * 60) + 0.5)
            try await store.write([.quantity(late)])
            kept.append(late.id)
        }
        // Delete the second minute's series and one late sample.
        let series = try await store.changes(since: 0, type: .quantity(.heartRate)).added.filter { $0.kind == .quantitySeries }
        XCTAssertEqual(series.count, 4)
        try await store.delete(.ids([series[1].id, kept[2]]))

        let reader = try HealthStore(path: path, access: .readOnly)
        for type in [ChangeType.quantity(.heartRate), .quantity(.stepCount), nil] {
            let whole = try await reader.changes(since: 0, type: type)
            XCTAssertFalse(whole.hasMore)
            for limit in 1...5 {
                var anchor: Int64 = 0
                var added: [HealthRecord] = []
                var addedAnchors: [Int64] = []
                var deleted: [StoreChanges.Deletion] = []
                while true {
                    let page = try await reader.changes(since: anchor, type: type, limit: limit)
                    XCTAssertLessThanOrEqual(page.added.count + page.deleted.count, limit)
                    added += page.added
                    addedAnchors += page.addedAnchors
                    deleted += page.deleted
                    anchor = page.anchor
                    if !page.hasMore { break }
                }
                XCTAssertEqual(added, whole.added, "\(String(describing: type)), limit \(limit)")
                XCTAssertEqual(addedAnchors, whole.addedAnchors)
                XCTAssertEqual(deleted, whole.deleted)
                XCTAssertEqual(anchor, whole.anchor)
            }
            switch type {
            case .quantity(.heartRate):
                // Three series left (their latest versions), the late samples but one, two tombstones.
                XCTAssertEqual(whole.added.filter { $0.kind == .quantitySeries }.count, 3)
                XCTAssertEqual(Set(whole.added.filter { $0.kind == .quantity }.map(\.id)), Set(kept).subtracting([kept[2]]))
                XCTAssertEqual(Set(whole.deleted.map(\.kind)), [.quantity, .quantitySeries])
                XCTAssertTrue(whole.added.allSatisfy { $0.typeIdentifier == "heartRate" })
            case .quantity(.stepCount):
                XCTAssertEqual(whole.added.count, 12)
                XCTAssertEqual(whole.deleted, [])
            default:
                XCTAssertEqual(whole.added.count, 3 + 3 + 12)
                XCTAssertEqual(whole.addedAnchors, whole.addedAnchors.sorted())
            }
        }
    }

    func testDeletionTakesAWholeSeriesAndRefusesAQuantitysID() async throws {
        let ids = makeIDs()
        let other = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")
        let mine = try (0..<130).map { try heartRate(ids, 70, at: Double($0)) }
        let theirs = try (0..<130).map { try heartRate(ids, 90, at: Double($0), device: other) }
        let store = try HealthStore(path: path)
        try await store.write(zip(mine, theirs).flatMap { [HealthRecord.quantity($0), .quantity($1)] })
        // Each strap: 0 … 60, 61 … 121, 122 … 129.
        XCTAssertEqual(try count("quantity_series"), 6)

        // A quantity's id is not an object's: refused, with the way to the series.
        let quantity = try await store.samples(of: .heartRate, from: at(70), to: at(71), filter: SampleFilter(deviceName: "Polar H10"))
        let derived = try XCTUnwrap(quantity.first)
        do {
            _ = try await store.delete(.ids([derived.id]))
            XCTFail("deleted a quantity by its derived id")
        } catch {
            XCTAssertEqual(error.code, .invalidArgument)
            XCTAssertTrue(error.message.contains("healthgate.series"), error.message)
        }
        // By the series' uuid (what `healthgate.series` names): the whole minute.
        guard case .string(let seriesID)? = derived.metadata[.series], let uuid = SampleID(string: seriesID) else {
            return XCTFail("no series named in \(derived.metadata)")
        }
        XCTAssertEqual(uuid, mine[61].id)
        let byID = try await store.delete(.ids([uuid]))
        XCTAssertEqual(byID.map(\.id), [mine[61].id])
        XCTAssertEqual(byID.map(\.kind), [.quantitySeries])
        let left = try await store.samples(of: .heartRate, filter: SampleFilter(deviceName: "Polar H10"))
        XCTAssertEqual(left, try storedQuantities(Array(mine[0...60])) + storedQuantities(Array(mine[122...])))

        // By device and range: the series that start in it, whole (the first starts before).
        let byDevice = try await store.delete(.device("C0:FF:EE:00:00:03", from: at(30), to: at(125)))
        XCTAssertEqual(Set(byDevice.map(\.id)), [theirs[61].id, theirs[122].id])
        let theirsLeft = try await store.samples(of: .heartRate, filter: SampleFilter(deviceName: "TICKR"))
        XCTAssertEqual(theirsLeft, try storedQuantities(Array(theirs[0...60])))
        // What a follower publishing per device asks after a deletion: something is still there.
        let stillHeld = try await store.holdsRecords(device: "C0:FF:EE:00:00:03", type: "heartRate")
        XCTAssertTrue(stillHeld)

        // By type and range, with a sample of the type among them.
        var metadata = Metadata()
        metadata.syncIdentifier = "watch-1"
        let synced = try heartRate(ids, 100, at: 10, metadata: metadata)
        try await store.write([.quantity(synced)])
        let byType = try await store.delete(.type(.quantity(.heartRate), from: at(0), to: at(130)))
        XCTAssertEqual(Set(byType.map(\.id)), [mine[0].id, mine[122].id, theirs[0].id, synced.id])
        XCTAssertEqual(Set(byType.map(\.kind)), [.quantity, .quantitySeries])
        let none = try await store.samples(of: .heartRate)
        XCTAssertEqual(none, [])
        let nothingHeld = try await store.holdsRecords(device: "C0:FF:EE:00:00:03", type: "heartRate")
        XCTAssertFalse(nothingHeld)
        let deletions = try await store.changes(since: 0).deleted
        XCTAssertEqual(deletions.count, 1 + 2 + 4)
        XCTAssertEqual(Set(deletions.filter { $0.kind == .quantitySeries }.map(\.device)), ["AA:BB:CC:DD:EE:FF", "C0:FF:EE:00:00:03"])
    }

    func testAWorkoutReadsTheQuantitiesOfItsSeriesByReferenceAndKeepsItsCurves() async throws {
        let ids = makeIDs()
        let bike = Device(name: "KICKR", localIdentifier: "D0:0D:00:00:00:01")
        let other = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")
        // 0 … 119 s: the strap's heart rate, the bike's power, another strap's heart rate.
        let rates = try (0..<120).map { try heartRate(ids, Double(100 + $0 / 10), at: Double($0)) }
        let power = try (0..<120).map {
            try QuantitySample(
                id: ids.next(), type: .cyclingPower, quantity: Quantity(Double(200 + $0), .watt), start: at(Double($0)),
                end: at(Double($0)), device: bike)
        }
        let others = try (0..<120).map { try heartRate(ids, 150, at: Double($0), device: other) }
        let store = try HealthStore(path: path)
        var metadata = Metadata()
        metadata[.workoutDevices] = .string("AA:BB:CC:DD:EE:FF,D0:0D:00:00:00:01")
        // Paused from 40 to 60 s.
        let workout = Workout(
            id: ids.next(), activityType: .cycling, startDate: at(0), endDate: at(100), duration: 80,
            events: [WorkoutEvent(type: .pause, startDate: at(40)), WorkoutEvent(type: .resume, startDate: at(60))],
            statistics: [
                QuantityStatistics(type: .heartRate, startDate: at(0), endDate: at(100), sampleCount: 82),
                QuantityStatistics(type: .cyclingPower, startDate: at(0), endDate: at(100), sampleCount: 82),
            ],
            metadata: metadata)
        // The readings come in batches; the workout with the last of its time.
        for start in stride(from: 0, to: 100, by: 25) {
            let batch = (start..<(start + 25)).flatMap { [HealthRecord.quantity(rates[$0]), .quantity(power[$0]), .quantity(others[$0])] }
            try await store.write(batch + (start == 75 ? [.workout(workout)] : []))
        }
        try await store.write((100..<120).flatMap { [HealthRecord.quantity(rates[$0]), .quantity(power[$0])] })

        let found = try await store.workout(id: workout.id)
        let stored = try XCTUnwrap(found)
        let (pause, resume, end) = (at(40), at(60), at(100))
        let running = { (sample: QuantitySample) in sample.endDate <= pause || (sample.endDate >= resume && sample.endDate <= end) }
        let expected = (try storedQuantities(Array(rates[0...60])) + storedQuantities(Array(rates[61...119]))
            + storedQuantities(Array(power[0...60])) + storedQuantities(Array(power[61...119]))).filter(running)
        XCTAssertEqual(stored.samples, expected.sorted { ($0.startDate, $0.id) < ($1.startDate, $1.id) })
        XCTAssertEqual(stored.samples.count, 2 * 82)
        // Curves of 5 s from the start, written with the workout from what the store held then
        // (the readings up to 99 s), in the canonical units; nothing of the pause.
        XCTAssertEqual(stored.curves.map(\.type), [.cyclingPower, .heartRate])
        let heart = try XCTUnwrap(stored.curves.last)
        // Steps 0 … 8 (the last holds the reading at 40 s alone), then 12 … 19 from 60 s.
        XCTAssertEqual(heart.points.count, 9 + 8)
        XCTAssertEqual(heart.points.first?.value, 100)  // 0 … 4 s
        XCTAssertEqual(heart.points.first?.startDate, at(0))
        XCTAssertEqual(heart.points.first?.endDate, at(5))
        XCTAssertEqual(heart.points[7].value, 103)  // 35 … 39 s
        XCTAssertEqual(heart.points[8].value, 104)  // 40 s
        XCTAssertEqual(heart.points[9].startDate, at(60))
        XCTAssertEqual(heart.points.last?.value, 109)  // 95 … 99 s
        XCTAssertEqual(heart.points.last?.startDate, at(95))
        let watts = try XCTUnwrap(stored.curves.first)
        // The mean of 200 + s over each step's 5 s: 202 + 5 k, and 240 for the reading at 40 s.
        let steps: [Double] = Array(0..<8).map(Double.init) + Array(12..<20).map(Double.init)
        let means: [Double] = steps.map { 202 + 5 * $0 }
        XCTAssertEqual(watts.points.map(\.value), Array(means[0..<8]) + [240] + Array(means[8...]))
    }
}
