import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import MQTTBroker
import RemoteSinkKit
import XCTest

extension MQTTBrokerSinkTests {
    /// Writes the heart rates `readings` (bpm, seconds after the tests' epoch), one transaction
    /// each, and waits after each until the sink published it: each transaction is a version of
    /// its series. A reading more than the policy's gap (10 s) after the one before closes the
    /// series and starts the next.
    func stream(_ readings: [(bpm: Double, at: Double)], into running: Running) async throws -> [QuantitySample] {
        var samples: [QuantitySample] = []
        for reading in readings {
            guard case .quantity(let sample) = try heartRate(reading.bpm, at: reading.at) else { continue }
            await running.feed([.quantity(sample)])
            try await waitUntil(timeout: .seconds(30), "the reading at \(reading.at) s published") { try await running.unsent() == 0 }
            samples.append(sample)
        }
        return samples
    }

    /// A series goes to its type's topic in each version as it grows, under one uuid, its last
    /// version closed; the topic's newest message holds the latest reading as its last quantity.
    func testASeriesIsPublishedOnItsTypeTopicInEachVersion() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let running = try await start(configuration())
        let samples = try await stream([(71, 0), (72, 1), (73, 2), (90, 30)], into: running)
        running.finish()
        try await running.task.value
        let a = samples[0].id, b = samples[3].id

        try await waitUntil(timeout: .seconds(10), "every version recorded") {
            recorder.messages.filter { $0.topic.hasSuffix("/heartRate") }.count == 5
        }
        let messages = recorder.messages.filter { $0.topic == "healthgate/gw1/A0:9E:1A:00:11:22/heartRate" }
        XCTAssertEqual(messages.map(\.uuids), [[a], [a], [a], [a], [b]].map { $0.map(\.uuidString) })
        let decoder = HealthJSON.makeDecoder()
        let versions = try messages.map { try decoder.decode(QuantitySeriesSample.self, from: Data($0.payload.utf8)) }
        XCTAssertEqual(versions.prefix(4).map(\.metadata.syncVersion), [1, 2, 3, 4])
        XCTAssertEqual(versions.prefix(4).map(\.isProvisional), [true, true, true, false])
        XCTAssertEqual(versions[3].quantities.map(\.value), [71, 72, 73])
        XCTAssertEqual(versions.last?.quantities.last?.value, 90, "the newest message's last quantity is the latest reading")
        // The same bytes the store's version has: a consumer keeps the highest syncVersion.
        let encoder = HealthJSON.makeEncoder()
        let stored = try await store.changes(since: 0).added
        for case .quantitySeries(let series) in stored {
            let last = try XCTUnwrap(messages.last { $0.uuids == [series.id.uuidString] })
            XCTAssertEqual(last.payload, String(decoding: try encoder.encode(series), as: UTF8.self))
        }
    }

    /// In `expand`, a closed series' quantities are sample messages with their derived ids, each
    /// once; an open one is not published, and its deletion names the series.
    func testExpandPublishesEachQuantityOfAClosedSeriesOnceAsASample() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let running = try await start(configuration { $0.quantitySeries = .expand })
        let samples = try await stream([(71, 0), (72, 1), (73, 2), (90, 30)], into: running)
        let a = samples[0].id, b = samples[3].id
        _ = try await store.delete(.ids([b]))
        try await waitUntil(timeout: .seconds(30), "the deletion published") { try await running.unsent() == 0 }
        running.finish()
        try await running.task.value

        let derived = (0..<3).map { SampleID(quantity: $0, ofSeries: a).uuidString }
        try await waitUntil(timeout: .seconds(10), "the deletion recorded") {
            recorder.messages.contains { $0.topic == "healthgate/gw1/deleted" }
        }
        let messages = recorder.messages.filter { $0.topic == "healthgate/gw1/A0:9E:1A:00:11:22/heartRate" }
        XCTAssertEqual(messages.map(\.uuids), derived.map { [$0] }, "each quantity once, and nothing of the open series")
        let decoder = HealthJSON.makeDecoder()
        let published = try messages.map { try decoder.decode(QuantitySample.self, from: Data($0.payload.utf8)) }
        XCTAssertEqual(published.map(\.quantity.value), [71, 72, 73])
        XCTAssertEqual(published.map(\.startDate), samples.prefix(3).map(\.startDate))
        XCTAssertEqual(Set(published.map { $0.metadata[.series] }), [.string(a.uuidString)])
        let deleted = recorder.messages.filter { $0.topic == "healthgate/gw1/deleted" }
        XCTAssertEqual(deleted.map(\.uuids), [[b.uuidString]])
        let deletion = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(deleted.first).payload.utf8)) as? [String: String]
        XCTAssertEqual(deletion, ["kind": "quantitySeries", "type": "heartRate", "uuid": b.uuidString])
    }

    /// The form is part of the payload identity; `expand` keeps the identity of the releases
    /// before series (the same messages for the same changes).
    func testTheSeriesFormIsPartOfThePayloadIdentity() async throws {
        let series = try await start(configuration(), name: "series")
        let expand = try await start(configuration { $0.quantitySeries = .expand }, name: "expand")
        XCTAssertEqual(series.sink.follower.receiver.payloadIdentity, "mode=record quantitySeries=series topics=healthgate/gw1")
        XCTAssertEqual(expand.sink.follower.receiver.payloadIdentity, "mode=record topics=healthgate/gw1")
        for running in [series, expand] {
            running.finish()
            try await running.task.value
        }
    }
}
