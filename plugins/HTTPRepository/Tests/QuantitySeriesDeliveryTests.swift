import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import HTTPRepository
import RemoteSinkKit
import Synchronization
import XCTest

/// Heart rates the store keeps as quantity series, sent by the sink following it to the
/// recording repository: in the native format as series in versions or expanded into samples,
/// as FHIR Observations with SampledData or one per quantity, as Open mHealth data points; and
/// the keys that name each form's payloads.
final class QuantitySeriesDeliveryTests: RepositoryAndStoreTestCase {
    /// Writes the heart rates `readings` (bpm, seconds after the tests' epoch), one transaction
    /// each, and waits after each until the sink sent it: each transaction is a version of its
    /// series. A reading more than the policy's gap (10 s) after the one before closes the series
    /// and starts the next.
    func stream(_ readings: [(bpm: Double, at: Double)]) async throws -> [QuantitySample] {
        var samples: [QuantitySample] = []
        for reading in readings {
            guard case .quantity(let sample) = try heartRate(reading.bpm, at: reading.at) else { continue }
            try await store.write([.quantity(sample)])
            try await waitUntilSent()
            samples.append(sample)
        }
        return samples
    }

    /// The native bodies the repository accepted, decoded.
    func nativeBatches() throws -> [NativeBatch] {
        try server.requests().filter { $0.method == "POST" && $0.status == 200 }.map { request in
            try HealthJSON.makeDecoder().decode(NativeBatch.self, from: JSONSerialization.data(withJSONObject: request.body))
        }
    }

    /// Five heart rates a second apart, then one 26 s later: the first five are series A, closed
    /// by the sixth, which starts series B.
    static let readings: [(bpm: Double, at: Double)] = [(71, 0), (72, 1), (73, 2), (74, 3), (75, 4), (90, 30)]

    // MARK: Native

    func testASeriesTravelsInVersionsUnderOneUUIDItsLastVersionClosed() async throws {
        let running = try await start(configuration())
        let samples = try await stream(Self.readings)
        try await finish(running)

        let a = samples[0].id, b = samples[5].id
        let batches = try nativeBatches()
        XCTAssertTrue(batches.allSatisfy { $0.samples.isEmpty }, "a reading of a series travelled as a sample")
        let versions = batches.flatMap(\.quantitySeries)
        let first = versions.filter { $0.id == a }
        XCTAssertEqual(first.map(\.metadata.syncVersion), [1, 2, 3, 4, 5, 6])
        XCTAssertEqual(first.map(\.count), [1, 2, 3, 4, 5, 5])
        XCTAssertEqual(first.map(\.isProvisional), [true, true, true, true, true, false], "only the last version is closed")
        XCTAssertEqual(Set(first.map(\.metadata.syncIdentifier)), ["quantity-series:\(a.uuidString)"])
        let closed = try XCTUnwrap(first.last)
        XCTAssertEqual(closed.quantities.map(\.value), [71, 72, 73, 74, 75])
        XCTAssertEqual(closed.quantities.map(\.startDate), samples.prefix(5).map(\.startDate))
        XCTAssertEqual(closed.unit, .countPerMinute)
        XCTAssertEqual(closed.device, device)
        XCTAssertEqual(closed.metadata.deviceSerialNumber, "C6A24B1D")
        // The closing version and the next series' first go in one transaction, closed first.
        XCTAssertEqual(versions.suffix(2).map(\.id), [a, b])
        XCTAssertEqual(versions.filter { $0.id == b }.map(\.isProvisional), [true])
        // Each version is another payload under another key; the bodies are what openapi.yaml says.
        let keys = server.requests().filter { $0.method == "POST" }.map { $0.headers["Idempotency-Key"] ?? "" }
        XCTAssertEqual(Set(keys).count, keys.count, "a key named two versions")
        XCTAssertEqual(try validate("native"), "ok \(versions.count)")
    }

