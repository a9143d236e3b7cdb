import HealthModel
import FoundationEssentials

/// Any JSON value, kept as parsed, so that a plugin's `config` object can be decoded later by
/// the plugin's own `Configuration` type, with key paths that point into the file.
public enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value):
            if value == value.rounded(), abs(value) < 1e15 {
                try container.encode(Int64(value))
            } else {
                try container.encode(value)
            }
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value for `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The value as configuration errors name it: `the string "x"`, `an array`, `3`, `null`.
    public var inWords: String { StrictDecoder.describe(self) }

    /// Decodes this value as `T` with the model's JSON conventions.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let data = try JSONEncoder().encode(self)
        return try HealthJSONDecoding.decoder().decode(T.self, from: data)
    }

    /// Decodes this value as `T` strictly, as configuration is decoded: unknown keys, numbers
    /// that do not fit and NUL characters are errors (see ``ConfigurationDecoder``).
    /// - Throws: `DecodingError` with the key path inside this value.
    public func decodeStrictly<T: Decodable>(_ type: T.Type) throws -> T {
        try ConfigurationDecoder.decode(T.self, from: self)
    }

    /// Encodes any Encodable value into a JSONValue.
    public static func encoding(_ value: some Encodable) throws -> JSONValue {
        let data = try HealthJSONDecoding.encoder().encode(value)
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }
}


enum HealthJSONDecoding {
    static func decoder() -> JSONDecoder { HealthJSON.makeDecoder() }
    static func encoder() -> JSONEncoder { HealthJSON.makeEncoder() }
}

extension DecodingError {
    /// The coding path of the error, as `sources[0].config.devices[1].address`;
    /// ``ConfigurationKeyPath/topLevel`` when the whole value is wrong (or Foundation did not
    /// say where, as for a fractional number decoded as `Int`).
    public var keyPath: String {
        let path: [any CodingKey]
        switch self {
        case .typeMismatch(_, let context), .valueNotFound(_, let context),
            .dataCorrupted(let context):
            path = context.codingPath
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
        @unknown default:
            path = []
        }
        return Self.format(path)
    }

    /// A human reason without Swift type names where possible.
    public var reason: String {
        switch self {
        case .typeMismatch(let type, let context):
            context.debugDescription.hasPrefix("expected ")
                ? context.debugDescription : "expected \(Self.jsonTypeName(type)): \(context.debugDescription)"
        case .valueNotFound(let type, _): "missing value, expected \(Self.jsonTypeName(type))"
        case .keyNotFound(let key, _): "required key \"\(key.stringValue)\" is missing"
        case .dataCorrupted(let context):
            if let underlying = context.underlyingError {
                "\(context.debugDescription) \((underlying as? CocoaError)?.userInfo["NSDebugDescription"] ?? ErrorText.of(underlying))"
            } else {
                context.debugDescription
            }
        @unknown default: "\(self)"
        }
    }

    static func format(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return ConfigurationKeyPath.rendered(text)
    }

    private static func jsonTypeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is UInt.Type, is Double.Type, is UInt8.Type, is Int32.Type:
            "a number"
        default:
            if "\(type)".hasPrefix("Array") { "an array" } else { "an object" }
        }
    }
}
