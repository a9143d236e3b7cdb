/// One configuration key, declared once: its name, where its value is stored, its shape (type,
/// range and unit, or allowed values), whether it is required, and what it means. Decoding
/// (``DeclaredConfiguration``'s `init(from:)`), the range check and `healthgate config schema`
/// (``DeclaredConfiguration``'s `configurationSchema`), with the key's default in both, all come
/// from this one declaration; the default is the value the type's `init()` gives the property.
///
/// ```swift
/// static var configurationKeys: [ConfigurationKey<Self>] {
///     [
///         ConfigurationKey("maxBytes", \.maxBytes, .whole(bytesRange, unit: "bytes"),
///             "The most the store keeps for this sink while its receiver is unreachable"),
///     ]
/// }
/// ```
///
/// A type's keys are computed when asked for, not kept in a static: a stored array would keep
/// the shapes (an indirect enum, whose case tag sits in the pointer's spare bits) alive where
/// LeakSanitizer cannot see them, and the fuzz targets would report them as leaked.
public struct ConfigurationKey<Root>: Sendable {
    /// How the key is declared.
    enum Role: Sendable {
        /// Optional in the file: absent, the property keeps its default (or stays nil).
        case optional
        /// The file must have it.
        case required
        /// Refused with a reason when present; no part of the schema.
        case refused
    }

    /// The key's name in the configuration object.
    public let name: String
    let role: Role
    /// The key's shape, given the root whose values are the defaults (a nested block's keys
    /// default to the values the root gives them).
    let shape: @Sendable (Root) -> ConfigurationSchema
    let description: String
    /// Decodes the key's value, when present, into the root.
    let decode: @Sendable (inout Root, KeyedDecodingContainer<StrictCodingKey>) throws -> Void
    /// The key's value in `root` as configuration JSON; nil when it has none (an optional key
    /// whose absence its description explains). A required key's is no default: the schema
    /// shows none.
    let value: @Sendable (Root) -> JSONValue?
    /// Sets the key's value from `json` when it is a plain one the strict decoder takes as it is
    /// (see ``DeclaredConfiguration/plainlyDecoded(from:)``); false for anything else, which the
    /// strict decoder then decodes or refuses.
    let assign: @Sendable (inout Root, JSONValue) -> Bool

    /// A key with a default: absent, the property keeps the value the type's `init()` gave it.
    public init<Value: Decodable & ConfigurationValue>(
        _ name: String, _ keyPath: any WritableKeyPath<Root, Value> & Sendable, _ schema: ConfigurationSchema, _ description: String
    ) {
        self.init(
            name: name, role: .optional, shape: { _ in schema }, description: description,
            decode: { root, container in
                if let value = try container.decodeIfPresent(Value.self, forKey: StrictCodingKey(name)) { root[keyPath: keyPath] = value }
            },
            value: { $0[keyPath: keyPath].configurationJSON }, assign: Self.assigning(keyPath))
    }

    /// A block of keys of its own (`follow`, `retry`): its shape is its type's declarations,
    /// with the defaults this root gives it.
    public init<Value: DeclaredConfiguration>(
        _ name: String, _ keyPath: any WritableKeyPath<Root, Value> & Sendable, _ description: String
    ) {
        self.init(
            name: name, role: .optional, shape: { Value.configurationSchema(defaults: $0[keyPath: keyPath]) },
            description: description,
            decode: { root, container in
                if let value = try container.decodeIfPresent(Value.self, forKey: StrictCodingKey(name)) { root[keyPath: keyPath] = value }
            },
            value: { $0[keyPath: keyPath].configurationJSON }, assign: { _, _ in false })
    }

    /// An optional key: absent, the property is nil (the description says what that means).
    public init<Value: Decodable & ConfigurationValue>(
        _ name: String, _ keyPath: any WritableKeyPath<Root, Value?> & Sendable, _ schema: ConfigurationSchema, _ description: String
    ) {
        self.init(
            name: name, role: .optional, shape: { _ in schema }, description: description,
            decode: { root, container in
                if let value = try container.decodeIfPresent(Value.self, forKey: StrictCodingKey(name)) { root[keyPath: keyPath] = value }
            },
            value: { $0[keyPath: keyPath]?.configurationJSON }, assign: Self.assigning(keyPath))
    }

    /// An optional key whose absence means `defaultValue`, applied where the value is used: the
    /// property stays nil, so a value built in code or stored keeps "absent" apart from "given";
    /// the schema shows `defaultValue` as the key's default.
    public init<Value: Decodable & ConfigurationValue>(
        _ name: String, _ keyPath: any WritableKeyPath<Root, Value?> & Sendable, _ schema: ConfigurationSchema,
        default defaultValue: Value, _ description: String
    ) {
        self.init(
            name: name, role: .optional, shape: { _ in schema }, description: description,
            decode: { root, container in
                if let value = try container.decodeIfPresent(Value.self, forKey: StrictCodingKey(name)) { root[keyPath: keyPath] = value }
            },
            value: { ($0[keyPath: keyPath] ?? defaultValue).configurationJSON }, assign: Self.assigning(keyPath))
    }