    func testExpandSendsEachQuantityOfAClosedSeriesOnceAsASampleWithItsDerivedID() async throws {
        let running = try await start(configuration { $0.quantitySeries = .expand })
        let samples = try await stream(Self.readings)
        let a = samples[0].id, b = samples[5].id
        // B is open: passed over until it closes, so its deletion is all a receiver hears of it.
        _ = try await store.delete(.ids([b]))
        try await waitUntilSent()
        try await finish(running)

        let requests = server.requests().filter { $0.method == "POST" }
        for request in requests {
            let body = try XCTUnwrap(request.body as? [String: Any])
            XCTAssertNil(body["quantitySeries"], "an expand body has the keys of the releases before series")
        }
        let batches = try nativeBatches()
        let sent = batches.flatMap(\.samples)
        XCTAssertEqual(sent.map(\.id), (0..<5).map { SampleID(quantity: $0, ofSeries: a) }, "each quantity once, in order")
        XCTAssertEqual(sent.map(\.quantity.value), [71, 72, 73, 74, 75])
        XCTAssertEqual(sent.map(\.startDate), samples.prefix(5).map(\.startDate))
        for sample in sent {
            XCTAssertEqual(sample.metadata[.series], .string(a.uuidString))
            XCTAssertNil(sample.metadata.syncVersion)
            XCTAssertNil(sample.metadata[.provisional])
            XCTAssertEqual(sample.metadata.deviceSerialNumber, "C6A24B1D")
        }
        XCTAssertEqual(batches.flatMap(\.deleted), [NativeBatch.Deletion(kind: .quantitySeries, type: "heartRate", uuid: b)])
        // Two requests: the closed series' quantities (with the next series' first version
        // passed over), and the deletion.
        XCTAssertEqual(requests.count, 2)
        XCTAssertEqual(try validate("native"), "ok 6")
    }

