import GatewayTesting
import AsyncPrimitives
import Foundation
import HealthModel
import SQLite
import HealthStore
import XCTest

/// Short reads (the newest sample, the earliest date, a checkpoint) run in the caller's context
/// on the store's inline reader, and on its queue when the inline reader is taken or busy: both
/// paths must give what the file holds, while a writer commits beside them, and the inline
/// reader must never wait.
final class ShortReadTests: StoreTestCase {
    /// A writer commits 150 transactions, each one reading with metadata of its own (so a
    /// read that took the sample and its metadata set from different transactions would show),
    /// while eight readers ask for the newest reading at once: some take the inline reader,
    /// the others the queue. Every answer must be a written sample, whole, and no reader may go
    /// back in time.
    func testConcurrentReadersAndAWriterOverOneWALFile() async throws {
        let ids = makeIDs()
        let watch = Device(name: "watch", manufacturer: "healthgate", localIdentifier: "watch-1")
        let written = try (0..<150).map { index in
            try plainReading(
                ids, Double(60 + index % 100), at: Double(index), device: index.isMultiple(of: 2) ? strap : watch,
                metadata: ["index": .integer(Int64(index)), "even": .bool(index.isMultiple(of: 2))])
        }
        // The first transaction before any reader starts, so every read finds a sample.
        let writer = try HealthStore(path: path)
        try await writer.write([.quantity(written[0])])
        let store = try HealthStore(path: path, access: .readOnly)
        let byID = Dictionary(uniqueKeysWithValues: written.map { ($0.id, $0) })
        let last = try XCTUnwrap(written.last)

        let path = self.path
        let writing = Task {
            let writer = try await HealthStore.open(path: path)
            for sample in written.dropFirst() { try await writer.write([.quantity(sample)]) }
        }
        try await readNewest(Self.plainType, of: store, while: writing, until: { $0.id == last.id }) { sample in
            XCTAssertEqual(sample, byID[sample.id], "a newest sample that differs from the one written")
        }
        let final = try await store.mostRecentSample(of: Self.plainType)
        XCTAssertEqual(final, last)
        let earliest = try await store.earliestSampleDate(of: Self.plainType)
        XCTAssertEqual(earliest, written[0].startDate)
    }

    /// The same with heart rates, which the writer folds into quantity series that grow with
    /// each transaction (a row rewritten at a new anchor): every newest heart rate a reader gets
    /// is a written reading, its value, date and device, the series' quantity it is, and no
    /// reader goes back in time.
    func testConcurrentReadersOfGrowingSeriesSeeWholeTransactions() async throws {
        let ids = makeIDs()
        let written = try (0..<150).map { index in try heartRate(ids, Double(60 + index % 100), at: Double(index)) }
        let writer = try HealthStore(path: path)
        try await writer.write([.quantity(written[0])])
        let store = try HealthStore(path: path, access: .readOnly)
        let byStart = Dictionary(uniqueKeysWithValues: written.map { ($0.startDate, $0) })
        let last = try XCTUnwrap(written.last)
        let writing = Task {
            for sample in written.dropFirst() { try await writer.write([.quantity(sample)]) }
        }
        try await readNewest(.heartRate, of: store, while: writing, until: { $0.startDate == last.startDate }) { sample in
            let reading = try XCTUnwrap(byStart[sample.startDate], "a newest heart rate that was not written")
            XCTAssertEqual(sample.quantity, reading.quantity)
            XCTAssertEqual(sample.device, reading.device)
            XCTAssertNotNil(sample.metadata[.series])
        }
        // 0 … 60 s, 61 … 121 s, 122 … 149 s.
        let final = try await store.mostRecentSample(of: .heartRate)
        XCTAssertEqual(final, try storedQuantities(Array(written[122...])).last)
    }

