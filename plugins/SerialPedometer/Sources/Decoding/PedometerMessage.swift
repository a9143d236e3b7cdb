public import FoundationEssentials

/// What a pedometer says about itself in the identification exchange.
public struct PedometerIdentity: Hashable, Sendable, Codable {
    public var manufacturer: String?
    public var model: String?
    /// The device's serial number: the gateway's identity for it when present.
    public var serialNumber: String?
    public var firmwareVersion: String?

    public init(manufacturer: String? = nil, model: String? = nil, serialNumber: String? = nil, firmwareVersion: String? = nil) {
        self.manufacturer = manufacturer
        self.model = model
        self.serialNumber = serialNumber
        self.firmwareVersion = firmwareVersion
    }
}

/// One cumulative reading: the step counter since the device booted, and optional extras.
public struct PedometerReading: Hashable, Sendable {
    /// Steps since the device booted; wraps from 4 294 967 295 to 0.
    public var steps: UInt32
    /// Distance walked or run since the device booted, in meters.
    public var distanceMeters: Double?
    /// The current cadence in steps per minute (instantaneous, not cumulative).
    public var cadence: Double?
    /// The device's own clock when it took the reading, if it sends one.
    public var deviceTime: Date?

    public init(steps: UInt32, distanceMeters: Double? = nil, cadence: Double? = nil, deviceTime: Date? = nil) {
        self.steps = steps
        self.distanceMeters = distanceMeters
        self.cadence = cadence
        self.deviceTime = deviceTime
    }
}

/// A decoded frame.
public enum PedometerMessage: Hashable, Sendable {
    case identification(PedometerIdentity)
    case reading(PedometerReading)
}

/// Why a frame was rejected. A struct with a nested code, so that decoders can add detail
/// without new error types; the code names the status counter (`garbage.<code>`).
public struct PedometerDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of garbage.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// A frame longer than the cap (framing).
        case overlong
        /// Bytes that are not printable ASCII: line noise.
        case noise
        /// A checksum was present and did not match.
        case checksum
        /// The frame has the protocol's shape but a field is wrong.
        case malformed
        /// A well-formed sentence of a type this decoder does not know.
        case unknownSentence
        /// A framing-level error other than length (a bad binary length byte).
        case framing
    }

    public var code: Code
    /// What exactly was wrong.
    public var detail: String
    /// The start of the offending frame, printable (non-ASCII shown as `\xNN`), at most 48 bytes.
    public var excerpt: String

    public init(_ code: Code, _ detail: String, frame: some Collection<UInt8> = [UInt8]()) {
        self.code = code
        self.detail = detail
        self.excerpt = Self.printable(frame)
    }

    public var description: String {
        excerpt.isEmpty ? "\(code.rawValue): \(detail)" : "\(code.rawValue): \(detail) in \"\(excerpt)\""
    }

    static func printable(_ bytes: some Collection<UInt8>) -> String {
        var text = ""
        for byte in bytes.prefix(48) {
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return bytes.count > 48 ? text + "…" : text
    }
}
