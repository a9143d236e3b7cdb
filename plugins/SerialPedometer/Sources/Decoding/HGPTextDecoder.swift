import FoundationEssentials
public import SerialDevices

/// The healthgate pedometer text protocol, HGP/1 (specified in plugins/SerialPedometer/README.md).
///
/// Lines of printable ASCII ended by LF (CR LF accepted). A line is `BODY`, or `$BODY`, or
/// `$BODY*hh` where `hh` is the XOR of the bytes between `$` and `*` in hexadecimal (NMEA 0183
/// style), verified when present. `BODY` is comma-separated fields, the first naming the
/// sentence:
/// - `ID,manufacturer,model,serial,firmware`: the answer to the gateway's `ID?`;
/// - `ST,steps[,distance_m[,cadence_spm[,unix_time]]]`: a cumulative reading; empty optional
///   fields are allowed.
public struct HGPTextDecoder: PedometerDecoder {
    public static let name = "hgp1"

    /// The longest accepted line, without its terminator.
    public let maximumLineLength: Int

    /// Creates a decoder with lines capped at `maximumLineLength` bytes.
    public init(maximumLineLength: Int = 256) {
        self.maximumLineLength = maximumLineLength
    }

    public func makeFramer() -> LineFramer { LineFramer(maximumLength: maximumLineLength) }

    public var identificationRequest: [UInt8]? { Array("ID?\r\n".utf8) }

    public func decode(frame: [UInt8]) throws(PedometerDecodeError) -> PedometerMessage {
        guard frame.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw PedometerDecodeError(.noise, "bytes outside printable ASCII", frame: frame)
        }
        let body = try Self.verifiedBody(frame)
        let fields = body.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        switch fields[0] {
        case "ID":
            guard fields.count == 5 else {
                throw PedometerDecodeError(.malformed, "ID needs 4 fields, got \(fields.count - 1)", frame: frame)
            }
            guard !fields[3].isEmpty else {
                throw PedometerDecodeError(.malformed, "ID has an empty serial number", frame: frame)
            }
            func optional(_ text: String) -> String? { text.isEmpty ? nil : text }
            return .identification(PedometerIdentity(
                manufacturer: optional(fields[1]), model: optional(fields[2]), serialNumber: fields[3],
                firmwareVersion: optional(fields[4])))
        case "ST":
            guard (2...5).contains(fields.count) else {
                throw PedometerDecodeError(.malformed, "ST needs 1 to 4 fields, got \(fields.count - 1)", frame: frame)
            }
            guard fields[1].allSatisfy(\.isASCIIDigitCharacter), let steps = UInt32(fields[1]) else {
                throw PedometerDecodeError(.malformed, "step count \"\(fields[1])\" is not 0…4294967295", frame: frame)
            }
            func number(_ index: Int, _ what: String) throws(PedometerDecodeError) -> Double? {
                guard index < fields.count, !fields[index].isEmpty else { return nil }
                guard let value = Double(fields[index]), value.isFinite, value >= 0,
                    fields[index].allSatisfy({ $0.isASCIIDigitCharacter || $0 == "." })
                else {
                    throw PedometerDecodeError(.malformed, "\(what) \"\(fields[index])\" is not a non-negative number", frame: frame)
                }
                return value
            }
            let distance = try number(2, "distance")
            let cadence = try number(3, "cadence")
            let time = try number(4, "device time")
            return .reading(PedometerReading(
                steps: steps, distanceMeters: distance, cadence: cadence,
                deviceTime: time.map { Date(timeIntervalSince1970: $0) }))
        default:
            throw PedometerDecodeError(.unknownSentence, "unknown sentence \"\(fields[0].prefix(16))\"", frame: frame)
        }
    }

    /// Strips `$` and `*hh`, verifying the checksum when present.
    static func verifiedBody(_ frame: [UInt8]) throws(PedometerDecodeError) -> ArraySlice<UInt8> {
        let star = frame.lastIndex(of: UInt8(ascii: "*"))
        guard frame.first == UInt8(ascii: "$") else {
            guard star == nil, !frame.contains(UInt8(ascii: "$")) else {
                throw PedometerDecodeError(.malformed, "'*' or '$' outside a $…*hh sentence", frame: frame)
            }
            return frame[...]
        }
        guard let star else { return frame[1...] }
        let body = frame[1..<star]
        let digits = frame[(star + 1)...]
        guard digits.count == 2, let expected = UInt8(String(decoding: digits, as: UTF8.self), radix: 16) else {
            throw PedometerDecodeError(.malformed, "checksum must be two hex digits after '*'", frame: frame)
        }
        let actual = checksum(body)
        guard actual == expected else {
            throw PedometerDecodeError(
                .checksum, "checksum \(hex(expected)) does not match computed \(hex(actual))", frame: frame)
        }
        guard !body.contains(UInt8(ascii: "$")), !body.contains(UInt8(ascii: "*")) else {
            throw PedometerDecodeError(.malformed, "'$' or '*' inside a sentence", frame: frame)
        }
        return body
    }

    /// The NMEA 0183 checksum: XOR of every byte between `$` and `*`.
    public static func checksum(_ body: some Sequence<UInt8>) -> UInt8 {
        body.reduce(0, ^)
    }

    /// `body` framed as `$body*HH\r\n`, the form a device sends.
    public static func sentence(_ body: String) -> String {
        "$\(body)*\(hex(checksum(body.utf8)))\r\n"
    }

    static func hex(_ byte: UInt8) -> String {
        let text = String(byte, radix: 16, uppercase: true)
        return text.count == 1 ? "0" + text : text
    }
}

extension Character {
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
