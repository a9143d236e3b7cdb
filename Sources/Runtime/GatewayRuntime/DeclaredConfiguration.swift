public import HealthModel

/// A configuration type whose keys are each declared once, in ``configurationKeys``: its
/// decoding (strict, through ``ConfigurationDecoder``: unknown keys are errors with a
/// suggestion) and its schema (ranges checked before decoding, `healthgate config schema`, the
/// defaults) are derived from the declarations, so no key is written in a second place.
///
/// What ties several keys together (one at least another, exactly one of two) stays in the
/// type's own validation.
public protocol DeclaredConfiguration: Decodable, Sendable, ConfigurationSchemaDeclaring, ConfigurationValue {
    /// Every key at its default (a required key at a placeholder the decoder replaces).
    init()
    /// The type's keys, in the order the schema lists them.
    static var configurationKeys: [ConfigurationKey<Self>] { get }
    /// Checks, as soon as the keys are decoded, what must hold before the value is used at all
    /// (a `Duration` made from a number out of range traps) or ties its keys together where a
    /// decoded value must never exist otherwise. The error's key path is inside this object; it
    /// is thrown as a `DecodingError` at that path. By default nothing.
    func checkDecoded() throws(PluginConfigurationError)
}

extension DeclaredConfiguration {
    /// Decodes each declared key that is present over the defaults of `init()`.
    public init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: StrictCodingKey.self)
        // A refused key is asked for (to refuse it) but must never be offered as a known key.
        if let strict = decoder as? StrictDecoder {
            strict.state.refuse(decoder.codingPath, Self.configurationKeys.filter { $0.role == .refused }.map(\.name))
        }
        for key in Self.configurationKeys { try key.decode(&self, container) }
        do {
            try checkDecoded()
        } catch {
            let path = ConfigurationKeyPath.isTopLevel(error.keyPath)
                ? [] : error.keyPath.split(separator: ".").map { StrictCodingKey(String($0)) }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath + path, debugDescription: error.reason))
        }
    }

    /// `value` decoded without the strict decoder when every key it has is declared and holds a
    /// plain value (a string, a number, a boolean of the key's type, or any JSON for a JSONValue
    /// key) and every required key is there: the value the strict decoder would give, made
    /// without Codable's containers. nil otherwise (an unknown key, a value of another type, a
    /// block or list of keys, `null`): decode it with ``ConfigurationDecoder``, which gives the
    /// error. Numbers are not checked against their ranges: check the schema first
    /// (``ConfigurationSchema/check(_:)``). For a hot path, such as an adapter's lines.
    public static func plainlyDecoded(from value: JSONValue) -> Self? {
        guard case .object(let members) = value else { return nil }
        var result = Self()
        var taken = 0
        for key in configurationKeys {
            if let json = members[key.name] {
                guard !key.isRefused, key.assign(&result, json) else { return nil }
                taken += 1
            } else if key.isRequired {
                return nil
            }
        }
        guard taken == members.count else { return nil }
        do {
            try result.checkDecoded()
        } catch {
            return nil
        }
        return result
    }

    /// Nothing to check beyond the keys' own decoding.
    public func checkDecoded() throws(PluginConfigurationError) {}

    /// The declared keys with their defaults (refused keys left out).
    public static var configurationSchema: ConfigurationSchema {
        configurationSchema(defaults: Self())
    }

    /// The declared keys with the values of `defaults` as their defaults: the shape of a block
    /// whose owner gives it defaults of its own.
    public static func configurationSchema(defaults: Self) -> ConfigurationSchema {
        .object(configurationObject(defaults: defaults))
    }

    /// The declared keys as schema properties (refused keys left out), with the values of
    /// `defaults` as their defaults: for a schema assembled from the declarations with what only
    /// its assembler knows (a key whose shape is ``ConfigurationSchema/delegated`` given its
    /// owner's, the forms a value takes).
    public static func configurationObject(defaults: Self) -> ConfigurationObject {
        let keys = configurationKeys.filter { $0.role != .refused }
        return ConfigurationObject(
            properties: keys.map { key in
                // A required key has no default: `init()`'s value is only a placeholder.
                ConfigurationProperty(
                    key.name, key.shape(defaults), default: key.role == .required ? nil : key.value(defaults), key.description)
            },
            required: keys.filter { $0.role == .required }.map(\.name),
            refused: Dictionary(
                configurationKeys.filter { $0.role == .refused }.map { ($0.name, $0.description) }, uniquingKeysWith: { first, _ in first }),
            renamed: (Self.self as? any RenamedConfigurationKeys.Type)?.renamedKeys ?? [:])
    }

    /// This configuration with `change` applied: for configurations built in code.
    public func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }

    /// The configuration as a JSON object of its keys' values.
    public var configurationJSON: JSONValue {
        var members: [String: JSONValue] = [:]
        for key in Self.configurationKeys where key.role != .refused {
            if let value = key.value(self) { members[key.name] = value }
        }
        return .object(members)
    }
}

/// A value a configuration key holds, as configuration JSON (for the key's default in the
/// schema).
public protocol ConfigurationValue: Sendable {
    var configurationJSON: JSONValue { get }
}

extension Int: ConfigurationValue {
    public var configurationJSON: JSONValue { .number(Double(self)) }
}

extension Double: ConfigurationValue {
    public var configurationJSON: JSONValue { .number(self) }
}

extension Bool: ConfigurationValue {
    public var configurationJSON: JSONValue { .bool(self) }
}

extension String: ConfigurationValue {
    public var configurationJSON: JSONValue { .string(self) }
}

extension Array: ConfigurationValue where Element: ConfigurationValue {
    public var configurationJSON: JSONValue { .array(map(\.configurationJSON)) }
}

extension ConfigurationValue where Self: RawRepresentable, RawValue == String {
    public var configurationJSON: JSONValue { .string(rawValue) }
}

/// A value kept as JSON for its owner to decode (a plugin's `config`, a section another module
/// owns) is its own configuration JSON.
extension JSONValue: ConfigurationValue {
    public var configurationJSON: JSONValue { self }
}

extension LogLevel: ConfigurationValue {}

extension BiologicalSex: ConfigurationValue {}

/// A configuration value that is one of a closed set of names (a sink's `format`, a sensor's
/// `session`): decoded from its name, and a name that is none of them is an error that lists
/// them quoted, as a file writes them (Swift's own decoding would name the Swift type).
public protocol ConfigurationChoice: RawRepresentable, CaseIterable, Decodable, ConfigurationValue where RawValue == String {}

extension ConfigurationChoice {
    public init(from decoder: any Decoder) throws {
        let name = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: name) else {
            let names = Self.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "\"\(name)\" is not one of \(names)"))
        }
        self = value
    }

    /// The shape of a key that holds one: a string among the names.
    public static var configurationShape: ConfigurationSchema { .string(values: allCases.map(\.rawValue)) }
}

/// A configuration value written as one string with a grammar of its own (a listen address
/// `127.0.0.1:8080`): decoded by ``init(parsing:)``, whose error's reason becomes the decoding
/// error at the key; written back as its description.
public protocol ConfigurationText: Decodable, ConfigurationValue, CustomStringConvertible {
    /// The value `text` writes.
    /// - Throws: ``PluginConfigurationError`` saying what is wrong with the text.
    init(parsing text: String) throws(PluginConfigurationError)
}

extension ConfigurationText {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try Self(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.reason)
        }
    }

    public var configurationJSON: JSONValue { .string(description) }
}
