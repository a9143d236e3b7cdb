import Foundation
import HealthModel
import XCTest

import Workouts

/// The roster finds a device's wearer through an index of the identities its participants list:
/// the same answer as testing every participant's list (the first participant listing any of the
/// device's identities), kept up to date by every change of the roster.
final class ParticipantRosterTests: XCTestCase {
    func testTheOwnerIsTheFirstParticipantListingAnyOfTheDevicesIdentities() throws {
        let ana = Participant(name: "Ana", devices: ["aa-00-00-00-00-01", "ant:120:0005"])
        let ben = Participant(name: "Ben", devices: ["1a2b3c4d", "ANT:120:5"])
        var roster = ParticipantRoster(participants: [ana, ben], defaultProfile: UserProfile())
        let polar = Device(name: "Polar H10 1A2B3C4D", localIdentifier: "polar/1A2B3C4D", radioIdentifier: "1A2B3C4D")
        let ant = Device(name: "HRM 5", localIdentifier: "ant:120:5", radioIdentifier: "ant:120:5")
        let address = Device(localIdentifier: "AA:00:00:00:00:01")
        XCTAssertEqual(roster.owner(of: polar)?.name, "Ben")
        XCTAssertEqual(roster.owner(of: ant)?.name, "Ana", "listed by both: the first participant")
        XCTAssertEqual(roster.owner(of: address)?.name, "Ana")
        XCTAssertNil(roster.owner(of: Device(localIdentifier: "AA:00:00:00:00:02")))
        XCTAssertNil(roster.owner(of: nil))

        // An assignment moves the strap: the index follows.
        try roster.apply(ParticipantAssignment(device: "AA:00:00:00:00:01", participant: "Cleo"))
        XCTAssertEqual(roster.owner(of: address)?.name, "Cleo")
        try roster.add(Participant(name: "Dan", devices: ["02:00:00:00:00:09"]))
        XCTAssertEqual(roster.owner(of: Device(radioIdentifier: "020000000009"))?.name, "Dan")
        XCTAssertEqual(roster.owner(of: ant)?.name, "Ana")
        XCTAssertEqual(roster, ParticipantRoster(participants: roster.participants, defaultProfile: UserProfile()))
    }
}
