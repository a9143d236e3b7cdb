import BroadcastDevices
import Foundation
import HealthModel
import XCTest

/// The body composition formula against the published implementation's own vectors, and who a
/// weighing is attributed to.
final class BodyCompositionTests: XCTestCase {
    func estimate(_ weight: Double, _ impedance: Int, _ height: Double, _ age: Int, _ sex: BiologicalSex) throws -> MiBodyComposition.Estimate {
        try MiBodyComposition.estimate(weightKilograms: weight, impedance: impedance, heightMeters: height, age: age, sex: sex).get()
    }

    /// openScale's regression fixtures (android_app/app/src/test/java/com/health/openscale/core/
    /// bluetooth/libs/MiScaleLibTest.kt: `regression_male_30y_180cm_80kg_imp500`,
    /// `regression_female_28y_165cm_60kg_imp520`, `regression_male_45y_175cm_95kg_imp430`, their
    /// `bodyFat` values, compared there within 1e-3). Lean body mass is the weight less the fat.
    func testOpenScaleVectors() throws {
        let vectors: [(Double, Int, Double, Int, BiologicalSex, Double)] = [
            (80, 500, 1.80, 30, .male, 23.315107),
            (60, 520, 1.65, 28, .female, 30.361998),
            (95, 430, 1.75, 45, .male, 32.41778),
        ]
        for (weight, impedance, height, age, sex, bodyFat) in vectors {
            let result = try estimate(weight, impedance, height, age, sex)
            XCTAssertEqual(result.bodyFatPercentage, bodyFat, accuracy: 1e-3, "\(sex) \(age) y \(height) m \(weight) kg")
            XCTAssertEqual(result.leanBodyMassKilograms + weight * result.bodyFatPercentage / 100, weight, accuracy: 1e-9)
        }
    }

    /// The age offset of women, and the factor 0.98 of a man under 61 kg.
    func testWeightFactorBranches() throws {
        // A woman of 49 and one of 50 differ by the offset (9.25 against 7.25) and a year's
        // 0.0542: 1.9458 kg of lean mass more at 50, so that share of 55 kg less fat.
        let younger = try estimate(55, 500, 1.60, 49, .female), older = try estimate(55, 500, 1.60, 50, .female)
        XCTAssertEqual(younger.bodyFatPercentage - older.bodyFatPercentage, (2 - 0.0542) / 55 * 100, accuracy: 1e-9)
        // 9.058 · 1.7² + 0.32 · 60 + 12.226 − 0.0068 · 500 − 0.0542 · 30 = 52.58562; − 0.8; × 0.98.
        let light = try estimate(60, 500, 1.70, 30, .male)
        XCTAssertEqual(light.bodyFatPercentage, (1 - (9.058 * 1.7 * 1.7 + 19.2 + 12.226 - 3.4 - 1.626 - 0.8) * 0.98 / 60) * 100, accuracy: 1e-9)
    }

    func testOutsideTheFormula() {
        let other = MiBodyComposition.estimate(weightKilograms: 70, impedance: 500, heightMeters: 1.7, age: 30, sex: .other)
        XCTAssertEqual(other, .failure(.unsupportedSex))
        let heavy = MiBodyComposition.estimate(weightKilograms: 210, impedance: 500, heightMeters: 1.7, age: 30, sex: .male)
        XCTAssertEqual(heavy, .failure(.outOfRange("weight 210.0 kg")))
        let old = MiBodyComposition.estimate(weightKilograms: 70, impedance: 500, heightMeters: 1.7, age: 100, sex: .male)
        XCTAssertEqual(old, .failure(.outOfRange("age 100")))
        let noImpedance = MiBodyComposition.estimate(weightKilograms: 70, impedance: 0, heightMeters: 1.7, age: 30, sex: .male)
        XCTAssertEqual(noImpedance, .failure(.outOfRange("impedance 0 ohms")))
    }

    // MARK: Who stood on the scale