    /// The newest sample comes back whole from its one statement: every kind of metadata value,
    /// the sync keys of its own columns, its device; of two with the same start, the greater
    /// uuid; a sample without device or metadata has neither.
    func testTheNewestSampleComesBackWhole() async throws {
        let ids = makeIDs()
        var synced = try plainReading(
            ids, 64, at: 30,
            metadata: ["healthgate.note": .string("rest"), "healthgate.rssi": .double(0.1 + 0.2),
                       "healthgate.battery": .integer(87), "healthgate.contact": .bool(true)])
        synced.metadata.syncIdentifier = "strap-30"
        synced.metadata.syncVersion = 3
        let older = try plainReading(ids, 70, at: 10)
        let bare = try plainReading(ids, 66, at: 30, device: nil)
        try await HealthStore(path: path).write([.quantity(synced), .quantity(older)])
        let store = try HealthStore(path: path, access: .readOnly)
        let first = try await store.mostRecentSample(of: Self.plainType)
        XCTAssertEqual(first, synced)
        XCTAssertEqual(first?.metadata.count, 6)

        // Same start, created later: the greater uuid is the newest.
        try await HealthStore(path: path).write([.quantity(bare)])
        let second = try await store.mostRecentSample(of: Self.plainType)
        XCTAssertEqual(second, bare)
        XCTAssertNil(second?.device)
        XCTAssertEqual(second?.metadata, Metadata())
        let none = try await store.mostRecentSample(of: .stepCount)
        XCTAssertNil(none)
    }

    /// While another connection holds the file's exclusive lock, the inline reader fails at
    /// once with SQLITE_BUSY instead of waiting on the calling thread (the store then takes its
    /// queue, whose connection waits); once the lock is gone it reads.
    func testABusyInlineReaderFailsAtOnce() async throws {
        try await HealthStore(path: path).write([.quantity(try plainReading(makeIDs(), 72, at: 0))])
        // Exclusive locking mode keeps the lock after the transaction, until the mode is normal
        // again and the file is next read; it needs no other connection open when it starts.
        let holder = try SQLiteConnection(path: path)
        try holder.execute("PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT")
        let reader = try SQLiteInlineReader(path: path)
        XCTAssertThrowsError(try reader.readIfAvailable { connection throws(SQLiteError) in
            try connection.query("SELECT count(*) FROM samples")
        }) { error in
            XCTAssertEqual((error as? SQLiteError)?.isBusy, true, "\(error)")
        }
        try holder.execute("PRAGMA locking_mode=NORMAL; SELECT count(*) FROM samples")
        let count = try reader.readIfAvailable { connection throws(SQLiteError) in
            try connection.query("SELECT count(*) FROM samples").first?.integer(0)
        }
        XCTAssertEqual(count, 1)
    }

    /// A caller that finds the inline reader taken gets nil at once, not a wait.
    func testATakenInlineReaderAnswersNil() async throws {
        try await HealthStore(path: path).write([.quantity(try plainReading(makeIDs(), 72, at: 0))])
        let reader = try SQLiteInlineReader(path: path)
        XCTAssertNil(Self.readWhileAnotherThreadHolds(reader), "the reader ran a second body while the first held it")
        let count = try reader.readIfAvailable { connection throws(SQLiteError) in
            try connection.query("SELECT count(*) FROM samples").first?.integer(0)
        }
        XCTAssertEqual(count, 1, "free again once the holder is done")
    }

    /// Eight readers ask `store` for the newest sample of `type` while `writing` runs, each until
    /// it gets the one `isLast` accepts; every answer goes to `check`, and no reader may go back
    /// in time. Returns when the writer and every reader are done, each reader having read.
    private func readNewest(
        _ type: QuantityType, of store: HealthStore, while writing: Task<Void, any Error>,
        until isLast: @escaping @Sendable (QuantitySample) -> Bool,
        check: @escaping @Sendable (QuantitySample) throws -> Void
    ) async throws {
        let readers = (0..<8).map { _ in
            Task { () throws -> Int in
                var reads = 0
                var previous = Date.distantPast
                while true {
                    let newest = try await store.mostRecentSample(of: type)
                    let sample = try XCTUnwrap(newest)
                    reads += 1
                    try check(sample)
                    XCTAssertGreaterThanOrEqual(sample.startDate, previous, "a read went back in time")
                    previous = sample.startDate
                    if isLast(sample) { return reads }
                }
            }
        }
        try await writing.value
        for reader in readers {
            let reads = try await reader.value
            XCTAssertGreaterThan(reads, 0)
        }
    }

    /// What `reader` answers while another thread holds it. Another thread, as callers are: the
    /// holding thread locking again would trap in some toolchains' `Mutex` (swiftlang 6.0.3's,
    /// seen as arm64 under qemu-user) instead of finding it taken.
    static func readWhileAnotherThreadHolds(_ reader: SQLiteInlineReader) -> Int? {
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = reader.readIfAvailable { _ in
                holding.signal()
                release.wait()
                return 0
            }
            done.signal()
        }.start()
        holding.wait()
        let answer = reader.readIfAvailable { _ in 1 }
        release.signal()
        done.wait()
        return answer
    }
}
