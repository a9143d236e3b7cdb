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
        let width = 960.0, height = 440.0
        let left = 56.0, right = 20.0, top = 76.0, bottom = 40.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let timeline = RunningTimeline(workout: workout)
        let threshold = workout.metadata.number("healthgate.gapThresholdSeconds") ?? UserProfile.defaultGapThresholdSeconds
        let readings = samples
            .filter { $0.type == .heartRate && $0.endDate >= workout.startDate && $0.endDate <= workout.endDate }
            .sorted { $0.endDate < $1.endDate }
            .map { (date: $0.endDate, bpm: $0.canonicalValue) }

        let span = max(1, workout.endDate.timeIntervalSince(workout.startDate))
        var low = readings.map(\.bpm).min() ?? 60
        var high = readings.map(\.bpm).max() ?? 180
        if let zones, let first = zones.zones.first, let last = zones.zones.last {
            low = min(low, first.lowerBPM)
            high = max(high, last.upperBPM)
        }
        low = (low / 10).rounded(.down) * 10 - 10
        high = (high / 10).rounded(.up) * 10 + 10
        func x(_ date: Date) -> Double { left + plotWidth * min(max(0, date.timeIntervalSince(workout.startDate) / span), 1) }
        func y(_ bpm: Double) -> Double { top + plotHeight * (1 - (min(max(bpm, low), high) - low) / (high - low)) }
        func f(_ value: Double) -> String { String(cFormat: "%.1f", value) }

        var svg = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" font-family="sans-serif" font-size="12">"#,
            "<title>\(escapeMarkup("\(workout.activityType.rawValue) workout \(RFC3339.string(from: workout.startDate))"))</title>",
            "<defs><pattern id=\"gap-hatch\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                + "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#c0392b\" stroke-width=\"2\" stroke-opacity=\"0.35\"/></pattern></defs>",
            "<rect x=\"0\" y=\"0\" width=\"\(Int(width))\" height=\"\(Int(height))\" fill=\"#ffffff\"/>",
        ]

        // Header with the totals.
        let hr = workout.statistics(for: .heartRate)
        let energy = workout.statistics(for: .activeEnergyBurned)?.sum
        let distance = workout.distance?.meters
        let steps = workout.statistics(for: .stepCount)?.sum
        let power = workout.power?.average
        let gapCount = Int(workout.metadata.number("healthgate.gapCount") ?? 0)
        svg.append("<text class=\"header\" x=\"\(f(left))\" y=\"24\" font-size=\"16\" font-weight=\"bold\">"
            + escapeMarkup("\(workout.activityType.rawValue.prefix(1).uppercased() + workout.activityType.rawValue.dropFirst()) — \(shortDate(workout.startDate)) — \(WorkoutFormat.duration(workout.duration))")
            + "</text>")
        // Legend for the two kinds of shading.
        let legendX = left + plotWidth - 250
        svg.append("<g class=\"legend\"><rect x=\"\(f(legendX))\" y=\"12\" width=\"14\" height=\"12\" fill=\"#7f8c8d\" fill-opacity=\"0.35\"/>"
            + "<text x=\"\(f(legendX + 18))\" y=\"22\">paused</text>"
            + "<rect x=\"\(f(legendX + 80))\" y=\"12\" width=\"14\" height=\"12\" fill=\"url(#gap-hatch)\" stroke=\"#c0392b\" stroke-opacity=\"0.35\"/>"
            + "<text x=\"\(f(legendX + 98))\" y=\"22\">no heart rate (gap)</text></g>")
        let totals = [
            "avg \(WorkoutFormat.number(hr?.average)) bpm", "max \(WorkoutFormat.number(hr?.maximum)) bpm",
            "distance \(WorkoutFormat.number(distance.map { $0 / 1000 }, digits: 2)) km",
            "steps \(WorkoutFormat.number(steps))", "energy \(WorkoutFormat.number(energy)) kcal",
            "gaps \(gapCount)",
        ] + (power.map { ["avg power \(WorkoutFormat.number($0)) W"] } ?? [])
        let totalsText = totals.joined(separator: "  ·  ")
        svg.append("<text class=\"totals\" x=\"\(f(left))\" y=\"46\">\(escapeMarkup(totalsText))</text>")

        // Zone bands.
        let colours = ["#d6eaf8", "#d5f5e3", "#fcf3cf", "#fdebd0", "#fadbd8"]
        for (index, zone) in (zones?.zones ?? []).enumerated() {
            let upper = index == (zones?.zones.count ?? 0) - 1 ? high : zone.upperBPM
            let y0 = y(upper), y1 = y(zone.lowerBPM)
            svg.append("<rect class=\"zone zone-\(zone.number)\" data-zone=\"\(zone.number)\" x=\"\(f(left))\" y=\"\(f(y0))\" "
                + "width=\"\(f(plotWidth))\" height=\"\(f(max(0, y1 - y0)))\" fill=\"\(colours[index % colours.count])\"/>")
            svg.append("<text class=\"zone-label\" x=\"\(f(left + plotWidth - 4))\" y=\"\(f(y1 - 4))\" text-anchor=\"end\" fill=\"#555\">Z\(zone.number)</text>")
        }

        // Pauses.
        for pause in timeline.pauses {
            svg.append("<rect class=\"pause\" x=\"\(f(x(pause.start)))\" y=\"\(f(top))\" width=\"\(f(max(1, x(pause.end) - x(pause.start))))\" "
                + "height=\"\(f(plotHeight))\" fill=\"#7f8c8d\" fill-opacity=\"0.35\"><title>paused</title></rect>")
        }

        // Runs of readings; a gap or a pause between two readings breaks the line.
        var runs: [[(date: Date, bpm: Double)]] = []
        var gaps: [(Date, Date)] = []
        let leading = timeline.activeSeconds(from: workout.startDate, to: readings.first?.date ?? workout.endDate)
        if leading > threshold { gaps.append((workout.startDate, readings.first?.date ?? workout.endDate)) }
        for (index, reading) in readings.enumerated() {
            if index > 0 {
                let previous = readings[index - 1].date
                let active = timeline.activeSeconds(from: previous, to: reading.date)
                let paused = reading.date.timeIntervalSince(previous) - active > 0.001
                if active > threshold { gaps.append((previous, reading.date)) }
                if active > threshold || paused { runs.append([]) }
            }
            if runs.isEmpty { runs.append([]) }
            runs[runs.count - 1].append(reading)
        }
        if let last = readings.last, timeline.activeSeconds(from: last.date, to: workout.endDate) > threshold {
            gaps.append((last.date, workout.endDate))
        }
        for gap in gaps {
            svg.append("<rect class=\"gap\" x=\"\(f(x(gap.0)))\" y=\"\(f(top))\" width=\"\(f(max(1, x(gap.1) - x(gap.0))))\" "
                + "height=\"\(f(plotHeight))\" fill=\"url(#gap-hatch)\"><title>no heart rate</title></rect>")
        }

        // Axes and grid.
        svg.append("<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">")
        svg.append("<line x1=\"\(f(left))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(top + plotHeight))\"/>")
        svg.append("<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\"/>")
        svg.append("</g>")
        var bpm = low
        while bpm <= high {
            svg.append("<text class=\"y-tick\" x=\"\(f(left - 6))\" y=\"\(f(y(bpm) + 4))\" text-anchor=\"end\">\(Int(bpm))</text>")
            bpm += 20
        }
        let step = [60.0, 120, 300, 600, 900, 1800, 3600].first { span / $0 <= 10 } ?? 7200
        var tick = 0.0
        while tick <= span {
            let date = workout.startDate.addingTimeInterval(tick)
            svg.append("<text class=\"x-tick\" x=\"\(f(x(date)))\" y=\"\(f(top + plotHeight + 16))\" text-anchor=\"middle\">\(WorkoutFormat.duration(tick))</text>")
            tick += step
        }
        svg.append("<text class=\"y-label\" x=\"14\" y=\"\(f(top + plotHeight / 2))\" transform=\"rotate(-90 14 \(f(top + plotHeight / 2)))\" text-anchor=\"middle\">heart rate (bpm)</text>")

        // The series.
        for run in runs where !run.isEmpty {
            let points = run.map { "\(f(x($0.date))),\(f(y($0.bpm)))" }.joined(separator: " ")
            svg.append("<polyline class=\"heart-rate\" points=\"\(points)\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\"/>")
        }

        // A machine's power and cadence, each on its own scale; a pause breaks the line.
        let machine = [
            (name: "power", types: WorkoutSnapshot.powerTypes, unit: "W", colour: "#8e44ad", row: 0.0),
            (name: "cadence", types: WorkoutSnapshot.cadenceTypes, unit: "/min", colour: "#16a085", row: 1.0),
        ]
        for series in machine {
            let points = samples
                .filter { series.types.contains($0.type) && $0.endDate >= workout.startDate && $0.endDate <= workout.endDate }
                .sorted { $0.endDate < $1.endDate }
                .map { (date: $0.endDate, value: $0.canonicalValue) }
            guard let lowest = points.map(\.value).min(), let highest = points.map(\.value).max() else { continue }
            func scaled(_ value: Double) -> Double {
                highest > lowest ? top + plotHeight * (1 - (value - lowest) / (highest - lowest)) : top + plotHeight / 2
            }
            var lines: [[String]] = [[]]
            for (index, point) in points.enumerated() {
                if index > 0 {
                    let previous = points[index - 1].date
                    if point.date.timeIntervalSince(previous) - timeline.activeSeconds(from: previous, to: point.date) > 0.001 {
                        lines.append([])
                    }
                }
                lines[lines.count - 1].append("\(f(x(point.date))),\(f(scaled(point.value)))")
            }
            for line in lines where !line.isEmpty {
                svg.append("<polyline class=\"\(series.name)\" points=\"\(line.joined(separator: " "))\" fill=\"none\" "
                    + "stroke=\"\(series.colour)\" stroke-width=\"1.2\" stroke-opacity=\"0.8\"/>")
            }
            svg.append("<text class=\"\(series.name)-label\" x=\"\(f(left + plotWidth - 4))\" y=\"\(f(top + 14 + 14 * series.row))\" "
                + "text-anchor=\"end\" fill=\"\(series.colour)\">"
                + escapeMarkup("\(series.name) \(WorkoutFormat.number(lowest))–\(WorkoutFormat.number(highest)) \(series.unit)") + "</text>")
        }

        // Laps.
        for (index, lap) in workout.events.filter({ $0.type == .lap }).enumerated() {
            let lapX = f(x(lap.endDate))
            svg.append("<line class=\"lap\" x1=\"\(lapX)\" y1=\"\(f(top))\" x2=\"\(lapX)\" y2=\"\(f(top + plotHeight))\" stroke=\"#2c3e50\" stroke-dasharray=\"4 3\"/>")
            svg.append("<text class=\"lap-label\" x=\"\(lapX)\" y=\"\(f(top - 6))\" text-anchor=\"middle\">L\(index + 1)</text>")
        }
        svg.append("</svg>")
        return svg.joined(separator: "\n") + "\n"
    }

    /// `2027-01-15 08:00 UTC`.
    static func shortDate(_ date: Date) -> String {
        let text = RFC3339.string(from: date)
        return text.prefix(10) + " " + text.dropFirst(11).prefix(5) + " UTC"
    }
}
