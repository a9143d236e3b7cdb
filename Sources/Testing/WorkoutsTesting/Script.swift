public import Foundation
public import GatewayTesting
public import HealthModel
public import Workouts

/// Builders for scripted sample streams, on a manual clock: the workout tests' records (heart
/// rate from a strap, steps and distance from a pod, energy), dated in seconds after ``t0``.
public struct Script {
    public let clock: ManualClock
    public let ids = SampleIDGenerator(seed: 99)

    public init(clock: ManualClock) {
        self.clock = clock
    }

    public static let strap = Device(name: "Strap", localIdentifier: "AA:BB:CC:DD:EE:FF")
    public static let pod = Device(name: "Pod", localIdentifier: "serial-1")
    public static let other = Device(name: "Other", localIdentifier: "11:22:33:44:55:66")

    public var t0: Date { Date(timeIntervalSince1970: 1_800_000_000) }

    public func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    public func heartRate(_ bpm: Double, at seconds: Double, device: Device = strap) -> HealthRecord {
        sample(.heartRate, Quantity(bpm, .countPerMinute), from: seconds, to: seconds, device: device)
    }

    public func steps(_ count: Double, from: Double, to: Double, device: Device = pod) -> HealthRecord {
        sample(.stepCount, Quantity(count, .count), from: from, to: to, device: device)
    }

    public func distance(_ meters: Double, from: Double, to: Double, device: Device = pod) -> HealthRecord {
        sample(.distanceWalkingRunning, Quantity(meters, .meter), from: from, to: to, device: device)
    }

    public func energy(_ kcal: Double, from: Double, to: Double, device: Device = strap) -> HealthRecord {
        sample(.activeEnergyBurned, Quantity(kcal, .kilocalorie), from: from, to: to, device: device)
    }

    /// A sample of the script. QuantitySample's initializer refuses only a unit the type cannot
    /// take or an end before the start; every caller above passes the type's own unit, and a
    /// script that gives an end before its start is a mistake in the test, stopped here with it.
    private func sample(_ type: QuantityType, _ quantity: Quantity, from: Double, to: Double, device: Device) -> HealthRecord {
        do {
            return .quantity(
                try QuantitySample(id: ids.next(), type: type, quantity: quantity, start: at(from), end: at(to), device: device))
        } catch {
            preconditionFailure("the workout script made an invalid sample: \(error)")
        }
    }

    /// Moves the manual clock to `seconds` after t0.
    public func move(to seconds: Double) {
        let target = Duration.milliseconds(Int64(seconds * 1000))
        clock.advance(by: target - clock.elapsed)
    }
}

/// The profile used in the scripted tests: max HR 200 → zones 100/120/140/160/180/200; male,
/// 70 kg, 30 years old on 2027-01-15 (the manual clock's day); gaps after 10 s.
public let scriptedProfile = UserProfile(
    maximumHeartRate: 200, dateOfBirth: "1997-01-01", weightKilograms: 70, biologicalSex: .male)
