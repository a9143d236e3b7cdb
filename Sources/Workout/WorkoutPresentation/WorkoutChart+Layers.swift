import FoundationEssentials
import GatewayRuntime
import HealthModel
import Workouts

// The chart's layers, each its own job, in the order they are drawn: the later on top.
extension WorkoutChart {
    /// One heart-rate reading: when it ended, and its beats per minute.
    typealias Reading = (date: Date, bpm: Double)

    /// The XML declaration, the `svg` element, its title, the gaps' hatching and the white page.
    static func document(_ plot: Plot, workout: Workout) -> [String] {
        let width = Int(plot.width), height = Int(plot.height)
        return [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(width)" height="\#(height)" viewBox="0 0 \#(width) \#(height)" font-family="sans-serif" font-size="12">"#,
            "<title>\(escapeMarkup("\(workout.activityType.rawValue) workout \(RFC3339.string(from: workout.startDate))"))</title>",
            "<defs><pattern id=\"gap-hatch\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                + "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#c0392b\" stroke-width=\"2\" stroke-opacity=\"0.35\"/></pattern></defs>",
            "<rect x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\" fill=\"#ffffff\"/>",
        ]
    }

    /// The header: the activity, date and duration; the legend of the two kinds of shading; the
    /// totals.
    static func header(_ plot: Plot, workout: Workout) -> [String] {
        let hr = workout.statistics(for: .heartRate)
        let energy = workout.statistics(for: .activeEnergyBurned)?.sum
        let distance = workout.distance?.meters
        let steps = workout.statistics(for: .stepCount)?.sum
        let power = workout.power?.average
        let gapCount = Int(workout.metadata.number("healthgate.gapCount") ?? 0)
        let activity = workout.activityType.rawValue
        let title = "<text class=\"header\" x=\"\(f(plot.left))\" y=\"24\" font-size=\"16\" font-weight=\"bold\">"
            + escapeMarkup("\(activity.prefix(1).uppercased() + activity.dropFirst()) — \(shortDate(workout.startDate)) — \(WorkoutFormat.duration(workout.duration))")
            + "</text>"
        let legendX = plot.left + plot.plotWidth - 250
        let legend = "<g class=\"legend\"><rect x=\"\(f(legendX))\" y=\"12\" width=\"14\" height=\"12\" fill=\"#7f8c8d\" fill-opacity=\"0.35\"/>"
            + "<text x=\"\(f(legendX + 18))\" y=\"22\">paused</text>"
            + "<rect x=\"\(f(legendX + 80))\" y=\"12\" width=\"14\" height=\"12\" fill=\"url(#gap-hatch)\" stroke=\"#c0392b\" stroke-opacity=\"0.35\"/>"
            + "<text x=\"\(f(legendX + 98))\" y=\"22\">no heart rate (gap)</text></g>"
        let totals = [
            "avg \(WorkoutFormat.number(hr?.average)) bpm", "max \(WorkoutFormat.number(hr?.maximum)) bpm",
            "distance \(WorkoutFormat.number(distance.map { $0 / 1000 }, digits: 2)) km",
            "steps \(WorkoutFormat.number(steps))", "energy \(WorkoutFormat.number(energy)) kcal",
            "gaps \(gapCount)",
        ] + (power.map { ["avg power \(WorkoutFormat.number($0)) W"] } ?? [])
        let totalsText = totals.joined(separator: "  ·  ")
        return [title, legend, "<text class=\"totals\" x=\"\(f(plot.left))\" y=\"46\">\(escapeMarkup(totalsText))</text>"]
    }

