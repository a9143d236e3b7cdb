import Foundation
public import HealthModel

/// Writes a ``QuantitySample``'s HealthJSON by hand, byte for byte what ``HealthJSON``'s
/// `JSONEncoder` writes, for the common case; returns nil for anything else, and the caller then
/// uses the encoder.
///
/// Why: records are encoded once when they enter the outbox, and `JSONEncoder` (about 40–70 k
/// samples/s on the benchmark machine) was the HTTP sink's bottleneck (Benchmarks/RESULTS.md).
///
/// The fast path takes a sample only when every piece has one obvious encoding: no metadata;
/// strings of printable ASCII without `"` or `\` (nothing to escape; `/` is not escaped because
/// HealthJSON sets `.withoutEscapingSlashes`); a value that is an integer below 2^53 in
/// magnitude (not -0), or whose shortest `description` has no exponent (a trailing `.0`
/// dropped, as the encoder does); dates RFC 3339 can
/// write. Keys are written in sorted order, as `.sortedKeys` does. The test
/// `testQuantitySampleWriterIsByteIdenticalToHealthJSON` checks the identity over varied samples.
///
/// Not Sendable: it remembers the last device's bytes; make one per task.
public struct QuantitySampleJSONWriter: Sendable {
    private var lastDevice: Device?
    private var lastDeviceBytes: [UInt8] = []

    public init() {}

    /// The sample's HealthJSON, or nil when the fast path does not apply.
    public mutating func encode(_ sample: QuantitySample) -> [UInt8]? {
        guard sample.metadata.isEmpty, RFC3339.isRepresentable(sample.startDate), RFC3339.isRepresentable(sample.endDate)
        else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(320)
        out.append(UInt8(ascii: "{"))
        if let device = sample.device {
            if device != lastDevice {
                guard let bytes = Self.deviceJSON(device) else { return nil }
                lastDevice = device
                lastDeviceBytes = bytes
            }
            out.append(contentsOf: #""device":"#.utf8)
            out.append(contentsOf: lastDeviceBytes)
            out.append(UInt8(ascii: ","))
        }
        // Formatting a date is the writer's largest cost (perf, Benchmarks `http`); a point sample
        // (heart rate) has one date, so format it once.
        let end = RFC3339.string(from: sample.endDate)
        let start = sample.startDate == sample.endDate ? end : RFC3339.string(from: sample.startDate)
        out.append(contentsOf: #""end":""#.utf8)
        out.append(contentsOf: end.utf8)
        out.append(contentsOf: #"","start":""#.utf8)
        out.append(contentsOf: start.utf8)
        out.append(contentsOf: #"","type":"#.utf8)
        guard Self.appendString(sample.type.identifier, to: &out) else { return nil }
        out.append(contentsOf: #","unit":"#.utf8)
        guard Self.appendString(sample.quantity.unit.unitString, to: &out) else { return nil }
        out.append(contentsOf: #","uuid":"#.utf8)
        guard Self.appendString(sample.id.uuidString, to: &out) else { return nil }
        out.append(contentsOf: #","value":"#.utf8)
        guard Self.appendNumber(sample.quantity.value, to: &out) else { return nil }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// `{"firmwareVersion":…,…}` with the present fields in sorted key order (the synthesized
    /// Codable conformance leaves nil fields out).
    static func deviceJSON(_ device: Device) -> [UInt8]? {
        let fields: [(String, String?)] = [
            ("firmwareVersion", device.firmwareVersion), ("hardwareVersion", device.hardwareVersion),
            ("localIdentifier", device.localIdentifier), ("manufacturer", device.manufacturer), ("model", device.model),
            ("name", device.name), ("softwareVersion", device.softwareVersion),
            ("udiDeviceIdentifier", device.udiDeviceIdentifier),
        ]
        var out: [UInt8] = [UInt8(ascii: "{")]
        var first = true
        for (key, value) in fields {
            guard let value else { continue }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: key.utf8)
            out.append(contentsOf: #"":"#.utf8)
            guard appendString(value, to: &out) else { return nil }
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Appends `"text"`; false (nothing sensible appended) when a character would need escaping
    /// or is not ASCII.
    static func appendString(_ text: String, to out: inout [UInt8]) -> Bool {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") else { return false }
            out.append(byte)
        }
        out.append(UInt8(ascii: "\""))
        return true
    }

    /// Appends a finite number as `JSONEncoder` writes it; false when unsure.
    static func appendNumber(_ value: Double, to out: inout [UInt8]) -> Bool {
        guard value.isFinite, !(value == 0 && value.sign == .minus) else { return false }
        if value == value.rounded(.towardZero), abs(value) < 9_007_199_254_740_992 {
            out.append(contentsOf: String(Int64(value)).utf8)
            return true
        }
        // JSONEncoder writes the shortest round-trip form and drops a trailing ".0" (2^53 and
        // beyond); an exponent form is left to it.
        var text = value.description
        guard !text.utf8.contains(UInt8(ascii: "e")) else { return false }
        if text.hasSuffix(".0") { text.removeLast(2) }
        out.append(contentsOf: text.utf8)
        return true
    }
}
