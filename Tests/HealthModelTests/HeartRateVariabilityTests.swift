import Foundation
import GatewayTesting
import HealthModel
import XCTest

/// SDNN and RMSSD of a heartbeat series over its gap-free beats, checked against hrv-analysis
/// (an independent implementation from PyPI) on the same intervals, gaps included.
final class HeartRateVariabilityTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let strap = Device(name: "Strap", localIdentifier: "AA:BB:CC:DD:EE:FF")

    /// A series from intervals in milliseconds; a nil starts a new run after a gap of `gap` s.
    func series(_ intervals: [Double?], gap: Double = 4, metadata: Metadata = [:]) throws -> HeartbeatSeriesSample {
        var time = 0.0
        var beats: [Heartbeat] = []
        var gapNext = false
        for interval in intervals {
            guard let interval else {
                time += gap
                gapNext = true
                continue
            }
            time += interval / 1000
            beats.append(Heartbeat(timeSinceSeriesStart: time, precededByGap: gapNext))
            gapNext = false
        }
        return try HeartbeatSeriesSample(
            id: SampleIDGenerator(seed: 3).next(), start: start, end: start.addingTimeInterval(time), beats: beats,
            device: strap, metadata: metadata)
    }

    /// Deterministic RR intervals around 800 ms with respiratory variation and noise.
    func intervals(_ count: Int, seed: UInt64) -> [Double] {
        var state = seed
        return (0..<count).map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let noise = Double(state >> 40) / Double(1 << 24) * 40 - 20
            return 800 + 50 * sin(Double(index) / 4) + noise
        }
    }

    func testSDNNAndRMSSDAgreeWithHRVAnalysisWithAndWithoutGaps() async throws {
        let first = intervals(60, seed: 1)
        let second = intervals(45, seed: 2)
        let third = intervals(3, seed: 3)
        for runs in [[first], [first, second], [first, second, third]] {
            let whole = try series(runs.enumerated().flatMap { index, run in (index == 0 ? [] : [nil]) + run.map(Optional.some) })
            let variability = try XCTUnwrap(HeartRateVariability(whole))
            // After a gap, the first beat's interval is unknown: each later run loses one.
            let expectedRuns = runs.enumerated().map { index, run in index == 0 ? run : Array(run.dropFirst()) }
            XCTAssertEqual(variability.intervals, expectedRuns.map(\.count).reduce(0, +))
            let reference = try await hrvAnalysis(expectedRuns)
            XCTAssertEqual(variability.sdnn, reference.sdnn, accuracy: 1e-6 * reference.sdnn, "\(runs.count) run(s)")
            XCTAssertEqual(variability.rmssd, reference.rmssd, accuracy: 1e-6 * reference.rmssd, "\(runs.count) run(s)")
            XCTAssertGreaterThan(variability.sdnn, 10)
        }
    }

    func testTooFewBeatsOrMostlyGapsGiveNone() throws {
        XCTAssertNil(HeartRateVariability(try series(intervals(29, seed: 4).map(Optional.some))), "29 intervals")
        XCTAssertNotNil(HeartRateVariability(try series(intervals(30, seed: 4).map(Optional.some))), "30 intervals")
        // 41 intervals (about 33 s) in four runs, 15 s gaps between them: most of the 80 s is gaps.
        let gappy = (0..<4).flatMap { run in (run == 0 ? [] : [nil]) + intervals(11, seed: UInt64(run)).map(Optional.some) }
        XCTAssertNil(HeartRateVariability(try series(gappy, gap: 15)))
        XCTAssertNotNil(HeartRateVariability(try series(gappy, gap: 1)), "the same beats with short gaps")
    }

    func testAFinishedSeriesGivesTwoSamplesAndAProvisionalOneNone() throws {
        let finished = try series(intervals(90, seed: 5).map(Optional.some), metadata: [.sourceName: .string("strap")])
        let samples = finished.variabilitySamples()
        XCTAssertEqual(samples.map(\.type), [.heartRateVariabilitySDNN, .heartRateVariabilityRMSSD])
        XCTAssertEqual(samples.map(\.quantity.unit), [.millisecond, .millisecond])
        XCTAssertEqual(samples.map(\.startDate), [finished.startDate, finished.startDate])
        XCTAssertEqual(samples.map(\.endDate), [finished.endDate, finished.endDate])
        XCTAssertEqual(samples.first?.device, strap)
        XCTAssertEqual(samples.first?.metadata[.heartbeatSeries], .string(finished.id.description))
        XCTAssertEqual(samples.first?.metadata[.variabilityIntervals], .integer(90))
        XCTAssertEqual(samples.first?.metadata[.sourceName], .string("strap"))
        XCTAssertEqual(finished.variabilitySamples().map(\.id), samples.map(\.id), "published again: the same samples")
        // The uuids the samples had when they carried sync identifiers, so a store that holds
        // those takes a series published again as the same samples; no sync keys now.
        XCTAssertEqual(samples.map(\.id), ["sdnn", "rmssd"].map { SampleID(syncIdentifier: "hrv-\($0):\(finished.id)", version: 1) })
        XCTAssertEqual(samples.map(\.metadata.syncIdentifier), [nil, nil])
        XCTAssertEqual(samples.map(\.metadata.syncVersion), [nil, nil])
        var provisional = finished.metadata
        provisional[.provisional] = .bool(true)
        XCTAssertEqual(try series(intervals(90, seed: 5).map(Optional.some), metadata: provisional).variabilitySamples(), [])
    }

    struct Reference: Decodable {
        var sdnn: Double
        var rmssd: Double
    }

    func hrvAnalysis(_ runs: [[Double]]) async throws -> Reference {
        let result = try await TestPython.run("Tests/Fixtures/hrv_reference.py", input: try JSONEncoder().encode(["runs": runs]))
        XCTAssertEqual(result.status, 0, result.errors)
        return try JSONDecoder().decode(Reference.self, from: Data(result.output.utf8))
    }
}
