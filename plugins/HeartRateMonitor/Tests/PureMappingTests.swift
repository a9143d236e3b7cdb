import BLEProfileKit
import BLETransport
import Foundation
import HealthModel
import HeartRateMonitor
import XCTest

final class HeartbeatSeriesBuilderTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func testBeatsAccumulateFromRRAndTheAnchorIsAGap() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 60)
        XCTAssertEqual([], builder.add(rrIntervals: [1024, 512], receivedAt: t0))
        XCTAssertEqual([], builder.add(rrIntervals: [], receivedAt: t0.addingTimeInterval(1)))
        XCTAssertEqual([], builder.add(rrIntervals: [768], receivedAt: t0.addingTimeInterval(1.2)))
        let chunk = try XCTUnwrap(builder.finishSegment())
        XCTAssertEqual(chunk.start, t0.addingTimeInterval(-1.5))
        XCTAssertEqual(chunk.beats.map(\.timeSinceSeriesStart), [0, 1, 1.5, 2.25])
        XCTAssertEqual(chunk.beats.map(\.precededByGap), [true, false, false, false])
        XCTAssertEqual(chunk.end, t0.addingTimeInterval(0.75))
    }

    func testLostContactAndNewSegmentsMarkGaps() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600)
        _ = builder.add(rrIntervals: [1024], receivedAt: t0)
        builder.markGap()
        _ = builder.add(rrIntervals: [1024], receivedAt: t0.addingTimeInterval(10))
        let chunk = try XCTUnwrap(builder.finishSegment())
        XCTAssertEqual(chunk.beats.map(\.precededByGap), [true, false, true, false])
        XCTAssertEqual(chunk.beats.map(\.timeSinceSeriesStart), [0, 1, 10, 11])
        _ = builder.add(rrIntervals: [1024], receivedAt: t0.addingTimeInterval(100))
        let next = try XCTUnwrap(builder.finishSegment())
        XCTAssertEqual(next.beats.first?.precededByGap, true)
        XCTAssertEqual(next.start, t0.addingTimeInterval(99))
    }

    func testChunksAreCutByBeatsAndContinueWithoutLosingAnInterval() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 4, maximumDuration: 600)
        XCTAssertEqual([], builder.add(rrIntervals: [1024, 1024], receivedAt: t0))
        let first = try XCTUnwrap(builder.add(rrIntervals: [1024], receivedAt: t0.addingTimeInterval(1)).first)
        XCTAssertEqual(first.beats.count, 4)
        _ = builder.add(rrIntervals: [512], receivedAt: t0.addingTimeInterval(1.5))
        let second = try XCTUnwrap(builder.finishSegment())
        // The continuation starts at the previous last beat; its first beat is a real interval.
        XCTAssertEqual(second.start, first.end)
        XCTAssertEqual(second.beats, [Heartbeat(timeSinceSeriesStart: 0.5, precededByGap: false)])
        XCTAssertNoThrow(try HeartbeatSeriesSample(
            id: SampleIDGenerator(seed: 1).next(), start: second.start, end: second.end, beats: second.beats))
    }

    /// A step back of an hour of the gateway's clock in the middle of a series: told of it, the
    /// builder moves its dates, so the beats go on without a gap, none is dropped as overlapping,
    /// and the series sits on the new clock. Not told, every beat of the next hour would overlap.
    func testAClockStepMovesTheSeriesInsteadOfDroppingBeats() throws {
        var told = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600)
        var untold = told
        for second in 0..<5 {
            _ = told.add(rrIntervals: [1024], receivedAt: t0.addingTimeInterval(Double(second)))
            _ = untold.add(rrIntervals: [1024], receivedAt: t0.addingTimeInterval(Double(second)))
        }
        told.clockStepped(by: -3600)
        for second in 5..<10 {
            let date = t0.addingTimeInterval(Double(second) - 3600)
            _ = told.add(rrIntervals: [1024], receivedAt: date)
            _ = untold.add(rrIntervals: [1024], receivedAt: date)
        }
        let chunk = try XCTUnwrap(told.finishSegment())
        XCTAssertEqual(chunk.start, t0.addingTimeInterval(-1 - 3600))
        XCTAssertEqual(chunk.beats.map(\.timeSinceSeriesStart), (0...10).map(Double.init))
        XCTAssertEqual(chunk.beats.filter(\.precededByGap).count, 1, "only the anchor")
        XCTAssertEqual(told.overlappingBeats, 0)
        XCTAssertEqual(untold.overlappingBeats, 5, "without the step, the hour back overlaps what was placed")
    }

    func testDriftFromMissedNotificationsReanchorsWithAGap() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600)
        _ = builder.add(rrIntervals: [1024], receivedAt: t0)
        // 30 s of notifications missed: accumulating would put this beat 29 s in the past.
        _ = builder.add(rrIntervals: [1024], receivedAt: t0.addingTimeInterval(30))
        let chunk = try XCTUnwrap(builder.finishSegment())
        XCTAssertEqual(chunk.beats.map(\.precededByGap), [true, false, true, false])
        XCTAssertEqual(chunk.beats.last?.timeSinceSeriesStart, 31)
    }

    /// RR intervals adding up to twice the time that passes (1 s intervals every 0.5 s): the
    /// series is pulled back to the arrival dates instead of running into the future, beats never
    /// go back in time from one chunk to the next, and the intervals whose time earlier beats
    /// already cover are dropped and counted, not stored twice.
    func testSeriesRunningAheadOfArrivalsStaysInOrder() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 50, maximumDuration: 600)
        var chunks: [HeartbeatSeriesBuilder.Chunk] = []
        for index in 0..<120 {
            let date = t0.addingTimeInterval(Double(index) * 0.5)
            chunks += builder.add(rrIntervals: [1024, 1024], receivedAt: date)
            if let pending = builder.pendingChunk {
                XCTAssertLessThanOrEqual(pending.end, date.addingTimeInterval(3), "notification \(index)")
            }
        }
        if let last = builder.finishSegment() { chunks.append(last) }
        XCTAssertGreaterThan(chunks.count, 1)
        let dates = chunks.flatMap { chunk in chunk.beats.map { chunk.start.addingTimeInterval($0.timeSinceSeriesStart) } }
        for (earlier, later) in zip(dates, dates.dropFirst()) { XCTAssertLessThan(earlier, later) }
        for (earlier, later) in zip(chunks, chunks.dropFirst()) { XCTAssertGreaterThanOrEqual(later.start, earlier.end) }
        XCTAssertLessThanOrEqual(try XCTUnwrap(dates.last), t0.addingTimeInterval(59.5 + 3))
        // Every interval is a stored beat or counted as overlapping.
        let intervals = chunks.flatMap(\.beats).filter { !$0.precededByGap }.count
        XCTAssertGreaterThan(builder.overlappingBeats, 100)
        XCTAssertEqual(intervals + builder.overlappingBeats, 240)
    }

    /// A new connection's builder starts after the last beat of the one before: a first
    /// notification whose RR intervals reach back before that beat loses the overlapping ones.
    func testANewConnectionStartsAfterThePreviousLastBeat() throws {
        var first = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600)
        _ = first.add(rrIntervals: [1024, 1024], receivedAt: t0)
        let previous = try XCTUnwrap(first.finishSegment())
        let lastBeat = try XCTUnwrap(first.lastBeat)
        XCTAssertEqual(previous.end, lastBeat)
        // Reconnected 1.5 s later; the strap reports the three beats of the last 3 s.
        var second = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600, notBefore: lastBeat)
        _ = second.add(rrIntervals: [1024, 1024, 1024], receivedAt: t0.addingTimeInterval(1.5))
        let chunk = try XCTUnwrap(second.finishSegment())
        XCTAssertGreaterThan(chunk.start, lastBeat)
        XCTAssertEqual(chunk.beats.map(\.precededByGap), [true, false])
        XCTAssertEqual(chunk.end, t0.addingTimeInterval(1.5))
        XCTAssertEqual(second.overlappingBeats, 2)
    }

    func testTimeCutsChunks() {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 1000, maximumDuration: 5)
        var chunks = 0
        for second in 0..<20 {
            chunks += builder.add(rrIntervals: [1024], receivedAt: t0.addingTimeInterval(Double(second))).count
        }
        // At 5, 10 and 15 s, the edges of the clock's 5 s slots (t0 is on one), not 5 s after
        // each chunk's start: every strap's chunks end together.
        XCTAssertEqual(chunks, 3)
    }
}

