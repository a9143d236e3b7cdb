import FoundationEssentials
import HealthModel
import XCTest

/// The builder's continuation after a restart: a segment whose beats up to a date are stored
/// continues after that beat, without placing it again.
final class HeartbeatSeriesBuilderTests: XCTestCase {
    let stored = Date(timeIntervalSince1970: 1_800_000_000)

    func testAContinuingBuilderPlacesTheNextBeatAnIntervalAfterTheStoredOne() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600, continuingAfter: stored)
        // Received 0.3 s later than the interval says: the beat is placed by the interval.
        XCTAssertEqual(builder.add(rrIntervals: [1024], receivedAt: stored.addingTimeInterval(1.3)), [])
        XCTAssertEqual(builder.add(rrIntervals: [512], receivedAt: stored.addingTimeInterval(1.8)), [])
        let chunk = try XCTUnwrap(builder.pendingChunk)
        XCTAssertEqual(chunk.start, stored)
        XCTAssertEqual(chunk.beats.map(\.timeSinceSeriesStart), [1.0, 1.5])
        XCTAssertEqual(chunk.beats.map(\.precededByGap), [false, false])
    }

    func testAContinuingBuilderReanchorsWhenTheIntervalsCannotReachTheArrival() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600, continuingAfter: stored)
        // 20 s passed for one interval of 1 s: beats were missed, the drift rule re-anchors.
        _ = builder.add(rrIntervals: [1024], receivedAt: stored.addingTimeInterval(20))
        let chunk = try XCTUnwrap(builder.pendingChunk)
        XCTAssertEqual(chunk.beats.last?.precededByGap, false)
        XCTAssertEqual(chunk.beats.first?.precededByGap, true)
        XCTAssertEqual(builder.lastBeat, stored.addingTimeInterval(20))
    }

    func testANotBeforeBuilderNeverPlacesABeatAtOrBeforeIt() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 100, maximumDuration: 600, notBefore: stored)
        _ = builder.add(rrIntervals: [1024, 1024], receivedAt: stored.addingTimeInterval(1.5))
        let chunk = try XCTUnwrap(builder.pendingChunk)
        XCTAssertGreaterThan(chunk.start, stored)
        XCTAssertEqual(builder.overlappingBeats, 1)
    }
}
