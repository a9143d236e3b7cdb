import Foundation
import GatewayTesting
import HealthModel
import Workouts

/// Builders for scripted sample streams.
struct Script {
    let clock: ManualClock
    let ids = SampleIDGenerator(seed: 99)
    static let strap = Device(name: "Strap", localIdentifier: "AA:BB:CC:DD:EE:FF")
    static let pod = Device(name: "Pod", localIdentifier: "serial-1")
    static let other = Device(name: "Other", localIdentifier: "11:22:33:44:55:66")

    var t0: Date { Date(timeIntervalSince1970: 1_800_000_000) }

    func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    func heartRate(_ bpm: Double, at seconds: Double, device: Device = strap) -> HealthRecord {
        // Force-try in tests only: the values are valid by construction.
        .quantity(try! QuantitySample(
            id: ids.next(), type: .heartRate, quantity: Quantity(bpm, .countPerMinute), start: at(seconds),
            end: at(seconds), device: device))
    }

    func steps(_ count: Double, from: Double, to: Double, device: Device = pod) -> HealthRecord {
        .quantity(try! QuantitySample(
            id: ids.next(), type: .stepCount, quantity: Quantity(count, .count), start: at(from), end: at(to),
            device: device))
    }

    func distance(_ meters: Double, from: Double, to: Double, device: Device = pod) -> HealthRecord {
        .quantity(try! QuantitySample(
            id: ids.next(), type: .distanceWalkingRunning, quantity: Quantity(meters, .meter), start: at(from),
            end: at(to), device: device))
    }

    func energy(_ kcal: Double, from: Double, to: Double, device: Device = strap) -> HealthRecord {
        .quantity(try! QuantitySample(
            id: ids.next(), type: .activeEnergyBurned, quantity: Quantity(kcal, .kilocalorie), start: at(from),
            end: at(to), device: device))
    }

    /// Moves the manual clock to `seconds` after t0.
    func move(to seconds: Double) {
        let target = Duration.milliseconds(Int64(seconds * 1000))
        clock.advance(by: target - clock.elapsed)
    }
}

/// The profile used in the scripted tests: max HR 200 → zones 100/120/140/160/180/200; male,
/// 70 kg, 30 years old on 2027-01-15 (the manual clock's day); gaps after 10 s.
let scriptedProfile = UserProfile(
    maximumHeartRate: 200, dateOfBirth: "1997-01-01", weightKilograms: 70, biologicalSex: .male)
