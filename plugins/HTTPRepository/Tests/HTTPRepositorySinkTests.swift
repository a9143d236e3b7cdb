import Foundation
import GatewayTesting
import HealthModel
import HTTPRepository
import RemoteOutbox
import SampleBus
import XCTest

/// The sink against a real HTTP server on 127.0.0.1 (Fixtures/recording_server.py).
final class HTTPRepositorySinkTests: XCTestCase {
    var directory: URL!
    var server: RecordingServer!
    let ids = SampleIDGenerator(seed: 7)

    override func setUpWithError() throws {
        directory = try TestEnvironment.temporaryDirectory("http-repository")
        server = RecordingServer(directory: directory)
        try server.start()
    }

    override func tearDownWithError() throws {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Helpers

    let device = Device(
        name: "Polar H10", manufacturer: "Polar Electro Oy", model: "H10", hardwareVersion: "1.0",
        firmwareVersion: "5.0.0", softwareVersion: "3.1", localIdentifier: "A0:9E:1A:00:11:22")

    func heartRate(_ bpm: Double, at offset: Double = 0) throws -> HealthRecord {
        let date = Date(timeIntervalSince1970: 1_800_000_000 + offset)
        return .quantity(try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: date, end: date,
            device: device, metadata: [.heartRateSensorLocation: .string("chest")]))
    }

    func quantity(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, seconds: Double = 60) throws -> HealthRecord {
        let start = Date(timeIntervalSince1970: 1_800_000_100)
        return .quantity(try QuantitySample(
            id: ids.next(), type: type, quantity: Quantity(value, unit), start: start,
            end: start.addingTimeInterval(seconds), device: device))
    }

    struct Running {
        var sink: HTTPRepositorySink
        var feed: @Sendable ([HealthRecord]) async -> Void
        var finish: @Sendable () -> Void
        var inbox: SinkInbox
        var task: Task<Void, any Error>
        var status: StatusReporter
        var logs: RecordingLogSink
        var done: Flag
    }

    final class Flag: @unchecked Sendable {
        // Guarded by `lock`.
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
        func set() { lock.lock(); value = true; lock.unlock() }
    }

    func configuration(_ changes: (inout HTTPRepositoryConfiguration) -> Void = { _ in }) -> HTTPRepositoryConfiguration {
        var configuration = HTTPRepositoryConfiguration(url: server.url, batchIntervalSeconds: 0)
        configuration.retry = .init(initialDelaySeconds: 0.02, maxDelaySeconds: 0.2, jitter: 0.2)
        changes(&configuration)
        return configuration
    }

    func start(
        _ configuration: HTTPRepositoryConfiguration, clock: any GatewayClock = SystemClock(),
        variables: [String: String] = [:], records: [HealthRecord] = [], queue: QueueConfiguration = QueueConfiguration()
    ) async throws -> Running {
        let logs = RecordingLogSink()
        let environment = TestEnvironment.make(
            name: "repository", clock: clock, directory: directory, variables: variables, logSink: logs)
        let sink = try HTTPRepositorySink(
            configuration: configuration, environment: environment, transport: CurlTransport(caFile: configuration.caFile),
            random: { 0.5 })
        let (inbox, feed, finish) = SinkInbox.standalone(configuration: queue)
        // Records fed before the sink starts arrive in one inbox batch, so in one request.
        await feed(records.filter(sink.accepts))
        let status = StatusBoard().register(name: "repository", kind: HTTPRepositorySink.kind, role: .sink)
        let context = SinkContext(logger: environment.logger, clock: clock, status: status)
        let done = Flag()
        let task = Task {
            defer { done.set() }
            try await sink.run(inbox: inbox, context: context)
        }
        return Running(sink: sink, feed: feed, finish: finish, inbox: inbox, task: task, status: status, logs: logs, done: done)
    }

    func finish(_ running: Running, file: StaticString = #filePath, line: UInt = #line) async throws {
        running.finish()
        let task = running.task
        let done = running.done
        do {
            try await waitUntil(timeout: .seconds(30), "the sink to drain and return") {
                done.isSet
            }
        } catch {
            XCTFail("the sink did not return; its log:\n" + running.logs.entries.map { "\($0.level) \($0.message)" }.joined(separator: "\n"),
                    file: file, line: line)
            throw error
        }
        try await task.value
    }

