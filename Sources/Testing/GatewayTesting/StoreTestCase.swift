public import Foundation
public import HealthModel
import XCTest

/// A test case with a temporary directory holding a store path, removed at tear-down, and the
/// records store tests write: heart rates from a chest strap, steps from a pedometer, at times
/// counted from ``t0``.
open class StoreTestCase: TemporaryDirectoryTestCase {
    /// `health-store`.
    open override class var directoryPrefix: String { "health-store" }

    /// 2027-01-16T00:00:00Z: a UTC midnight, so day buckets anchored on it are easy to compute by hand.
    public let t0 = Date(timeIntervalSince1970: 1_800_057_600)

    /// The chest strap the heart rates come from.
    public static let strap = Device(
        name: "Polar H10", manufacturer: "Polar", model: "H10", firmwareVersion: "3.1", localIdentifier: "AA:BB:CC:DD:EE:FF")
    /// ``strap``.
    public var strap: Device { Self.strap }

    /// ``t0`` plus `seconds`.
    public func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    /// Deterministic, strictly increasing identifiers.
    public static func makeIDs() -> SampleIDGenerator {
        SampleIDGenerator(seed: 7, milliseconds: { 1_800_057_600_000 })
    }

    /// ``makeIDs()``, for tests.
    public func makeIDs() -> SampleIDGenerator {
        SampleIDGenerator(seed: 7, milliseconds: { 1_800_057_600_000 })
    }

    /// A heart rate of `bpm` at `seconds` after ``t0``, from ``strap`` unless told otherwise.
    public func heartRate(
        _ ids: SampleIDGenerator, _ bpm: Double, at seconds: Double, unit: HealthUnit = .countPerMinute,
        device: Device? = StoreTestCase.strap, metadata: Metadata = Metadata()
    ) throws -> QuantitySample {
        try QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(bpm, unit), start: at(seconds), end: at(seconds),
            device: device, metadata: metadata)
    }

    /// A reading of a plain discrete type (heart-rate variability as SDNN, in ms unless told
    /// otherwise) of `value` at `seconds` after ``t0``, from ``strap`` unless told otherwise: a
    /// type without a ``HealthModel/QuantityType/seriesPolicy``, so the store keeps every reading
    /// as a sample of its own with its own uuid (heart rates are folded into quantity series).
    public func plainReading(
        _ ids: SampleIDGenerator, _ value: Double, at seconds: Double, unit: HealthUnit = .millisecond,
        device: Device? = StoreTestCase.strap, metadata: Metadata = Metadata()
    ) throws -> QuantitySample {
        try QuantitySample(
            id: ids.next(), type: Self.plainType, quantity: Quantity(value, unit), start: at(seconds), end: at(seconds),
            device: device, metadata: metadata)
    }

    /// The type of ``plainReading(_:_:at:unit:device:metadata:)``.
    public static let plainType = QuantityType.heartRateVariabilitySDNN

    /// The quantity series the store makes of `readings` (one type, unit, device and metadata,
    /// in order, as the writer folds them), as a reader gets it back: named by the first
    /// reading's uuid, its versions sharing the sync identifier `quantity-series:<uuid>` with
    /// `version` as their sync version, and marked provisional while `open`.
    public func storedSeries(_ readings: [QuantitySample], version: Int64 = 1, open: Bool = true) throws -> QuantitySeriesSample {
        let first = try XCTUnwrap(readings.first, "a series has at least one quantity")
        var metadata = first.metadata
        metadata.syncIdentifier = "quantity-series:\(first.id.uuidString)"
        metadata.syncVersion = version
        if open { metadata[.provisional] = .bool(true) }
        return try QuantitySeriesSample(
            id: first.id, type: first.type, unit: first.quantity.unit,
            quantities: readings.map { SeriesQuantity(value: $0.quantity.value, start: $0.startDate, end: $0.endDate) },
            device: first.device, metadata: metadata)
    }

    /// What a sample query returns for `readings` folded into one series
    /// (``storedSeries(_:version:open:)``): each reading's value, unit, dates and device, its id
    /// derived from the series' and ``HealthModel/MetadataKey/series`` naming the series.
    public func storedQuantities(_ readings: [QuantitySample]) throws -> [QuantitySample] {
        try storedSeries(readings).quantitySamples
    }

    /// `count` steps over `[start, end]` seconds after ``t0``, from a pedometer.
    public func steps(_ ids: SampleIDGenerator, _ count: Double, from start: Double, to end: Double) throws -> QuantitySample {
        try QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(count, .count), start: at(start), end: at(end),
            device: Device(name: "pedometer", localIdentifier: "usb-1"))
    }

    /// The built `healthgate`: the test runner (healthgatePackageTests.xctest) sits next to it.
    public var healthgateExecutable: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("healthgate").path
    }

    /// Runs the built `healthgate` with `arguments` to completion, as a user runs it on the store.
    /// - Throws: ``MissingTool``, after failing the test, when it is not built (`swift build
    ///   --build-tests` builds it); what ``runProcess(_:_:)`` throws.
    public func runHealthgate(_ arguments: [String]) throws -> ProcessResult {
        let executable = healthgateExecutable
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            XCTFail("\(executable) is missing: build everything first (swift build --build-tests)")
            throw MissingTool(path: executable)
        }
        return try runProcess(executable, arguments)
    }

    /// Runs a query with the sqlite3 command-line shell, as a user would, and returns its output.
    public func sqlite3(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        // Wait for locks like every healthgate connection does (the shell's default is to fail at once).
        let result = try runProcess("/usr/bin/sqlite3", ["-cmd", ".timeout 5000", path, sql])
        XCTAssertEqual(result.status, 0, "sqlite3 failed: \(result.error)", file: file, line: line)
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How full the leaf pages of `table` are, in percent of their usable bytes (`dbstat`, read
    /// with the sqlite3 shell; close the store first).
    public func leafPagesFilled(_ table: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let text = try sqlite3(
            "SELECT CAST(sum(payload) * 100 / sum(pgsize - 8) AS INTEGER) FROM dbstat WHERE name = '\(table)' AND pagetype = 'leaf'",
            file: file, line: line)
        return try XCTUnwrap(Int(text), "leaf pages of \(table): \(text)", file: file, line: line)
    }

    /// The number of rows of `table`, read with the sqlite3 shell.
    public func count(_ table: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let text = try sqlite3("SELECT count(*) FROM \(table)", file: file, line: line)
        return try XCTUnwrap(Int(text), "count of \(table): \(text)", file: file, line: line)
    }
}

/// What a program run to completion printed and returned.
public struct ProcessResult: Sendable {
    /// The exit status.
    public var status: Int32
    /// Standard output.
    public var output: String
    /// Standard error.
    public var error: String
}

/// Runs a program to completion and collects its output. Fails when the program is missing:
/// sqlite3 and python3 are hard requirements of these tests. Blocks: call it off the
/// cooperative pool when other tasks must progress meanwhile.
public func runProcess(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw MissingTool(path: executable)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    process.standardOutput = output
    process.standardError = error
    try process.run()
    // Read before waiting so that a large output cannot fill the pipe and block the child.
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    let errData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
        error: String(decoding: errData, as: UTF8.self))
}

