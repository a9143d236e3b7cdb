import SampleBus
import Foundation
import GatewayTesting
import HealthModel
import MQTTBroker
import RemoteSinkKit
import XCTest

extension MQTTBrokerSinkTests {
    /// The broker goes away while records stream in and comes back: the records published
    /// before, those taken while it was down and those after all arrive, each with its uuid and
    /// its JSON; a batch whose PUBACKs were lost may arrive twice, never differently.
    func testBrokerRestartInTheMiddleOfAStreamLosesNothing() async throws {
        let recorder = try MQTTRecorder(broker: broker, filter: "healthgate/#")
        defer { recorder.stop() }
        try await recorder.waitUntilSubscribed(broker: broker, probe: "healthgate/probe")
        let running = try await start(configuration { $0.ackTimeoutSeconds = 1 })
        let records = try (0..<120).map { try spO2(97 + Double($0 % 4), at: Double($0)) }
        let chunks = stride(from: 0, to: records.count, by: 10).map { Array(records[$0..<$0 + 10]) }

        for chunk in chunks[0..<4] {
            await running.feed(chunk)
            try await Task.sleep(for: .milliseconds(20))
        }
        try await waitUntil(timeout: .seconds(30), "some records acknowledged before the restart") {
            (running.status.current?.records ?? 0) >= 14
        }
        // Down while the sink is publishing what was just fed.
        await running.feed(chunks[4])
        broker.stop()
        for chunk in chunks[5..<8] {
            await running.feed(chunk)
            try await Task.sleep(for: .milliseconds(20))
        }
        try await waitUntil(timeout: .seconds(30), "records waiting in the store while the broker is down") {
            let pending = try await running.unsent()
            return pending > 0 && running.status.current?.lastError?.contains("delivery failed") == true
        }
        try await broker.start()
        for chunk in chunks[8...] {
            await running.feed(chunk)
            try await Task.sleep(for: .milliseconds(20))
        }
        try await waitUntil(timeout: .seconds(60), "every record acknowledged after the restart") {
            let pending = try await running.unsent()
            return running.status.current?.records == records.count && pending == 0
        }
        XCTAssertNil(running.status.current?.lastError, "the error is cleared once the broker is reachable again")
        running.finish()
        try await running.task.value

        let encoder = HealthJSON.makeEncoder()
        var expected: [String: String] = [:]
        for case .quantity(let sample) in records {
            expected[sample.id.uuidString] = String(decoding: try encoder.encode(sample), as: UTF8.self)
        }
        XCTAssertEqual(expected.count, records.count)
        let uuids = Set(expected.keys)
        try await waitUntil(timeout: .seconds(20), "the recorder to receive every record") {
            Set(recorder.messages.flatMap(\.uuids)).isSuperset(of: uuids)
        }
        let samples = recorder.messages.filter { $0.topic == "healthgate/gw1/A0:9E:1A:00:11:22/oxygenSaturation" }
        XCTAssertEqual(Set(samples.flatMap(\.uuids)), uuids, "every record, and nothing else, arrives")
        XCTAssertGreaterThanOrEqual(samples.count, records.count)
        for message in samples {
            XCTAssertEqual(message.uuids.count, 1)
            XCTAssertEqual(message.payload, expected[message.uuids.first ?? ""], "a resend carries the record's JSON unchanged")
        }
        let status = recorder.messages.filter { $0.topic == "healthgate/gw1/status" }.map(\.payload)
        XCTAssertGreaterThanOrEqual(status.filter { $0 == "online" }.count, 2, "online again after the restart: \(status)")
    }
}