    /// A band and a label per heart-rate zone; the top zone reaches the top of the axis.
    static func zoneBands(_ plot: Plot, zones: HeartRateZones?) -> [String] {
        let colours = ["#d6eaf8", "#d5f5e3", "#fcf3cf", "#fdebd0", "#fadbd8"]
        var svg: [String] = []
        for (index, zone) in (zones?.zones ?? []).enumerated() {
            let upper = index == (zones?.zones.count ?? 0) - 1 ? plot.high : zone.upperBPM
            let y0 = plot.y(upper), y1 = plot.y(zone.lowerBPM)
            svg.append("<rect class=\"zone zone-\(zone.number)\" data-zone=\"\(zone.number)\" x=\"\(f(plot.left))\" y=\"\(f(y0))\" "
                + "width=\"\(f(plot.plotWidth))\" height=\"\(f(max(0, y1 - y0)))\" fill=\"\(colours[index % colours.count])\"/>")
            svg.append("<text class=\"zone-label\" x=\"\(f(plot.left + plot.plotWidth - 4))\" y=\"\(f(y1 - 4))\" text-anchor=\"end\" fill=\"#555\">Z\(zone.number)</text>")
        }
        return svg
    }

    /// A shaded stretch per pause.
    static func pauses(_ plot: Plot, timeline: RunningTimeline) -> [String] {
        timeline.pauses.map { pause in
            "<rect class=\"pause\" x=\"\(f(plot.x(pause.start)))\" y=\"\(f(plot.top))\" width=\"\(f(max(1, plot.x(pause.end) - plot.x(pause.start))))\" "
                + "height=\"\(f(plot.plotHeight))\" fill=\"#7f8c8d\" fill-opacity=\"0.35\"><title>paused</title></rect>"
        }
    }

    /// The unbroken runs of `readings` (a gap or a pause between two readings breaks the line),
    /// and the gaps: the stretches of running time longer than `threshold` without a reading,
    /// the workout's start and end included.
    static func heartRateRuns(
        _ readings: [Reading], workout: Workout, timeline: RunningTimeline, threshold: Double
    ) -> (runs: [[Reading]], gaps: [(Date, Date)]) {
        var runs: [[Reading]] = []
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
        return (runs, gaps)
    }

    /// A hatched stretch per gap in the heart rate.
    static func gapShading(_ plot: Plot, gaps: [(Date, Date)]) -> [String] {
        gaps.map { gap in
            "<rect class=\"gap\" x=\"\(f(plot.x(gap.0)))\" y=\"\(f(plot.top))\" width=\"\(f(max(1, plot.x(gap.1) - plot.x(gap.0))))\" "
                + "height=\"\(f(plot.plotHeight))\" fill=\"url(#gap-hatch)\"><title>no heart rate</title></rect>"
        }
    }

    /// The axes; a heart-rate tick every 20 bpm; a time tick at the first round step that makes
    /// at most ten; the heart-rate axis' name.
    static func axes(_ plot: Plot) -> [String] {
        let (left, top, plotWidth, plotHeight) = (plot.left, plot.top, plot.plotWidth, plot.plotHeight)
        var svg = [
            "<g class=\"axes\" stroke=\"#999\" stroke-width=\"1\">",
            "<line x1=\"\(f(left))\" y1=\"\(f(top + plotHeight))\" x2=\"\(f(left + plotWidth))\" y2=\"\(f(top + plotHeight))\"/>",
            "<line x1=\"\(f(left))\" y1=\"\(f(top))\" x2=\"\(f(left))\" y2=\"\(f(top + plotHeight))\"/>",
            "</g>",
        ]
        var bpm = plot.low
        while bpm <= plot.high {
            svg.append("<text class=\"y-tick\" x=\"\(f(left - 6))\" y=\"\(f(plot.y(bpm) + 4))\" text-anchor=\"end\">\(Int(bpm))</text>")
            bpm += 20
        }
        let step = [60.0, 120, 300, 600, 900, 1800, 3600].first { plot.span / $0 <= 10 } ?? 7200
        var tick = 0.0
        while tick <= plot.span {
            let date = plot.start.addingTimeInterval(tick)
            svg.append("<text class=\"x-tick\" x=\"\(f(plot.x(date)))\" y=\"\(f(top + plotHeight + 16))\" text-anchor=\"middle\">\(WorkoutFormat.duration(tick))</text>")
            tick += step
        }
        svg.append("<text class=\"y-label\" x=\"14\" y=\"\(f(top + plotHeight / 2))\" transform=\"rotate(-90 14 \(f(top + plotHeight / 2)))\" text-anchor=\"middle\">heart rate (bpm)</text>")
        return svg
    }

