import Foundation
import GatewayTesting
import HTTPRepository
import HealthModel
import SampleBus
import XCTest

/// libcurl loaded at run time: real dlopen(3) failures (a library that does not exist, a library
/// that is not libcurl), and a real gateway whose sink starts without libcurl, reports it, and
/// delivers once the library appears.
final class CurlLibraryTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = try TestEnvironment.temporaryDirectory("curl-library")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func testAMissingLibraryFailsWithTheLoadersReasonAndAnInstallHint() async throws {
        let library = CurlLibrary(path: "libcurl-healthgate-missing.so.4")
        for _ in 0..<2 {  // a failure is not remembered: the second call tries (and fails) again
            XCTAssertThrowsError(try library.load()) { error in
                guard let error = error as? CurlLibraryError else { return XCTFail("\(error)") }
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
        } catch let error as CurlLibraryError {
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
            guard let error = error as? CurlLibraryError else { return XCTFail("\(error)") }
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

    /// The gateway starts the sink, the sink cannot load libcurl: the error is in the log and the
    /// status, the sink restarts with backoff, nothing is sent and nothing is lost. Once the
    /// library appears at the configured path, a restart loads it and every record is delivered.
    func testASinkWithoutLibcurlReportsItRestartsAndDeliversOnceTheLibraryAppears() async throws {
        let server = RecordingServer(directory: directory)
        try server.start()
        defer { server.stop() }
        let libraryPath = directory.appendingPathComponent("lib/libcurl.so.4").path
        let logs = RecordingLogSink()
        let environment = TestEnvironment.make(name: "repository", clock: SystemClock(), directory: directory, logSink: logs)
        let sink = try HTTPRepositorySink(
            configuration: HTTPRepositoryConfiguration(url: server.url, batchIntervalMilliseconds: 0),
            environment: environment, transport: CurlTransport(library: CurlLibrary(path: libraryPath)), random: { 0.5 })
        let gateway = Gateway(
            sources: [], sinks: [ConfiguredSink(name: "repository", kind: HTTPRepositorySink.kind, queue: QueueConfiguration(), sink: sink)],
            clock: SystemClock(), logger: environment.logger,
            restartPolicy: RestartPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(200)))
        let shutdown = ShutdownSignal()
        let running = Task { await gateway.run(shutdown: shutdown) }

        let ids = SampleIDGenerator(seed: 11)
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let records = try (0..<3).map { index in
            HealthRecord.quantity(try QuantitySample(
                id: ids.next(), type: .heartRate, quantity: Quantity(Double(70 + index), .countPerMinute),
                start: date.addingTimeInterval(Double(index)), end: date.addingTimeInterval(Double(index))))
        }
        await gateway.bus.publish(records)

        let statusBoard = gateway.statusBoard
        try await waitUntil(timeout: .seconds(30), "the sink to fail twice for want of libcurl") {
            (statusBoard.status(of: "repository")?.restarts ?? 0) >= 2
        }
        let status = try XCTUnwrap(statusBoard.status(of: "repository"))
        let lastError = try XCTUnwrap(status.lastError)
        XCTAssertTrue(lastError.hasPrefix("cannot load \(libraryPath): "), lastError)
        XCTAssertTrue(lastError.contains("cannot open shared object file"), lastError)
        XCTAssertTrue(lastError.contains("install libcurl4"), lastError)
        XCTAssertTrue(
            logs.entries.contains { $0.level == .error && $0.message.contains("repository failed: cannot load \(libraryPath)") },
            logs.entries.map(\.message).joined(separator: "\n"))
        XCTAssertTrue(server.requests().isEmpty)

        // "Install" libcurl: the configured path becomes the real library.
        let installed = try XCTUnwrap(try installedLibcurlPath(), "libcurl.so.4 is not mapped after loading it")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("lib"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: libraryPath, withDestinationPath: installed)
        try await waitUntil(timeout: .seconds(30), "every record to reach the repository and count as delivered") {
            statusBoard.status(of: "repository")?.records == records.count
        }
        XCTAssertEqual(server.acceptedCounts(), Dictionary(uniqueKeysWithValues: records.map { ($0.id.uuidString, 1) }))

        _ = shutdown.requestStop()
        await running.value
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
