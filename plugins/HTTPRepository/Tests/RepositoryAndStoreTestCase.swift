import Foundation
import GatewayTesting
import GatewayTime
import HealthModel
import HealthStore
@testable import HTTPRepository
import AsyncPrimitives
import RemoteSinkKit
import GatewayRuntime
import SampleBus
import XCTest

/// What the sink's suites start each test with: a temporary directory, the recording repository
/// (Fixtures/recording_server.py) on 127.0.0.1 and a store for the sink to follow, all gone after
/// the test; and the helpers that start the sink over them. Holds no tests of its own.
class RepositoryAndStoreTestCase: XCTestCase {
    var directory: URL!
    var server: RecordingServer!
    var store: HealthStore!
    let ids = SampleIDGenerator(seed: 7)

    override func setUp() async throws {
        directory = try TestEnvironment.temporaryDirectory("http-repository")
        server = RecordingServer(directory: directory)
        try server.start()
        store = try await HealthStore.open(path: directory.appendingPathComponent("store.sqlite").path)
    }

    override func tearDown() async throws {
        await store?.close()
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
            device: device, metadata: [.heartRateSensorLocation: .string("chest"), .deviceSerialNumber: .string("C6A24B1D")]))
    }

    /// A reading of a type kept one sample each (no series policy): what the tests of delivery
    /// itself send, one uuid per reading.
    func spO2(_ percent: Double, at offset: Double = 0) throws -> HealthRecord {
        let date = Date(timeIntervalSince1970: 1_800_000_000 + offset)
        return .quantity(try QuantitySample(
            id: ids.next(), type: .oxygenSaturation, quantity: Quantity(percent, .percent), start: date, end: date, device: device))
    }

    func quantity(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, seconds: Double = 60) throws -> HealthRecord {
        let start = Date(timeIntervalSince1970: 1_800_000_100)
        return .quantity(try QuantitySample(
            id: ids.next(), type: type, quantity: Quantity(value, unit), start: start,
            end: start.addingTimeInterval(seconds), device: device))
    }

    struct Running {
        var sink: HTTPRepositorySink
        var task: Task<Void, any Error>
        var shutdown: ShutdownSignal
        var status: StatusReporter
        var logs: RecordingLogSink
    }

    func configuration(_ changes: (inout HTTPRepositoryConfiguration) -> Void = { _ in }) -> HTTPRepositoryConfiguration {
        var configuration = HTTPRepositoryConfiguration(url: server.url).with { $0.batchIntervalSeconds = 0; $0.maxInFlight = 1 }
        configuration.retry = .init(initialDelaySeconds: 0.02, maxDelaySeconds: 0.2, jitter: 0.2)
        changes(&configuration)
        return configuration
    }

    /// Writes `records` into the store, then starts the sink following it, sending through libcurl
    /// to the recording server unless `transports` are given.
    func start(
        _ configuration: HTTPRepositoryConfiguration, clock: any GatewayClock = SystemClock(),
        variables: [String: String] = [:], records: [HealthRecord] = [], name: String = "repository",
        transports: [any HTTPTransport]? = nil, participants: [ParticipantCharacteristics] = [],
        hardwareAddress: String? = nil, clockState: ClockState = .declaredTrusted
    ) async throws -> Running {
        if !records.isEmpty { try await store.write(records) }
        let logs = RecordingLogSink()
        var environment = TestEnvironment.make(
            name: name, clock: clock, directory: directory, variables: variables, logSink: logs, store: store)
        environment.participants = participants
        environment.clockTrust = FixedClockTrust(clockState)
        let sink = try HTTPRepositorySink(
            settings: configuration.validated(in: environment), environment: environment,
            transports: transports ?? (0..<configuration.maxInFlight).map { _ in CurlTransport(caFile: configuration.caFile) },
            random: { 0.5 }, hardwareAddress: hardwareAddress)
        let status = StatusBoard().register(name: name, kind: HTTPRepositorySink.kind, role: .sink)
        let shutdown = ShutdownSignal()
        let context = FollowerContext(
            logger: environment.logger, clock: clock, status: status, stopRequest: StopRequest(shutdown), storeSettled: { true })
        let task = Task { try await sink.run(context: context) }
        return Running(sink: sink, task: task, shutdown: shutdown, status: status, logs: logs)
    }

    /// Waits until the follower's committed cursor reaches the store's latest anchor.
    func waitUntilSent(_ name: String = "repository", timeout: Duration = .seconds(30)) async throws {
        let latest = try await store.latestAnchor()
        try await waitUntil(timeout: timeout, "\(name) sent everything up to anchor \(latest)") { [store] in
            try await store!.follower(name)?.anchor == latest
        }
    }

    /// A graceful stop: the sink sends what it can without waiting on a failing repository, then returns.
    func finish(_ running: Running, file: StaticString = #filePath, line: UInt = #line) async throws {
        running.shutdown.requestStop()
        let task = running.task
        let outcome = try await race(sleep: { try await Task.sleep(for: .seconds(30)) }) { try await task.value }
        if case .timedOut = outcome {
            task.cancel()
            XCTFail("the sink did not return; its log:\n" + running.logs.entries.map { "\($0.level) \($0.message)" }.joined(separator: "\n"),
                    file: file, line: line)
        }
    }

    /// The batch `running`'s follower sends first for the store's current changes (for the
    /// expected key).
    func firstBatch(of running: Running, batchSize: Int = 1000) async throws -> FollowerBatch {
        let receiver = running.sink.follower.receiver
        let page = try await store.changes(since: 0, limit: batchSize, includingCorrelationMembers: false)
        return FollowerBatch(
            after: 0, through: page.anchor, changes: FollowedChange.changes(of: page).filter(receiver.accepts),
            payloadIdentity: receiver.payloadIdentity)
    }

    /// `validate_payloads.py KIND` over the recording server's requests, or over `recording`.
    func validate(_ kind: String, recording: URL? = nil) throws -> String {
        let python = RecordingServer.packageRoot.appendingPathComponent(".build/pyenv/bin/python")
        guard FileManager.default.isExecutableFile(atPath: python.path) else {
            XCTFail("the validators' virtual environment is missing: run scripts/install-test-python")
            return ""
        }
        let arguments = [
            RecordingServer.fixtures.appendingPathComponent("validate_payloads.py").path, kind, (recording ?? server.recording).path,
        ]
        return try runProcessOutput(python, arguments).output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