final class RunningAggregatorTests: XCTestCase {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func measurement(distance: UInt32?, cadence: Int = 180) -> RSCMeasurement {
        RSCMeasurement(speedRaw: 768, instantaneousCadence: cadence, strideLengthRaw: 100, totalDistanceRaw: distance, isRunning: true)
    }

    func testDistanceDeltasAndEstimatedStepsPerWindow() throws {
        var aggregator = RunningAggregator(windowSeconds: 10)
        var windows: [RunningAggregator.Window] = []
        for second in 0...10 {
            let output = aggregator.add(measurement(distance: UInt32(1000 + 30 * second)), at: t0.addingTimeInterval(Double(second)))
            XCTAssertEqual(output.speed, 3)
            XCTAssertEqual(output.strideLength, 1)
            if let window = output.window { windows.append(window) }
        }
        let window = try XCTUnwrap(windows.first)
        XCTAssertEqual(windows.count, 1)
        XCTAssertEqual(window.distance, 30, accuracy: 1e-9)
        XCTAssertEqual(window.steps, 30)  // 180/min for 10 s
        XCTAssertEqual(window.start, t0)
        XCTAssertEqual(window.end, t0.addingTimeInterval(10))
    }

    func testCounterWrapAndReset() {
        var aggregator = RunningAggregator(windowSeconds: 100)
        _ = aggregator.add(measurement(distance: UInt32.max - 9), at: t0)
        // Wraps from 2^32-10 to 20: 30 units = 3 m.
        let wrapped = aggregator.add(measurement(distance: 20), at: t0.addingTimeInterval(1))
        XCTAssertFalse(wrapped.counterReset)
        // A jump back to 0 is a reset: not 429 million metres.
        let reset = aggregator.add(measurement(distance: 0), at: t0.addingTimeInterval(2))
        XCTAssertTrue(reset.counterReset)
        _ = aggregator.add(measurement(distance: 40), at: t0.addingTimeInterval(3))
        let window = aggregator.finishSegment()
        XCTAssertEqual(window?.distance ?? 0, 7, accuracy: 1e-9)
    }