    /// A key names one payload: the same change of a series is another body in each format and
    /// form (Open mHealth has one form), and each version of a series is another change.
    func testKeysDifferBetweenFormatsFormsAndVersionsOfASeries() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func series(_ count: Int, version: Int64) throws -> QuantitySeriesSample {
            try QuantitySeriesSample(
                id: SampleID(high: 0x0190_0000_0000_7000, low: 0x8000_0000_0000_0001), type: .heartRate, unit: .countPerMinute,
                quantities: (0..<count).map { index in
                    let date = start.addingTimeInterval(Double(index))
                    return SeriesQuantity(value: Double(70 + index), start: date, end: date)
                },
                device: device, metadata: [.syncIdentifier: .string("quantity-series:x"), .syncVersion: .integer(version)])
        }
        let versions = [
            [FollowedChange.stored(.quantitySeries(try series(2, version: 1)), anchor: 1)],
            [FollowedChange.stored(.quantitySeries(try series(3, version: 2)), anchor: 2)],
        ]
        let builders = [
            PayloadBuilder(format: .native, patientReference: nil, quantitySeries: .series),
            PayloadBuilder(format: .native, patientReference: nil, quantitySeries: .expand),
            PayloadBuilder(format: .fhirR4, patientReference: "Patient/p", quantitySeries: .series),
            PayloadBuilder(format: .fhirR4, patientReference: "Patient/p", quantitySeries: .expand),
            PayloadBuilder(format: .openMHealth, patientReference: nil, quantitySeries: .series),
        ]
        var keys: [String: Data] = [:]
        for builder in builders {
            for changes in versions {
                let batch = FollowerBatch(after: 0, through: 2, changes: changes, payloadIdentity: builder.identity)
                let body = try XCTUnwrap(try builder.body(for: batch))
                XCTAssertNil(keys[batch.key], "one key for two payloads: \(builder.identity)")
                keys[batch.key] = body
            }
        }
        XCTAssertEqual(Set(keys.values).count, keys.count, "two keys for one payload")
        // Open mHealth always expands: its form changes nothing.
        XCTAssertEqual(
            PayloadBuilder(format: .openMHealth, patientReference: nil, quantitySeries: .expand).identity,
            PayloadBuilder(format: .openMHealth, patientReference: nil, quantitySeries: .series).identity)
    }

    /// The native body, a series among samples, is byte for byte what `JSONEncoder` makes of the
    /// batch; in `expand` it is the batch of the series' quantities as samples.
    func testTheNativeBodyOfASeriesIsHealthJSON() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000.25)
        let series = try QuantitySeriesSample(
            id: ids.next(), type: .heartRate, unit: .countPerMinute,
            quantities: (0..<4).map { index in
                let date = start.addingTimeInterval(Double(index) * 1.002)
                return SeriesQuantity(value: 60.5 + Double(index), start: date, end: date)
            },
            device: device, metadata: [.syncIdentifier: .string("quantity-series:y"), .syncVersion: .integer(3)])
        guard case .quantity(let sample) = try spO2(97) else { return XCTFail("not a sample") }
        let batch = FollowerBatch(
            after: 0, through: 2, changes: [.stored(.quantity(sample), anchor: 1), .stored(.quantitySeries(series), anchor: 2)],
            payloadIdentity: "")
        let native = try XCTUnwrap(try PayloadBuilder(format: .native, patientReference: nil).body(for: batch))
        let expected = try HealthJSON.makeEncoder().encode(NativeBatch(quantitySeries: [series], samples: [sample]))
        XCTAssertEqual(String(decoding: native, as: UTF8.self), String(decoding: expected, as: UTF8.self))
        let expanded = try XCTUnwrap(try PayloadBuilder(format: .native, patientReference: nil, quantitySeries: .expand).body(for: batch))
        let decoder = HealthJSON.makeDecoder()
        let samples = NativeBatch(samples: [sample] + series.quantitySamples)
        // Through JSON both: dates read back at the microsecond.
        XCTAssertEqual(
            try decoder.decode(NativeBatch.self, from: expanded),
            try decoder.decode(NativeBatch.self, from: try HealthJSON.makeEncoder().encode(samples)))
    }

    // MARK: FHIR

    func testAFHIRSeriesIsOneObservationWithSampledDataThatEachVersionReplaces() async throws {
        let running = try await start(configuration {
            $0.format = .fhirR4
            $0.patientReference = "Patient/example"
        })
        // The fourth second's reading is missing, the third comes 20 ms late.
        let samples = try await stream([(71, 0), (72, 1), (73, 2.02), (75, 4), (90, 30)])
        try await finish(running)
        let a = samples[0].id

        let puts = server.requests().filter { $0.method == "POST" }.flatMap { request in
            ((request.body as? [String: Any])?["entry"] as? [[String: Any]]) ?? []
        }.filter { ($0["request"] as? [String: String])?["url"] == "Observation/\(a.uuidString.lowercased())" }
        XCTAssertEqual(puts.count, 5, "one PUT of the same resource per version")
        let observations = try puts.map { try XCTUnwrap($0["resource"] as? [String: Any]) }
        XCTAssertEqual(observations.map { $0["status"] as? String }, ["preliminary", "preliminary", "preliminary", "preliminary", "final"])
        let closed = try XCTUnwrap(observations.last)
        XCTAssertNil(closed["valueQuantity"])
        let sampled = try XCTUnwrap(closed["valueSampledData"] as? [String: Any])
        XCTAssertEqual(sampled["data"] as? String, "71 72 73 E 75", "a point per quantity on the grid, E where none came")
        XCTAssertEqual(sampled["dimensions"] as? Int, 1)
        XCTAssertEqual(try XCTUnwrap(sampled["period"] as? Double), 1000, accuracy: 5)
        let origin = try XCTUnwrap(sampled["origin"] as? [String: Any])
        XCTAssertEqual(origin["value"] as? Double, 0)
        XCTAssertEqual(origin["code"] as? String, "/min")
        XCTAssertEqual(origin["system"] as? String, "http://unitsofmeasure.org")
        let period = try XCTUnwrap(closed["effectivePeriod"] as? [String: String])
        XCTAssertEqual(period["start"], RFC3339.string(from: samples[0].startDate))
        XCTAssertEqual(period["end"], RFC3339.string(from: samples[3].endDate))
        let coding = try XCTUnwrap(((closed["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first)
        XCTAssertEqual(coding["code"] as? String, "8867-4", "the code the type's samples have")
        XCTAssertEqual(
            ((closed["contained"] as? [[String: Any]])?.first)?["serialNumber"] as? String, "C6A24B1D")
        XCTAssertEqual(try validate("fhir"), "ok \(puts.count + 1)")
    }

    func testFHIRExpandSendsAnObservationPerQuantityAndDeletesThemByTheSeriesTag() async throws {
        let running = try await start(configuration {
            $0.format = .fhirR4
            $0.patientReference = "Patient/example"
            $0.quantitySeries = .expand
        })
        let samples = try await stream(Self.readings)
        let a = samples[0].id
        _ = try await store.delete(.ids([a]))
        try await waitUntilSent()
        try await finish(running)

        let entries = server.requests().filter { $0.method == "POST" }.flatMap { request in
            ((request.body as? [String: Any])?["entry"] as? [[String: Any]]) ?? []
        }
        let requests = entries.compactMap { $0["request"] as? [String: String] }
        XCTAssertEqual(
            requests.map { $0["url"] ?? "" },
            (0..<5).map { "Observation/\(SampleID(quantity: $0, ofSeries: a).uuidString.lowercased())" }
                + ["Observation?_tag=https://healthgate.dev/fhir/CodeSystem/quantity-series|\(a.uuidString.lowercased())"])
        XCTAssertEqual(requests.map { $0["method"] ?? "" }, Array(repeating: "PUT", count: 5) + ["DELETE"])
        for (index, entry) in entries.prefix(5).enumerated() {
            let observation = try XCTUnwrap(entry["resource"] as? [String: Any])
            XCTAssertEqual((observation["valueQuantity"] as? [String: Any])?["value"] as? Double, [71, 72, 73, 74, 75][index])
            XCTAssertEqual(observation["status"] as? String, "final")
            let tag = try XCTUnwrap(((observation["meta"] as? [String: Any])?["tag"] as? [[String: String]])?.first)
            XCTAssertEqual(tag, ["system": "https://healthgate.dev/fhir/CodeSystem/quantity-series", "code": a.uuidString.lowercased()])
        }
        XCTAssertEqual(try validate("fhir"), "ok 6")
    }

    // MARK: Open mHealth

    /// A closed series' quantities are data points (an open one is not sent); deleting the
    /// series deletes each of them, in order until the repository holds no more, resuming where
    /// a failed DELETE left off.
    func testOpenMHealthSendsAClosedSeriesAsDataPointsAndItsDeletionDeletesEachOfThem() async throws {
        let running = try await start(configuration { $0.format = .openMHealth })
        let samples = try await stream(Self.readings)
        let a = samples[0].id
        XCTAssertEqual(try validate("omh"), "ok 5")
        let posts = server.requests().filter { $0.method == "POST" }
        XCTAssertEqual(posts.count, 1, "the open versions are not sent")
        let points = try XCTUnwrap(posts.first?.body as? [[String: Any]])
        let derived = (0..<5).map { SampleID(quantity: $0, ofSeries: a).uuidString }
        XCTAssertEqual(points.compactMap { ($0["header"] as? [String: Any])?["uuid"] as? String }, derived)
        XCTAssertEqual(
            points.compactMap { (($0["body"] as? [String: Any])?["heart_rate"] as? [String: Any])?["value"] as? Double },
            [71, 72, 73, 74, 75])

        // Every third request fails: the retries resume at the data point that failed.
        try await server.control(#"{"every": {"n": 3, "status": 503}}"#)
        _ = try await store.delete(.ids([a]))
        try await waitUntilSent()
        try await finish(running)
        let deletions = server.requests().filter { $0.method == "DELETE" }
        XCTAssertEqual(
            deletions.map(\.path), [0, 1, 2, 2, 3, 4, 4, 5].map { "/samples/\(SampleID(quantity: $0, ofSeries: a).uuidString)" })
        XCTAssertEqual(deletions.map(\.status), [200, 200, 503, 200, 200, 503, 200, 404])
    }

    /// A repository that answers 2xx to deleting what it does not hold never says where a
    /// series ended: the sink deletes every data point a series of the type can have, and says so.
    func testOpenMHealthDeletionStopsAtTheTypesLargestSeriesWhenNoDELETEAnswers404() async throws {
        let transport = AcceptingTransport()
        let running = try await start(configuration { $0.format = .openMHealth }, transports: [transport])
        let samples = try await stream([(71, 0), (72, 1)])
        _ = try await store.delete(.ids([samples[0].id]))
        try await waitUntilSent()
        try await finish(running)
        let deletions = transport.requests.filter { $0.method == "DELETE" }
        let limit = try XCTUnwrap(QuantityType.heartRate.seriesPolicy).maximumCount
        XCTAssertEqual(deletions.count, limit)
        XCTAssertEqual(
            deletions.map(\.url.lastPathComponent), (0..<limit).map { SampleID(quantity: $0, ofSeries: samples[0].id).uuidString })
        XCTAssertTrue(running.logs.contains("none with 404"), running.logs.entries.map(\.message).joined(separator: "\n"))
    }

    /// Deleting a series the repository never got (it was open) costs one request.
    func testOpenMHealthDeletionOfASeriesNeverSentStopsAtItsFirstDataPoint() async throws {
        let running = try await start(configuration { $0.format = .openMHealth })
        let samples = try await stream([(71, 0), (72, 1)])
        _ = try await store.delete(.ids([samples[0].id]))
        try await waitUntilSent()
        try await finish(running)
        let requests = server.requests()
        XCTAssertEqual(requests.map(\.method), ["DELETE"])
        XCTAssertEqual(requests.map(\.status), [404])
    }
}

/// A repository that answers 200 to every request, keeping them.
final class AcceptingTransport: HTTPTransport {
    private let kept = Mutex<[HTTPRequest]>([])

    var requests: [HTTPRequest] { kept.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        kept.withLock { $0.append(request) }
        return HTTPResponse(status: 200)
    }
}
