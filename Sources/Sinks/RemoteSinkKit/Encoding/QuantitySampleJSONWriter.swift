import FoundationEssentials
public import HealthModel

/// Writes a ``QuantitySample``'s HealthJSON by hand, byte for byte what ``HealthJSON``'s
/// `JSONEncoder` writes, for the common case; returns nil for anything else, and the caller then
/// uses the encoder.
///
/// Why: a remote sink encodes every record it sends, and `JSONEncoder` goes through a generic
/// container per value and an intermediate string per date; the quantity sample, the common
/// record, needs none of that.
///
/// The fast path takes a sample only when every piece has one obvious encoding: no metadata;
/// strings of printable ASCII without `"` or `\` (nothing to escape; `/` is not escaped because
/// HealthJSON sets `.withoutEscapingSlashes`); a value that is an integer below 2^53 in
/// magnitude (not -0), or whose shortest `description` has no exponent (a trailing `.0`
/// dropped, as the encoder does); dates RFC 3339 can
/// write. Keys are written in sorted order, as `.sortedKeys` does. The test
/// `testQuantitySampleWriterIsByteIdenticalToHealthJSON` checks the identity over varied samples.
///
/// A value that remembers the last sample's device and its bytes, so a run of samples from one
/// device formats the device once: keep one writer for an encoding loop (each copy remembers on
/// its own).
public struct QuantitySampleJSONWriter: Sendable {
    /// The last sample's device and its `"device":{…},` bytes (empty without a device, nil when
    /// the fast path cannot write it); nil before the first sample.
    private var lastDevice: (device: Device?, bytes: [UInt8]?)?
    /// The last type and unit, and their `"type":…,"unit":…` bytes: a batch is mostly of one type.
    private var lastType = ""
    private var lastUnit = ""
    private var lastTypeAndUnitBytes: [UInt8] = []

    public init() {}

    /// The sample's HealthJSON, or nil when the fast path does not apply.
    public mutating func encode(_ sample: QuantitySample) -> [UInt8]? {
        guard sample.metadata.isEmpty, RFC3339.isRepresentable(sample.startDate), RFC3339.isRepresentable(sample.endDate)
        else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(320)
        out.append(UInt8(ascii: "{"))
        let device = sample.device
        if lastDevice == nil || !(lastDevice?.device.isIdentical(to: device) ?? false) {
            // Another value, maybe equal: its bytes are made again only when it differs.
            if lastDevice == nil || lastDevice?.device != device {
                lastDevice = (device, device.map { device in
                    Self.deviceJSON(device).map { Array(#""device":"#.utf8) + $0 + [UInt8(ascii: ",")] }
                } ?? [])
            } else {
                lastDevice?.device = device
            }
        }
        guard let deviceBytes = lastDevice?.bytes ?? nil else { return nil }
        out.append(contentsOf: deviceBytes)
        // Dates are written as bytes, never as `String`s (RFC3339.append); a point sample (heart
        // rate) has one date, so it is formatted once and copied.
        out.append(contentsOf: Self.endKey)
        let end = out.count
        RFC3339.append(sample.endDate, to: &out)
        out.append(contentsOf: Self.startKey)
        if sample.startDate == sample.endDate {
            let copy = out.count
            out.append(contentsOf: Self.dateSpace)
            out.withUnsafeMutableBufferPointer { buffer in
                (buffer.baseAddress! + copy).update(from: buffer.baseAddress! + end, count: RFC3339.length)
            }
        } else {
            RFC3339.append(sample.startDate, to: &out)
        }
        out.append(contentsOf: Self.quoteComma)
        let type = sample.type.identifier
        let unit = sample.quantity.unit.unitString
        if type != lastType || unit != lastUnit || lastTypeAndUnitBytes.isEmpty {
            var bytes = Array(#""type":"#.utf8)
            guard Self.appendString(type, to: &bytes) else { return nil }
            bytes.append(contentsOf: #","unit":"#.utf8)
            guard Self.appendString(unit, to: &bytes) else { return nil }
            (lastType, lastUnit, lastTypeAndUnitBytes) = (type, unit, bytes)
        }
        out.append(contentsOf: lastTypeAndUnitBytes)
        out.append(contentsOf: Self.uuidKey)
        Self.appendUUID(sample.id, to: &out)
        out.append(contentsOf: Self.valueKey)
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
            ("name", device.name), ("radioIdentifier", device.radioIdentifier), ("softwareVersion", device.softwareVersion),
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

    // The constant pieces, as arrays: appending an array is one copy, appending a string's
    // UTF-8 view walks it.
    static let endKey = Array(#""end":""#.utf8)
    static let startKey = Array(#"","start":""#.utf8)
    static let quoteComma = Array(#"","#.utf8)
    static let uuidKey = Array(#","uuid":""#.utf8)
    static let valueKey = Array(#"","value":"#.utf8)
    static let dateSpace = [UInt8](repeating: 0, count: RFC3339.length)

    /// Appends the canonical lower-case 8-4-4-4-12 form (``SampleID/uuidString``'s bytes),
    /// written on the stack and copied in one append.
    static func appendUUID(_ id: SampleID, to out: inout [UInt8]) {
        var scratch: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { buffer in
            var index = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = nibble < 16 ? id.high : id.low
                let digit = UInt8(truncatingIfNeeded: (word >> UInt64(60 - 4 * (nibble % 16))) & 0xF)
                buffer[index] = digit < 10 ? 48 + digit : 87 + digit
                index += 1
            }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<36]))
        }
    }

    /// Appends a finite number as `JSONEncoder` writes it; false when unsure.
    static func appendNumber(_ value: Double, to out: inout [UInt8]) -> Bool {
        guard value.isFinite, !(value == 0 && value.sign == .minus) else { return false }
        if value == value.rounded(.towardZero), abs(value) < 9_007_199_254_740_992 {
            JSONByteWriter.appendInteger(Int64(value), to: &out)
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
