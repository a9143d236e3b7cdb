import Foundation
import GatewayTesting
import HealthModel
import Workouts
import WorkoutsTesting
import XCTest

/// Signing straps in to a class, as a value: a strap nobody wears appears, an assignment moves
/// it, the class's end frees what was signed in for it, and a kept one stays.
final class ClassSignInTests: XCTestCase {
    let s = Script(clock: ManualClock())
    let strap = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "1A2B3C4D", radioIdentifier: "1A2B3C4D")
    let ant = Device(name: "ANT+ heart rate 12345", localIdentifier: "ant:120:12345", radioIdentifier: "ant:120:12345")

    func hear(_ state: inout ClassSignIn, _ device: Device, _ bpm: Double, at seconds: Double, worn: Bool = false, radio: StrapRadio? = nil) {
        state.hear(device, heartRate: bpm, at: s.at(seconds), radio: radio, worn: worn, arrivedAt: .milliseconds(Int64(seconds * 1000)))
    }

    func testAStrapNobodyWearsAppearsWithItsIdentityRadioAndFirstBeat() {
        var state = ClassSignIn()
        hear(&state, strap, 80, at: 10, radio: .bluetoothBroadcast)
        hear(&state, strap, 84, at: 11, radio: .bluetoothBroadcast)
        hear(&state, ant, 90, at: 12, radio: .antPlus)
        let straps = state.newStraps(at: .seconds(12))
        XCTAssertEqual(straps.map(\.identity), ["1A2B3C4D", "ant:120:12345"], "first heard first, in the form participant assign takes")
        XCTAssertEqual(straps.map(\.radio), [.bluetoothBroadcast, .antPlus])
        XCTAssertEqual(straps[0].heartRate, 84, "the latest reading")
        XCTAssertEqual(straps[0].firstBeat, s.at(10))
        XCTAssertEqual(straps[0].lastBeat, s.at(11))
        XCTAssertEqual(straps[0].name, "Polar H10 1A2B3C4D")

        // A worn strap is no new strap, and one that becomes worn stops being one.
        hear(&state, ant, 91, at: 13, worn: true, radio: .antPlus)
        XCTAssertEqual(state.newStraps(at: .seconds(13)).map(\.identity), ["1A2B3C4D"])
        // Silent for longer than a minute: no longer offered.
        XCTAssertEqual(state.newStraps(at: .seconds(11 + ClassSignIn.forgetAfterSeconds)).count, 1)
        XCTAssertEqual(state.newStraps(at: .seconds(12 + ClassSignIn.forgetAfterSeconds)).count, 0)
    }

    func testAnAssignmentWithNoClassStaysAndStartsNoWorkout() {
        var state = ClassSignIn()
        hear(&state, strap, 80, at: 10)
        let signIn = state.signIn(device: "1a2b3c4d", participant: "Cleo", keep: false)
        XCTAssertEqual(signIn, ClassSignIn.SignIn(untilClassEnd: false, workoutStart: nil, activity: nil))
        XCTAssertEqual(state.newStraps(at: .seconds(10)).count, 0, "assigned: it moves off the new straps")
        XCTAssertEqual(state.untilClassEnd, [:])
        XCTAssertEqual(state.classEnded(), [], "nothing to free")
    }

    func testASignInDuringTheClassStartsFromTheFirstBeatAndIsFreedAtItsEnd() {
        var state = ClassSignIn()
        hear(&state, ant, 70, at: 5, radio: .antPlus)  // heard before the class
        state.classBegan(at: s.at(20), activity: .cycling)
        hear(&state, strap, 80, at: 30, radio: .bluetoothBroadcast)
        hear(&state, strap, 82, at: 31, radio: .bluetoothBroadcast)
        XCTAssertEqual(state.newStraps(at: .seconds(31)).map(\.firstBeat), [s.at(20), s.at(30)], "a strap heard before the class counts from its start")

        // Assigned by another form of its identity (the Polar id in lower case).
        let cleo = state.signIn(device: "1a2b3c4d", participant: "Cleo", keep: false)
        XCTAssertEqual(cleo.workoutStart, s.at(30), "the workout starts at the strap's first beat in the class")
        XCTAssertEqual(cleo.activity, .cycling)
        XCTAssertTrue(cleo.untilClassEnd)
        let dan = state.signIn(device: "ant:120:012345", participant: "Dan", keep: false)
        XCTAssertEqual(dan.workoutStart, s.at(20))
        XCTAssertEqual(state.newStraps(at: .seconds(31)), [], "both moved off the new straps")
        XCTAssertEqual(state.untilClassEnd, ["1a2b3c4d": "Cleo", "ant:120:012345": "Dan"])

        // A strap not heard yet: its workout starts now (nil), and it is freed at the end too.
        let eva = state.signIn(device: "02:00:00:00:00:09", participant: "Eva", keep: false)
        XCTAssertNil(eva.workoutStart)
        XCTAssertTrue(eva.untilClassEnd)

        hear(&state, Device(name: "Stranger", localIdentifier: "AA:AA:AA:AA:AA:AA"), 99, at: 40)
        XCTAssertEqual(state.classEnded(), ["02:00:00:00:00:09", "1a2b3c4d", "ant:120:012345"], "every sign-in is freed")
        XCTAssertEqual(state.newStraps(at: .seconds(40)), [], "the new-strap tiles clear")
        XCTAssertNil(state.classStart)
        XCTAssertEqual(state.classEnded(), [], "once")
    }

    func testAKeptSignInStaysAfterTheClass() {
        var state = ClassSignIn()
        state.classBegan(at: s.at(0), activity: .running)
        hear(&state, strap, 80, at: 3)
        let kept = state.signIn(device: "1A2B3C4D", participant: "Cleo", keep: true)
        XCTAssertFalse(kept.untilClassEnd)
        XCTAssertEqual(kept.workoutStart, s.at(3), "kept or not, the workout starts at the first beat")
        XCTAssertEqual(state.classEnded(), [])
    }

    func testAKeptAssignmentReplacesAnEarlierSignInOfTheSameStrap() {
        var state = ClassSignIn()
        state.classBegan(at: s.at(0), activity: .running)
        _ = state.signIn(device: "a0-9e-1a-12-34-56", participant: "Cleo", keep: false)
        _ = state.signIn(device: "A0:9E:1A:12:34:56", participant: "Cleo", keep: true)
        XCTAssertEqual(state.classEnded(), [], "the strap is kept, whichever way it was written")
    }

    func testSignInsRestoredFromTheStoreAreFreedAtTheEnd() {
        var state = ClassSignIn()
        state.restore([
            ParticipantAssignment(device: "1A2B3C4D", participant: "Cleo", untilClassEnd: true),
            ParticipantAssignment(device: "AA:00:00:00:00:01", participant: "Ana"),
        ])
        XCTAssertEqual(state.untilClassEnd, ["1A2B3C4D": "Cleo"])
        XCTAssertEqual(state.classEnded(), ["1A2B3C4D"])
    }

    func testTheRadioOfASample() throws {
        func radio(_ device: Device, broadcast: Bool = false) throws -> StrapRadio? {
            var metadata = Metadata()
            if broadcast { metadata[.broadcast] = .bool(true) }
            return StrapRadio(of: try QuantitySample(
                id: s.ids.next(), type: .heartRate, quantity: Quantity(80, .countPerMinute), start: s.at(0), end: s.at(0),
                device: device, metadata: metadata))
        }
        XCTAssertEqual(try radio(ant), .antPlus)
        XCTAssertEqual(try radio(strap, broadcast: true), .bluetoothBroadcast)
        XCTAssertEqual(try radio(Device(name: "HRM", localIdentifier: "serial/1", radioIdentifier: "02:00:00:00:00:01")), .bluetoothConnection)
        XCTAssertNil(try radio(Device(name: "Pedometer", localIdentifier: "/dev/ttyUSB0")), "no radio")
    }
}
