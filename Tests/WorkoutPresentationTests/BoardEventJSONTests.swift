import Foundation
import HealthModel
import Workouts
import WorkoutPresentation
import XCTest

/// A board event's JSON (``BoardUpdate/eventJSON()``, written without `JSONEncoder`) is the JSON of
/// the update's `Codable` conformance: the same object as HealthJSON's encoder makes, and it
/// decodes back to the update it was written from.
final class BoardEventJSONTests: XCTestCase {
    let date = Date(timeIntervalSince1970: 1_764_000_000.123456)

    /// Every field of a tile set, awkward strings and numbers among them.
    var everyField: BoardUpdate {
        let participant = BoardTile(
            id: "participant:Zoë \"Z\" O'Brien\\1", name: "Zoë \"Z\" O'Brien\\1\n\ttab\u{01}\u{1F}🏃", guest: false,
            heartRate: 152, percentOfMaximum: 79.89473684210526, zone: 3, zoneCount: 5, secondsInZone: 12.25,
            energyKilocalories: 1.0e-5, workoutState: .running, elapsedSeconds: 9_007_199_254_740_993, trend: [60, 60.5, 1e21, -0.25],
            sensor: .live, secondsSinceReading: 0.4)
        var strap = BoardTile(id: "strap:ant:120:12345", name: "New strap", guest: true, trend: [], sensor: .lost)
        strap.strap = BoardTile.Strap(identity: "ant:120:12345", radio: .antPlus, deviceName: "H10 </script>")
        let waiting = BoardTile(id: "participant:Ben", name: "Ben", guest: false, zoneCount: 0)
        return BoardUpdate(
            full: false, generatedAt: date, tiles: [participant, strap, waiting], removed: ["participant:Gone", "strap:x"],
            order: ["participant:Zoë", "strap:ant:120:12345", "participant:Ben"], droppedReadings: 7)
    }

    func testAnEventIsTheUpdatesCodableJSON() throws {
        for update in [everyField, BoardUpdate(full: true, generatedAt: date, tiles: [])] {
            let written = try update.eventJSON()
            let encoded = try HealthJSON.makeEncoder().encode(update)
            XCTAssertEqual(
                try JSONSerialization.jsonObject(with: Data(written)) as? NSDictionary,
                try JSONSerialization.jsonObject(with: encoded) as? NSDictionary, String(decoding: written, as: UTF8.self))
            XCTAssertEqual(try HealthJSON.makeDecoder().decode(BoardUpdate.self, from: Data(written)), update)
            // One line of a server-sent event: no line break inside, whatever the names hold.
            XCTAssertFalse(written.contains(UInt8(ascii: "\n")) || written.contains(UInt8(ascii: "\r")))
        }
    }

    func testWhatJSONCannotWriteIsRefusedNamingTheField() {
        var update = everyField
        update.tiles[0].percentOfMaximum = .nan
        XCTAssertThrowsError(try update.eventJSON()) { error in
            XCTAssertEqual((error as? JSONByteWriter.Refusal)?.key, "percentOfMaximum", "\(error)")
        }
        update = everyField
        update.tiles[0].trend.append(.infinity)
        XCTAssertThrowsError(try update.eventJSON()) { error in
            XCTAssertEqual((error as? JSONByteWriter.Refusal)?.key, "trend", "\(error)")
        }
        update = everyField
        update.generatedAt = Date(timeIntervalSince1970: 1e12)
        XCTAssertThrowsError(try update.eventJSON()) { error in
            XCTAssertEqual((error as? JSONByteWriter.Refusal)?.key, "generatedAt", "\(error)")
            XCTAssertTrue("\(error)".contains("RFC 3339"), "\(error)")
        }
    }
}
