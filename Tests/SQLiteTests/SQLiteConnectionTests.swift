import Foundation
import GatewayTesting
import SQLite
import XCTest

/// The wrapper over libsqlite3 on real files: every value kind through bindings and back, a
/// transaction committed or rolled back whole, and migrations that step `user_version` one at a
/// time, keep what a failed step did not touch, and refuse a file newer than the program.
final class SQLiteConnectionTests: TemporaryDirectoryTestCase {
    override class var directoryPrefix: String { "sqlite-connection" }

    private func open(_ name: String = "test.sqlite") throws -> SQLiteConnection {
        try SQLiteConnection(path: directory.appendingPathComponent(name).path)
    }

    /// A read-write connection takes the `synchronous` it is opened with, before the switch to
    /// WAL, and keeps it in WAL mode.
    func testAReadWriteConnectionRunsAtTheSynchronousSettingItIsOpenedWith() throws {
        let path = directory.appendingPathComponent("durable.sqlite").path
        let full = try SQLiteConnection(path: path, synchronous: .full)
        XCTAssertEqual(try full.synchronous, .full)
        XCTAssertEqual(try full.query("PRAGMA journal_mode").first?.text(0), "wal")
        XCTAssertEqual(try SQLiteConnection(path: path).synchronous, .normal, "the setting is the connection's, not the file's")
        let late = try SQLiteConnection(path: directory.appendingPathComponent("late.sqlite").path, writeAheadLog: false, synchronous: .full)
        try late.enableWriteAheadLog()
        XCTAssertEqual(try late.synchronous, .full, "switching to WAL keeps the setting")
    }

    func testEveryValueKindRoundTripsThroughBindings() throws {
        let connection = try open()
        try connection.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        let changed = try connection.run(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            [.integer(Int64.min), .real(-0.5), .text("Grüße\u{1F600}"), .blob([0, 1, 0xFF]), .null])
        XCTAssertEqual(changed, 1)
        XCTAssertEqual(connection.lastInsertRowID, 1)
        let rows = try connection.query("SELECT i, r, s, b, n FROM t")
        XCTAssertEqual(rows.map(\.values), [[.integer(Int64.min), .real(-0.5), .text("Grüße\u{1F600}"), .blob([0, 1, 0xFF]), .null]])
        XCTAssertEqual(rows[0].integer(0), Int64.min)
        XCTAssertEqual(rows[0].double(1), -0.5)
        XCTAssertEqual(rows[0].integer(1), 0, "a REAL truncates toward zero")
        XCTAssertEqual(rows[0].text(2), "Grüße\u{1F600}")
        XCTAssertEqual(rows[0].blob(3), [0, 1, 0xFF])
        XCTAssertNil(rows[0].integer(4))
    }

    func testATransactionCommitsWhenItsBodyReturnsAndRollsBackWhenItThrows() throws {
        struct Abandoned: Error {}
        let connection = try open()
        try connection.execute("CREATE TABLE t (v INTEGER)")
        _ = try connection.transaction { try connection.run("INSERT INTO t VALUES (1)") }
        XCTAssertThrowsError(try connection.transaction {
            try connection.run("INSERT INTO t VALUES (2)")
            throw Abandoned()
        }) { XCTAssertTrue($0 is Abandoned) }
        XCTAssertEqual(try connection.query("SELECT v FROM t").map { $0.integer(0) }, [1])
    }

    func testAConstraintViolationIsAConstraintError() throws {
        let connection = try open()
        try connection.execute("CREATE TABLE t (v INTEGER PRIMARY KEY)")
        try connection.run("INSERT INTO t VALUES (1)")
        XCTAssertThrowsError(try connection.run("INSERT INTO t VALUES (1)")) { error in
            let error = error as? SQLiteError
            XCTAssertEqual(error?.isConstraint, true, "\(String(describing: error))")
            XCTAssertEqual(error?.isBusy, false)
        }
    }

    func testMigrationsStepTheVersionAndAFailedStepKeepsTheStepsBeforeIt() throws {
        let path = directory.appendingPathComponent("migrated.sqlite").path
        let steps: [SQLiteMigration] = [
            .sql("CREATE TABLE a (v INTEGER)"),
            .code { connection throws(SQLiteError) in try connection.run("INSERT INTO a VALUES (42)") },
        ]
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.migrate(steps)
            XCTAssertEqual(try connection.userVersion, 2)
            try connection.migrate(steps)
            XCTAssertEqual(try connection.query("SELECT v FROM a").map { $0.integer(0) }, [42], "each step runs once")
        }
        let failing = steps + [.sql("CREATE TABLE b (v INTEGER); INSERT INTO missing VALUES (1)")]
        let connection = try SQLiteConnection(path: path)
        XCTAssertThrowsError(try connection.migrate(failing))
        XCTAssertEqual(try connection.userVersion, 2, "the failed step is rolled back whole")
        XCTAssertTrue(try connection.query("SELECT name FROM sqlite_master WHERE name = 'b'").isEmpty)
        XCTAssertEqual(try connection.query("SELECT v FROM a").map { $0.integer(0) }, [42])
    }

    func testAFileNewerThanTheProgramIsRefused() throws {
        let connection = try open()
        try connection.migrate(["CREATE TABLE a (v INTEGER)", "CREATE TABLE b (v INTEGER)"])
        XCTAssertThrowsError(try connection.migrate(["CREATE TABLE a (v INTEGER)"])) { error in
            let error = error as? SQLiteError
            XCTAssertEqual(error?.code, 1)
            XCTAssertEqual(
                error?.message, "database schema version 2 is newer than this program knows (1); upgrade healthgate")
        }
    }

    func testAMigrationThatLeavesADanglingForeignKeyFails() throws {
        let connection = try open()
        XCTAssertThrowsError(try connection.migrate([
            """
            CREATE TABLE parent (id INTEGER PRIMARY KEY);
            CREATE TABLE child (parent INTEGER REFERENCES parent(id));
            INSERT INTO child VALUES (7);
            """,
        ])) { error in
            let error = error as? SQLiteError
            XCTAssertEqual(error?.code, 19)
            XCTAssertEqual(error?.context, "migration 1")
        }
        XCTAssertEqual(try connection.userVersion, 0)
    }
}
