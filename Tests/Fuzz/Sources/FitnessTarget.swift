import FitnessEquipment
import Foundation

/// The `fitness` target: every FitnessEquipment decoder (CSC, Cycling Power, Fitness Machine),
/// the Fitness Machine reassembler fed the input in parts, and the speed and cadence calculator
/// fed what decodes.
enum FitnessTarget {
    static func run(_ bytes: [UInt8]) {
        _ = try? CSCFeatureDecoder.decode(bytes)
        _ = try? CyclingPowerFeatureDecoder.decode(bytes)
        _ = try? SensorLocationDecoder.decode(bytes)
        _ = try? FitnessMachineFeatureDecoder.decode(bytes)
        _ = try? FitnessMachineStatusDecoder.decode(bytes)
        _ = try? TreadmillData.decode(bytes)
        _ = try? IndoorBikeData.decode(bytes)
        _ = try? RowerData.decode(bytes)
        let csc = try? CSCMeasurementDecoder.decode(bytes)
        let power = try? CyclingPowerMeasurementDecoder.decode(bytes)
        for profile in [CyclingSpeedCadenceCalculator.Profile.cyclingSpeedAndCadence, .cyclingPower] {
            guard var calculator = try? CyclingSpeedCadenceCalculator(profile: profile, wheelCircumference: 2.105) else {
                FuzzTarget.check(false, "a valid circumference is refused")
                return
            }
            // The same reading at a few times, including none apart and a long stop.
            for time in [0.0, 0, 1, 1.5, 30, 31] {
                let result: CyclingSpeedCadenceCalculator.Result
                if let csc {
                    result = calculator.update(csc, receivedAt: time)
                } else if let power {
                    result = calculator.update(power, receivedAt: time)
                } else {
                    break
                }
                for value in [result.speed, result.distance, result.cadence].compactMap({ $0 }) {
                    FuzzTarget.check(value.isFinite && value >= 0, "calculator gave \(value) (\(result))")
                }
            }
        }
        // The input cut into parts where its first byte says, each part a notification.
        guard let first = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        let size = max(1, Int(first % 24))
        for layout in [FitnessMachineLayout.treadmill, .indoorBike, .rower] {
            var reassembler = FitnessMachineReassembler(layout: layout, maximumParts: 4)
            var records = 0
            var start = 0
            while start < body.count {
                let part = Array(body[start..<min(body.count, start + size)])
                records += (try? reassembler.append(part))?.count ?? 0
                start += size
            }
            if reassembler.flush() != nil { records += 1 }
            FuzzTarget.check(records <= body.count / 2 + 1, "\(records) records from \(body.count) bytes")
        }
    }
}