    let scale = Device(name: "MIBFS", manufacturer: "Xiaomi", localIdentifier: "C8:47:8C:01:02:03")
    let date = Date(timeIntervalSince1970: 1_800_000_000)
    let ana = ParticipantCharacteristics(
        name: "Ana", devices: ["c8-47-8c-01-02-03"],
        characteristics: UserCharacteristics(heightMeters: 1.65, weightKilograms: 60, dateOfBirth: "1998-05-01", biologicalSex: .female))
    let ben = ParticipantCharacteristics(name: "Ben", devices: [], characteristics: UserCharacteristics(weightKilograms: 80))
    let cai = ParticipantCharacteristics(name: "Cai", devices: [], characteristics: UserCharacteristics(weightKilograms: 86))

    func testTheWearerOfTheScale() throws {
        var users = ScaleUsers(participants: [ben, ana], user: UserCharacteristics())
        XCTAssertEqual(try users.person(on: scale, weighing: 81, at: date).get().name, "Ana")
    }

    func testWithoutParticipantsTheConfiguredProfile() throws {
        let profile = UserCharacteristics(heightMeters: 1.8, biologicalSex: .male)
        var users = ScaleUsers(participants: [], user: profile)
        let person = try users.person(on: scale, weighing: 80, at: date).get()
        XCTAssertNil(person.name)
        XCTAssertEqual(person.characteristics, profile)
    }

    /// A shared scale: the one reference weight within 2 kg, then that weighing is the reference.
    func testASharedScaleByTheOneLastWeightNearEnough() throws {
        var (ben, cai) = (ben, cai)
        ben.sharedDevices = ["C8:47:8C:01:02:03"]
        cai.sharedDevices = ["C8:47:8C:01:02:03"]
        var users = ScaleUsers(participants: [ben, cai], user: UserCharacteristics())
        XCTAssertEqual(try users.person(on: scale, weighing: 81.5, at: date).get().name, "Ben")
        // Ben now last weighed 81.5, Cai 86: 85 is 3.5 from Ben and 1 from Cai.
        XCTAssertEqual(try users.person(on: scale, weighing: 85, at: date).get().name, "Cai")
        XCTAssertEqual(try users.person(on: scale, weighing: 82, at: date).get().name, "Ben")
        guard case .failure(.nobody) = users.person(on: scale, weighing: 95, at: date) else { return XCTFail("95 kg is nobody's") }
        // 82 and 85: 83.4 is within 2 kg of both, whichever is nearer.
        guard case .failure(.nobody(let reason)) = users.person(on: scale, weighing: 83.4, at: date) else { return XCTFail("two near") }
        XCTAssertTrue(reason.contains("within 2.0 kg of 83.4 kg"), reason)
    }

    /// The participants who list the scale in `sharedDevices` are its only users.
    func testASharedScaleIsItsListersOnly() throws {
        var dan = ParticipantCharacteristics(name: "Dan", devices: [], characteristics: UserCharacteristics(weightKilograms: 81))
        dan.sharedDevices = ["C8:47:8C:01:02:03"]
        var users = ScaleUsers(participants: [ben, cai, dan], user: UserCharacteristics())
        // Ben (80) is as near as Dan (81), but does not share the scale.
        XCTAssertEqual(try users.person(on: scale, weighing: 80.5, at: date).get().name, "Dan")
    }

    func testAProfileLackingAFigure() throws {
        let reading = try MiScaleDecoder.decode(
            [0x02, 0x26, 0xEA, 0x07, 3, 14, 7, 30, 5, 0xF4, 0x01, 0x80, 0x3E], service: .bodyComposition)
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        let person = ScaleUsers.Person(name: "Ben", characteristics: ben.characteristics)
        XCTAssertEqual(
            ScaleUsers.composition(of: reading, for: person, on: date),
            .failure(.incompleteProfile(profile: "Ben's profile", missing: ["biologicalSex", "dateOfBirth", "heightMeters"])))
        // Ana was 28 on 2027-01-15 (1 800 000 000 s): openScale's female vector at 80 kg (0x3E80 / 200).
        let composition = try ScaleUsers.composition(
            of: reading, for: ScaleUsers.Person(name: "Ana", characteristics: ana.characteristics), on: date
        ).get()
        XCTAssertEqual(composition, try estimate(80, 500, 1.65, 28, .female))
    }
}
