public import Foundation

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

/// One device matcher: an exact address or a name glob (`*` any run, `?` one character).
public enum DeviceMatcher: Decodable, Sendable, Hashable {
    case address(String)
    case name(String)

    enum CodingKeys: String, CodingKey, CaseIterable { case address, name }

    /// Decodes a plain string or an object with exactly one of `address` and `name`.
    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            if DeviceMatcher.isAddress(text) {
                self = .address(text.uppercased())
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
            self = .address(address.uppercased())
        case (nil, let name?):
            guard !name.isEmpty else {
                throw DecodingError.dataCorruptedError(forKey: .name, in: c, debugDescription: "empty name pattern")
            }
            self = .name(name)
        default:
            throw DecodingError.dataCorrupted(DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "give exactly one of \"address\" or \"name\""))
        }
    }

    /// Whether `text` is six colon-separated hex octets.
    public static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        return parts.count == 6 && parts.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}
