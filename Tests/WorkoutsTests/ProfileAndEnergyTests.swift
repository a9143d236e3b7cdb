import Foundation
import HealthModel
import GatewayRuntime
import Workouts
import XCTest

final class ProfileAndEnergyTests: XCTestCase {
    /// 2026-11-22T00:00:00Z
    let day = Date(timeIntervalSince1970: 1_795_305_600)

    func testMaximumHeartRateFromAgeIsTanaka() throws {
        let profile = try UserProfile.decode(.object(["dateOfBirth": .string("1986-11-22")]))
        // Birthday today: 40 years. 208 − 0.7 × 40 = 208 − 28 = 180.
        XCTAssertEqual(profile.age(on: day), 40)
        XCTAssertEqual(try XCTUnwrap(profile.maximumHeartRate(on: day)), 180, accuracy: 1e-9)
        // The day before: still 39. 208 − 0.7 × 39 = 208 − 27.3 = 180.7.
        let dayBefore = day.addingTimeInterval(-86_400)
        XCTAssertEqual(profile.age(on: dayBefore), 39)
        XCTAssertEqual(try XCTUnwrap(profile.maximumHeartRate(on: dayBefore)), 180.7, accuracy: 1e-9)
    }

    func testExplicitMaximumWinsAndDefaultZones() throws {
        let profile = try UserProfile.decode(.object([
            "maximumHeartRate": .number(190), "dateOfBirth": .string("1986-11-22"),
        ]))
        let zones = try XCTUnwrap(profile.heartRateZones(on: day))
        XCTAssertEqual(zones.maximumHeartRate, 190)
        // 50–60 % of 190 = 95–114, then 114–133, 133–152, 152–171, 171–190.
        let bounds = zones.zones.map { [$0.lowerBPM, $0.upperBPM] }
        for (actual, expected) in zip(bounds, [[95.0, 114], [114, 133], [133, 152], [152, 171], [171, 190]]) {
            XCTAssertEqual(actual[0], expected[0], accuracy: 1e-9)
            XCTAssertEqual(actual[1], expected[1], accuracy: 1e-9)
        }
        XCTAssertNil(zones.zone(for: 94.9), "below zone 1")
        XCTAssertEqual(zones.zone(for: 95)?.number, 1)
        XCTAssertEqual(zones.zone(for: 133)?.number, 3, "lower bounds are inclusive")
        XCTAssertEqual(zones.zone(for: 205)?.number, 5, "above the maximum is still zone 5")
    }

    func testCustomZonesInBPMNeedNoMaximum() throws {
        let profile = try UserProfile.decode(.object(["zones": .array([
            .object(["lowerBPM": .number(100), "upperBPM": .number(140)]),
            .object(["lowerBPM": .number(140), "upperBPM": .number(170)]),
        ])]))
        let zones = try XCTUnwrap(profile.heartRateZones(on: day))
        XCTAssertNil(zones.maximumHeartRate)
        XCTAssertEqual(zones.zones.map(\.number), [1, 2])
        XCTAssertEqual(zones.zone(for: 150)?.number, 2)
    }

    func testPercentZonesWithoutMaximumAreUnknown() throws {
        XCTAssertNil(try UserProfile.decode(nil).heartRateZones(on: day))
    }

    func testBadProfilesNameTheKey() {
        let cases: [(JSONValue, String)] = [
            (.object(["weightKilograms": .string("seventy")]), "profile.weightKilograms"),
            (.object(["weightKilograms": .number(-3)]), "profile.weightKilograms"),
            (.object(["dateOfBirth": .string("22/11/1986")]), "profile.dateOfBirth"),
            (.object(["maximumHeartRate": .number(400)]), "profile.maximumHeartRate"),
            (.object(["biologicalSex": .string("robot")]), "profile.biologicalSex"),
            (.object(["zones": .array([.object(["lowerPercent": .number(60), "upperPercent": .number(50)])])]), "profile.zones[0]"),
            (.object(["zones": .array([
                .object(["lowerPercent": .number(50), "upperPercent": .number(70)]),
                .object(["lowerPercent": .number(60), "upperPercent": .number(80)]),
            ])]), "profile.zones[1]"),
            (.object(["zones": .array([.object(["lowerPercent": .number(50)])])]), "profile.zones[0]"),
        ]
        for (value, key) in cases {
            XCTAssertThrowsError(try UserProfile.decode(value), "\(value)") { error in
                let error = error as? WorkoutError
                XCTAssertEqual(error?.code, .invalidProfile)
                XCTAssertTrue(error?.message.hasPrefix(key) ?? false, "\(error?.message ?? "") should name \(key)")
            }
        }
    }

    // Keytel et al. 2005 (J Sports Sci 23(3):289–297), equations without VO2max, kJ/min.
    func testKeytelMaleWorkedExample() throws {
        let equation = ActiveEnergyEquation(weightKilograms: 70, age: 30, sex: .male)
        // −55.0969 + 0.6309 × 150 + 0.1988 × 70 + 0.2017 × 30
        //   = −55.0969 + 94.635 + 13.916 + 6.051 = 59.5051 kJ/min
        XCTAssertEqual(try XCTUnwrap(equation.kilojoulesPerMinute(heartRate: 150)), 59.5051, accuracy: 1e-9)
        // 30 min: 59.5051 × 30 = 1785.153 kJ; / 4.184 = 426.6618 kcal
        XCTAssertEqual(try XCTUnwrap(equation.kilocalories(heartRate: 150, seconds: 1800)), 1785.153 / 4.184, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(equation.kilocalories(heartRate: 150, seconds: 1800)), 426.6618, accuracy: 1e-4)
    }

    func testKeytelFemaleWorkedExample() throws {
        let equation = ActiveEnergyEquation(weightKilograms: 60, age: 25, sex: .female)
        // −20.4022 + 0.4472 × 140 − 0.1263 × 60 + 0.0740 × 25
        //   = −20.4022 + 62.608 − 7.578 + 1.85 = 36.4778 kJ/min
        XCTAssertEqual(try XCTUnwrap(equation.kilojoulesPerMinute(heartRate: 140)), 36.4778, accuracy: 1e-9)
        // 1 min: 36.4778 / 4.184 = 8.7184 kcal
        XCTAssertEqual(try XCTUnwrap(equation.kilocalories(heartRate: 140, seconds: 60)), 8.7184, accuracy: 1e-4)
    }

    func testKeytelClampsAtZeroAndNeedsASex() throws {
        let male = ActiveEnergyEquation(weightKilograms: 70, age: 30, sex: .male)
        // −55.0969 + 0.6309 × 50 + 13.916 + 6.051 = −3.5849 → clamped to 0
        XCTAssertEqual(male.kilojoulesPerMinute(heartRate: 50), 0)
        XCTAssertNil(ActiveEnergyEquation(weightKilograms: 70, age: 30, sex: .other).kilojoulesPerMinute(heartRate: 150))
        let incomplete = UserProfile(dateOfBirth: "1990-01-01", biologicalSex: .male)
        XCTAssertNil(ActiveEnergyEquation(profile: incomplete, on: day), "no weight, no equation")
        let complete = UserProfile(dateOfBirth: "1996-11-22", weightKilograms: 70, biologicalSex: .male)
        XCTAssertEqual(ActiveEnergyEquation(profile: complete, on: day)?.age, 30)
    }
}
