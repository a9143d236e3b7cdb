public import BLETransport
public import GatewayRuntime
import FoundationEssentials

/// Which peripherals a source follows. Whatever the selection, the source checks every
/// discovered device itself (``DeviceFilter``), because BlueZ merges the discovery filters of all
/// its clients.
public enum DeviceSelection: Decodable, Sendable, Hashable {
    /// Any device advertising one of the services the source reads.
    case any
    /// Devices matching one of these matchers.
    case matching([DeviceMatcher])

    /// `"any"`, or an array of `{"address": "AA:BB:…"}`, `{"name": "Polar H10*"}`, or plain
    /// strings (an address if it looks like one, else a name pattern).
    // A value written as a string or an array, not an object of keys: DeclaredConfiguration
    // decodes objects only, so this value decodes itself.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            guard text == "any" else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expected \"any\" or an array of device matchers, got \"\(text)\"")
            }
            self = .any
            return
        }
        let matchers = try container.decode([DeviceMatcher].self)
        guard !matchers.isEmpty else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "an empty device list matches nothing; use \"any\"")
        }
        self = .matching(matchers)
    }
}

/// One device matcher: an exact address or a name glob (`*` any run, `?` one character), and
/// whether the device must be paired first (``DevicePairing``).
public struct DeviceMatcher: Decodable, Sendable, Hashable {
    /// What a discovered device is compared with.
    public enum Pattern: Sendable, Hashable {
        case address(String)
        case name(String)
    }

    public var pattern: Pattern
    /// Set when the device requires bonding: the gateway pairs before it reads anything.
    public var pairing: DevicePairing?

    public init(_ pattern: Pattern, pairing: DevicePairing? = nil) {
        self.pattern = pattern
        self.pairing = pairing
    }

    /// A device at exactly `address` (upper case).
    public static func address(_ address: String, pairing: DevicePairing? = nil) -> DeviceMatcher {
        DeviceMatcher(.address(address.uppercased()), pairing: pairing)
    }

    /// Devices whose advertised name matches the glob `pattern`.
    public static func name(_ pattern: String, pairing: DevicePairing? = nil) -> DeviceMatcher {
        DeviceMatcher(.name(pattern), pairing: pairing)
    }

    enum CodingKeys: String, CodingKey, CaseIterable { case address, name, pair, passkey }

    /// Decodes a plain string or an object with exactly one of `address` and `name`, and
    /// optionally `pair` (true) or `passkey` (six digits, implies `pair`).
    // A plain string or one of two objects (``configurationSchema``'s three shapes), with
    // exactly-one-of rules: DeclaredConfiguration decodes one object, so this value decodes
    // itself.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            if DeviceMatcher.isAddress(text) {
                self = .address(text)
            } else if text.isEmpty {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "empty device matcher")
            } else {
                self = .name(text)
            }
            return
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch (try c.decodeIfPresent(String.self, forKey: .address), try c.decodeIfPresent(String.self, forKey: .name)) {
        case (let address?, nil):
            guard DeviceMatcher.isAddress(address) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .address, in: c, debugDescription: "\"\(address)\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
            }
            pattern = .address(address.uppercased())
        case (nil, let name?):
            guard !name.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .name, in: c, debugDescription: "empty name pattern")
            }
            pattern = .name(name)
        default:
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "give exactly one of \"address\" or \"name\""))
        }
        let pair = try c.decodeIfPresent(Bool.self, forKey: .pair)
        let passkey = try c.decodeIfPresent(Int.self, forKey: .passkey)
        if let passkey {
            guard passkey >= 0, passkey <= Int(DevicePairing.passkeyRange.upperBound) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .passkey, in: c, debugDescription: "\(passkey) is not a passkey: it has six digits, 0 to 999999")
            }
            guard pair != false else {
                throw DecodingError.dataCorruptedError(
                    forKey: .pair, in: c, debugDescription: "\"pair\": false contradicts the \"passkey\" given")
            }
            pairing = DevicePairing(passkey: UInt32(passkey))
        } else {
            pairing = pair == true ? DevicePairing() : nil
        }
    }

    /// Whether `text` is six colon-separated hex octets (``BluetoothAddress/isValid(_:)``).
    public static func isAddress(_ text: String) -> Bool { BluetoothAddress.isValid(text) }
}

extension DeviceSelection: ConfigurationValue {
    /// `"any"` or the matchers, as a file gives them.
    public var configurationJSON: JSONValue {
        switch self {
        case .any: "any"
        case .matching(let matchers): .array(matchers.map(\.configurationJSON))
        }
    }
}

extension DeviceMatcher: ConfigurationValue {
    /// `{"address": …}` or `{"name": …}`, with `pair` or `passkey` when the device is paired.
    public var configurationJSON: JSONValue {
        var members: [String: JSONValue]
        switch pattern {
        case .address(let address): members = ["address": .string(address)]
        case .name(let name): members = ["name": .string(name)]
        }
        if let pairing {
            if let passkey = pairing.passkey { members["passkey"] = .number(Double(passkey)) } else { members["pair"] = true }
        }
        return .object(members)
    }
}

extension DeviceSelection: ConfigurationSchemaDeclaring {
    /// `"any"` or a non-empty list of matchers.
    public static var configurationSchema: ConfigurationSchema {
        .oneOf([.string(values: ["any"]), .array(DeviceMatcher.configurationSchema, minItems: 1)])
    }
}

extension DeviceMatcher: ConfigurationSchemaDeclaring {
    /// A plain string (an address or a name glob), or an object with exactly one of `address`
    /// and `name`, and optionally `pair` and `passkey`.
    public static var configurationSchema: ConfigurationSchema {
        let pairing = [
            ConfigurationProperty("pair", .boolean, "Pair (bond) with the device before reading it"),
            ConfigurationProperty(
                "passkey", .whole(0...Int(DevicePairing.passkeyRange.upperBound), unit: "passkey digits"),
                "The six-digit passkey the device shows or expects; implies pair"),
        ]
        return .oneOf([
            .nonEmptyText,
            .object(
                [ConfigurationProperty("address", .string(pattern: addressPattern), "The device's Bluetooth address")] + pairing,
                required: ["address"]),
            .object(
                [ConfigurationProperty("name", .nonEmptyText, "A glob over the advertised name (* any run, ? one character)")]
                    + pairing,
                required: ["name"]),
        ])
    }

    /// Six colon-separated hex octets, as ``isAddress(_:)`` reads them.
    public static let addressPattern = "^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"
}
