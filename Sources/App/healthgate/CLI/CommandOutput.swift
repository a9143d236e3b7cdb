import FoundationEssentials
import HealthModel
import GatewayRuntime

/// How commands print stored values: HealthJSON, statistics cells, CSV fields and a sample's
/// provenance. The tables themselves are ``TextTable``'s.
enum CommandOutput {
    /// `value` as HealthJSON, pretty-printed.
    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try HealthJSON.makeEncoder(pretty: true).encode(value), as: UTF8.self)
    }

    /// A list as `--format` asks: pretty JSON for `json`; otherwise `empty` when there is
    /// nothing, or the table `table` renders.
    static func list<Item: Encodable>(
        _ items: [Item], format: String, empty: String, table: ([Item]) -> String
    ) throws -> String {
        if format == "json" { return try json(items) }
        return items.isEmpty ? empty : table(items)
    }

    /// The statistics columns of a table of `type`: the sum of a cumulative type, the average,
    /// minimum, maximum, most recent value and unit of a discrete one.
    static func statisticsHeader(of type: QuantityType) -> [String] {
        type.aggregationStyle == .cumulative
            ? ["SUM (\(type.canonicalUnit))"] : ["AVERAGE", "MIN", "MAX", "MOST RECENT", "UNIT"]
    }

    /// The cells under ``statisticsHeader(of:)``, each value with the type's decimals, `-` for
    /// one not computed.
    static func statisticsCells(_ statistics: QuantityStatistics, of type: QuantityType) -> [String] {
        let text = { (value: Double?) in value.map(type.text(for:)) ?? "-" }
        return type.aggregationStyle == .cumulative
            ? [text(statistics.sum)]
            : [text(statistics.average), text(statistics.minimum), text(statistics.maximum), text(statistics.mostRecent),
               type.canonicalUnit.unitString]
    }

    /// Where a sample came from, as its provenance metadata tells: `gateway/source`.
    static func source(of metadata: Metadata) -> String? {
        switch (metadata[.gatewayName]?.description, metadata[.sourceName]?.description) {
        case let (gateway?, source?): "\(gateway)/\(source)"
        case let (gateway?, nil): gateway
        case let (nil, source?): source
        case (nil, nil): nil
        }
    }

    /// The uuid of the quantity series `sample` was read out of (``MetadataKey/series``), or nil
    /// for a plain sample.
    static func series(of sample: QuantitySample) -> String? {
        guard case .string(let series) = sample.metadata[.series] else { return nil }
        return series
    }

    /// RFC 4180: quote a field that holds a comma, a quote or a line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacing("\"", with: "\"\"") + "\""
    }
}
