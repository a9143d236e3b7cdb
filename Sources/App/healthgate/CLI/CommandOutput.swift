import FoundationEssentials
import HealthModel

/// How commands print stored values: HealthJSON, table numbers, CSV fields and a sample's
/// provenance. The tables themselves are ``TextTable``'s.
enum CommandOutput {
    /// `value` as HealthJSON, pretty-printed.
    static func json(_ value: some Encodable) throws -> String {
        String(decoding: try HealthJSON.makeEncoder(pretty: true).encode(value), as: UTF8.self)
    }

    /// A value for the table: at most three decimals, no trailing `.0`.
    static func number(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int64(rounded)) }
        return String(rounded)
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

    /// RFC 4180: quote a field that holds a comma, a quote or a line break.
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacing("\"", with: "\"\"") + "\""
    }
}
