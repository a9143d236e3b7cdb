import FoundationEssentials
import HealthModel
import HealthStore

/// `query stats --by-device`: each interval as a row over all samples, then one row per device.
extension QueryCommand {
    /// Prints statistics separated by device as a table, JSON (``StatisticsByDevice`` values,
    /// one object when `single`, else an array) or CSV.
    static func printByDevice(
        _ buckets: [StatisticsByDevice], type: QuantityType, format: String, single: Bool, context: CommandContext
    ) throws {
        // Each bucket's rows: the overall one (device nil, scope "all"), then its devices.
        let rows: [(scope: String, device: Device?, statistics: QuantityStatistics)] = buckets.flatMap { bucket in
            [("all", nil, bucket.overall)] + bucket.devices.map { ("device", $0.device, $0.statistics) }
        }
        switch format {
        case "json":
            context.print(single ? try CommandOutput.json(buckets[0]) : try CommandOutput.json(buckets))
        case "csv":
            context.print(
                "start,end,scope,device_name,manufacturer,model,local_identifier,count,sum,average,minimum,maximum,"
                    + "most_recent,most_recent_date,unit")
            for row in rows {
                let statistics = row.statistics
                var fields = [RFC3339.string(from: statistics.startDate), RFC3339.string(from: statistics.endDate), row.scope]
                fields += [row.device?.name, row.device?.manufacturer, row.device?.model, row.device?.localIdentifier]
                    .map { $0 ?? "" }
                fields.append(String(statistics.sampleCount))
                let values: [Double?] = [
                    statistics.sum, statistics.average, statistics.minimum, statistics.maximum, statistics.mostRecent,
                ]
                fields += values.map { value -> String in value.map { String($0) } ?? "" }
                fields.append(statistics.mostRecentDate.map(RFC3339.string(from:)) ?? "")
                fields.append(type.canonicalUnit.unitString)
                context.print(fields.map(CommandOutput.csvField).joined(separator: ","))
            }
        default:
            let header = ["START", "END", "DEVICE", "COUNT"] + CommandOutput.statisticsHeader(of: type)
            context.print(TextTable.render(header: header, rows: rows.map { row in
                let statistics = row.statistics
                let values = CommandOutput.statisticsCells(statistics, of: type)
                let device = row.scope == "all" ? "all" : row.device?.displayName ?? "(no device)"
                return [RFC3339.string(from: statistics.startDate), RFC3339.string(from: statistics.endDate), device,
                        String(statistics.sampleCount)] + values
            }))
        }
    }
}
