extension QuantityType {
    /// The values a reading of this type can have, in its canonical unit: what a person's body
    /// or a machine can give, wide enough for every real reading (an athlete's 220 count/min, a
    /// hypoglycaemia of 20 mg/dL) and narrow enough to catch a reading in the wrong unit (a
    /// weight in grams sent as kilograms) or a decoder's garbage. nil: no bound beyond a finite
    /// value (a generic observation's type). The adapter protocol's check refuses a reading
    /// outside it (docs/adapter-protocol.md, "Checks"); `healthgate units` shows it.
    public var plausibleRange: ClosedRange<Double>? {
        switch identifier {
        case QuantityType.heartRate.identifier: 20...260
        case QuantityType.stepCount.identifier: 0...200_000
        case QuantityType.distanceWalkingRunning.identifier, QuantityType.distanceCycling.identifier,
            QuantityType.distanceRowing.identifier: 0...1_000_000
        case QuantityType.runningSpeed.identifier, QuantityType.rowingSpeed.identifier: 0...15
        case QuantityType.cyclingSpeed.identifier: 0...40
        case QuantityType.runningStrideLength.identifier: 0...4
        case QuantityType.activeEnergyBurned.identifier: 0...20_000
        case QuantityType.heartRateVariabilitySDNN.identifier, QuantityType.heartRateVariabilityRMSSD.identifier: 0...1_000
        case QuantityType.cyclingCadence.identifier: 0...250
        case QuantityType.rowingStrokeRate.identifier: 0...80
        case QuantityType.cyclingPower.identifier, QuantityType.runningPower.identifier, QuantityType.rowingPower.identifier: 0...3_000
        case QuantityType.bodyMass.identifier: 0.5...500
        case QuantityType.leanBodyMass.identifier: 0.5...300
        case QuantityType.bodyMassIndex.identifier: 5...150
        case QuantityType.height.identifier: 0.2...2.8
        case QuantityType.bodyFatPercentage.identifier: 1...80
        case QuantityType.bloodPressureSystolic.identifier: 40...300
        case QuantityType.bloodPressureDiastolic.identifier: 20...200
        case QuantityType.bodyTemperature.identifier: 25...45
        case QuantityType.oxygenSaturation.identifier: 40...100
        case QuantityType.peripheralPerfusionIndex.identifier: 0...100
        case QuantityType.bloodGlucose.identifier: 10...1_000
        case QuantityType.respiratoryRate.identifier: 1...120
        default: nil
        }
    }
}