    func validate(_ kind: String) throws -> String {
        let python = RecordingServer.packageRoot.appendingPathComponent(".build/pyenv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            XCTFail("the validators' virtual environment is missing: run scripts/install-test-python")
            return ""
        }
        let process = Process()
        process.executableURL = python
        process.arguments = [
            RecordingServer.fixtures.appendingPathComponent("validate_payloads.py").path, kind, server.recording.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: Formats

    func testNativeBatchIsGzippedHealthJSONWithIdempotencyKey() async throws {
        let series = HealthRecord.heartbeatSeries(try HeartbeatSeriesSample(
            id: ids.next(), start: Date(timeIntervalSince1970: 1_800_000_000), end: Date(timeIntervalSince1970: 1_800_000_002),
            beats: [Heartbeat(timeSinceSeriesStart: 0.8, precededByGap: false), Heartbeat(timeSinceSeriesStart: 1.6, precededByGap: false)],
            device: device))
        let records = [try heartRate(71), try heartRate(72, at: 1), series, try quantity(.stepCount, 90, .count)]
        let running = try await start(configuration(), records: records)
        try await finish(running)

        let requests = server.requests()
        XCTAssertEqual(requests.count, 1)
        let request = try XCTUnwrap(requests.first)
        XCTAssertEqual(request.status, 200)
        XCTAssertEqual(request.headers["Content-Encoding"], "gzip")
        XCTAssertEqual(request.headers["Content-Type"], "application/json")
        XCTAssertEqual(request.headers["Idempotency-Key"], PayloadBuilder.idempotencyKey(for: records.map(\.id).reversed()))
        XCTAssertEqual(Set(request.uuids), Set(records.map(\.id.uuidString)))
        let body = try JSONSerialization.data(withJSONObject: request.body)
        let batch = try HealthJSON.makeDecoder().decode(NativeBatch.self, from: body)
        XCTAssertEqual(batch.samples.count, 3)
        XCTAssertEqual(batch.heartbeatSeries.map(\.id), [series.id])
        XCTAssertEqual(batch.samples.first?.device, device)
        XCTAssertEqual(running.sink.outbox.statistics.count, 0)
        XCTAssertEqual(running.status.current?.records, 4)
        XCTAssertEqual(running.status.current?.details["lastHTTPStatus"], "200")
    }

    func testNativeBodyIsByteIdenticalToHealthJSON() throws {
        let records = [try heartRate(60), try quantity(.distanceWalkingRunning, 12.5, .meter)]
        let encoder = HealthJSON.makeEncoder()
        let entries = try records.map { record in
            OutboxRecord(
                id: record.id, kind: record.kind,
                payload: try StoredPayload.encode(record, encoder: encoder), enqueuedAt: Date())
        }
        let samples = records.compactMap { record -> QuantitySample? in
            if case .quantity(let sample) = record { return sample }
            return nil
        }
        let expected = try encoder.encode(NativeBatch(samples: samples))
        XCTAssertEqual(String(decoding: PayloadBuilder(format: .native, patientReference: nil).body(for: entries), as: UTF8.self),
                       String(decoding: expected, as: UTF8.self))
    }

    func testFHIRBundleValidatesAsR4() async throws {
        let records = [
            try heartRate(64), try quantity(.stepCount, 120, .count), try quantity(.distanceWalkingRunning, 85, .meter),
            try quantity(.runningSpeed, 2.9, .meterPerSecond, seconds: 0),
        ]
        let running = try await start(configuration {
            $0.format = .fhirR4
            $0.patientReference = "Patient/example"
        }, records: records)
        try await finish(running)
        XCTAssertEqual(try validate("fhir"), "ok 4")
        let request = try XCTUnwrap(server.requests().first)
        XCTAssertEqual(request.headers["Content-Type"], "application/fhir+json")
        XCTAssertEqual(request.headers["Idempotency-Key"], PayloadBuilder.idempotencyKey(for: records.map(\.id)))
        let bundle = try XCTUnwrap(request.body as? [String: Any])
        let entries = try XCTUnwrap(bundle["entry"] as? [[String: Any]])
        let first = try XCTUnwrap(entries.first)
        let uuid = records[0].id.uuidString
        XCTAssertEqual((first["request"] as? [String: String])?["ifNoneExist"], "identifier=urn:ietf:rfc:3986|urn:uuid:\(uuid)")
        let observation = try XCTUnwrap(first["resource"] as? [String: Any])
        let json = String(decoding: try JSONSerialization.data(withJSONObject: observation), as: UTF8.self)
        XCTAssertTrue(json.contains("\"8867-4\""), json)
        XCTAssertTrue(json.contains("vital-signs"))
        XCTAssertTrue(json.contains("\"code\":\"\\/min\"") || json.contains("\"code\":\"/min\""), json)
        XCTAssertTrue(json.contains("urn:uuid:\(uuid)"))
        XCTAssertTrue(json.contains("Patient/example") || json.contains("Patient\\/example"), json)
        XCTAssertTrue(json.contains("Polar Electro Oy"))
        let all = String(decoding: try JSONSerialization.data(withJSONObject: bundle), as: UTF8.self)
        XCTAssertTrue(all.contains("55423-8"))
        XCTAssertTrue(all.contains("41953-1"))
    }

    func testOpenMHealthDataPointsValidateAgainstTheSchemas() async throws {
        let records = [
            try heartRate(80), try quantity(.stepCount, 300, .count), try quantity(.distanceWalkingRunning, 240, .meter),
            try quantity(.runningSpeed, 3, .meterPerSecond),
        ]
        let running = try await start(configuration { $0.format = .openMHealth }, records: records)
        try await finish(running)
        // Running speed has no Open mHealth schema: the sink does not take it.
        XCTAssertFalse(running.sink.accepts(records[3]))
        XCTAssertEqual(try validate("omh"), "ok 3")
        let request = try XCTUnwrap(server.requests().first)
        let points = try XCTUnwrap(request.body as? [[String: Any]])
        let header = try XCTUnwrap(points.first?["header"] as? [String: Any])
        XCTAssertEqual(header["id"] as? String, records[0].id.uuidString)
        XCTAssertEqual((header["schema_id"] as? [String: String])?["name"], "heart-rate")
        XCTAssertEqual((header["acquisition_provenance"] as? [String: Any])?["source_name"] as? String, "Polar H10 (Polar Electro Oy H10)")
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
        try await finish(running)
        let request = try XCTUnwrap(server.requests().first)
        let body = try JSONSerialization.data(withJSONObject: request.body)
        let batch = try HealthJSON.makeDecoder().decode(NativeBatch.self, from: body)
        XCTAssertEqual(batch.correlations.map(HealthRecord.correlation), [reading])
        XCTAssertEqual(batch.samples.count, 1)
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
            (entries.first?["request"] as? [String: String])?["ifNoneExist"],
            "identifier=urn:ietf:rfc:3986|urn:uuid:\(records[0].id.uuidString)")
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
        try await finish(running)
        XCTAssertFalse(running.sink.accepts(weight), "body mass has no schema the sink writes")
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

    func testOutageThenRecoveryDeliversEverySampleExactlyOnce() async throws {
        let running = try await start(configuration {
            $0.batchSize = 7
            $0.timeoutSeconds = 3
        })
        let first = try (0..<20).map { try heartRate(60 + Double($0), at: Double($0)) }
        await running.feed(first)
        try await waitUntil("first samples delivered") { [server] in server!.acceptedCounts().count == 20 }
        server.stop()
        let second = try (20..<60).map { try heartRate(60, at: Double($0)) }
        await running.feed(second)
        try await waitUntil("the sink noticed the outage") { running.status.current?.lastError?.contains("delivery failed") == true }
        XCTAssertGreaterThan(running.sink.outbox.statistics.count, 0)
        try server.start()
        // Recovery comes with the next retry; a stop (finish) would cut the backoff short.
        try await waitUntil("every sample delivered after the outage") { [server] in server!.acceptedCounts().count == 60 }
        try await finish(running)
        // A batch the server stored just before it was killed is sent again after the outage
        // (at-least-once); it goes out under the key it was first sent with, so a repository
        // that de-duplicates by key stores each sample exactly once.
        let keys = server.acceptedKeys()
        XCTAssertEqual(Set(keys.keys), Set((first + second).map(\.id.uuidString)))
        XCTAssertEqual(keys.values.map(\.count).max(), 1, "a uuid was accepted under two Idempotency-Keys")
        XCTAssertEqual(running.sink.outbox.statistics.count, 0)
    }

    /// An inbox batch several batches long is encoded concurrently, one task per batch, and
    /// stored in order: the batches go out full, in the order the records came, each record once.
    func testBatchesEncodedConcurrentlyGoOutFullAndInOrder() async throws {
        let records = try (0..<95).map { try heartRate(60 + Double($0 % 50), at: Double($0)) }
        let running = try await start(configuration { $0.batchSize = 10 }, records: records)
        try await waitUntil("every sample delivered") { [server] in server!.acceptedCounts().count == 95 }
        try await finish(running)
        let accepted = server.requests().filter { $0.status == 200 }
        XCTAssertEqual(accepted.flatMap(\.uuids), records.map(\.id.uuidString))
        XCTAssertEqual(accepted.map(\.uuids.count), Array(repeating: 10, count: 9) + [5])
        XCTAssertEqual(
            accepted.map { $0.headers["Idempotency-Key"] },
            stride(from: 0, to: 95, by: 10).map { PayloadBuilder.idempotencyKey(for: records[$0..<min($0 + 10, 95)].map(\.id)) })
    }

    func testRetryAfterIsHonoured() async throws {
        let clock = ManualClock()
        try await server.control(#"{"retry_after": ["7", 429]}"#)
        let running = try await start(configuration(), clock: clock, records: [try heartRate(70)])
        try await clock.waitForSleepers(1)
        XCTAssertEqual(server.requests().map(\.status), [429])
        clock.advance(by: .milliseconds(6900))
        XCTAssertEqual(clock.sleeperCount, 1, "retried before Retry-After elapsed")
        clock.advance(by: .milliseconds(200))
        try await waitUntil("retried") { [server] in server!.requests().count == 2 }
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
        let records = try (0..<8).map { try heartRate(60, at: Double($0)) }
        let bad = records[5].id
        try await server.control(#"{"reject_uuid": "\#(bad.uuidString)"}"#)
        let running = try await start(configuration(), records: records)
        try await finish(running)
        let counts = server.acceptedCounts()
        XCTAssertEqual(Set(counts.keys), Set(records.map(\.id.uuidString)).subtracting([bad.uuidString]))
        XCTAssertEqual(counts.values.max(), 1)
        let letters = try await running.sink.outbox.deadLetters()
        XCTAssertEqual(letters.map(\.id), [bad])
        XCTAssertEqual(letters.first?.status, 400)
        XCTAssertTrue(letters.first?.response.contains("invalid sample") == true)
        XCTAssertEqual(running.status.current?.details["deadLetters"], "1")
        XCTAssertEqual(running.sink.outbox.statistics.count, 0)
        // Halves carry their parent's key with .0 or .1 appended, first half first.
        let parent = PayloadBuilder.idempotencyKey(for: records.map(\.id))
        XCTAssertEqual(
            server.requests().map { $0.headers["Idempotency-Key"] ?? "" },
            [parent, "\(parent).0", "\(parent).1", "\(parent).1.0", "\(parent).1.0.0", "\(parent).1.0.1", "\(parent).1.1"])
        XCTAssertEqual(server.requests().map(\.status), [400, 200, 400, 400, 200, 400, 200])
    }

    func testStopDuringABackoffEndsTheSinkAtOnceAndKeepsTheRecords() async throws {
        let clock = ManualClock()
        try await server.control(#"{"fail": [503]}"#)
        let records = try (0..<4).map { try heartRate(60, at: Double($0)) }
        let running = try await start(configuration {
            $0.retry = .init(initialDelaySeconds: 600, maxDelaySeconds: 600, jitter: 0)
        }, clock: clock, records: records)
        try await clock.waitForSleepers(1)
        XCTAssertEqual(server.requests().map(\.status), [503])
        // The manual clock never advances: only the end of the inbox can end the backoff.
        try await finish(running)
        XCTAssertEqual(running.sink.outbox.statistics.count, 4)
        XCTAssertEqual(server.requests().count, 1)
        XCTAssertTrue(running.logs.contains("they are delivered at the next start"))
    }

    func testWrongTokenKeepsSamplesAndReportsAuthenticationFailure() async throws {
        let clock = ManualClock()
        let tokenFile = directory.appendingPathComponent("token")
        try "wrong-secret\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        try await server.control(#"{"token": "right-secret"}"#)
        let records = try (0..<3).map { try heartRate(60, at: Double($0)) }
        let running = try await start(configuration {
            $0.auth = .init(type: .bearer, tokenFile: tokenFile.path)
        }, clock: clock, records: records)
        try await clock.waitForSleepers(1)
        let status = try XCTUnwrap(running.status.current)
        XCTAssertEqual(status.details["authError"], "authentication failed (401): check the token file \(tokenFile.path)")
        XCTAssertTrue(status.lastError?.hasPrefix("authentication failed (401): check the token file") == true)
        XCTAssertEqual(running.sink.outbox.statistics.count, 3)
        XCTAssertFalse(running.logs.entries.contains { $0.message.contains("secret") }, "a secret reached the log")
        XCTAssertFalse("\(status)".contains("wrong-secret"))
        try "right-secret".write(to: tokenFile, atomically: true, encoding: .utf8)
        clock.advance(by: .seconds(1))
        try await waitUntil("delivered with the fixed token") { [server] in server!.acceptedCounts().count == 3 }
        try await finish(running)
        XCTAssertEqual(running.sink.outbox.statistics.count, 0)
        XCTAssertNil(running.status.current?.details["authError"])
    }

    func testFullOutboxBlocksIntakeUntilDeliveriesMakeRoom() async throws {
        let clock = ManualClock()
        try await server.control(#"{"fail": [503]}"#)
        let records = try (0..<60).map { try heartRate(60, at: Double($0)) }
        let running = try await start(configuration {
            $0.batchSize = 10
            $0.outbox = .init(maxBytes: 4096, maxAgeSeconds: 3600, policy: .block)
        }, clock: clock, queue: QueueConfiguration(capacity: 100, policy: .block))
        await running.feed(records)
        try await waitUntil("intake blocked") { running.status.current?.details["outboxFull"] == "true" }
        XCTAssertGreaterThan(running.inbox.depth, 0, "the sink kept taking records from a full outbox")
        XCTAssertTrue(running.logs.contains("outbox full"))
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(60))
        try await finish(running)
        let counts = server.acceptedCounts()
        XCTAssertEqual(Set(counts.keys), Set(records.map(\.id.uuidString)))
        XCTAssertEqual(counts.values.max(), 1)
        XCTAssertEqual(running.status.current?.dropped, 0)
    }

    func testFullOutboxDropsOldestLoudly() async throws {
        let clock = ManualClock()
        try await server.control(#"{"fail": [503]}"#)
        let records = try (0..<60).map { try heartRate(60, at: Double($0)) }
        let running = try await start(configuration {
            $0.batchSize = 10
            $0.outbox = .init(maxBytes: 4096, maxAgeSeconds: 3600, policy: .dropOldest)
        }, clock: clock)
        await running.feed(records)
        try await waitUntil("records dropped") { (running.status.current?.dropped ?? 0) > 0 }
        try await waitUntil("intake done") { running.inbox.depth == 0 }
        XCTAssertTrue(running.logs.entries.contains { $0.level == .warning && $0.message.contains("OUTBOX FULL") })
        XCTAssertLessThanOrEqual(running.sink.outbox.statistics.bytes, 4096)
        try await clock.waitForSleepers(1)
        clock.advance(by: .seconds(60))
        try await finish(running)
        let dropped = running.status.current?.dropped ?? 0
        let counts = server.acceptedCounts()
        // What was not dropped arrives, once; the newest record always survives. A batch dropped
        // while its send was under way may arrive too: at most one batch (10) counted twice.
        XCTAssertTrue(
            (records.count...records.count + 10).contains(counts.count + dropped),
            "\(counts.count) delivered + \(dropped) dropped for \(records.count) records")
        XCTAssertEqual(counts.values.max(), 1, "each record arrives at most once")
        XCTAssertEqual(counts[records.last!.id.uuidString], 1)
        XCTAssertEqual(running.sink.outbox.statistics.dropped, dropped)
    }

    func testOutboxSurvivesARestartOfTheSink() async throws {
        let clock = ManualClock()
        try await server.control(#"{"fail": [503, 503, 503]}"#)
        let records = try (0..<5).map { try heartRate(60, at: Double($0)) }
        let first = try await start(configuration(), clock: clock, records: records)
        try await clock.waitForSleepers(1)
        XCTAssertEqual(first.sink.outbox.statistics.count, 5)
        // A crash: the task is cancelled mid-backoff and the sink value is gone.
        // (SinkInbox.next does not observe cancellation, so end the inbox too.)
        first.task.cancel()
        first.finish()
        _ = try? await first.task.value
        try await server.control(#"{"reset": true}"#)
        let second = try await start(configuration(), clock: clock)
        try await finish(second)
        XCTAssertEqual(Set(server.acceptedCounts().keys), Set(records.map(\.id.uuidString)))
        XCTAssertEqual(second.sink.outbox.statistics.count, 0)
    }

    func testDeadLettersCanBeRetried() async throws {
        let records = try (0..<2).map { try heartRate(60, at: Double($0)) }
        try await server.control(#"{"reject_uuid": "\#(records[1].id.uuidString)"}"#)
        let running = try await start(configuration(), records: records)
        try await finish(running)
        XCTAssertEqual(running.sink.outbox.statistics.deadLetters, 1)
        try await server.control(#"{"reset": true}"#)
        let moved = try await running.sink.outbox.retryDeadLetters()
        XCTAssertEqual(moved, 1)
        let again = try await start(configuration())
        try await finish(again)
        XCTAssertEqual(Set(server.acceptedCounts().keys), Set(records.map(\.id.uuidString)))
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
        let records = [try heartRate(70), try heartRate(71, at: 1)]
        let running = try await start(configuration { $0.caFile = certificate.path }, records: records)
        try await finish(running)
        XCTAssertEqual(Set(server.acceptedCounts().keys), Set(records.map(\.id.uuidString)))

        // A CA file only makes sense for https, and must be readable: both fail at start-up.
        let environment = TestEnvironment.make(directory: directory)
        XCTAssertThrowsError(try HTTPRepositorySink(
            configuration: HTTPRepositoryConfiguration(url: "http://127.0.0.1:9/x", caFile: certificate.path),
            environment: environment)
        ) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "caFile")
        }
    }

    // MARK: Configuration and helpers

    func testConfigurationRefusesInlineSecretsAndAnUnreadableCAFile() throws {
        let inline = #"{"url": "https://repo.example/samples", "auth": {"type": "bearer", "token": "abc"}}"#
        XCTAssertThrowsError(try HealthJSON.makeDecoder().decode(HTTPRepositoryConfiguration.self, from: Data(inline.utf8)))
        let environment = TestEnvironment.make(directory: directory)
        XCTAssertThrowsError(try HTTPRepositorySink(
            configuration: HTTPRepositoryConfiguration(url: "https://repo.example/x", caFile: "/etc/ca.pem"),
            environment: environment)
        ) { error in
            XCTAssertEqual((error as? PluginConfigurationError)?.keyPath, "caFile")
        }
        XCTAssertThrowsError(try HTTPRepositorySink(
            configuration: HTTPRepositoryConfiguration(url: "https://user:pw@repo.example/x"), environment: environment))
        XCTAssertThrowsError(try HTTPRepositorySink(
            configuration: HTTPRepositoryConfiguration(url: "https://repo.example/x", format: .fhirR4), environment: environment))
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

    func testIdempotencyKeyIsDeterministicAndOrderIndependent() {
        let a = ids.next(), b = ids.next(), c = ids.next()
        XCTAssertEqual(PayloadBuilder.idempotencyKey(for: [a, b, c]), PayloadBuilder.idempotencyKey(for: [c, a, b]))
        XCTAssertNotEqual(PayloadBuilder.idempotencyKey(for: [a, b]), PayloadBuilder.idempotencyKey(for: [a, c]))
    }

    func testGzipRoundTrip() throws {
        let text = Data(String(repeating: "{\"heartRate\":72}", count: 1000).utf8)
        let compressed = try Gzip.compress(text)
        XCTAssertEqual(Array(compressed.prefix(2)), [0x1f, 0x8b])
        XCTAssertLessThan(compressed.count, text.count / 10)
        XCTAssertEqual(try Gzip.decompress(compressed), text)
    }
}
