import FoundationEssentials
import HealthModel

/// The PHD guide's conditional-create identifier of an Observation
/// (StructureDefinition-PhdBaseObservation-notes.md, "Conditional-create Identifier"): the
/// device, the patient, the type code, the PHD's own time stamp with the duration, and the
/// supplemental types, joined by `-`, so that a reading uploaded twice (by this gateway again,
/// or by another gateway that read the same device) is created once.
///
/// - device: the device's system identifier in hexadecimal, capitals, no separators: the 12
///   digits of its Bluetooth address (EUI-48 transport address) here, as a Bluetooth device
///   with no IEEE system id is identified by its address (StructureDefinition-PhdDevice-notes.md).
/// - patient: the logical id the gateway was given (`Patient/<id>` → `<id>`), as the guide says
///   for a gateway that creates no Patient.
/// - type: the observation's MDC code, decimal.
/// - timestamp: GeneratingtheTimeStampPartIdentifier.md: the seconds since 2000-01-01T00:00:00
///   the device's clock counted (UTC, or local time as the device kept it), with the fraction
///   its resolution gives, then its TZ/DST offset in quarter hours when it sent one (`+4`),
///   then `..` and the measurement duration at the same resolution when it sent one; a tick
///   counter's value as seconds.
/// - supplemental types: each MDC code, decimal, in the device's order.
///
/// The time stamp is the PHD's own (``HealthModel/MetadataKey/deviceTimestamp``), never the
/// gateway's corrected time, so that two gateways derive the same identifier. Without one, or
/// without a device address, there is no guide identifier: the guide recommends it only for
/// readings with a time stamp, and ``value(device:patient:type:metadata:)`` is nil.
///
/// Pure.
enum PHDObservationIdentifier {
    /// The identifier's value, or nil when the reading lacks a part the guide requires.
    static func value(device: Device?, patient: String, type: UInt32, metadata: Metadata) -> String? {
        guard let device = device.flatMap(devicePart), let stamp = metadata[.deviceTimestamp]?.textValue,
            let time = timestampPart(stamp, duration: metadata[.mdcMeasurementDuration]?.numberValue)
        else { return nil }
        var parts = [device, logicalID(patient), String(type), time]
        parts += supplementalTypes(metadata).map(String.init)
        return parts.joined(separator: "-")
    }

    /// The device part: the Bluetooth address (``bluetoothAddress(_:)``) as 12 capital hex digits.
    static func devicePart(_ device: Device) -> String? {
        bluetoothAddress(device).map { $0.filter(\.isHexDigit) }
    }

