import FoundationEssentials
import HealthModel
import SampleBus
import GatewayRuntime
import WorkoutPresentation

/// Prints one line per record to stdout: the live view of `run` and `demo`. It subscribes with a
/// drop-oldest queue, so a slow terminal never holds up the stores.
struct LiveLineSink: SampleSink {
    var output: OutputStream
    /// The width to fit, asked for each batch (a terminal can be resized).
    var columns: @Sendable () -> Int

    func run(inbox: SinkInbox, context: SinkContext) async throws {
        var layout = LiveLineLayout()
        while let batch = await inbox.next(maxCount: 100) {
            let width = columns()
            var text = ""
            for record in batch {
                for line in layout.lines(for: record, width: width) { text += line + "\n" }
            }
            output.write(text)
            context.status.recordsHandled(batch.count, lastDate: batch.compactMap(\.endDate).max())
        }
    }
}

/// The live view's columns: the time, the type, the value right-aligned with its unit, then the
/// device.
///
/// ```
/// 08:58:46  heartRate                      79 count/min  healthgate demo HRM
/// 08:58:46  heartRateVariabilityRMSSD    26.4 ms         healthgate demo HRM
/// ```
///
/// The type column is as wide as the longest type the gateway knows, so no name is ever cut
/// and every value starts in the same column. A value is printed in its type's canonical unit
/// with the type's ``QuantityType/fractionDigits``, as `query samples` prints it. What does not
/// fit the width (a long device name, a narrow terminal) wraps onto indented lines; nothing is
/// cut. A device is shown by its name, with its local identifier too once another device of
/// the same name has been seen (the demo's group: several straps called the same).
struct LiveLineLayout {
    /// The longest name the type column holds: every quantity and correlation type, and the
    /// names of the other records.
    static let typeWidth = (QuantityType.builtIn.map(\.identifier) + CorrelationType.builtIn.map(\.identifier)
        + ["heartbeatSeries", "workout"]).map(\.count).max() ?? 0
    /// The unit column: every canonical unit, and the heartbeat series' `beats`.
    static let unitWidth = (QuantityType.builtIn.map(\.canonicalUnit.unitString) + ["beats"]).map(\.count).max() ?? 0
    /// Numbers are right-aligned in this many columns; a longer one pushes the rest right.
    static let numberWidth = 6
    /// `HH:MM:SS  `: where the type column starts.
    static let typeColumn = 10
    /// Where the device starts.
    static let deviceColumn = typeColumn + typeWidth + 2 + numberWidth + 1 + unitWidth + 2

    /// The local identifiers seen under each device name.
    private var identifiers: [String: Set<String>] = [:]

    /// The lines of `record`, none wider than `width` unless the columns before the device
    /// are (then they wrap too).
    mutating func lines(for record: HealthRecord, width: Int) -> [String] {
        let (date, type, number, unit, tail): (Date, String, String, String, [String])
        switch record {
        case .quantity(let sample):
            (date, type, number, unit) = (sample.endDate, sample.type.identifier, sample.type.text(for: sample.canonicalValue),
                                          sample.type.canonicalUnit.unitString)
            tail = [deviceLabel(sample.device)]
        case .quantitySeries(let series):
            // The store makes series; the bus, which this sink reads, carries their readings.
            let last = series.quantitySample(at: series.count - 1)
            (date, type, number, unit) = (last.endDate, series.type.identifier, series.type.text(for: last.canonicalValue),
                                          series.type.canonicalUnit.unitString)
            tail = [deviceLabel(series.device), "(series of \(series.count))"]
        case .heartbeatSeries(let series):
            // Gaps inside the series: its first beat's mark only says that the series does not
            // continue an earlier one (a new connection, or contact regained).
            let gaps = series.beats.dropFirst().filter(\.precededByGap).count
            (date, type, number, unit) = (series.endDate, "heartbeatSeries", String(series.beats.count), "beats")
            tail = [deviceLabel(series.device)] + (gaps > 0 ? ["(\(String(count: gaps, "gap")))"] : [])
        case .correlation(let correlation):
            (date, type) = (correlation.endDate, correlation.type.identifier)
            number = correlation.objects.map { $0.type.text(for: $0.canonicalValue) }.joined(separator: "/")
            unit = correlation.objects.first?.type.canonicalUnit.unitString ?? ""
            tail = [deviceLabel(correlation.device)]
        case .workout(let workout):
            (date, type, number, unit) = (workout.endDate, "workout", WorkoutFormat.duration(workout.duration), workout.activityType.rawValue)
            tail = [workout.id.uuidString]
        }
        let time = String(RFC3339.string(from: date).dropFirst(11).prefix(8))
        let prefix = time + "  " + Self.pad(type, Self.typeWidth) + "  "
            + String(repeating: " ", count: max(0, Self.numberWidth - number.count)) + number + " " + Self.pad(unit, Self.unitWidth) + "  "
        // Under the device when its every word fits there, else under the type.
        let words = tail.flatMap { $0.split(separator: " ").map(String.init) }
        let indent = width - Self.deviceColumn >= (words.map(\.count).max() ?? 0) ? Self.deviceColumn : Self.typeColumn
        return TextWrapping(width: width, indent: indent).lines(label: prefix, tail)
    }

    /// The device's name; with its identifier when another device has the same name.
    private mutating func deviceLabel(_ device: Device?) -> String {
        guard let device else { return "unknown device" }
        guard let name = device.name else { return device.displayName }
        if let identifier = device.localIdentifier { identifiers[name, default: []].insert(identifier) }
        return (identifiers[name]?.count ?? 0) > 1 ? device.displayName : name
    }

    /// `text` filled with spaces to `length`; never cut.
    private static func pad(_ text: String, _ length: Int) -> String {
        text.count >= length ? text : text + String(repeating: " ", count: length - text.count)
    }
}
