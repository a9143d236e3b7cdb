/// Speed, distance and cadence from consecutive CSC or Cycling Power measurements of one sensor.
///
/// A pair of ``RevolutionRateCalculator``s, one for the wheel and one for the crank, with the
/// counter formats of the profile the calculator was made for, and the wheel circumference to
/// turn wheel revolutions into metres. Pure: the caller passes each measurement's arrival time.
public struct CyclingSpeedCadenceCalculator: Sendable {
    /// Which profile's measurements are fed: it fixes the wheel event time's resolution.
    public enum Profile: String, Hashable, Sendable {
        /// CSC Measurement: wheel event times in 1/1024 s.
        case cyclingSpeedAndCadence
        /// Cycling Power Measurement: wheel event times in 1/2048 s.
        case cyclingPower
    }

    /// A wheel circumference that is not a positive, finite length.
    public struct InvalidCircumference: Error, Hashable, Sendable, CustomStringConvertible {
        /// The rejected value, in metres.
        public var meters: Double
        public var description: String {
            "wheel circumference must be a positive number of metres, got \(meters)"
        }
    }

    /// What one measurement yields. A nil field means "nothing new"; zero means stopped.
    public struct Result: Hashable, Sendable {
        /// Speed in m/s.
        public var speed: Double?
        /// Metres travelled since the previous wheel event (0 when stopped).
        public var distance: Double?
        /// Crank revolutions per minute.
        public var cadence: Double?
        /// The wheel's outcome; nil when the measurement had no wheel data.
        public var wheel: RevolutionRateCalculator.Outcome?
        /// The crank's outcome; nil when the measurement had no crank data.
        public var crank: RevolutionRateCalculator.Outcome?
    }

    /// The wheel circumference in metres.
    public let wheelCircumference: Double
    private var wheel: RevolutionRateCalculator
    private var crank: RevolutionRateCalculator

    /// Creates a calculator.
    /// - Parameters:
    ///   - wheelCircumference: metres, for example 2.105 for a 700×25C tyre.
    ///   - stopTimeout: see ``RevolutionRateCalculator``.
    /// - Throws: ``InvalidCircumference`` unless the circumference is positive and finite.
    public init(
        profile: Profile, wheelCircumference: Double, stopTimeout: Double = 3
    ) throws(InvalidCircumference) {
        guard wheelCircumference.isFinite, wheelCircumference > 0 else {
            throw InvalidCircumference(meters: wheelCircumference)
        }
        self.wheelCircumference = wheelCircumference
        wheel = RevolutionRateCalculator(
            counter: profile == .cyclingPower ? .cyclingPowerWheel : .cscWheel, stopTimeout: stopTimeout)
        crank = RevolutionRateCalculator(counter: .crank, stopTimeout: stopTimeout)
    }

    /// Feeds one CSC Measurement received at `receivedAt` seconds.
    public mutating func update(_ measurement: CSCMeasurement, receivedAt: Double) -> Result {
        update(wheel: measurement.wheel, crank: measurement.crank, receivedAt: receivedAt)
    }

    /// Feeds one Cycling Power Measurement received at `receivedAt` seconds.
    public mutating func update(_ measurement: CyclingPowerMeasurement, receivedAt: Double) -> Result {
        update(wheel: measurement.wheel, crank: measurement.crank, receivedAt: receivedAt)
    }

    /// Feeds revolution data directly (either may be absent).
    public mutating func update(wheel wheelData: RevolutionData?, crank crankData: RevolutionData?, receivedAt: Double) -> Result {
        var result = Result()
        if let wheelData {
            let outcome = wheel.update(wheelData, receivedAt: receivedAt)
            result.wheel = outcome
            if let rate = outcome.revolutionsPerSecond {
                result.speed = rate * wheelCircumference
            }
            switch outcome {
            case .moving(let revolutions, _): result.distance = Double(revolutions) * wheelCircumference
            case .stopped: result.distance = 0
            default: break
            }
        }
        if let crankData {
            let outcome = crank.update(crankData, receivedAt: receivedAt)
            result.crank = outcome
            result.cadence = outcome.revolutionsPerSecond.map { $0 * 60 }
        }
        return result
    }

    /// Forgets both baselines, as after a reconnect.
    public mutating func reset() {
        wheel.reset()
        crank.reset()
    }
}