    /// The device's Bluetooth address in canonical form (`A0:9E:1A:00:11:22`): its local
    /// identifier when it is one, else its radio identifier when that is one; nil otherwise.
    static func bluetoothAddress(_ device: Device) -> String? {
        for text in [device.localIdentifier, device.radioIdentifier].compactMap({ $0 }) {
            let canonical = DeviceIdentity(text).canonical
            let octets = canonical.split(separator: ":", omittingEmptySubsequences: false)
            if octets.count == 6, octets.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) { return canonical }
        }
        return nil
    }

    /// `Patient/<id>` → `<id>`; any other reference as it is.
    static func logicalID(_ patient: String) -> String {
        patient.hasPrefix("Patient/") ? String(patient.dropFirst("Patient/".count)) : patient
    }

    /// The supplemental type codes (``HealthModel/MetadataKey/mdcSupplementalTypes``: decimal,
    /// comma-separated), in order; unreadable entries are left out.
    static func supplementalTypes(_ metadata: Metadata) -> [UInt32] {
        guard let text = metadata[.mdcSupplementalTypes]?.textValue else { return [] }
        return text.split(separator: ",").compactMap { UInt32($0.filter { !$0.isWhitespace }) }
    }

    /// The time stamp part of the device's time stamp `text` as the sources write it: RFC 3339
    /// with `Z` (UTC), with an offset (local time and its offset, `+01:00` → `+4`), with `-00:00`
    /// or no designator (local time, offset unknown), or `ticks:VALUE@SECONDS` (a tick counter
    /// and its resolution). The seconds counted are the clock's own: the digits as written, the
    /// fraction as written (its resolution). nil for a text of none of these forms or before 2000.
    static func timestampPart(_ text: String, duration: Double?) -> String? {
        let count: String
        var offset = ""
        if text.hasPrefix("ticks:") {
            let parts = text.dropFirst("ticks:".count).split(separator: "@")
            guard parts.count == 2, let ticks = UInt64(parts[0]), let resolution = Double(parts[1]), resolution > 0 else { return nil }
            let digits = fractionDigits(ofResolution: resolution)
            count = decimal(Double(ticks) * resolution, digits: digits)
            return count + durationPart(duration, digits: digits)
        }
        guard let wall = wallClock(text) else { return nil }
        switch wall.designator {
        case "Z", "-00:00", "":
            break
        default:
            // RFC 3339's ±hh:mm: local time with the offset the device sent, in quarter hours.
            let sign = wall.designator.first == "-" ? -1 : 1
            let fields = wall.designator.dropFirst().split(separator: ":")
            guard fields.count == 2, let hours = Int(fields[0]), let minutes = Int(fields[1]) else { return nil }
            offset = (sign < 0 ? "-" : "+") + String((hours * 60 + minutes) / 15)
        }
        guard wall.seconds >= 0 else { return nil }
        count = String(wall.seconds) + (wall.fraction.isEmpty ? "" : "." + wall.fraction)
        return count + offset + durationPart(duration, digits: wall.fraction.count)
    }

    /// `..` and the duration with `digits` fraction digits, or nothing without a duration.
    static func durationPart(_ duration: Double?, digits: Int) -> String {
        guard let duration, duration.isFinite, duration >= 0 else { return "" }
        return ".." + decimal(duration, digits: digits)
    }

    /// The fraction digits a resolution in seconds writes: one per power of ten below a second.
    static func fractionDigits(ofResolution resolution: Double) -> Int {
        var digits = 0
        var step = resolution
        while step < 0.999_999, digits < 9 {
            step *= 10
            digits += 1
        }
        return digits
    }

    /// `value` with exactly `digits` fraction digits.
    static func decimal(_ value: Double, digits: Int) -> String {
        var scale: Double = 1
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int64((value * scale).rounded())
        guard digits > 0 else { return String(scaled) }
        let whole = scaled / Int64(scale)
        let rest = String(scaled % Int64(scale))
        return "\(whole)." + String(repeating: "0", count: digits - rest.count) + rest
    }

    /// The wall-clock reading of an RFC 3339 text: seconds since 2000-01-01T00:00:00 of the
    /// digits as written, the fraction's digits, and the zone designator (`Z`, `±hh:mm`, or
    /// empty when there is none).
    static func wallClock(_ text: String) -> (seconds: Int64, fraction: String, designator: String)? {
        let scalars = Array(text.utf8)
        guard scalars.count >= 19, scalars[4] == UInt8(ascii: "-"), scalars[7] == UInt8(ascii: "-"),
            scalars[10] == UInt8(ascii: "T") || scalars[10] == UInt8(ascii: "t"), scalars[13] == UInt8(ascii: ":"),
            scalars[16] == UInt8(ascii: ":")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? { Int64(String(decoding: scalars[range], as: UTF8.self)) }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), (1...12).contains(month), (1...31).contains(day),
            hour < 24, minute < 60, second < 61
        else { return nil }
        var index = 19
        var fraction = ""
        if index < scalars.count, scalars[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < scalars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(scalars[index]) { index += 1 }
            fraction = String(decoding: scalars[start..<index], as: UTF8.self)
            guard !fraction.isEmpty else { return nil }
        }
        let designator = String(decoding: scalars[index...], as: UTF8.self)
        guard designator.isEmpty || designator == "Z" || designator == "z"
            || (designator.utf8.count == 6 && (designator.first == "+" || designator.first == "-"))
        else { return nil }
        let days = CivilDate.days(year: year, month: month, day: day) - CivilDate.days(year: 2000, month: 1, day: 1)
        return (days * 86_400 + hour * 3600 + minute * 60 + second, fraction, designator == "z" ? "Z" : designator)
    }
}

extension MetadataValue {
    /// The value as text: a string as it is, a number in decimal.
    var textValue: String? {
        switch self {
        case .string(let text): text
        case .integer(let value): String(value)
        case .double, .bool: nil
        }
    }

    /// The value as a number: a number as it is, a string that reads as one.
    var numberValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        case .string(let text): Double(text)
        case .bool: nil
        }
    }
}
