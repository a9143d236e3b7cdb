import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import SQLite
import XCTest

/// Schema version 13: a file of version 12 upgrades keeping its devices (radio identifier NULL),
/// and a device's radio identifier is stored, read back by every reader and part of the
/// device's identity (two devices that differ only by it are two rows, one device is one row).
final class RadioIdentifierMigrationTests: StoreTestCase {
    func testAVersion12FileUpgradesAndTheRadioIdentifierIsStoredAndReadBack() async throws {
        let ids = makeIDs()
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.migrate(Array(StoreSchema.migrations.prefix(12)))
            XCTAssertEqual(try connection.userVersion, 12)
            try connection.run(
                "INSERT INTO devices (id, name, manufacturer, local_identifier) VALUES (1, 'Polar H10 1A2B3C4D', 'Polar', 'Polar/C123')")
        }
        let store = try HealthStore(path: path)
        XCTAssertEqual(try sqlite3("PRAGMA user_version"), String(StoreSchema.version))
        XCTAssertGreaterThanOrEqual(StoreSchema.version, 13)
        XCTAssertEqual(try sqlite3("PRAGMA integrity_check"), "ok")
        // The device stored before version 13 is the same row for a device without a radio.
        let old = Device(name: "Polar H10 1A2B3C4D", manufacturer: "Polar", localIdentifier: "Polar/C123")
        try await store.write([.quantity(try heartRate(ids, 70, at: 0, device: old))])
        XCTAssertEqual(try count("devices"), 1)
        let before = try await store.samples(of: .heartRate)
        XCTAssertEqual(before.first?.device, old)
        XCTAssertNil(before.first?.device?.radioIdentifier, "stored before version 13: no radio")

        // The same strap, now with its address: a second row; again: no third.
        var strap = Device(name: "Polar H10 1A2B3C4D", manufacturer: "Polar", localIdentifier: "Polar/C123")
        strap.radioIdentifier = "A0:9E:1A:12:34:56"
        try await store.write([.quantity(try heartRate(ids, 71, at: 1, device: strap))])
        try await store.write([.quantity(try heartRate(ids, 72, at: 2, device: strap))])
        XCTAssertEqual(try count("devices"), 2)
        XCTAssertEqual(try sqlite3("SELECT ifnull(radio_identifier, '-') FROM devices ORDER BY id"), "-\nA0:9E:1A:12:34:56")

        let after = try await store.samples(of: .heartRate)
        XCTAssertEqual(after.map { $0.device?.radioIdentifier ?? "-" }, ["-", "A0:9E:1A:12:34:56", "A0:9E:1A:12:34:56"])
        let newest = try await store.mostRecentSample(of: .heartRate)
        XCTAssertEqual(newest?.device, strap, "the newest-sample reader reads the radio too")
        XCTAssertTrue(Device.matches(newest?.device, selection: ["a0-9e-1a-12-34-56"]))

        let series = try HeartbeatSeriesSample(
            id: ids.next(), start: at(3), end: at(5),
            beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: true), Heartbeat(timeSinceSeriesStart: 1, precededByGap: false)],
            device: strap)
        try await store.write([.heartbeatSeries(series)])
        let storedSeries = try await store.heartbeatSeries()
        XCTAssertEqual(storedSeries.first?.device?.radioIdentifier, "A0:9E:1A:12:34:56")
    }
}
