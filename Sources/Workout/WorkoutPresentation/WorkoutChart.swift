public import Workouts
import FoundationEssentials
public import HealthModel
import GatewayRuntime

/// Renders a workout as a self-contained SVG chart.
public enum WorkoutChart {
    /// An SVG document (no external resources, readable in any browser) of heart rate over the
    /// workout's wall-clock time:
    /// - `rect.zone` bands (`data-zone="N"`) behind the series, when `zones` is given;
    /// - `rect.pause` shaded for each pause (from the pause and resume events);
    /// - `rect.gap` hatched for each stretch without heart rate longer than the gap threshold
    ///   (`healthgate.gapThresholdSeconds` in the metadata, else 10 s), where the series breaks;
    /// - one `polyline.heart-rate` per unbroken run of readings (breaks at gaps and pauses);
    /// - `line.lap` and a label at the end of each lap;
    /// - a bike's, rower's or treadmill's power (`polyline.power`) and cadence or stroke rate
    ///   (`polyline.cadence`) when `samples` hold them, each scaled to the plot's height between
    ///   its own lowest and highest reading, named with that range at the right;
    /// - a header with the totals.
    /// `samples` are the workout's readings of any type (``WorkoutReadings``: its raw samples, or
    /// a type's curve points once retention pruned them); readings outside the workout's
    /// interval are left out.
    public static func svg(workout: Workout, samples: [QuantitySample], zones: HeartRateZones?) -> String {
        let timeline = RunningTimeline(workout: workout)
        let threshold = workout.metadata.number("healthgate.gapThresholdSeconds") ?? UserProfile.defaultGapThresholdSeconds
        let readings = samples
            .filter { $0.type == .heartRate && $0.endDate >= workout.startDate && $0.endDate <= workout.endDate }
            .sorted { $0.endDate < $1.endDate }
            .map { (date: $0.endDate, bpm: $0.canonicalValue) }
        let plot = Plot(workout: workout, readings: readings.map(\.bpm), zones: zones)
        let (runs, gaps) = heartRateRuns(readings, workout: workout, timeline: timeline, threshold: threshold)
        var svg = document(plot, workout: workout)
        svg += header(plot, workout: workout)
        svg += zoneBands(plot, zones: zones)
        svg += pauses(plot, timeline: timeline)
        svg += gapShading(plot, gaps: gaps)
        svg += axes(plot)
        svg += heartRateLines(plot, runs: runs)
        svg += machineSeries(plot, samples: samples, workout: workout, timeline: timeline)
        svg += laps(plot, workout: workout)
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// `2027-01-15 08:00 UTC`.
    static func shortDate(_ date: Date) -> String {
        let text = RFC3339.string(from: date)
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }
}
