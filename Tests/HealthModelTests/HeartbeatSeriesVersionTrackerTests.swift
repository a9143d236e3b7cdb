import FoundationEssentials
import HealthModel
import XCTest

/// The versions a growing heartbeat series is published under: provisional ones that share a
/// uuid and sync identifier with a rising version, then the finished one that replaces them.
final class HeartbeatSeriesVersionTrackerTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let device = Device(name: "Strap", localIdentifier: "ant:120:863436")
    let metadata: Metadata = [.deviceSerialNumber: .string("863436")]

    func testProvisionalVersionsShareTheirIdentityUntilTheFinishedOneReplacesThem() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 4, maximumDuration: 600)
        var tracker = HeartbeatSeriesVersionTracker(identity: "ant:120:863436", ids: SampleIDGenerator(seed: 3))
        XCTAssertEqual(builder.add(rrIntervals: [1024], receivedAt: start), [])
        let first = try XCTUnwrap(tracker.provisional(XCTUnwrap(builder.pendingChunk), device: device, metadata: metadata))
        // The next slot of the cadence (`start` is on a slot's edge).
        XCTAssertEqual(builder.add(rrIntervals: [10 * 1024], receivedAt: start.addingTimeInterval(10)), [])
        let second = try XCTUnwrap(tracker.provisional(XCTUnwrap(builder.pendingChunk), device: device, metadata: metadata))
        let anchor = Int64((try XCTUnwrap(builder.pendingChunk).start.timeIntervalSince1970 * 1_000_000).rounded())

        XCTAssertEqual(first.id, second.id)
        XCTAssertEqual(first.metadata.syncIdentifier, "heartbeat-series:ant:120:863436:\(anchor)")
        XCTAssertEqual(second.metadata.syncIdentifier, first.metadata.syncIdentifier)
        XCTAssertEqual([first.metadata.syncVersion, second.metadata.syncVersion], [1, 2])
        XCTAssertEqual(second.metadata[.provisional], .bool(true))
        XCTAssertEqual(second.metadata.deviceSerialNumber, "863436", "the caller's metadata is kept")
        XCTAssertEqual(second.beats.count, 3)
        XCTAssertEqual(second.device, device)

        let chunk = try XCTUnwrap(builder.add(rrIntervals: [1024], receivedAt: start.addingTimeInterval(11)).first)
        let finished = try tracker.finished(chunk, device: device, metadata: metadata)
        XCTAssertEqual(finished.id, first.id)
        XCTAssertEqual(finished.metadata.syncIdentifier, first.metadata.syncIdentifier)
        XCTAssertEqual(finished.metadata.syncVersion, 3)
        XCTAssertNil(finished.metadata[.provisional])
        XCTAssertEqual(finished.beats.count, 4)

        // The next series is a new one: a new uuid, version 1.
        XCTAssertEqual(builder.add(rrIntervals: [1024], receivedAt: start.addingTimeInterval(12)), [])
        let next = try XCTUnwrap(tracker.provisional(XCTUnwrap(builder.pendingChunk), device: device, metadata: metadata))
        XCTAssertNotEqual(next.id, first.id)
        XCTAssertNotEqual(next.metadata.syncIdentifier, first.metadata.syncIdentifier)
        XCTAssertEqual(next.metadata.syncVersion, 1)
    }

    func testASeriesFinishedWithoutProvisionalVersionsHasAUuidOfItsOwnAndNoSyncIdentifier() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 2, maximumDuration: 600)
        var tracker = HeartbeatSeriesVersionTracker(identity: "AA:BB", ids: SampleIDGenerator(seed: 4))
        let chunk = try XCTUnwrap(builder.add(rrIntervals: [1024, 1024], receivedAt: start).first)
        let first = try tracker.finished(chunk, device: device, metadata: metadata)
        XCTAssertNil(first.metadata.syncIdentifier)
        XCTAssertNil(first.metadata.syncVersion)
        XCTAssertNil(first.metadata[.provisional])
        XCTAssertEqual(first.metadata, metadata)
        let again = try tracker.finished(chunk, device: device, metadata: metadata)
        XCTAssertNotEqual(again.id, first.id)
    }

    func testAfterTheFirstAProvisionalVersionIsDueOnlyWhenTheLastBeatEntersANewSlot() throws {
        var builder = HeartbeatSeriesBuilder(maximumBeats: 1000, maximumDuration: 600)
        var tracker = HeartbeatSeriesVersionTracker(identity: "AA:BB", ids: SampleIDGenerator(seed: 5))
        let slot = HeartbeatSeriesVersionTracker.provisionalSlot
        // First beats 3 s into a slot: the first version at once.
        var arrival = start.addingTimeInterval(3)
        _ = builder.add(rrIntervals: [1024], receivedAt: arrival)
        XCTAssertNotNil(try tracker.provisional(XCTUnwrap(builder.pendingChunk), device: device, metadata: metadata))
        // A beat a second: none until the last beat crosses into the next slot, 7 s later.
        var versions: [(beatsAfterStart: Double, version: Int64?)] = []
        for _ in 0..<25 {
            arrival = arrival.addingTimeInterval(1)
            _ = builder.add(rrIntervals: [1024], receivedAt: arrival)
            let chunk = try XCTUnwrap(builder.pendingChunk)
            if let version = try tracker.provisional(chunk, device: device, metadata: metadata) {
                versions.append((chunk.end.timeIntervalSince(start), version.metadata.syncVersion))
            }
        }
        XCTAssertEqual(versions.map(\.beatsAfterStart), [slot, 2 * slot])
        XCTAssertEqual(versions.map(\.version), [2, 3])
    }
}
