import FoundationEssentials
import GatewayRuntime
import HealthModel
import Workouts

extension WorkoutChart {
    /// The chart's geometry: the page, the plot inside its margins, and the scales that place a
    /// time and a heart rate on it.
    struct Plot {
        let width = 960.0, height = 440.0
        let left = 56.0, right = 20.0, top = 76.0, bottom = 40.0
        var plotWidth: Double { width - left - right }
        var plotHeight: Double { height - top - bottom }
        /// The workout's start, at the left edge.
        let start: Date
        /// The workout's length in seconds (at least one), across the plot.
        let span: Double
        /// The heart-rate axis, from the lowest reading or zone to the highest, widened to whole
        /// tens with ten to spare at each end.
        let low: Double, high: Double

        init(workout: Workout, readings: [Double], zones: HeartRateZones?) {
            start = workout.startDate
            span = max(1, workout.endDate.timeIntervalSince(workout.startDate))
            var low = readings.min() ?? 60
            var high = readings.max() ?? 180
            if let zones, let first = zones.zones.first, let last = zones.zones.last {
                low = min(low, first.lowerBPM)
                high = max(high, last.upperBPM)
            }
            self.low = (low / 10).rounded(.down) * 10 - 10
            self.high = (high / 10).rounded(.up) * 10 + 10
        }

        /// Where `date` lies across the plot, clamped to the workout.
        func x(_ date: Date) -> Double { left + plotWidth * min(max(0, date.timeIntervalSince(start) / span), 1) }

        /// Where `bpm` lies up the plot, clamped to the axis.
        func y(_ bpm: Double) -> Double { top + plotHeight * (1 - (min(max(bpm, low), high) - low) / (high - low)) }
    }

    /// A coordinate or length as the chart writes it: one decimal.
    static func f(_ value: Double) -> String { String(cFormat: "%.1f", value) }
}