    /// A line per unbroken run of heart-rate readings.
    static func heartRateLines(_ plot: Plot, runs: [[Reading]]) -> [String] {
        runs.filter { !$0.isEmpty }.map { run in
            let points = run.map { "\(f(plot.x($0.date))),\(f(plot.y($0.bpm)))" }.joined(separator: " ")
            return "<polyline class=\"heart-rate\" points=\"\(points)\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\"/>"
        }
    }

    /// A machine's power and cadence, each on its own scale and named with its range; a pause
    /// breaks the line.
    static func machineSeries(_ plot: Plot, samples: [QuantitySample], workout: Workout, timeline: RunningTimeline) -> [String] {
        let machine = [
            (name: "power", types: WorkoutSnapshot.powerTypes, unit: "W", colour: "#8e44ad", row: 0.0),
            (name: "cadence", types: WorkoutSnapshot.cadenceTypes, unit: "/min", colour: "#16a085", row: 1.0),
        ]
        var svg: [String] = []
        for series in machine {
            let points = samples
                .filter { series.types.contains($0.type) && $0.endDate >= workout.startDate && $0.endDate <= workout.endDate }
                .sorted { $0.endDate < $1.endDate }
                .map { (date: $0.endDate, value: $0.canonicalValue) }
            guard let lowest = points.map(\.value).min(), let highest = points.map(\.value).max() else { continue }
            func scaled(_ value: Double) -> Double {
                highest > lowest ? plot.top + plot.plotHeight * (1 - (value - lowest) / (highest - lowest)) : plot.top + plot.plotHeight / 2
            }
            var lines: [[String]] = [[]]
            for (index, point) in points.enumerated() {
                if index > 0 {
                    let previous = points[index - 1].date
                    if point.date.timeIntervalSince(previous) - timeline.activeSeconds(from: previous, to: point.date) > 0.001 {
                        lines.append([])
                    }
                }
                lines[lines.count - 1].append("\(f(plot.x(point.date))),\(f(scaled(point.value)))")
            }
            for line in lines where !line.isEmpty {
                svg.append("<polyline class=\"\(series.name)\" points=\"\(line.joined(separator: " "))\" fill=\"none\" "
                    + "stroke=\"\(series.colour)\" stroke-width=\"1.2\" stroke-opacity=\"0.8\"/>")
            }
            svg.append("<text class=\"\(series.name)-label\" x=\"\(f(plot.left + plot.plotWidth - 4))\" y=\"\(f(plot.top + 14 + 14 * series.row))\" "
                + "text-anchor=\"end\" fill=\"\(series.colour)\">"
                + escapeMarkup("\(series.name) \(WorkoutFormat.number(lowest))–\(WorkoutFormat.number(highest)) \(series.unit)") + "</text>")
        }
        return svg
    }

    /// A dashed line and a label at the end of each lap.
    static func laps(_ plot: Plot, workout: Workout) -> [String] {
        var svg: [String] = []
        for (index, lap) in workout.events.filter({ $0.type == .lap }).enumerated() {
            let lapX = f(plot.x(lap.endDate))
            svg.append("<line class=\"lap\" x1=\"\(lapX)\" y1=\"\(f(plot.top))\" x2=\"\(lapX)\" y2=\"\(f(plot.top + plot.plotHeight))\" stroke=\"#2c3e50\" stroke-dasharray=\"4 3\"/>")
            svg.append("<text class=\"lap-label\" x=\"\(lapX)\" y=\"\(f(plot.top - 6))\" text-anchor=\"middle\">L\(index + 1)</text>")
        }
        return svg
    }
}
