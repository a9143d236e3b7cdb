import Foundation
import GatewayTesting
import HealthStore
import XCTest

/// The executable meets a store file it must not touch: another program's database, a newer
/// healthgate's store, bytes that are no database. `run` and `query` refuse with the file named,
/// the advice, and exit 78 (a configuration to change) or 65 (the data is bad), and not a byte of
/// the file changes.
final class StoreFileEndToEndTests: XCTestCase {
    func testForeignNewerAndCorruptFilesAreRefusedAndLeftAlone() async throws {
        let healthgate = try HealthgateExecutable()
        let path = healthgate.root.appendingPathComponent("refused.sqlite").path
        let configuration = healthgate.root.appendingPathComponent("config.json")
        try Data(#"{"store": {"path": "\#(path)"}}"#.utf8).write(to: configuration)
        let cases: [(name: String, make: () throws -> Void, status: Int32, says: String)] = [
            ("another program's database", {
                try self.sqlite3(path, "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')")
            }, 78, "another file"),
            ("a newer healthgate's store", {
                try self.sqlite3(path, "PRAGMA application_id = \(HealthStore.applicationID); PRAGMA user_version = 99; CREATE TABLE later (x)")
            }, 78, "upgrade healthgate"),
            ("no database at all", {
                try Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: path))
            }, 65, "move the file aside"),
        ]
        for item in cases {
            try? FileManager.default.removeItem(atPath: path)
            try item.make()
            let before = try Data(contentsOf: URL(fileURLWithPath: path))
            let run = try await healthgate.run(["run", "--config", configuration.path, "--duration", "5"])
            XCTAssertEqual(run.status, item.status, "\(item.name): \(run.standardError)")
            XCTAssertTrue(run.standardError.contains(path), "\(item.name) names the file: \(run.standardError)")
            XCTAssertTrue(run.standardError.contains(item.says), "\(item.name) says what to do: \(run.standardError)")
            let query = try await healthgate.run(["query", "samples", "--type", "heartRate", "--db", path])
            XCTAssertNotEqual(query.status, 0, "\(item.name): query \(query.standardOutput)")
            XCTAssertTrue(query.standardError.contains(path), "\(item.name): \(query.standardError)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "\(item.name) is left as it was")
            for suffix in ["-wal", "-shm"] {
                let side = path + suffix
                if let bytes = try? Data(contentsOf: URL(fileURLWithPath: side)) {
                    XCTAssertTrue(bytes.isEmpty || suffix == "-shm", "\(item.name): \(side) holds \(bytes.count) bytes")
                }
            }
        }
    }

    private func sqlite3(_ path: String, _ sql: String) throws {
        let result = try runProcess("/usr/bin/sqlite3", [path, sql])
        XCTAssertEqual(result.status, 0, result.error)
    }
}
