import Foundation
import GatewayTesting
import HealthModel
import GatewayRuntime
import SampleBus
import XCTest

/// What the gateway derives from what its sources publish: the heart-rate variability of every
/// finished heartbeat series, published with it (so every sink stores or sends it), stamped like
/// it, and counted in the source's status.
final class DerivedRecordsTests: XCTestCase {
    func testAFinishedSeriesIsFollowedByItsVariabilityAndAProvisionalOneIsNot() async throws {
        let ids = SampleIDGenerator(seed: 8)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func series(beats: Int, provisional: Bool) throws -> HealthRecord {
            var metadata = Metadata()
            if provisional {
                metadata[.provisional] = .bool(true)
                metadata.syncIdentifier = "series-1"
                metadata.syncVersion = 1
            }
            let times: [Double] = (1...beats).map { (beat: Int) -> Double in
                let wobble = Double(beat % 3) - 1
                return Double(beat) * 0.8 + wobble * 0.02
            }
            return .heartbeatSeries(try HeartbeatSeriesSample(
                id: ids.next(), start: start, end: start.addingTimeInterval(times.last ?? 0),
                beats: times.map { Heartbeat(timeSinceSeriesStart: $0, precededByGap: false) },
                device: Device(name: "Strap", localIdentifier: "AA:BB:CC:DD:EE:FF"), metadata: metadata))
        }
        let published = [try series(beats: 60, provisional: true), try series(beats: 60, provisional: false), try series(beats: 10, provisional: false)]
        let sink = CollectingSink()
        var provenance = Metadata()
        provenance[.gatewayName] = .string("gym-1")
        let gateway = Gateway(
            sources: [ConfiguredSource(name: "straps", kind: "test-source", source: OneShotSource(records: published))],
            sinks: [ConfiguredSink(name: "sink", kind: "test-sink", queue: QueueConfiguration(), sink: sink)],
            clock: ManualClock(), logger: Logger(label: "gateway", sink: RecordingLogSink()), provenance: provenance)
        let (shutdown, run) = GatewayRun.start(gateway)
        try await waitUntil("every record in the sink") { sink.records.count == 5 }
        _ = shutdown.requestStop()
        try await run.waitForReturn()

        XCTAssertEqual(sink.records.map(\.typeIdentifier), [
            "heartbeatSeries", "heartbeatSeries", "heartRateVariabilitySDNN", "heartRateVariabilityRMSSD", "heartbeatSeries",
        ], "only the finished series with enough beats has a variability")
        guard case .quantity(let sdnn) = sink.records[2], case .quantity(let rmssd) = sink.records[3] else { return XCTFail() }
        XCTAssertEqual(sdnn.metadata[.heartbeatSeries], .string(published[1].id.description))
        XCTAssertEqual(sdnn.metadata[.gatewayName], .string("gym-1"), "stamped like the series")
        XCTAssertEqual(sdnn.metadata[.sourceName], .string("straps"))
        // Intervals repeat 820, 820, 760 ms: deviations +20, +20, −40 from 800 (SDNN √800 ≈ 28.3
        // with n − 1 over 60); successive differences 0, −60, +60 (RMSSD √2400 ≈ 49.0).
        XCTAssertEqual(sdnn.quantity.value, 28.4, accuracy: 0.2)
        XCTAssertEqual(rmssd.quantity.value, 48.8, accuracy: 0.4)
        XCTAssertEqual(gateway.statusBoard.status(of: "straps")?.records, 5)
    }
}
