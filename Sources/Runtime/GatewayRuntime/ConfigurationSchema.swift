/// The declared shape of a configuration value: every key of an object with its type, default,
/// description and, for a number, its accepted range and unit.
///
/// A configuration type declares its schema once. The same declaration does two things:
/// ``check(_:)`` refuses every number outside its range (before the value is decoded, so a rate
/// of `1e-300` never reaches a conversion that traps), and ``jsonSchema()`` writes the JSON
/// Schema (draft 2020-12) that `healthgate config schema` prints for editors and CI.
///
/// Types, unknown keys and rules that tie several keys together stay with the strict decoder and
/// the type's own validation; the check here finds numbers where the schema declares them and
/// leaves any value of another shape to the decoder, which reports it.
public indirect enum ConfigurationSchema: Sendable {
    /// An object with exactly these keys (`additionalProperties: false`).
    case object(ConfigurationObject)
    /// A number within a range.
    case number(NumberRule)
    /// A string: any, one of `values`, or matching `pattern` (an ECMA-262 regular expression,
    /// for the JSON Schema only; the decoder checks the same rule in code).
    case string(values: [String]? = nil, pattern: String? = nil, minLength: Int? = nil, maxLength: Int? = nil)
    /// `true` or `false`.
    case boolean
    /// An array of `items`.
    case array(ConfigurationSchema, minItems: Int? = nil, maxItems: Int? = nil)
    /// Exactly one of these shapes; for objects the one whose constant keys match.
    case oneOf([ConfigurationSchema])
    /// One exact string (a plugin's `kind`).
    case constant(String)
    /// A value this declaration leaves to another module, which decodes it and declares its
    /// shape (a section of the file, a plugin's `config`): any JSON here. Whoever assembles the
    /// whole document's schema puts the owner's shape in its place.
    case delegated

    /// A string of no particular form.
    public static var text: ConfigurationSchema { .string() }
    /// A string that must not be empty.
    public static var nonEmptyText: ConfigurationSchema { .string(minLength: 1) }

    /// A number from `range`, in `unit` (plural, as in "seconds"), fractions allowed.
    public static func number(_ range: ClosedRange<Double>, unit: String) -> ConfigurationSchema {
        .number(NumberRule(range: range, unit: unit, whole: false))
    }

    /// A whole number from `range`, in `unit`.
    public static func whole(_ range: ClosedRange<Int>, unit: String) -> ConfigurationSchema {
        .number(NumberRule(range: Double(range.lowerBound)...Double(range.upperBound), unit: unit, whole: true))
    }

    /// One of `values`, in `unit`.
    public static func wholeValues(_ values: [Int], unit: String) -> ConfigurationSchema {
        let doubles = values.map(Double.init)
        return .number(NumberRule(
            range: (doubles.min() ?? 0)...(doubles.max() ?? 0), unit: unit, whole: true, values: doubles))
    }

    /// An object with `properties`, of which `required` must be present.
    public static func object(
        _ properties: [ConfigurationProperty], required: [String] = [], description: String? = nil
    ) -> ConfigurationSchema {
        .object(ConfigurationObject(properties: properties, required: required, description: description))
    }
}

/// A number's accepted range and unit.
public struct NumberRule: Sendable, Hashable {
    /// The smallest and largest accepted values.
    public var range: ClosedRange<Double>
    /// The unit, plural: "seconds", "notifications per second", "devices".
    public var unit: String
    /// Whether only whole numbers are accepted.
    public var whole: Bool
    /// The only accepted values inside the range, when there is such a list.
    public var values: [Double]?

    public init(range: ClosedRange<Double>, unit: String, whole: Bool, values: [Double]? = nil) {
        self.range = range
        self.unit = unit
        self.whole = whole
        self.values = values
    }

    /// Why `value` is refused, or nil when it is accepted.
    public func problem(with value: Double) -> String? {
        let shown = ConfigurationDecoder.format(value)
        let lower = ConfigurationDecoder.format(range.lowerBound)
        let upper = ConfigurationDecoder.format(range.upperBound)
        if !value.isFinite {
            return "\(shown) is outside the accepted values \(lower) to \(upper) (\(unit))"
        }
        if value < range.lowerBound {
            return "\(shown) is below the smallest accepted value \(lower) (\(unit))"
        }
        if value > range.upperBound {
            return "\(shown) is above the largest accepted value \(upper) (\(unit))"
        }
        if whole, value != value.rounded() {
            return "\(shown) is not a whole number (\(unit), \(lower) to \(upper))"
        }
        if let values, !values.contains(value) {
            return "\(shown) is not one of the accepted values (\(unit)): "
                + values.map { ConfigurationDecoder.format($0) }.joined(separator: ", ")
        }
        return nil
    }
}

/// One key of a configuration object.
public struct ConfigurationProperty: Sendable {
    public var name: String
    public var schema: ConfigurationSchema
    /// What the key means, for the JSON Schema's `description` (the unit is added to it).
    public var description: String
    /// The value used when the key is absent; nil when absence means something of its own
    /// (described in `description`).
    public var defaultValue: JSONValue?

    public init(_ name: String, _ schema: ConfigurationSchema, default defaultValue: JSONValue? = nil, _ description: String) {
        self.name = name
        self.schema = schema
        self.description = description
        self.defaultValue = defaultValue
    }
}

/// An object's keys.
public struct ConfigurationObject: Sendable {
    public var properties: [ConfigurationProperty]
    public var required: [String]
    public var description: String?
    /// Keys refused with a reason when present (an inline secret, a block that moved), by name:
    /// no property and never suggested for a misspelt key; the JSON Schema refuses them as it
    /// does any other key.
    public var refused: [String: String]
    /// Old names of keys that were renamed → the new name, suggested for the old.
    public var renamed: [String: String]

