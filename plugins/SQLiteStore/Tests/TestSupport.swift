import Foundation
import GatewayTesting
import HealthModel
import SampleBus
import SQLiteStore
import XCTest

/// 2027-01-16T00:00:00Z: a UTC midnight, so day buckets anchored on it are easy to compute by hand.
let t0 = Date(timeIntervalSince1970: 1_800_057_600)

func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

/// Deterministic, strictly increasing identifiers.
func makeIDs() -> SampleIDGenerator {
    SampleIDGenerator(seed: 7, milliseconds: { 1_800_057_600_000 })
}

let strap = Device(name: "Polar H10", manufacturer: "Polar", model: "H10", firmwareVersion: "3.1",
                   localIdentifier: "AA:BB:CC:DD:EE:FF")

func heartRate(
    _ ids: SampleIDGenerator, _ bpm: Double, at seconds: Double, unit: HealthUnit = .countPerMinute,
    device: Device? = strap, metadata: Metadata = Metadata()
) throws -> QuantitySample {
    try QuantitySample(
        id: ids.next(), type: .heartRate, quantity: Quantity(bpm, unit), start: at(seconds), end: at(seconds),
        device: device, metadata: metadata)
}

func steps(_ ids: SampleIDGenerator, _ count: Double, from start: Double, to end: Double) throws -> QuantitySample {
    try QuantitySample(
        id: ids.next(), type: .stepCount, quantity: Quantity(count, .count), start: at(start), end: at(end),
        device: Device(name: "pedometer", localIdentifier: "usb-1"))
}

/// A temporary directory with a store path in it, removed at tear-down.
class StoreTestCase: XCTestCase {
    var directory: URL!
    var path: String { directory.appendingPathComponent("samples.sqlite").path }

    override func setUpWithError() throws {
        directory = try TestEnvironment.temporaryDirectory("sqlite-store")
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs a query with the sqlite3 command-line shell, as a user would, and returns its output.
    func sqlite3(_ sql: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        // Wait for locks like every healthgate connection does (the shell's default is to fail at once).
        let result = try runProcess("/usr/bin/sqlite3", ["-cmd", ".timeout 5000", path, sql])
        XCTAssertEqual(result.status, 0, "sqlite3 failed: \(result.error)", file: file, line: line)
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func count(_ table: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let text = try sqlite3("SELECT count(*) FROM \(table)", file: file, line: line)
        return try XCTUnwrap(Int(text), "count of \(table): \(text)", file: file, line: line)
    }
}

struct ProcessResult: Sendable {
    var status: Int32
    var output: String
    var error: String
}

/// Runs a program to completion and collects its output. Fails when the program is missing:
/// sqlite3 and python3 are hard requirements of these tests.
func runProcess(_ executable: String, _ arguments: [String]) throws -> ProcessResult {
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

/// A program the tests need is not installed (install the sqlite3 and python3 Debian packages).
struct MissingTool: Error, CustomStringConvertible {
    var path: String
    var description: String { "\(path) is missing; install it (apt-get install sqlite3 python3)" }
}
