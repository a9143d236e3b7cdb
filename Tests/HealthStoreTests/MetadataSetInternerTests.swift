import GatewayTesting
import Foundation
import HealthModel
@testable import HealthStore
import XCTest

/// The writer's cache of metadata set ids stays bounded by the sets that recur: sets unique to
/// their record (an HRV sample's sync identifier and series link) pass through (issue #48's
/// class, whose RSS rose with its samples while every such set stayed cached).
final class MetadataSetInternerTests: StoreTestCase {
    /// What a strap's heart rates carry: the same set, reading after reading.
    func strapMetadata(battery: Int64) -> Metadata {
        var metadata = Metadata()
        metadata[MetadataKey("healthgate.source")] = .string("ant")
        metadata[MetadataKey("healthgate.batteryLevel")] = .integer(battery)
        return metadata
    }

    /// What an HRV sample carries: its own sync identifier and its heartbeat series' id.
    func hrvMetadata(series: SampleID) -> Metadata {
        var metadata = strapMetadata(battery: 81).synced("hrv-rmssd:\(series)", version: 1)
        metadata[MetadataKey("healthgate.heartbeatSeries")] = .string("\(series)")
        metadata[MetadataKey("healthgate.nnIntervals")] = .integer(60)
        return metadata
    }

    func testSetsUniqueToTheirRecordDoNotAccumulateWhileRecurringOnesStayCached() async throws {
        let ids = makeIDs()
        let writer = try RecordWriter(path: path)
        let recurring = strapMetadata(battery: 80)
        let batches = 60, uniquePerBatch = 50
        var largest = 0
        for batch in 0..<batches {
            var records: [HealthRecord] = []
            for index in 0..<uniquePerBatch {
                let seconds = Double(batch * uniquePerBatch + index)
                records.append(.quantity(try heartRate(ids, 70, at: seconds, metadata: recurring)))
                records.append(.quantity(try QuantitySample(
                    id: ids.next(), type: .heartRateVariabilityRMSSD, quantity: Quantity(42, .millisecond), start: at(seconds),
                    end: at(seconds), device: strap, metadata: hrvMetadata(series: ids.next()))))
            }
            let summary = try writer.write(records, checkpoints: [])
            XCTAssertEqual(summary.inserted, 2 * uniquePerBatch)
            largest = max(largest, writer.metadataSets.cachedCount)
        }
        // 3000 sets met once (an HRV sample's heartbeat series and interval count), the heart
        // rates' met 3000 times, the run's set every time (the source is a run key: each set
        // extends it) and the HRV samples' strap set (battery 81) which their own sets extend
        // (version 17): the cache holds the recurring three and at most the newcomers' bound.
        XCTAssertLessThanOrEqual(largest, MetadataSetInterner.newcomerLimit + 3)
        XCTAssertEqual(writer.metadataSets.recurringCount, 3)
        XCTAssertTrue(writer.metadataSets.isRecurring(recurring))
        // What is stored is unchanged: every distinct set once, every HRV sample and every heart
        // rate (the heart rates in quantity series of a minute each: 3000 readings a second
        // apart, 61 to a series).
        XCTAssertEqual(try count("metadata_sets"), batches * uniquePerBatch + 3)
        XCTAssertEqual(try sqlite3("SELECT count(*) FROM metadata_entries WHERE key = 'healthgate.source'"), "1", "the run's key once")
        XCTAssertEqual(try count("samples"), batches * uniquePerBatch)
        XCTAssertEqual(try count("quantity_series"), (batches * uniquePerBatch + 60) / 61)
        let store = try HealthStore(path: path, access: .readOnly)
        let rates = try await store.samples(of: .heartRate)
        XCTAssertEqual(rates.count, batches * uniquePerBatch)
        XCTAssertTrue(rates.allSatisfy { $0.metadata[MetadataKey("healthgate.batteryLevel")] == .integer(80) })
        XCTAssertEqual(rates.map(\.startDate), (0..<(batches * uniquePerBatch)).map { at(Double($0)) })
    }

    func testASetMetAgainAfterTheNewcomersWereEmptiedIsFoundInTheStore() async throws {
        let ids = makeIDs()
        let writer = try RecordWriter(path: path)
        let early = strapMetadata(battery: 90)
        _ = try writer.write([.quantity(try heartRate(ids, 70, at: 0, metadata: early))], checkpoints: [])
        // More new sets than the newcomers hold: the first one is forgotten.
        let others = try (1...(MetadataSetInterner.newcomerLimit + 1)).map { index in
            HealthRecord.quantity(try heartRate(ids, 70, at: Double(index), metadata: strapMetadata(battery: Int64(100 + index))))
        }
        _ = try writer.write(others, checkpoints: [])
        XCTAssertFalse(writer.metadataSets.isRecurring(early))
        XCTAssertLessThanOrEqual(writer.metadataSets.cachedCount, MetadataSetInterner.newcomerLimit + 1, "the run's set recurs")
        // Met again: found by its canonical encoding, not inserted twice, and now recurring once
        // it is met once more.
        let again = try heartRate(ids, 71, at: 1000, metadata: early)
        let last = try heartRate(ids, 72, at: 1001, metadata: early)
        _ = try writer.write([.quantity(again)], checkpoints: [])
        _ = try writer.write([.quantity(last)], checkpoints: [])
        XCTAssertTrue(writer.metadataSets.isRecurring(early))
        XCTAssertEqual(try count("metadata_sets"), MetadataSetInterner.newcomerLimit + 3, "with the run's set")
        let stored = try await HealthStore(path: path, access: .readOnly).samples(of: .heartRate, from: at(1000))
        // A quantity series of the two (the one from 0 s ended long before), with the early set.
        XCTAssertEqual(stored, try storedQuantities([again, last]))
        XCTAssertEqual(stored.map { $0.metadata[MetadataKey("healthgate.batteryLevel")] }, [.integer(90), .integer(90)])
    }
}
