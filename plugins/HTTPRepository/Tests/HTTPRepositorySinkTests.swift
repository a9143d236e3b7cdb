import Foundation
import GatewayTesting
import HealthModel
import HealthStore
@testable import HTTPRepository
import AsyncPrimitives
import RemoteSinkKit
import GatewayRuntime
import SampleBus
import XCTest

/// The sink following a real store, against a real HTTP server on 127.0.0.1
/// (Fixtures/recording_server.py).
final class HTTPRepositorySinkTests: RepositoryAndStoreTestCase {
    // MARK: Formats

    func testNativeBatchIsGzippedHealthJSONWithIdempotencyKey() async throws {
        let series = HealthRecord.heartbeatSeries(try HeartbeatSeriesSample(
            id: ids.next(), start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_000_002),
            beats: [Heartbeat(timeSinceSeriesStart: 0.8, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.6, precededByGap: false)],
            device: device))
        // The two heart rates are one quantity series, named by the first one's uuid.
        let records = [try heartRate(71), try heartRate(72, at: 1), series, try quantity(.stepCount, 90, .count)]
        let running = try await start(configuration(), records: records)
        try await waitUntilSent()
        try await finish(running)

        let requests = server.requests()
        XCTAssertEqual(requests.count, 1)
        let request = try XCTUnwrap(requests.first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.status, 200)
        XCTAssertEqual(request.headers["Content-Encoding"], "gzip")
        XCTAssertEqual(request.headers["Content-Type"], "application/json")
        let expectedKey = try await firstBatch(of: running).key
        XCTAssertEqual(request.headers["Idempotency-Key"], expectedKey)
        XCTAssertEqual(Set(request.uuids), Set([records[0], records[2], records[3]].map(\.id.uuidString)))
        let body = try JSONSerialization.data(withJSONObject: request.body)
        let batch = try HealthJSON.makeDecoder().decode(NativeBatch.self, from: body)
        XCTAssertEqual(batch.samples.map(\.type), [.stepCount])
        XCTAssertEqual(batch.heartbeatSeries.map(\.id), [series.id])
        XCTAssertEqual(batch.quantitySeries.map(\.id), [records[0].id])
        XCTAssertEqual(batch.quantitySeries.first?.quantities.map(\.value), [71, 72])
        XCTAssertEqual(batch.quantitySeries.first?.device, device)
        XCTAssertTrue(batch.deleted.isEmpty)
        XCTAssertEqual(running.status.current?.records, 3)
        XCTAssertEqual(running.status.current?.details["lastHTTPStatus"], "200")
        XCTAssertEqual(running.status.current?.details["destination"], server.url)
    }

    func testNativeBodyIsByteIdenticalToHealthJSON() throws {
        let records = [try heartRate(60), try quantity(.distanceWalkingRunning, 12.5, .meter)]
        let batch = FollowerBatch(
            after: 0, through: 2, changes: records.enumerated().map { .stored($1, anchor: Int64($0 + 1)) }, payloadIdentity: "")
        let samples = records.compactMap { record -> QuantitySample? in
            if case .quantity(let sample) = record { return sample }
            return nil
        }
        let expected = try HealthJSON.makeEncoder().encode(NativeBatch(samples: samples))
        let body = try XCTUnwrap(try PayloadBuilder(format: .native, patientReference: nil).body(for: batch))
        XCTAssertEqual(String(decoding: body, as: UTF8.self), String(decoding: expected, as: UTF8.self))
    }

    /// A deletion and a new version of an object reach the repository after the first version:
    /// the native body lists deletions, and a new version carries its sync identifier and version.
    func testDeletionsAndNewVersionsTravelInTheNativeFormat() async throws {
        let first = try heartRate(70)
        let second = try heartRate(71, at: 1)
        let running = try await start(configuration(), records: [first, second])
        try await waitUntilSent()
        _ = try await store.delete(.ids([first.id]))
        let date = Date(timeIntervalSince1970: 1_800_000_050)
        let glucose = try QuantitySample(
            id: ids.next(), type: .bloodGlucose, quantity: Quantity(98, .milligramPerDeciliter), start: date, end: date, device: device,
            metadata: [.syncIdentifier: .string("meter-7/record-12"), .syncVersion: .integer(1)])
        // A generic observation (a Generic Health Sensor's reading with no sample type) travels with its codes.
        let generic = try QuantitySample(
            id: ids.next(), type: MDCNomenclature.genericType(observation: 8_454_260, unit: 9), quantity: Quantity(42, .count), start: date,
            end: date, device: device)
        try await store.write([.quantity(glucose), .quantity(generic)])
        // The meter corrects the record: a higher version under the same sync identifier.
        let corrected = try QuantitySample(
            id: ids.next(), type: .bloodGlucose, quantity: Quantity(101, .milligramPerDeciliter), start: date, end: date,
            device: device, metadata: [.syncIdentifier: .string("meter-7/record-12"), .syncVersion: .integer(2)])
        try await waitUntilSent()
        try await store.write([.quantity(corrected)])
        try await waitUntilSent()
        try await finish(running)
        let batches = try server.requests().map { request in
            try HealthJSON.makeDecoder().decode(NativeBatch.self, from: JSONSerialization.data(withJSONObject: request.body))
        }
        let deleted = batches.flatMap(\.deleted)
        // The two heart rates are one series, named by the first: deleting it deletes the series.
        XCTAssertEqual(Set(batches.flatMap(\.quantitySeries).map(\.id)), [first.id])
        XCTAssertTrue(deleted.contains(NativeBatch.Deletion(kind: .quantitySeries, type: "heartRate", uuid: first.id)), "\(deleted)")
        // The replaced version is a deletion; the new one carries its version.
        XCTAssertTrue(deleted.contains(NativeBatch.Deletion(kind: .quantity, type: "bloodGlucose", uuid: glucose.id)), "\(deleted)")
        XCTAssertEqual(batches.flatMap(\.samples).first { $0.id == generic.id }?.type.identifier, "mdc.8454260.9")
        let last = try XCTUnwrap(batches.flatMap(\.samples).last)
        XCTAssertEqual(last.id, corrected.id)
        XCTAssertEqual(last.metadata.syncIdentifier, "meter-7/record-12")
        XCTAssertEqual(last.metadata.syncVersion, 2)
        // Every body, deletions included, is what openapi.yaml specifies.
        let changes = batches.map { $0.samples.count + $0.quantitySeries.count + $0.deleted.count }.reduce(0, +)
        XCTAssertEqual(try validate("native"), "ok \(changes)")
    }

    func testFHIRBundleOfUpdatesAndDeletionsValidatesAsR4() async throws {
        let records = [
            try heartRate(64), try quantity(.stepCount, 120, .count), try quantity(.distanceWalkingRunning, 85, .meter),
            try quantity(.runningSpeed, 2.9, .meterPerSecond, seconds: 0),
        ]
        let running = try await start(configuration {
            $0.format = .fhirR4
            $0.patientReference = "Patient/example"
        }, records: records)
        let expectedKey = try await firstBatch(of: running).key
        try await waitUntilSent()
        _ = try await store.delete(.ids([records[1].id]))
        try await waitUntilSent()
        try await finish(running)
        XCTAssertEqual(try validate("fhir"), "ok 5")
        let requests = server.requests()
        XCTAssertEqual(requests.count, 2)
        let request = try XCTUnwrap(requests.first)
        XCTAssertEqual(request.headers["Content-Type"], "application/fhir+json")
        XCTAssertEqual(request.headers["Idempotency-Key"], expectedKey)
        let bundle = try XCTUnwrap(request.body as? [String: Any])
        let entries = try XCTUnwrap(bundle["entry"] as? [[String: Any]])
        func entry(_ record: HealthRecord) throws -> [String: Any] {
            try XCTUnwrap(entries.first { ($0["fullUrl"] as? String) == "urn:uuid:\(record.id.uuidString)" }, "no entry of \(record.id)")
        }
        // The heart rate is a series: its Observation has the code and device of the type's samples.
        let first = try entry(records[0])
        let uuid = records[0].id.uuidString
        let resourceID = uuid.lowercased()
        XCTAssertEqual(first["request"] as? [String: String], ["method": "PUT", "url": "Observation/\(resourceID)"])
        let observation = try XCTUnwrap(first["resource"] as? [String: Any])
        XCTAssertEqual(observation["id"] as? String, resourceID)
        let json = String(decoding: try JSONSerialization.data(withJSONObject: observation), as: UTF8.self)
        XCTAssertTrue(json.contains("\"8867-4\""), json)
        XCTAssertTrue(json.contains("vital-signs"))
        XCTAssertTrue(json.contains("\"code\":\"\\/min\"") || json.contains("\"code\":\"/min\""), json)
        XCTAssertTrue(json.contains("urn:uuid:\(uuid)"))
        XCTAssertTrue(json.contains("Patient/example") || json.contains("Patient\\/example"), json)
        XCTAssertTrue(json.contains("Polar Electro Oy"))
        // The contained Device's serial number is the one the device gave; its identifier stays
        // the gateway's local identifier, which is also the serial number of a device that gave none.
        func containedDevice(_ entry: [String: Any]) throws -> [String: Any] {
            let resource = try XCTUnwrap(entry["resource"] as? [String: Any])
            return try XCTUnwrap((resource["contained"] as? [[String: Any]])?.first)
        }
        let strap = try containedDevice(first)
        XCTAssertEqual(strap["serialNumber"] as? String, "C6A24B1D")
        XCTAssertEqual((strap["identifier"] as? [[String: Any]])?.first?["value"] as? String, "A0:9E:1A:00:11:22")
        XCTAssertEqual(try containedDevice(try entry(records[1]))["serialNumber"] as? String, "A0:9E:1A:00:11:22")
        let all = String(decoding: try JSONSerialization.data(withJSONObject: bundle), as: UTF8.self)
        XCTAssertTrue(all.contains("55423-8"))
        XCTAssertTrue(all.contains("41953-1"))
        let deletion = try XCTUnwrap((requests[1].body as? [String: Any])?["entry"] as? [[String: Any]])
        XCTAssertEqual(deletion.count, 1)
        XCTAssertEqual(
            deletion.first?["request"] as? [String: String],
            ["method": "DELETE", "url": "Observation/\(records[1].id.uuidString.lowercased())"])
    }

    func testOpenMHealthDataPointsValidateAndDeletionsAreDeleteRequests() async throws {
        // A heart rate with a sync identifier stays a sample (the store folds only readings
        // without one); a series is OpenMHealthSeriesTests' subject.
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let heartRate = HealthRecord.quantity(try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(80, .countPerMinute), start: date, end: date, device: device,
            metadata: [.syncIdentifier: .string("watch-1/80")]))
        let records = [
            heartRate, try quantity(.stepCount, 300, .count), try quantity(.distanceWalkingRunning, 240, .meter),
            try quantity(.runningSpeed, 3, .meterPerSecond),
        ]
        let running = try await start(configuration { $0.format = .openMHealth }, records: records)
        try await waitUntilSent()
        _ = try await store.delete(.ids([records[0].id]))
        try await waitUntilSent()
        try await finish(running)
        // Running speed has no Open mHealth schema: the sink passes it over.
        XCTAssertFalse(running.sink.follower.receiver.accepts(.stored(records[3], anchor: 4)))
        XCTAssertEqual(try validate("omh"), "ok 3")
        let requests = server.requests()
        XCTAssertEqual(requests.map(\.method), ["POST", "DELETE"])
        let points = try XCTUnwrap(requests[0].body as? [[String: Any]])
        let header = try XCTUnwrap(points.first?["header"] as? [String: Any])
        XCTAssertEqual(header["id"] as? String, records[0].id.uuidString)
        XCTAssertEqual((header["schema_id"] as? [String: String])?["name"], "heart-rate")
        XCTAssertEqual((header["acquisition_provenance"] as? [String: Any])?["source_name"] as? String, "Polar H10 (Polar Electro Oy H10)")
        XCTAssertEqual(requests[1].path, "/samples/\(records[0].id.uuidString.lowercased())")
    }

    // MARK: Blood-pressure correlations

    func bloodPressure(_ systolic: Double, _ diastolic: Double) throws -> HealthRecord {
        let date = Date(timeIntervalSince1970: 1_800_000_200)
        func member(_ type: QuantityType, _ value: Double) throws -> QuantitySample {
            try QuantitySample(
                id: ids.next(), type: type, quantity: Quantity(value, .millimeterOfMercury), start: date, end: date,
                device: device)
        }
        return .correlation(try .bloodPressure(
            id: ids.next(), systolic: try member(.bloodPressureSystolic, systolic),
            diastolic: try member(.bloodPressureDiastolic, diastolic), device: device))
    }

    func testNativeBatchCarriesCorrelations() async throws {
        let reading = try bloodPressure(121, 79)
        let records = [try heartRate(70), reading]
        let running = try await start(configuration(), records: records)
        try await waitUntilSent()
        try await finish(running)
        let request = try XCTUnwrap(server.requests().first)
        let body = try JSONSerialization.data(withJSONObject: request.body)
        let batch = try HealthJSON.makeDecoder().decode(NativeBatch.self, from: body)
        XCTAssertEqual(batch.correlations.map(HealthRecord.correlation), [reading])
        // The members are samples of the store too, sent with their correlation; the heart rate
        // is a series.
        XCTAssertEqual(batch.samples.count, 0)
        XCTAssertEqual(batch.quantitySeries.map(\.id), [records[0].id])
    }

    func testBloodPressureIsOneFHIRPanelObservationWithSystolicAndDiastolicComponents() async throws {
        let records = [
            try bloodPressure(138, 88), try quantity(.bodyMass, 72.5, .kilogram, seconds: 0),
            try quantity(.bodyTemperature, 37.2, .degreeCelsius, seconds: 0), try quantity(.oxygenSaturation, 97, .percent, seconds: 0),
            try quantity(.bloodGlucose, 5.5, .millimolePerLiterOfGlucose, seconds: 0),
        ]
        let running = try await start(configuration {
            $0.format = .fhirR4
            $0.patientReference = "Patient/example"
        }, records: records)
        try await waitUntilSent()
        try await finish(running)
        XCTAssertEqual(try validate("fhir"), "ok 5")
        let request = try XCTUnwrap(server.requests().first)
        let bundle = try XCTUnwrap(request.body as? [String: Any])
        let entries = try XCTUnwrap(bundle["entry"] as? [[String: Any]])
        let panel = try XCTUnwrap(entries.first?["resource"] as? [String: Any])
        let code = try XCTUnwrap((panel["code"] as? [String: Any])?["coding"] as? [[String: Any]])
        XCTAssertEqual(code.first?["code"] as? String, "85354-9")
        XCTAssertNil(panel["valueQuantity"])
        let components = try XCTUnwrap(panel["component"] as? [[String: Any]])
        let pairs = components.map { component -> (String?, Double?, String?) in
            let coding = ((component["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first
            let value = component["valueQuantity"] as? [String: Any]
            return (coding?["code"] as? String, value?["value"] as? Double, value?["code"] as? String)
        }
        XCTAssertEqual(pairs.map(\.0), ["8480-6", "8462-4"])
        XCTAssertEqual(pairs.map(\.1), [138, 88])
        XCTAssertEqual(pairs.map(\.2), ["mm[Hg]", "mm[Hg]"])
        XCTAssertEqual(
            (entries.first?["request"] as? [String: String])?["url"], "Observation/\(records[0].id.uuidString.lowercased())")
        let weight = try XCTUnwrap(entries[1]["resource"] as? [String: Any])
        let weightCode = try XCTUnwrap((weight["code"] as? [String: Any])?["coding"] as? [[String: Any]])
        XCTAssertEqual(weightCode.first?["code"] as? String, "29463-7")
        // Glucose sent in mmol/L goes out in the type's canonical mg/dL.
        let glucose = try XCTUnwrap(entries[4]["resource"] as? [String: Any])
        let glucoseValue = try XCTUnwrap(glucose["valueQuantity"] as? [String: Any])
        XCTAssertEqual(glucoseValue["value"] as? Double ?? 0, 5.5 * 18.015588000005408, accuracy: 1e-9)
        XCTAssertEqual(glucoseValue["code"] as? String, "mg/dL")
        let temperature = try XCTUnwrap(entries[2]["resource"] as? [String: Any])
        XCTAssertEqual((temperature["valueQuantity"] as? [String: Any])?["code"] as? String, "Cel")
    }

    func testBloodPressureIsAnOpenMHealthBloodPressureDataPoint() async throws {
        let reading = try bloodPressure(121, 79)
        let weight = try quantity(.bodyMass, 72.5, .kilogram, seconds: 0)
        let running = try await start(configuration { $0.format = .openMHealth }, records: [reading, weight])
        try await waitUntilSent()
        try await finish(running)
        XCTAssertFalse(running.sink.follower.receiver.accepts(.stored(weight, anchor: 1)), "body mass has no schema the sink writes")
        XCTAssertEqual(try validate("omh"), "ok 1")
        let request = try XCTUnwrap(server.requests().first)
        let points = try XCTUnwrap(request.body as? [[String: Any]])
        let header = try XCTUnwrap(points.first?["header"] as? [String: Any])
        XCTAssertEqual(header["uuid"] as? String, reading.id.uuidString)
        XCTAssertEqual((header["schema_id"] as? [String: String])?["name"], "blood-pressure")
        let body = try XCTUnwrap(points.first?["body"] as? [String: Any])
        XCTAssertEqual((body["systolic_blood_pressure"] as? [String: Any])?["value"] as? Double, 121)
        XCTAssertEqual((body["diastolic_blood_pressure"] as? [String: Any])?["unit"] as? String, "mmHg")
    }

    // MARK: Delivery guarantees

    func testOutageThenRecoveryDeliversEverySampleUnderOneKey() async throws {
        let running = try await start(configuration {
            $0.batchSize = 7
            $0.timeoutSeconds = 3
        })
        let first = try (0..<20).map { try spO2(80 + Double($0 % 20), at: Double($0)) }
        try await store.write(first)
        try await waitUntil("first samples delivered") { [server] in server!.acceptedCounts().count == 20 }
        server.stop()
        let second = try (20..<60).map { try spO2(97, at: Double($0)) }
        try await store.write(second)
        try await waitUntil("the sink noticed the outage") { running.status.current?.lastError?.contains("delivery failed") == true }
        try server.start()
        // Recovery comes with the next retry; a stop would cut the backoff short.
        try await waitUntil("every sample delivered after the outage") { [server] in server!.acceptedCounts().count == 60 }
        try await waitUntilSent()
        try await finish(running)
        // A batch the server stored just before it was killed is sent again after the outage
        // (at-least-once); it goes out under the key it was first sent with, so a repository
        // that de-duplicates by key stores each sample exactly once.
        let keys = server.acceptedKeys()
        XCTAssertEqual(Set(keys.keys), Set((first + second).map(\.id.uuidString)))
        XCTAssertEqual(keys.values.map(\.count).max(), 1, "a uuid was accepted under two Idempotency-Keys")
    }

    /// One request at a time: the batches go out full, in the store's order, each record once.
    func testBatchesGoOutFullAndInOrder() async throws {
        let records = try (0..<95).map { try spO2(90 + Double($0 % 10), at: Double($0)) }
        let running = try await start(configuration { $0.batchSize = 10 }, records: records)
        try await waitUntilSent()
        try await finish(running)
        let accepted = server.requests().filter { $0.status == 200 }
        XCTAssertEqual(accepted.flatMap(\.uuids), records.map(\.id.uuidString))
        XCTAssertEqual(accepted.map(\.uuids.count), Array(repeating: 10, count: 9) + [5])
    }

    /// Several requests wait for their answers at once, and the cursor stays before the oldest.
    func testRequestsInFlightSideBySideAndTheCursorWaitsForTheOldest() async throws {
        let records = try (0..<40).map { try spO2(97, at: Double($0)) }
        try await server.control(#"{"hold": [3, 3, 3]}"#)
        let running = try await start(configuration {
            $0.batchSize = 10
            $0.maxInFlight = 3
        }, records: records)
        try await waitUntil(timeout: .seconds(2.5), "three requests held at once") { [server] in server!.requests().count == 3 }
        let cursor = try await store.follower("repository")?.anchor
        XCTAssertEqual(cursor, 0, "acknowledged before the repository answered")
        try await waitUntilSent()
        try await finish(running)
        XCTAssertEqual(Set(server.acceptedCounts().keys), Set(records.map(\.id.uuidString)))
    }

    func testRetryAfterIsHonoured() async throws {
        let clock = ManualClock()
        try await server.control(#"{"retry_after": ["7", 429]}"#)
        let running = try await start(configuration(), clock: clock, records: [try spO2(97)])
        try await waitUntil("first attempt") { [server] in server!.requests().count == 1 }
        // The backoff and the follower's tick sleep on the clock.
        try await clock.waitForSleepers(2)
        XCTAssertEqual(server.requests().map(\.status), [429])
        clock.advance(by: .milliseconds(6900))
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(server.requests().count, 1, "retried before Retry-After elapsed")
        clock.advance(by: .milliseconds(200))
        try await waitUntil("retried") { [server] in server!.requests().count == 2 }
        try await waitUntilSent()
        try await finish(running)
        XCTAssertEqual(server.requests().map(\.status), [429, 200])
        XCTAssertEqual(server.requests()[0].headers["Idempotency-Key"], server.requests()[1].headers["Idempotency-Key"])
        XCTAssertTrue(running.logs.contains("(Retry-After)"))
    }

    func testHTTPDateRetryAfterAndBackoff() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        XCTAssertEqual(DeliveryPolicy.retryAfter("120", now: now), .seconds(120))
        XCTAssertEqual(DeliveryPolicy.retryAfter("Sun, 06 Nov 1994 08:49:47 GMT", now: now), .seconds(10))
        XCTAssertEqual(DeliveryPolicy.retryAfter("Sunday, 06-Nov-94 08:49:57 GMT", now: now), .seconds(20))
        XCTAssertEqual(DeliveryPolicy.retryAfter("Sun Nov  6 08:50:37 1994", now: now), .seconds(60))
        XCTAssertEqual(DeliveryPolicy.retryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now: now), .zero)
        XCTAssertNil(DeliveryPolicy.retryAfter("soon", now: now))
        let policy = DeliveryPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(10), jitter: 0.2)
        XCTAssertEqual(policy.delay(attempt: 1, random: 0.5), .milliseconds(500))
        XCTAssertEqual(policy.delay(attempt: 3, random: 0.5), .milliseconds(2000))
        XCTAssertEqual(policy.delay(attempt: 3, random: 0), .milliseconds(1600))
        XCTAssertEqual(policy.delay(attempt: 30, random: 1), .milliseconds(12000))
    }

    func testPoisonBatchIsBisectedAndOnlyTheBadSampleDeadLettered() async throws {
        let records = try (0..<8).map { try spO2(97, at: Double($0)) }
        let bad = records[5].id
        try await server.control(#"{"reject_uuid": "\#(bad.uuidString)"}"#)
        let running = try await start(configuration(), records: records)
        try await waitUntilSent()
        try await finish(running)
        let counts = server.acceptedCounts()
        XCTAssertEqual(Set(counts.keys), Set(records.map(\.id.uuidString)).subtracting([bad.uuidString]))
        XCTAssertEqual(counts.values.max(), 1)
        let letters = try await store.deadLetters(follower: "repository")
        XCTAssertEqual(letters.map(\.id), [bad])
        XCTAssertEqual(letters.first?.status, 400)
        XCTAssertTrue(letters.first?.response.contains("invalid sample") == true)
        XCTAssertEqual(running.status.current?.details["deadLetters"], "1")
        // Each half is its own request with its own key, first half first.
        XCTAssertEqual(server.requests().map(\.status), [400, 200, 400, 400, 200, 400, 200])
        XCTAssertEqual(Set(server.requests().map { $0.headers["Idempotency-Key"] ?? "" }).count, 7)
    }

    func testStopDuringABackoffEndsTheSinkAtOnceAndTheCursorStays() async throws {
        let clock = ManualClock()
        try await server.control(#"{"fail": [503]}"#)
        let records = try (0..<4).map { try spO2(97, at: Double($0)) }
        let running = try await start(configuration {
            $0.retry = .init(initialDelaySeconds: 600, maxDelaySeconds: 600, jitter: 0)
        }, clock: clock, records: records)
        try await waitUntil("first attempt") { [server] in server!.requests().count == 1 }
        try await clock.waitForSleepers(2)
        XCTAssertEqual(server.requests().map(\.status), [503])
        // The manual clock never advances: only the stop can end the backoff.
        try await finish(running)
        let cursor = try await store.follower("repository")?.anchor
        XCTAssertEqual(cursor, 0)
        XCTAssertEqual(server.requests().count, 1)
        XCTAssertTrue(running.logs.contains("sent at the next start"))
    }

    func testWrongTokenKeepsSamplesAndReportsAuthenticationFailure() async throws {
        let clock = ManualClock()
        let tokenFile = directory.appendingPathComponent("token")
        try "wrong-secret\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        try await server.control(#"{"token": "right-secret"}"#)
        let records = try (0..<3).map { try spO2(97, at: Double($0)) }
        let running = try await start(configuration {
            $0.auth.type = .bearer
            $0.auth.tokenFile = tokenFile.path
        }, clock: clock, records: records)
        // The receiver sets the detail when the 401 arrives; the follower reports the error after
        // it has the outcome: wait for both.
        try await waitUntil("refused") {
            running.status.current?.details["authError"] != nil && running.status.current?.lastError != nil
        }
        let status = try XCTUnwrap(running.status.current)
        XCTAssertEqual(status.details["authError"], "authentication failed (401): check the token file \(tokenFile.path)")
        XCTAssertTrue(status.lastError?.hasPrefix("authentication failed (401)") == true, status.lastError ?? "")
        XCTAssertFalse(running.logs.entries.contains { $0.message.contains("secret") }, "a secret reached the log")
        XCTAssertFalse("\(status)".contains("wrong-secret"))
        try "right-secret".write(to: tokenFile, atomically: true, encoding: .utf8)
        try await clock.waitForSleepers(2)
        clock.advance(by: .seconds(1))
        try await waitUntil("delivered with the fixed token") { [server] in server!.acceptedCounts().count == 3 }
        try await waitUntilSent()
        try await finish(running)
        XCTAssertNil(running.status.current?.details["authError"])
    }

    /// A crash mid-batch: at the next start the same batch goes out again as the same request.
    func testACrashedSinkSendsTheSameRequestAgainAtTheNextStart() async throws {
        let clock = ManualClock()
        try await server.control(#"{"fail": [503, 503, 503]}"#)
        let records = try (0..<5).map { try spO2(97, at: Double($0)) }
        let first = try await start(configuration(), clock: clock, records: records)
        try await waitUntil("first attempt") { [server] in server!.requests().count == 1 }
        // A crash: the task is cancelled mid-backoff and the sink value is gone.
        first.task.cancel()
        _ = try? await first.task.value
        try await server.control(#"{"reset": true}"#)
        let second = try await start(configuration())
        try await waitUntilSent()
        try await finish(second)
        let requests = server.requests()
        XCTAssertEqual(requests.map(\.status), [503, 200])
        XCTAssertEqual(requests[0].headers["Idempotency-Key"], requests[1].headers["Idempotency-Key"])
        XCTAssertEqual(requests[0].uuids, requests[1].uuids)
        XCTAssertEqual(Set(server.acceptedCounts().keys), Set(records.map(\.id.uuidString)))
    }

    /// Issue 56: a key names one payload, also when the configuration changes between runs. A
    /// batch refused (503) and left at a crash is sent by each next run with other settings (no
    /// gzip, FHIR, another patient): each time another payload under another key, to a
    /// repository that keeps each key's fingerprint and answers 422 to a key reused with another
    /// payload. Back at the first settings, it is the first payload under the first key.
    func testABatchSentAgainWithOtherSettingsIsSentUnderAnotherKey() async throws {
        let clock = ManualClock()
        try await server.control(#"{"idempotency": true}"#)
        try await store.write(try (0..<5).map { try spO2(97, at: Double($0)) })
        let settings: [(inout HTTPRepositoryConfiguration) -> Void] = [
            { _ in },
            { $0.gzip = false },
            { $0.format = .fhirR4; $0.patientReference = "Patient/a" },
            { $0.format = .fhirR4; $0.patientReference = "Patient/b" },
        ]
        for (run, change) in settings.enumerated() {
            try await server.control(#"{"fail": [503]}"#)
            let crashed = try await start(configuration(change), clock: clock)
            try await waitUntil("attempt \(run + 1)") { [server] in server!.requests().count >= run + 1 }
            crashed.task.cancel()
            _ = try? await crashed.task.value
        }
        let last = try await start(configuration())
        try await waitUntilSent()
        try await finish(last)
        let requests = server.requests()
        XCTAssertEqual(requests.map(\.status), [503, 503, 503, 503, 200])
        let keys = requests.map { $0.headers["Idempotency-Key"] ?? "" }
        XCTAssertEqual(Set(keys.prefix(4)).count, 4, "one key for two payloads: \(keys)")
        XCTAssertEqual(Set(requests.prefix(4).map(\.fingerprint)).count, 4)
        XCTAssertEqual(keys.last, keys.first, "the same payload under another key")
        XCTAssertEqual(requests.last?.fingerprint, requests.first?.fingerprint)
    }

    func testDeadLettersCanBeRetried() async throws {
        let records = try (0..<2).map { try spO2(97, at: Double($0)) }
        try await server.control(#"{"reject_uuid": "\#(records[1].id.uuidString)"}"#)
        let running = try await start(configuration(), records: records)
        try await waitUntilSent()
        var letters = try await store.deadLetters()
        XCTAssertEqual(letters.count, 1)
        try await server.control(#"{"reset": true}"#)
        let marked = try await store.retryDeadLetters(ids: [records[1].id])
        XCTAssertEqual(marked, 1)
        try await waitUntil("the dead letter was sent") { [store] in try await store!.deadLetters().isEmpty }
        try await finish(running)
        XCTAssertEqual(Set(server.acceptedCounts().keys), Set(records.map(\.id.uuidString)))
        letters = try await store.deadLetters()
        XCTAssertTrue(letters.isEmpty)
    }

    // MARK: TLS

    /// HTTPS verifies certificates by default, and `caFile` makes a private CA trusted.
    func testHTTPSTrustsACustomCAFileAndRejectsAnUnknownCertificateByDefault() async throws {
        let certificate = directory.appendingPathComponent("repository-cert.pem")
        let key = directory.appendingPathComponent("repository-key.pem")
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key.path, "-out", certificate.path,
        ]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        XCTAssertEqual(openssl.terminationStatus, 0, "openssl req failed")
        server.stop()
        server = RecordingServer(directory: directory, tls: (certificate, key))
        try server.start()
        XCTAssertTrue(server.url.hasPrefix("https://127.0.0.1:"))

        // The system store does not know this self-signed certificate: no request gets through.
        let request = HTTPRequest(url: try XCTUnwrap(URL(string: server.url)), headers: [], body: Data("{}".utf8), timeout: 10)
        do {
            _ = try await CurlTransport().send(request)
            XCTFail("a self-signed certificate was accepted without a CA file")
        } catch let error as HTTPTransportError {
            XCTAssertTrue(error.reason.lowercased().contains("certificate"), error.reason)
        }
        XCTAssertTrue(server.requests().isEmpty)

        // With the certificate as the CA file, the sink delivers over HTTPS.
        let records = [try spO2(97), try spO2(98, at: 1)]
        let running = try await start(configuration { $0.caFile = certificate.path }, records: records)
        try await waitUntilSent()
        try await finish(running)
        XCTAssertEqual(Set(server.acceptedCounts().keys), Set(records.map(\.id.uuidString)))

        // A CA file only makes sense for https, and must be readable: both fail at start-up.
        let environment = TestEnvironment.make(directory: directory, store: store)
        XCTAssertThrowsError(
            try HTTPRepositoryConfiguration(url: "http://127.0.0.1:9/x").with { $0.caFile = certificate.path }.validated(in: environment)
        ) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "caFile")
        }
    }

    // MARK: Configuration and helpers

    func testConfigurationRefusesInlineSecretsAnUnreadableCAFileAndAMissingStore() throws {
        let inline = #"{"url": "https://repo.example/samples", "auth": {"type": "bearer", "token": "abc"}}"#
        XCTAssertThrowsError(try HealthJSON.makeDecoder().decode(HTTPRepositoryConfiguration.self, from: Data(inline.utf8)))
        // Old names: the one every remote sink shares and the sink's own.
        for (old, new) in ["outbox": "follow", "batchIntervalMilliseconds": "batchIntervalSeconds"] {
            let text = #"{"url": "https://repo.example/samples", "\#(old)": 1}"#
            XCTAssertThrowsError(try ConfigurationJSONParser.parse(text.utf8).decodeStrictly(HTTPRepositoryConfiguration.self)) {
                XCTAssertTrue("\($0)".contains("did you mean \"\(new)\""), "\($0)")
            }
        }
        let environment = TestEnvironment.make(directory: directory, store: store)
        XCTAssertThrowsError(
            try HTTPRepositoryConfiguration(url: "https://repo.example/x").with { $0.caFile = "/etc/ca.pem" }.validated(in: environment)
        ) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "caFile")
        }
        XCTAssertThrowsError(try HTTPRepositoryConfiguration(url: "https://user:pw@repo.example/x").validated(in: environment))
        XCTAssertThrowsError(
            try HTTPRepositoryConfiguration(url: "https://repo.example/x").with { $0.format = .fhirR4 }.validated(in: environment))
        let noStore = TestEnvironment.make(directory: directory)
        XCTAssertThrowsError(try HTTPRepositorySink(
            settings: HTTPRepositoryConfiguration(url: "https://repo.example/x").validated(in: noStore), environment: noStore)
        ) { error in
            XCTAssertTrue("\(error)".contains("no store"), "\(error)")
        }
    }

    /// The outbox's settings are gone: the key is refused with the one to use.
    func testTheOldOutboxKeyNamesTheFollowBlock() throws {
        let json = #"{"url": "https://repo.example/x", "outbox": {"maxBytes": 100000}}"#
        XCTAssertThrowsError(try ConfigurationJSONParser.parse(Data(json.utf8)).decodeStrictly(HTTPRepositoryConfiguration.self)) { error in
            XCTAssertTrue("\(error)".contains("follow"), "\(error)")
        }
        let follow = #"{"url": "https://repo.example/x", "follow": {"startFrom": "now", "maxBytes": 100000, "maxAgeSeconds": 60}}"#
        let decoded = try ConfigurationJSONParser.parse(Data(follow.utf8)).decodeStrictly(HTTPRepositoryConfiguration.self)
        XCTAssertEqual(decoded.follow, FollowConfiguration(startFrom: .now, maxBytes: 100_000, maxAgeSeconds: 60))
    }

    func testSampleConfigDecodes() throws {
        let url = RecordingServer.packageRoot.appendingPathComponent("plugins/HTTPRepository/sample-config.json")
        let configuration = try GatewayConfiguration.load(from: url)
        for sink in configuration.sinks where sink.kind == HTTPRepositorySink.kind {
            let decoded = try sink.config.decodeStrictly(HTTPRepositoryConfiguration.self)
            XCTAssertFalse(decoded.url.isEmpty)
        }
        XCTAssertTrue(configuration.sinks.contains { $0.kind == HTTPRepositorySink.kind })
    }

    func testBatchKeysFollowTheChangesAnchorsAndUUIDs() throws {
        let a = try heartRate(60), b = try heartRate(61, at: 1)
        let identity = PayloadBuilder(format: .native, patientReference: nil).identity
        let one = FollowerBatch(after: 0, through: 2, changes: [.stored(a, anchor: 1), .stored(b, anchor: 2)], payloadIdentity: identity)
        let same = FollowerBatch(after: 0, through: 2, changes: [.stored(a, anchor: 1), .stored(b, anchor: 2)], payloadIdentity: identity)
        let moved = FollowerBatch(after: 0, through: 3, changes: [.stored(a, anchor: 1), .stored(b, anchor: 3)], payloadIdentity: identity)
        let lost = FollowerBatch(after: 0, through: 2, changes: [.stored(a, anchor: 1)], payloadIdentity: identity)
        XCTAssertEqual(one.key, same.key)
        XCTAssertNotEqual(one.key, moved.key, "a later version of an object is another batch")
        XCTAssertNotEqual(one.key, lost.key, "a batch that lost a change is another batch")
        XCTAssertEqual(one.part(0..<1).key, lost.key, "a half's key is the key of what it carries")
        XCTAssertTrue(one.key.wholeMatch(of: /hg2-[0-9a-f]{32}/) != nil, one.key)
    }

    /// A key names one body: sinks whose settings give different bodies for the same changes
    /// (format, the series form, FHIR's patient, gzip) have different payload identities, and
    /// the same settings the same one.
    func testThePayloadIdentityNamesEverySettingThatShapesTheBody() async throws {
        let variants: [(HTTPRepositoryConfiguration) -> HTTPRepositoryConfiguration] = [
            { $0 },
            { $0.with { $0.gzip = false } },
            { $0.with { $0.quantitySeries = .expand } },
            { $0.with { $0.format = .fhirR4; $0.patientReference = "Patient/a" } },
            { $0.with { $0.format = .fhirR4; $0.patientReference = "Patient/b" } },
            { $0.with { $0.format = .fhirR4; $0.patientReference = "Patient/b"; $0.gzip = false } },
            { $0.with { $0.format = .fhirR4; $0.patientReference = "Patient/b"; $0.quantitySeries = .expand } },
            { $0.with { $0.format = .openMHealth } },
            // Settings that leave the body as it is (Open mHealth always expands).
            { $0.with { $0.batchSize = 7; $0.timeoutSeconds = 3; $0.maxInFlight = 2 } },
            { $0.with { $0.format = .openMHealth; $0.quantitySeries = .expand } },
        ]
        var identities: [String] = []
        for variant in variants {
            let environment = TestEnvironment.make(name: "repository", directory: directory, store: store)
            let configuration = variant(configuration())
            let sink = try HTTPRepositorySink(
                settings: configuration.validated(in: environment), environment: environment,
                transports: [CurlTransport(caFile: nil)], random: { 0.5 })
            identities.append(sink.follower.receiver.payloadIdentity)
        }
        XCTAssertEqual(Set(identities.prefix(8)).count, 8, "\(identities)")
        XCTAssertEqual(identities[8], identities[0])
        XCTAssertEqual(identities[9], identities[7])
        // `expand` writes the bodies of the releases before series: a batch begun before the
        // upgrade keeps its key.
        XCTAssertEqual(identities[2], "content-encoding=gzip format=native")
        XCTAssertEqual(identities[0], "content-encoding=gzip format=native quantitySeries=series")
    }

    /// The document lists exactly the quantity types the gateway knows.
    func testTheOpenAPIDocumentNamesEveryQuantityType() throws {
        let document = try String(
            contentsOf: RecordingServer.packageRoot.appendingPathComponent("plugins/HTTPRepository/openapi.yaml"), encoding: .utf8)
        let start = try XCTUnwrap(document.range(of: "enum: [heartRate"))
        let end = try XCTUnwrap(document.range(of: "]", range: start.upperBound..<document.endIndex))
        let listed = document[start.lowerBound..<end.lowerBound].dropFirst("enum: [".count)
            .split(whereSeparator: { ", \n".contains($0) }).map(String.init)
        XCTAssertEqual(listed, QuantityType.builtIn.map(\.identifier))
    }

    func testGzipRoundTrip() throws {
        let text = Data(String(repeating: "{\"heartRate\":72}", count: 1000).utf8)
        let compressed = try Gzip.compress(text)
        XCTAssertEqual(Array(compressed.prefix(2)), [0x1f, 0x8b])
        XCTAssertLessThan(compressed.count, text.count / 10)
        XCTAssertEqual(try Gzip.decompress(compressed), text)
    }
}
