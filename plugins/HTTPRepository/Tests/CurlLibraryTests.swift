import LinuxSystem
import Foundation
import GatewayTesting
import HTTPRepository
import HealthModel
import HealthStore
import RemoteSinkKit
import GatewayRuntime
import SampleBus
import XCTest

/// libcurl loaded at run time: real dlopen(3) failures (a library that does not exist, a library
/// that is not libcurl), and a real gateway whose sink starts without libcurl, reports it, keeps
/// its records, and delivers once the library appears.
final class CurlLibraryTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "curl-library" }

    func testAMissingLibraryFailsWithTheLoadersReasonAndAnInstallHint() async throws {
        let library = CurlLibrary(path: "libcurl-healthgate-missing.so.4")
        for _ in 0..<2 {  // a failure is not remembered: the second call tries (and fails) again
            XCTAssertThrowsError(try library.load()) { error in
                guard let error = error as? NativeLibraryError else { return XCTFail("\(error)") }
                XCTAssertEqual(error.library, "libcurl-healthgate-missing.so.4")
                XCTAssertEqual(error.step, .open)
                // glibc's dlerror text for a soname found nowhere on the search path.
                XCTAssertTrue(error.reason.contains("libcurl-healthgate-missing.so.4: cannot open shared object file"), error.reason)
                XCTAssertTrue(error.description.hasPrefix("cannot load libcurl-healthgate-missing.so.4: "), error.description)
                XCTAssertTrue(error.description.contains("install libcurl4"), error.description)
            }
        }

        // Through the transport: `prepare` throws the library error, `send` a transport error with
        // the same text; neither crashes.
        let transport = CurlTransport(library: library)
        do {
            try await transport.prepare()
            XCTFail("prepare succeeded without libcurl")
        } catch let error as NativeLibraryError {
            XCTAssertEqual(error.step, .open)
        }
        let request = HTTPRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1:9/samples")), headers: [], body: Data(), timeout: 1)
        do {
            _ = try await transport.send(request)
            XCTFail("send succeeded without libcurl")
        } catch let error as HTTPTransportError {
            XCTAssertTrue(error.reason.contains("cannot load libcurl-healthgate-missing.so.4"), error.reason)
            XCTAssertFalse(error.isTimeout)
        }
    }

    func testALibraryThatIsNotLibcurlIsRefusedNamingTheMissingEntryPoint() throws {
        // zlib is installed (the sink gzips with it) and opens fine, but has no curl_* symbols.
        let library = CurlLibrary(path: "libz.so.1")
        XCTAssertThrowsError(try library.load()) { error in
            guard let error = error as? NativeLibraryError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.step, .resolve(symbol: "curl_global_init"))
            XCTAssertTrue(error.reason.contains("undefined symbol: curl_global_init"), error.reason)
            XCTAssertTrue(error.description.hasPrefix("cannot find curl_global_init in libz.so.1: "), error.description)
        }
    }

    func testTheInstalledLibcurlLoads() throws {
        let library = CurlLibrary()
        XCTAssertEqual(library.path, "libcurl.so.4")
        try library.load()
        try library.load()  // loaded once, kept
        XCTAssertNotNil(try installedLibcurlPath())
    }

    /// A real gateway around one `http-repository` sink whose libcurl is `libraryPath`, and the
    /// local repository it delivers to.
    struct Harness {
        var gateway: Gateway
        var sink: HTTPRepositorySink
        var store: HealthStore
        var shutdown: ShutdownSignal
        var running: Task<Void, Never>
        var logs: RecordingLogSink
        var server: RecordingServer
        var records: [HealthRecord]

        var status: PluginStatus? { gateway.statusBoard.status(of: "repository") }
    }

    /// Starts the gateway with a sink whose libcurl is missing and a store holding three records,
    /// and waits until a delivery attempt failed on the missing library.
    func startWithoutLibcurl(libraryPath: String) async throws -> Harness {
        let server = try RecordingServer.started(in: directory)
        let logs = RecordingLogSink()
        let store = try await HealthStore.open(path: directory.appendingPathComponent("store.sqlite").path)
        let environment = TestEnvironment.make(
            name: "repository", clock: SystemClock(), directory: directory, logSink: logs, store: store)
        var configuration = HTTPRepositoryConfiguration(url: server.url).with { $0.batchIntervalSeconds = 0 }
        configuration.retry = .init(initialDelaySeconds: 0.02, maxDelaySeconds: 0.1, jitter: 0)
        let sink = try HTTPRepositorySink(
            settings: configuration.validated(in: environment), environment: environment,
            transports: [CurlTransport(library: CurlLibrary(path: libraryPath))], random: { 0.5 })
        let gateway = Gateway(
            sources: [], sinks: [], followers: [ConfiguredFollower(name: "repository", kind: HTTPRepositorySink.kind, follower: sink)],
            clock: SystemClock(), logger: environment.logger)
        let shutdown = ShutdownSignal()
        let running = Task { await gateway.run(shutdown: shutdown) }

        let ids = SampleIDGenerator(seed: 11)
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        // Readings of a type the store keeps one sample each: one uuid per reading.
        let records = try (0..<3).map { index in
            HealthRecord.quantity(try QuantitySample(
                id: ids.next(), type: .oxygenSaturation, quantity: Quantity(Double(95 + index), .percent),
                start: date.addingTimeInterval(Double(index)), end: date.addingTimeInterval(Double(index))))
        }
        try await store.write(records)
        // At least one delivery attempt failed on the missing library and is being retried.
        try await waitUntil(timeout: .seconds(30), "a delivery attempt to fail on the missing library") {
            logs.entries.contains { $0.level == .warning && $0.message.contains("failed: cannot load \(libraryPath)") }
        }
        return Harness(
            gateway: gateway, sink: sink, store: store, shutdown: shutdown, running: running, logs: logs, server: server,
            records: records)
    }

    /// Without libcurl the sink says so at start (log and status), sends nothing, keeps its
    /// cursor before every record, leaves the other plugins alone, and stops gracefully.
    func testASinkWithoutLibcurlReportsItKeepsItsCursorAndStopsGracefully() async throws {
        let libraryPath = directory.appendingPathComponent("lib/libcurl.so.4").path
        let harness = try await startWithoutLibcurl(libraryPath: libraryPath)
        defer { harness.server.stop() }

        let start = try XCTUnwrap(harness.logs.entries.first { $0.level == .error })
        XCTAssertTrue(start.message.hasPrefix("cannot load \(libraryPath): "), start.message)
        XCTAssertTrue(start.message.contains("cannot open shared object file"), start.message)
        XCTAssertTrue(start.message.contains("install libcurl4"), start.message)
        XCTAssertTrue(start.message.contains("The changes wait in the store"), start.message)
        let status = try XCTUnwrap(harness.status)
        let lastError = try XCTUnwrap(status.lastError)
        XCTAssertTrue(lastError.contains("cannot load \(libraryPath): "), lastError)
        XCTAssertTrue(lastError.contains("install libcurl4"), lastError)
        XCTAssertEqual(status.state, .running)
        XCTAssertEqual(status.restarts, 0)
        XCTAssertEqual(status.details["lastHTTPStatus"], "no answer")
        XCTAssertTrue(harness.server.requests().isEmpty)

        _ = harness.shutdown.requestStop()
        await harness.running.value
        XCTAssertEqual(harness.shutdown.stage, .stopping, "the gateway had to force the stop")
        XCTAssertEqual(harness.gateway.statusBoard.status(of: "repository")?.state, .finished)
        let cursor = try await harness.store.follower("repository")?.anchor
        XCTAssertEqual(cursor, 0, "the cursor moved past records never sent")
        XCTAssertTrue(harness.server.requests().isEmpty)
        await harness.store.close()
    }

    /// Once the library appears at the configured path, the next retry loads it and every record
    /// is delivered, without restarting the sink.
    func testASinkWithoutLibcurlDeliversOnceTheLibraryAppears() async throws {
        let libraryPath = directory.appendingPathComponent("lib/libcurl.so.4").path
        let harness = try await startWithoutLibcurl(libraryPath: libraryPath)
        defer { harness.server.stop() }
        XCTAssertTrue(harness.server.requests().isEmpty)

        // "Install" libcurl: the configured path becomes the real library.
        let installed = try XCTUnwrap(try installedLibcurlPath(), "libcurl.so.4 is not mapped after loading it")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("lib"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: libraryPath, withDestinationPath: installed)
        let statusBoard = harness.gateway.statusBoard
        let count = harness.records.count
        try await waitUntil(timeout: .seconds(30), "every record to reach the repository and count as delivered") {
            statusBoard.status(of: "repository")?.records == count
        }
        XCTAssertEqual(
            harness.server.acceptedCounts(), Dictionary(uniqueKeysWithValues: harness.records.map { ($0.id.uuidString, 1) }))
        let latest = try await harness.store.latestAnchor()
        try await waitUntil("the cursor reaches the latest anchor") { try await harness.store.follower("repository")?.anchor == latest }
        XCTAssertEqual(statusBoard.status(of: "repository")?.restarts, 0)
        XCTAssertNil(statusBoard.status(of: "repository")?.lastError, "the error stays after the recovery")

        _ = harness.shutdown.requestStop()
        await harness.running.value
        XCTAssertEqual(harness.shutdown.stage, .stopping)
        await harness.store.close()
    }

    /// The file the dynamic loader maps for `libcurl.so.4`, read from /proc/self/maps after
    /// loading it; nil when it is not mapped.
    func installedLibcurlPath() throws -> String? {
        try CurlLibrary().load()
        // FileHandle, not String(contentsOfFile:): that stops after the first read of a /proc
        // file (which reports size 0) and returns only its first page.
        let file = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/maps"))
        defer { try? file.close() }
        let maps = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
        return maps.split(separator: "\n").lazy
            .compactMap { line in line.split(separator: " ", omittingEmptySubsequences: true).last.map(String.init) }
            .first { $0.hasPrefix("/") && $0.contains("/libcurl.so.4") }
    }
}