    public init(
        properties: [ConfigurationProperty], required: [String] = [], description: String? = nil,
        refused: [String: String] = [:], renamed: [String: String] = [:]
    ) {
        self.properties = properties
        self.required = required
        self.description = description
        self.refused = refused
        self.renamed = renamed
    }

    /// The property named `name`.
    public func property(_ name: String) -> ConfigurationProperty? {
        properties.first { $0.name == name }
    }
}

/// A type whose configuration object has a declared schema.
public protocol ConfigurationSchemaDeclaring {
    /// Every key the type decodes, with its type, range, unit, default and meaning.
    static var configurationSchema: ConfigurationSchema { get }
}

extension ConfigurationSchema {
    /// Refuses the first number in `value` that lies outside its declared range (or is not
    /// whole where a whole number is declared).
    /// - Throws: ``PluginConfigurationError`` with the key path inside `value`
    ///   (`simulation.notificationsPerSecond`) and the value, the range and the unit.
    public func check(_ value: JSONValue) throws(PluginConfigurationError) {
        try check(value, at: "")
    }

    private func check(_ value: JSONValue, at path: String) throws(PluginConfigurationError) {
        switch (self, value) {
        case (.number(let rule), .number(let number)):
            if let problem = rule.problem(with: number) { throw PluginConfigurationError(keyPath: path, reason: problem) }
        case (.object(let object), .object(let members)):
            for property in object.properties {
                guard let member = members[property.name], member != .null else { continue }
                try property.schema.check(member, at: ConfigurationKeyPath.joining(path, property.name))
            }
        case (.array(let items, _, _), .array(let elements)):
            for (index, element) in elements.enumerated() { try items.check(element, at: ConfigurationKeyPath.joining(path, "[\(index)]")) }
        case (.oneOf(let alternatives), _):
            if let chosen = alternatives.first(where: { $0.matches(value) }) { try chosen.check(value, at: path) }
        default:
            // Another shape than declared: the decoder reports it.
            return
        }
    }

    /// Whether `value` has this shape at its top (the JSON type, and an object's constants).
    func matches(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.number, .number), (.boolean, .bool), (.array, .array): return true
        case (.string, .string), (.constant, .string): return true
        case (.object(let object), .object(let members)):
            for property in object.properties {
                guard case .constant(let constant) = property.schema else { continue }
                guard members[property.name] == .string(constant) else { return false }
            }
            return true
        case (.oneOf(let alternatives), _): return alternatives.contains { $0.matches(value) }
        case (.delegated, _): return true
        default: return false
        }
    }
}

extension ConfigurationSchema {
    /// The JSON Schema (draft 2020-12) of this shape, without the `$schema` header.
    public func jsonSchema() -> JSONValue {
        switch self {
        case .object(let object):
            var members: [String: JSONValue] = [
                "type": "object", "additionalProperties": false,
                "properties": .object(Dictionary(uniqueKeysWithValues: object.properties.map { ($0.name, $0.jsonSchema()) })),
            ]
            if !object.required.isEmpty { members["required"] = .array(object.required.map { .string($0) }) }
            if let description = object.description { members["description"] = .string(description) }
            return .object(members)
        case .number(let rule):
            var members: [String: JSONValue] = [
                "type": .string(rule.whole ? "integer" : "number"), "minimum": .number(rule.range.lowerBound),
                "maximum": .number(rule.range.upperBound), "x-unit": .string(rule.unit),
            ]
            if let values = rule.values { members["enum"] = .array(values.map { .number($0) }) }
            return .object(members)
        case .string(let values, let pattern, let minLength, let maxLength):
            var members: [String: JSONValue] = ["type": "string"]
            if let values { members["enum"] = .array(values.map { .string($0) }) }
            if let pattern { members["pattern"] = .string(pattern) }
            if let minLength { members["minLength"] = .number(Double(minLength)) }
            if let maxLength { members["maxLength"] = .number(Double(maxLength)) }
            return .object(members)
        case .boolean:
            return ["type": "boolean"]
        case .array(let items, let minItems, let maxItems):
            var members: [String: JSONValue] = ["type": "array", "items": items.jsonSchema()]
            if let minItems { members["minItems"] = .number(Double(minItems)) }
            if let maxItems { members["maxItems"] = .number(Double(maxItems)) }
            return .object(members)
        case .oneOf(let alternatives):
            return ["oneOf": .array(alternatives.map { $0.jsonSchema() })]
        case .constant(let value):
            return ["const": .string(value)]
        case .delegated:
            // JSON Schema's empty schema: any value.
            return [:]
        }
    }

    /// A whole document: the `$schema` header, an `$id`-free title and this shape.
    public func jsonSchemaDocument(title: String) -> JSONValue {
        guard case .object(var members) = jsonSchema() else { return jsonSchema() }
        members["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        members["title"] = .string(title)
        return .object(members)
    }
}

extension ConfigurationProperty {
    func jsonSchema() -> JSONValue {
        guard case .object(var members) = schema.jsonSchema() else { return schema.jsonSchema() }
        var text = description
        if case .number(let rule) = schema {
            text += " (\(rule.unit), \(ConfigurationDecoder.format(rule.range.lowerBound)) to "
                + "\(ConfigurationDecoder.format(rule.range.upperBound)))"
        }
        members["description"] = .string(text)
        if let defaultValue { members["default"] = defaultValue }
        return .object(members)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
