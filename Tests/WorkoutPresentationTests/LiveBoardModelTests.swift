import Foundation
import GatewayTesting
import HealthModel
import Workouts
import WorkoutPresentation
import WorkoutsTesting
import XCTest

/// The board's tiles from readings, the roster and the workouts: participants and guests, zones
/// from each profile, the lost-sensor flag, the bounded trend and device count.
final class LiveBoardModelTests: XCTestCase {
    let s = Script(clock: ManualClock())
    let ana = Device(name: "Ana's strap", localIdentifier: "AA:01")
    let stranger = Device(name: "Stranger", localIdentifier: "CC:03")

    var roster: ParticipantRoster {
        ParticipantRoster(
            participants: [Participant(name: "Ana", devices: ["AA:01"], profile: UserProfile(maximumHeartRate: 150)),
                           Participant(name: "Ben", devices: ["BB:02"], profile: UserProfile(maximumHeartRate: 200))],
            defaultProfile: UserProfile(maximumHeartRate: 190))
    }

    func testParticipantsComeFirstThenNewStrapsWithNoParticipantData() {
        var model = LiveBoardModel()
        model.ingest([s.heartRate(120, at: 0, device: ana), s.heartRate(95, at: 0, device: stranger)], arrivedAt: .seconds(0))
        let board = model.snapshot(at: s.at(0.5), uptime: .seconds(0.5), roster: roster, workouts: [:])
        XCTAssertEqual(board.tiles.map(\.id), ["participant:Ana", "participant:Ben", "strap:CC:03"])
        let ana = board.tiles[0], ben = board.tiles[1], strap = board.tiles[2]
        XCTAssertEqual(ana.heartRate, 120)
        XCTAssertEqual(ana.percentOfMaximum ?? 0, 80, accuracy: 0.001)
        XCTAssertEqual(ana.zone, 4, "120 of 150 is 80 %: zone 4")
        XCTAssertEqual(ana.sensor, .live)
        XCTAssertEqual(ben.sensor, .waiting, "Ben's strap has sent nothing")
        XCTAssertNil(ben.heartRate)
        XCTAssertTrue(strap.guest)
        XCTAssertEqual(strap.name, "New strap")
        XCTAssertEqual(strap.strap, BoardTile.Strap(identity: "CC:03", radio: nil, deviceName: "Stranger"))
        XCTAssertEqual(strap.heartRate, 95, "its live heart rate")
        XCTAssertNil(strap.percentOfMaximum, "no participant, no profile: no percentage")
        XCTAssertNil(strap.zone)
        XCTAssertNil(strap.energyKilocalories)
    }

