import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import RemoteSinkKit
import GatewayRuntime
import SampleBus
import XCTest

/// The outboxes and the store the last healthgate with outboxes wrote (Fixtures/legacy-outbox-v5,
/// see its README): at the first start of a follower, its outbox is imported into the store,
/// the follower resumes just before the earliest pending record, the dead letters become the
/// store's, and the file goes. Nothing pending is lost.
final class LegacyOutboxTests: XCTestCase {
    var directory: URL!

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/legacy-outbox-v5")

    override func setUpWithError() throws {
        directory = try TestEnvironment.temporaryDirectory("legacy-outbox")
        for file in ["store.sqlite", "repository-outbox.sqlite", "broker-outbox.sqlite"] {
            try FileManager.default.copyItem(
                at: Self.fixtures.appendingPathComponent(file), to: directory.appendingPathComponent(file))
        }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func testPendingBatchesAndDeadLettersOfBothSinksAreImportedThenSentAndTheFilesRemoved() async throws {
        // The store of the same run, at schema version 8: migrated when opened.
        let store = try await HealthStore.open(path: directory.appendingPathComponent("store.sqlite").path)
        let stored = try await store.changes(since: 0)
        XCTAssertEqual(stored.added.count, 161)
        for (name, pendingCount, deadCount) in [("repository", 160, 1), ("broker", 161, 0)] {
            let outbox = directory.appendingPathComponent("\(name)-outbox.sqlite").path
            let (pending, dead, version) = try LegacyOutbox.read(outbox)
            XCTAssertEqual(version, 5)
            XCTAssertEqual(pending.count, pendingCount, name)
            XCTAssertEqual(dead.count, deadCount, name)

            let receiver = ScriptedReceiver()
            let logs = RecordingLogSink()
            let shutdown = ShutdownSignal()
            let follower = Follower(
                name: name, store: store, receiver: receiver,
                settings: FollowerSettings(
                    batchSize: 50, batchInterval: .zero, maxInFlight: 2, follow: FollowConfiguration(),
                    retry: RetryConfiguration()),
                legacyOutbox: outbox)
            let task = Task {
                try await follower.run(context: FollowerContext(
                    logger: Logger(label: name, sink: logs, level: .debug), clock: SystemClock(),
                    status: StatusBoard().register(name: name, kind: "scripted", role: .sink),
                    stopRequest: StopRequest(shutdown), storeSettled: { true }))
            }
            try await waitUntil("\(name)'s outbox imported") { !FileManager.default.fileExists(atPath: outbox) }
            let latest = try await store.latestAnchor()
            do {
                try await waitUntil("\(name) sent everything") { try await store.follower(name)?.anchor == latest }
            } catch {
                let cursor = try await store.follower(name)?.anchor
                XCTFail("\(name) at \(cursor ?? -1) of \(latest):\n" + logs.entries.map { "\($0.level) \($0.message)" }.joined(separator: "\n"))
                throw error
            }
            shutdown.requestStop()
            try await task.value

            XCTAssertFalse(FileManager.default.fileExists(atPath: outbox), "\(name): the outbox file is removed")
            XCTAssertTrue(logs.contains("imported the outbox"), name)
            // Every pending record reaches the receiver, the earliest first; none is lost.
            let sent = receiver.deliveredChanges.map(\.id)
            XCTAssertTrue(Set(pending.map(\.id)).isSubset(of: Set(sent)), "\(name): a pending record was not sent")
            XCTAssertEqual(sent.first, stored.added.map(\.id).first { Set(pending.map(\.id)).contains($0) })
            XCTAssertEqual(Set(sent).count, sent.count, "\(name): a record was sent twice")
            let letters = try await store.deadLetters(follower: name)
            XCTAssertEqual(letters.map(\.id), dead.map(\.record.id), name)
            if let letter = letters.first {
                XCTAssertEqual(letter.status, 422)
                XCTAssertEqual(letter.type, "heartRate")
                // The refused record is in the store too, after the cursor: it goes out again with
                // the others (a receiver that refuses it again makes it a dead letter again).
                XCTAssertTrue(sent.contains(letter.id))
            }
        }
        let check = try await store.changes(since: 0)
        XCTAssertEqual(check.added.count, 161, "the import added nothing the store did not hold")
        await store.close()
    }

    func testADamagedOutboxIsLeftInPlaceAndTheStartFails() async throws {
        let outbox = directory.appendingPathComponent("repository-outbox.sqlite").path
        let result = try runProcess("/usr/bin/sqlite3", [outbox, "UPDATE batches SET records = x'0501ff' WHERE id = 1"])
        XCTAssertEqual(result.status, 0, result.error)
        let store = try await HealthStore.open(path: directory.appendingPathComponent("store.sqlite").path)
        do {
            _ = try await LegacyOutbox.importIfPresent(
                path: outbox, into: store, follower: "repository", logger: Logger(label: "t", sink: RecordingLogSink()))
            XCTFail("a damaged outbox was imported")
        } catch {
            XCTAssertTrue("\(error)".contains("damaged"), "\(error)")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: outbox))
        await store.close()
    }
}
