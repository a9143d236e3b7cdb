import FoundationEssentials
import HealthModel
import SampleBus
import GatewayRuntime

/// Prints one line per record to stdout: the demo's live view. It subscribes with a
/// drop-oldest queue, so a slow terminal never holds up the stores.
struct LiveLineSink: SampleSink {
    var output: OutputStream

    func run(inbox: SinkInbox, context: SinkContext) async throws {
        while let batch = await inbox.next(maxCount: 100) {
            var text = ""
            for record in batch { text += Self.line(for: record) + "\n" }
            output.write(text)
            context.status.recordsHandled(batch.count, lastDate: batch.compactMap(\.endDate).max())
        }
    }

    static func line(for record: HealthRecord) -> String {
        let time = { (date: Date) in String(RFC3339.string(from: date).dropFirst(11).prefix(12)) }
        switch record {
        case .quantity(let sample):
            let value = sample.quantity.value.rounded() == sample.quantity.value
                ? String(Int64(sample.quantity.value)) : String(cFormat: "%.3f", sample.quantity.value)
            return "\(time(sample.endDate))  \(sample.type.identifier.padded(toLength: 24))"
                + "\((value + " " + sample.quantity.unit.unitString).padded(toLength: 18))"
                + (sample.device?.displayName ?? "")
        case .heartbeatSeries(let series):
            let gaps = series.beats.filter(\.precededByGap).count
            return "\(time(series.endDate))  \("heartbeatSeries".padded(toLength: 24))"
                + "\("\(series.beats.count) beats".padded(toLength: 18))"
                + (series.device?.displayName ?? "") + (gaps > 0 ? " (\(gaps) gap(s))" : "")
        case .correlation(let correlation):
            let values = correlation.objects.map { member in
                let value = member.quantity.value.rounded() == member.quantity.value
                    ? String(Int64(member.quantity.value)) : String(cFormat: "%.1f", member.quantity.value)
                return value
            }.joined(separator: "/")
            let unit = correlation.objects.first?.quantity.unit.unitString ?? ""
            return "\(time(correlation.endDate))  \(correlation.type.identifier.padded(toLength: 24))"
                + "\((values + " " + unit).padded(toLength: 18))"
                + (correlation.device?.displayName ?? "")
        case .workout(let workout):
            return "\(time(workout.endDate))  workout \(workout.activityType.rawValue) \(workout.id) "
                + "\(Int(workout.duration)) s"
        }
    }
}