    /// A key every configuration must have: its absence is an error naming it.
    public static func required<Value: Decodable & ConfigurationValue>(
        _ name: String, _ keyPath: any WritableKeyPath<Root, Value> & Sendable, _ schema: ConfigurationSchema, _ description: String
    ) -> ConfigurationKey {
        ConfigurationKey(
            name: name, role: .required, shape: { _ in schema }, description: description,
            decode: { root, container in root[keyPath: keyPath] = try container.decode(Value.self, forKey: StrictCodingKey(name)) },
            value: { $0[keyPath: keyPath].configurationJSON }, assign: assigning(keyPath))
    }

    /// A key refused with `reason` when present (a secret that must never be written inline): an
    /// error at the key. It is no property and no part of the schema.
    public static func refused(_ name: String, _ reason: String) -> ConfigurationKey {
        ConfigurationKey(
            name: name, role: .refused, shape: { _ in .boolean }, description: reason,
            decode: { _, container in
                let key = StrictCodingKey(name)
                guard container.contains(key) else { return }
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: reason)
            },
            value: { _ in nil }, assign: { _, _ in false })
    }

    /// A key refused with `error`, thrown as it is, when present: for a key of a plugin's `config`
    /// object that moved elsewhere, whose error (its key path inside `config`) says where. It is
    /// no property and no part of the schema.
    public static func refused(_ name: String, _ error: PluginConfigurationError) -> ConfigurationKey {
        ConfigurationKey(
            name: name, role: .refused, shape: { _ in .boolean }, description: error.reason,
            decode: { _, container in
                if container.contains(StrictCodingKey(name)) { throw error }
            },
            value: { _ in nil }, assign: { _, _ in false })
    }

    /// This key as a key of `Outer`, whose `part` holds this key's root: two blocks of keys, each
    /// declared once, decoded from one object (a Bluetooth source's shared keys and its
    /// profile's own).
    public func embedded<Outer>(in part: any WritableKeyPath<Outer, Root> & Sendable) -> ConfigurationKey<Outer> {
        let shape = shape, decode = decode, value = value
        // Role is nested in the generic type, so each root has its own.
        let outerRole: ConfigurationKey<Outer>.Role =
            switch role {
            case .optional: .optional
            case .required: .required
            case .refused: .refused
            }
        let assign = assign
        return ConfigurationKey<Outer>(
            name: name, role: outerRole, shape: { shape($0[keyPath: part]) }, description: description,
            decode: { outer, container in try decode(&outer[keyPath: part], container) },
            value: { value($0[keyPath: part]) }, assign: { outer, json in assign(&outer[keyPath: part], json) })
    }

    private init(
        name: String, role: Role, shape: @escaping @Sendable (Root) -> ConfigurationSchema, description: String,
        decode: @escaping @Sendable (inout Root, KeyedDecodingContainer<StrictCodingKey>) throws -> Void,
        value: @escaping @Sendable (Root) -> JSONValue?, assign: @escaping @Sendable (inout Root, JSONValue) -> Bool
    ) {
        self.name = name
        self.role = role
        self.shape = shape
        self.description = description
        self.decode = decode
        self.value = value
        self.assign = assign
    }

    /// The ``assign`` of a key stored at `keyPath`: a plain value (``JSONValue/plain(as:)``) is set.
    private static func assigning<Value>(_ keyPath: any WritableKeyPath<Root, Value> & Sendable) -> @Sendable (inout Root, JSONValue) -> Bool {
        { root, json in
            guard let value = json.plain(as: Value.self) else { return false }
            root[keyPath: keyPath] = value
            return true
        }
    }

    /// The ``assign`` of an optional key stored at `keyPath`: a plain value is set (`null` is
    /// left to the strict decoder).
    private static func assigning<Value>(_ keyPath: any WritableKeyPath<Root, Value?> & Sendable) -> @Sendable (inout Root, JSONValue) -> Bool {
        { root, json in
            guard let value = json.plain(as: Value.self) else { return false }
            root[keyPath: keyPath] = value
            return true
        }
    }

    /// Whether a file must have the key.
    var isRequired: Bool { role == .required }
    /// Whether the key is refused when present.
    var isRefused: Bool { role == .refused }
}

extension JSONValue {
    /// The value as a `Value` when it is one the strict decoder (``ConfigurationDecoder``) takes
    /// as it is, with nothing to check or report: a string without NUL as `String`, a finite
    /// number as `Double`, a whole number within ±2⁵³ as `Int`, a boolean as `Bool`, anything as
    /// `JSONValue`. nil for every other value or type (an enumeration, an array, a block of keys,
    /// `null`), which the strict decoder decodes or refuses with its error.
    func plain<Value>(as type: Value.Type) -> Value? {
        if Value.self == JSONValue.self { return self as? Value }
        switch self {
        case .string(let text) where Value.self == String.self:
            return text.utf8.contains(0) ? nil : text as? Value
        case .number(let number) where Value.self == Double.self:
            return number.isFinite ? number as? Value : nil
        case .number(let number) where Value.self == Int.self:
            return number == number.rounded() && abs(number) <= 9_007_199_254_740_992 ? Int(number) as? Value : nil
        case .bool(let flag) where Value.self == Bool.self:
            return flag as? Value
        default:
            return nil
        }
    }
}