/// Runs a program to completion and returns its exit status and what it wrote to its standard
/// output; its standard error goes into the same pipe, interleaved as it was written, when
/// `mergingErrors`, else to the test's own. Unlike ``runProcess(_:_:)``, a missing program is
/// the error `Process.run()` throws. Blocks: call it off the cooperative pool when other tasks
/// must progress meanwhile.
public func runProcessOutput(
    _ executable: URL, _ arguments: [String], mergingErrors: Bool = true
) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    if mergingErrors { process.standardError = output }
    try process.run()
    // Read before waiting so that a large output cannot fill the pipe and block the child.
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// A program the tests need is not installed (install the sqlite3 and python3 Debian packages).
public struct MissingTool: Error, CustomStringConvertible {
    /// The program's path.
    public var path: String

    /// A missing program at `path`.
    public init(path: String) {
        self.path = path
    }

    public var description: String { "\(path) is missing; install it (apt-get install sqlite3 python3)" }
}

/// XCTAssertThrowsError for async code: fails when `body` returns, hands the error to `handler`.
public func XCTAssertThrowsErrorAsync<T>(
    _ body: () async throws -> T, _ message: String = "", file: StaticString = #filePath, line: UInt = #line,
    _ handler: (any Error) -> Void = { _ in }
) async {
    do {
        _ = try await body()
        XCTFail("no error was thrown \(message)", file: file, line: line)
    } catch {
        handler(error)
    }
}
