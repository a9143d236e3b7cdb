import Foundation
import GatewayTesting
import HealthModel
import Workouts
import WorkoutPresentation
import WorkoutsTesting
import XCTest

/// The board's events: the whole board first, then only the tiles whose shown content changed,
/// the tiles gone and the order when it changed; nothing when nothing shown changed.
final class BoardDiffTests: XCTestCase {
    let s = Script(clock: ManualClock())
    let straps = (1...3).map { Device(name: "Strap \($0)", localIdentifier: "AA:0\($0)") }
    let roster = ParticipantRoster(
        participants: ["Ana", "Ben", "Cleo"].enumerated().map { index, name in
            Participant(name: name, devices: ["AA:0\(index + 1)"], profile: UserProfile(maximumHeartRate: 190))
        },
        defaultProfile: UserProfile(maximumHeartRate: 190))

    func testOnlyTheChangedTilesAreSent() throws {
        var model = LiveBoardModel()
        model.ingest(straps.map { s.heartRate(100, at: 0, device: $0) }, arrivedAt: .seconds(0))
        var diff = BoardDiff()
        let first = diff.whole(model.snapshot(at: s.at(0), uptime: .seconds(0), roster: roster, workouts: [:]))
        XCTAssertTrue(first.full)
        XCTAssertEqual(first.tiles.count, 3)
        XCTAssertEqual(first.order, ["participant:Ana", "participant:Ben", "participant:Cleo"])

        // Half a second later, nothing shown changed (only secondsSinceReading did): no event.
        XCTAssertNil(diff.change(to: model.snapshot(at: s.at(0.5), uptime: .milliseconds(500), roster: roster, workouts: [:])))

        model.ingest([s.heartRate(131, at: 1, device: straps[1])], arrivedAt: .seconds(1))
        let change = try XCTUnwrap(diff.change(to: model.snapshot(at: s.at(1), uptime: .seconds(1), roster: roster, workouts: [:])))
        XCTAssertFalse(change.full)
        XCTAssertEqual(change.tiles.map(\.id), ["participant:Ben"])
        XCTAssertEqual(change.tiles.first?.heartRate, 131)
        XCTAssertNil(change.order, "the order did not change")
        XCTAssertEqual(change.removed, [])

        // A new strap appears: its tile and the new order.
        model.ingest([s.heartRate(90, at: 1.2, device: Device(name: "Stranger", localIdentifier: "CC:03"))], arrivedAt: .milliseconds(1200))
        let guest = try XCTUnwrap(diff.change(to: model.snapshot(at: s.at(1.2), uptime: .milliseconds(1200), roster: roster, workouts: [:])))
        XCTAssertEqual(guest.tiles.map(\.id), ["strap:CC:03"])
        XCTAssertEqual(guest.order?.last, "strap:CC:03")
    }

    func testATileGoneIsListedAndTheTimersChangeOncePerSecond() throws {
        var model = LiveBoardModel()
        model.ingest([s.heartRate(100, at: 0, device: straps[0])], arrivedAt: .seconds(0))
        var diff = BoardDiff()
        let running = WorkoutSnapshot(state: .running, elapsedSeconds: 10.2, zoneSeconds: [10.2, 0, 0, 0, 0])
        _ = diff.whole(model.snapshot(at: s.at(0), uptime: .seconds(0), roster: roster, workouts: ["Ana": running]))
        var later = running
        later.elapsedSeconds = 10.7
        later.zoneSeconds = [10.7, 0, 0, 0, 0]
        XCTAssertNil(
            diff.change(to: model.snapshot(at: s.at(0.5), uptime: .milliseconds(500), roster: roster, workouts: ["Ana": later])),
            "the same whole second: nothing shown changed")
        later.elapsedSeconds = 11.1
        later.zoneSeconds = [11.1, 0, 0, 0, 0]
        let tick = try XCTUnwrap(
            diff.change(to: model.snapshot(at: s.at(0.9), uptime: .milliseconds(900), roster: roster, workouts: ["Ana": later])))
        XCTAssertEqual(tick.tiles.map(\.id), ["participant:Ana"])

        let smaller = ParticipantRoster(participants: Array(roster.participants.prefix(2)), defaultProfile: roster.defaultProfile)
        let gone = try XCTUnwrap(diff.change(to: model.snapshot(at: s.at(1), uptime: .seconds(1), roster: smaller, workouts: ["Ana": later])))
        XCTAssertEqual(gone.removed, ["participant:Cleo"])
        XCTAssertEqual(gone.order, ["participant:Ana", "participant:Ben"])
    }
}

/// A tile follows its strap whatever form the participant's device was written in.
final class BoardIdentityTests: XCTestCase {
    func testATileFollowsAnAddressWrittenInAnotherForm() {
        let s = Script(clock: ManualClock())
        let strap = Device(name: "Polar H10", localIdentifier: "A0:9E:1A:12:34:56")
        let roster = ParticipantRoster(
            participants: [Participant(name: "Ana", devices: ["a0-9e-1a-12-34-56"], profile: UserProfile(maximumHeartRate: 190))],
            defaultProfile: UserProfile(maximumHeartRate: 190))
        var model = LiveBoardModel()
        model.ingest([s.heartRate(120, at: 0, device: strap)], arrivedAt: .seconds(0))
        let tiles = model.snapshot(at: s.at(0), uptime: .seconds(0), roster: roster, workouts: [:]).tiles
        XCTAssertEqual(tiles.map(\.id), ["participant:Ana"], "no guest tile: Ana's tile follows the strap")
        XCTAssertEqual(tiles.first?.heartRate, 120)
    }
}