    /// New-strap tiles: one per strap (its two paths together), only those the sign-in state
    /// offers (cleared at a class's end), with the radio of the latest reading.
    func testNewStrapTilesFollowTheSignInStatesStraps() throws {
        var model = LiveBoardModel()
        let connected = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "Polar/C1", radioIdentifier: "A0:9E:1A:12:34:56")
        let broadcast = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "1A2B3C4D", radioIdentifier: "1A2B3C4D")
        var metadata = Metadata()
        metadata[.broadcast] = .bool(true)
        let advertised = try QuantitySample(
            id: s.ids.next(), type: .heartRate, quantity: Quantity(88, .countPerMinute), start: s.at(1), end: s.at(1),
            device: broadcast, metadata: metadata)
        model.ingest([s.heartRate(87, at: 0, device: connected)], arrivedAt: .seconds(0))
        model.ingest([.quantity(advertised)], arrivedAt: .seconds(1))
        let tiles = model.snapshot(at: s.at(1), uptime: .seconds(1), roster: roster, workouts: [:]).tiles.filter(\.guest)
        XCTAssertEqual(tiles.map(\.id), ["strap:1A2B3C4D"], "one strap, whichever path")
        XCTAssertEqual(tiles.first?.strap?.radio, .bluetoothBroadcast)
        XCTAssertEqual(tiles.first?.heartRate, 88)
        let offered = model.snapshot(at: s.at(1), uptime: .seconds(1), roster: roster, workouts: [:], newStraps: ["1A2B3C4D"])
        XCTAssertEqual(offered.tiles.filter(\.guest).count, 1)
        let cleared = model.snapshot(at: s.at(1), uptime: .seconds(1), roster: roster, workouts: [:], newStraps: [])
        XCTAssertEqual(cleared.tiles.map(\.id), ["participant:Ana", "participant:Ben"], "the class ended: no new-strap tile")
    }

    func testASilentSensorIsFlaggedLostOnceItsThresholdPasses() {
        var model = LiveBoardModel()
        model.ingest([s.heartRate(120, at: 0, device: ana)], arrivedAt: .seconds(0))
        let threshold = LiveBoardModel.lostAfterSeconds
        XCTAssertLessThan(threshold + 1, 5, "flagged within 5 s even with the page's refresh")
        XCTAssertEqual(model.snapshot(at: s.at(threshold), uptime: .seconds(threshold), roster: roster, workouts: [:]).tiles[0].sensor, .live)
        let lost = model.snapshot(at: s.at(threshold + 0.1), uptime: .seconds(threshold + 0.1), roster: roster, workouts: [:]).tiles[0]
        XCTAssertEqual(lost.sensor, .lost)
        XCTAssertNil(lost.heartRate, "a lost strap shows no stale number")
        XCTAssertNil(lost.percentOfMaximum)
        XCTAssertNil(lost.zone)
        XCTAssertEqual(lost.trend, [120], "the trend keeps what did arrive")
        model.ingest([s.heartRate(121, at: 10, device: ana)], arrivedAt: .seconds(10))
        XCTAssertEqual(model.snapshot(at: s.at(10), uptime: .seconds(10), roster: roster, workouts: [:]).tiles[0].sensor, .live, "back when it sends")
    }

    func testTheWorkoutGivesTimeInTheCurrentZoneAndEnergy() {
        var model = LiveBoardModel()
        model.ingest([s.heartRate(120, at: 0, device: ana)], arrivedAt: .seconds(0))
        let workout = WorkoutSnapshot(
            state: .running, elapsedSeconds: 300, zoneSeconds: [10, 20, 30, 240, 0], energyKilocalories: 42)
        let tile = model.snapshot(at: s.at(0), uptime: .seconds(0), roster: roster, workouts: ["Ana": workout]).tiles[0]
        XCTAssertEqual(tile.secondsInZone, 240)
        XCTAssertEqual(tile.energyKilocalories, 42)
        XCTAssertEqual(tile.workoutState, .running)
        XCTAssertEqual(tile.elapsedSeconds, 300)
    }

    func testTheTrendAndTheDevicesAreBounded() {
        var model = LiveBoardModel()
        for second in 0..<(LiveBoardModel.trendLength + 15) {
            model.ingest([s.heartRate(Double(60 + second), at: Double(second), device: ana)], arrivedAt: .seconds(second))
        }
        let trend = model.snapshot(at: s.at(100), uptime: .seconds(100), roster: roster, workouts: [:]).tiles[0].trend
        XCTAssertEqual(trend.count, LiveBoardModel.trendLength)
        XCTAssertEqual(trend.last, Double(60 + LiveBoardModel.trendLength + 14), "the newest are kept")

        var crowded = LiveBoardModel()
        let devices = (0..<(LiveBoardModel.maximumDevices + 3)).map { Device(name: "D\($0)", localIdentifier: "dev-\($0)") }
        crowded.ingest(devices.map { s.heartRate(80, at: 0, device: $0) }, arrivedAt: .seconds(0))
        let board = crowded.snapshot(at: s.at(0), uptime: .seconds(0), roster: ParticipantRoster(participants: [], defaultProfile: UserProfile()), workouts: [:])
        XCTAssertEqual(board.tiles.count, LiveBoardModel.maximumDevices)
        XCTAssertEqual(board.droppedReadings, 3, "readings beyond the bound are counted")
    }
}
