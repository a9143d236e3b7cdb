import FoundationEssentials
import HealthModel
import XCTest

/// The builder's anchors and gaps: the drift rule, a `notBefore` date after a restart, the
/// 1/1024 s grid, and chunks cut at the clock's slots.
final class HeartbeatSeriesBuilderTests: XCTestCase {
    let stored = Date(timeIntervalSince1970: 1_800_000_000)

    func testIntervalsThatCannotReachTheArrivalReanchorWithAGap() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600)
        _ = builder.add(rrIntervals: [1024], receivedAt: stored)
        // 20 s passed for one interval of 1 s: beats were missed, the drift rule re-anchors.
        _ = builder.add(rrIntervals: [1024], receivedAt: stored.addingTimeInterval(20))
        let chunk = try XCTUnwrap(builder.pendingChunk)
        XCTAssertEqual(chunk.beats.map(\.precededByGap), [true, false, true, false])
        XCTAssertEqual(builder.lastBeat, stored.addingTimeInterval(20))
    }

    func testANotBeforeBuilderNeverPlacesABeatAtOrBeforeIt() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600, notBefore: stored)
        _ = builder.add(rrIntervals: [1024, 1024], receivedAt: stored.addingTimeInterval(1.5))
        let chunk = try XCTUnwrap(builder.pendingChunk)
        XCTAssertGreaterThan(chunk.start, stored)
        XCTAssertEqual(builder.overlappingBeats, 1)
    }

    func testAnAnchorAfterAGapFallsOnTheGridOfTheSeriesStart() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600)
        _ = builder.add(rrIntervals: [1024], receivedAt: stored.addingTimeInterval(1))
        // Missed notifications: re-anchored (the anchor beat, then one per interval) at an arrival
        // 0.123 456 s off the grid.
        builder.markGap()
        let arrival = stored.addingTimeInterval(30.123_456)
        _ = builder.add(rrIntervals: [800, 790, 810], receivedAt: arrival)
        _ = builder.add(rrIntervals: [805], receivedAt: arrival.addingTimeInterval(0.8))
        let chunk = try XCTUnwrap(builder.pendingChunk)
        let offsets = chunk.beats.map(\.timeSinceSeriesStart)
        XCTAssertEqual(chunk.beats.map(\.precededByGap), [true, false, true, false, false, false, false])
        for offset in offsets { XCTAssertEqual((offset * 1024).rounded(), offset * 1024, "\(offset) is off the 1/1024 s grid") }
        // The anchor moved up onto the grid, by less than a tick, so the notification's last beat
        // is at its arrival or less than a tick after it
        let lastOfNotification = chunk.start.addingTimeInterval(offsets[5])
        // (a date's own rounding, about 0.1 µs this far from 2001, allowed for)
        XCTAssertGreaterThan(lastOfNotification.timeIntervalSince(arrival), -1e-6)
        XCTAssertLessThan(lastOfNotification.timeIntervalSince(arrival), 1.0 / 1024)
        XCTAssertEqual(offsets[6] - offsets[5], 805.0 / 1024)
    }

    func testTwoStrapsChunksEndAtTheSameEdgeOfTheClocksSlotsAndAContinuingChunkIsNotCutAgain() throws {
        // `stored` is on a 60 s edge; the straps start 7 s and 41 s after it.
        var cuts: [[Date]] = []
        for offset in [7.0, 41.0] {
            var builder = HeartbeatSeriesBuilder(maximumBeats: 1000, maximumDuration: 60)
            var chunks: [Date] = []
            for second in 0..<150 {
                let arrival = stored.addingTimeInterval(offset + Double(second))
                chunks += builder.add(rrIntervals: [1024], receivedAt: arrival).map(\.end)
            }
            cuts.append(chunks)
        }
        // Each cut at the first arrival in the next slot: its last beat is that arrival's.
        XCTAssertEqual(cuts[0].map { $0.timeIntervalSince(stored) }, [60, 120])
        XCTAssertEqual(cuts[1].map { $0.timeIntervalSince(stored) }, [60, 120, 180])
    }
}
