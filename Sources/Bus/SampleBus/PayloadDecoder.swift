import FoundationEssentials

/// One payload's decoder as a plugin offers it to `healthgate decode NAME HEX` (a Bluetooth
/// characteristic, an ANT+ data page): the plugin's own pure decoder, its output as a JSON
/// object, and the help text that documents it. The executable builds the `decode` command from
/// the decoders of every plugin in the catalog (``PluginCatalog/payloadDecoders``), whatever
/// its device family.
public struct PayloadDecoder: Sendable {
    /// The subcommand: `heart-rate-measurement`.
    public let name: String
    /// What it decodes, for the help: `Heart Rate Measurement (0x2A37).`
    public let summary: String
    /// A command line that decodes a real payload.
    public let example: String
    /// The keys of the JSON object, each with its unit and when it is null.
    public let keys: String
    private let body: @Sendable ([UInt8]) throws -> any Encodable & Sendable

    /// A decoder whose output encodes as one JSON object. `decode` throws for a payload that is
    /// not valid (truncated, reserved values), with the reason.
    public init<Output: Encodable & Sendable, Failure: Error>(
        _ name: String, _ summary: String, example: String, keys: String,
        _ decode: @escaping @Sendable ([UInt8]) throws(Failure) -> Output
    ) {
        self.name = name
        self.summary = summary
        self.example = example
        self.keys = keys
        body = { bytes in try decode(bytes) }
    }

    /// Decodes `bytes`. Throws the decoder's error for an invalid payload.
    public func decode(_ bytes: [UInt8]) throws -> any Encodable & Sendable {
        try body(bytes)
    }
}

/// A flat JSON object whose absent values print as null rather than vanish, with integers
/// printed as integers: how decoders report optional fields.
public struct NullableJSON: Encodable, Sendable {
    /// One field's value.
    public enum Value: Sendable {
        case integer(Int?)
        case number(Double?)
        case string(String?)
        case boolean(Bool?)
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The fields in output order (the encoder may sort them).
    public var fields: [(String, Value)]

    public init(_ fields: [(String, Value)]) { self.fields = fields }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in fields {
            let key = Key(stringValue: name)
            switch value {
            case .integer(let number?): try container.encode(number, forKey: key)
            case .number(let number?): try container.encode(number, forKey: key)
            case .string(let text?): try container.encode(text, forKey: key)
            case .boolean(let flag?): try container.encode(flag, forKey: key)
            case .integer(nil), .number(nil), .string(nil), .boolean(nil): try container.encodeNil(forKey: key)
            }
        }
    }
}

/// A plugin that offers decoders to `healthgate decode`: any source of any device family. The
/// executable finds these among the catalog's sources, so it imports no plugin.
public protocol PayloadDecoding {
    /// The decoders `healthgate decode` offers for the plugin's payloads.
    static var payloadDecoders: [PayloadDecoder] { get }
}

extension PluginCatalog {
    /// The decoders every source in the catalog offers, in catalog order: `healthgate decode`'s
    /// subcommands.
    public var payloadDecoders: [PayloadDecoder] {
        entries.flatMap { entry in (entry.sourceType as? any PayloadDecoding.Type)?.payloadDecoders ?? [] }
    }
}