    func testStalledLinkDoesNotInventSteps() {
        var aggregator = RunningAggregator(windowSeconds: 1000)
        _ = aggregator.add(measurement(distance: nil, cadence: 120), at: t0)
        _ = aggregator.add(measurement(distance: nil, cadence: 120), at: t0.addingTimeInterval(600))
        XCTAssertEqual(aggregator.finishSegment()?.steps, 10)  // capped at 5 s × 2 steps/s
    }
}

final class DeviceFilterTests: XCTestCase {
    func testAnyRequiresAnAdvertisedService() {
        let filter = DeviceFilter(services: HeartRateSource.services, selection: .any)
        XCTAssertTrue(filter.matches(DiscoveredPeripheral(address: "AA:BB:CC:DD:EE:01", serviceUUIDs: [.heartRateService])))
        XCTAssertTrue(filter.matches(DiscoveredPeripheral(address: "AA:BB:CC:DD:EE:02", serviceUUIDs: [.runningSpeedAndCadenceService])))
        // Another client's discovery filter let a keyboard through.
        XCTAssertFalse(filter.matches(DiscoveredPeripheral(address: "AA:BB:CC:DD:EE:03", name: "Keyboard", serviceUUIDs: [BluetoothUUID(0x1812)])))
    }

    func testAddressAndNamePatterns() {
        let filter = DeviceFilter(services: HeartRateSource.services, selection: .matching([.address("AA:BB:CC:DD:EE:01"), .name("Polar H10 *")]))
        XCTAssertTrue(filter.matches(DiscoveredPeripheral(address: "aa:bb:cc:dd:ee:01")))
        XCTAssertTrue(filter.matches(DiscoveredPeripheral(address: "11:22:33:44:55:66", name: "Polar H10 A1B2", serviceUUIDs: [.heartRateService])))
        XCTAssertFalse(filter.matches(DiscoveredPeripheral(address: "11:22:33:44:55:66", name: "Polar H10 A1B2", serviceUUIDs: [])))
        XCTAssertFalse(filter.matches(DiscoveredPeripheral(address: "11:22:33:44:55:67", name: "Wahoo TICKR", serviceUUIDs: [.heartRateService])))
    }

    func testGlob() {
        XCTAssertTrue(DeviceFilter.glob("*", matches: ""))
        XCTAssertTrue(DeviceFilter.glob("H?0*x", matches: "H10 abcx"))
        XCTAssertTrue(DeviceFilter.glob("*TICKR*", matches: "Wahoo TICKR X"))
        XCTAssertFalse(DeviceFilter.glob("TICKR", matches: "TICKR X"))
        XCTAssertFalse(DeviceFilter.glob("a*b", matches: "acbd"))
    }
}
