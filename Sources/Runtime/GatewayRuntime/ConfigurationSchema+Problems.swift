extension ConfigurationSchema {
    /// Every problem in `value` this shape can tell without decoding, in key order: each key
    /// the object does not have (with the key it most likely meant, among those that take a
    /// value of the shape given, or the keys it has), each refused key (with its reason), each
    /// missing required key, each value of another shape than declared (a string where a number
    /// goes, an object where a list goes: with how to write it), each name outside its closed
    /// set, each alternative no value names (an unknown plugin kind, with the kind it most likely
    /// meant) and each number outside its declared range. A file with several mistakes then
    /// hears of all of them at once.
    ///
    /// Rules that tie keys together are left to the types' validation, as in ``check(_:)``; so
    /// is everything under a ``delegated`` key and the keys of an alternative of ``oneOf`` that
    /// cannot be told apart from another (a zone with a key of each form).
    /// - Returns: errors whose key paths are inside `value` (`sinks[0].config.baud`;
    ///   ``ConfigurationKeyPath/topLevel`` for `value` itself).
    public func problems(in value: JSONValue) -> [PluginConfigurationError] {
        var found: [PluginConfigurationError] = []
        collectProblems(in: value, at: "", into: &found)
        return found
    }

    private func collectProblems(in value: JSONValue, at path: String, into found: inout [PluginConfigurationError]) {
        func child(_ name: String) -> String { ConfigurationKeyPath.joining(path, name) }
        switch (self, value) {
        case (.delegated, _):
            // Its owner decodes it and reports what is wrong.
            return
        case (.number(let rule), .number(let number)):
            if let problem = rule.problem(with: number) { found.append(PluginConfigurationError(keyPath: path, reason: problem)) }
        case (.string(let values?, _, _, _), .string(let text)) where !values.contains(text):
            found.append(PluginConfigurationError(keyPath: path, reason: Self.unlisted(text, among: values)))
        case (.string(_, _, let minLength?, _), .string(let text)) where text.isEmpty && minLength > 0:
            found.append(PluginConfigurationError(keyPath: path, reason: "must not be empty"))
        case (.object(let object), .object(let members)):
            for name in members.keys.sorted() {
                let member = members[name] ?? .null
                if let property = object.property(name) {
                    guard member != .null else { continue }
                    property.schema.collectProblems(in: member, at: child(name), into: &found)
                } else if let reason = object.refused[name] {
                    found.append(PluginConfigurationError(keyPath: child(name), reason: reason))
                } else {
                    found.append(PluginConfigurationError(keyPath: child(name), reason: object.unknownKeyReason(name, value: member)))
                }
            }
            for name in object.required where (members[name] ?? .null) == .null {
                found.append(PluginConfigurationError(keyPath: child(name), reason: "required key \"\(name)\" is missing"))
            }
        case (.array(let items, _, _), .array(let elements)):
            for (index, element) in elements.enumerated() {
                items.collectProblems(in: element, at: ConfigurationKeyPath.joining(path, "[\(index)]"), into: &found)
            }
        case (.oneOf(let alternatives), _):
            if let chosen = Self.alternative(among: alternatives, for: value) {
                chosen.collectProblems(in: value, at: path, into: &found)
            } else if let unnamed = Self.unknownConstant(among: alternatives, in: value) {
                found.append(PluginConfigurationError(keyPath: child(unnamed.key), reason: unnamed.reason))
            } else if !alternatives.contains(where: { $0.hasShape(of: value) }) {
                found.append(PluginConfigurationError(keyPath: path, reason: mismatch(value)))
            }
        case (.constant, .string), (.string, .string), (.boolean, .bool):
            return
        default:
            found.append(PluginConfigurationError(keyPath: path, reason: mismatch(value)))
        }
    }

    /// Whether `value` is of this shape's JSON type, whatever its content.
    func hasShape(of value: JSONValue) -> Bool {
        switch (self, value) {
        case (.number, .number), (.boolean, .bool), (.array, .array), (.object, .object), (.delegated, _): true
        case (.string, .string), (.constant, .string): true
        case (.oneOf(let alternatives), _): alternatives.contains { $0.hasShape(of: value) }
        default: false
        }
    }

    /// "expected …, got …", in the decoder's words, then how to write the value.
    func mismatch(_ value: JSONValue) -> String {
        var reason = "expected \(expectation), got \(StrictDecoder.describe(value))"
        if let fix = fix(for: value) { reason += "; \(fix)" }
        return reason
    }

    /// What a value of this shape is, in words: "a whole number (records, 1 to 100000)".
    var expectation: String {
        switch self {
        case .number(let rule):
            let kind = rule.whole ? "a whole number" : "a number"
            let lower = ConfigurationDecoder.format(rule.range.lowerBound)
            let upper = ConfigurationDecoder.format(rule.range.upperBound)
            return "\(kind) (\(rule.unit), \(lower) to \(upper))"
        case .string(let values?, _, _, _):
            return "one of " + values.map { "\"\($0)\"" }.joined(separator: ", ")
        case .string, .constant: return "a string"
        case .boolean: return "true or false"
        case .array(let items, _, _): return "a list of \(items.pluralExpectation)"
        case .object: return "an object"
        case .oneOf(let alternatives):
            return alternatives.map(\.expectation).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
                .joined(separator: " or ")
        case .delegated: return "any value"
        }
    }

    private var pluralExpectation: String {
        switch self {
        case .number(let rule): rule.whole ? "whole numbers" : "numbers"
        case .string(let values?, _, _, _): values.map { "\"\($0)\"" }.joined(separator: ", ")
        case .string, .constant: "strings"
        case .boolean: "true or false"
        case .array: "lists"
        case .object: "objects"
        case .oneOf(let alternatives):
            Set(alternatives.map(\.pluralExpectation)).count == 1 ? alternatives[0].pluralExpectation : "values"
        case .delegated: "values"
        }
    }

    /// How to write `value` so that it has this shape, when that is plain.
    private func fix(for value: JSONValue) -> String? {
        switch (self, value) {
        case (.number, .string(let text)) where Double(text)?.isFinite == true && text.allSatisfy({ "0123456789.-+eE".contains($0) }):
            return "write the number without quotes: \(text)"
        case (.number(let rule), .string(let text)):
            // A number written with its unit ("70 kg", "10s"): the number alone, in the key's unit.
            let digits = text.prefix { "0123456789.-+".contains($0) }
            guard !digits.isEmpty, let number = Double(digits), number.isFinite else { return nil }
            return "write the number alone, without quotes, in \(rule.unit): \(ConfigurationDecoder.format(number))"
        case (.boolean, .string(let text)) where ["true", "false"].contains(text.lowercased()):
            return "write \(text.lowercased()) without quotes"
        case (.boolean, _):
            return "write true or false, without quotes"
        case (.string, .number(let number)):
            return "write it in quotes: \"\(ConfigurationDecoder.format(number))\""
        case (.array(let items, _, _), _) where items.hasShape(of: value):
            return "a list is written in brackets, even of one item: [\(value.compactText)]"
        case (.array, .object):
            return "write a list in brackets: [{…}, {…}]"
        case (.object, .array):
            return "write an object in braces: {\"key\": value}"
        case (.oneOf(let alternatives), _):
            return alternatives.lazy.compactMap { $0.fix(for: value) }.first
        default:
            return nil
        }
    }

    /// `"x" is not one of …`, with the name most likely meant.
    static func unlisted(_ text: String, among values: [String]) -> String {
        var reason = "\(StrictDecoder.describe(.string(text))) is not one of "
            + values.map { "\"\($0)\"" }.joined(separator: ", ")
        if let suggestion = KeySuggestion.suggestion(for: text, among: values) { reason += "; did you mean \"\(suggestion)\"?" }
        return reason
    }

    /// For an object no alternative matches because the key that names its alternative (a
    /// plugin's `kind`) names none: that key and why, with the name it most likely meant and
    /// the names there are.
    static func unknownConstant(among alternatives: [ConfigurationSchema], in value: JSONValue) -> (key: String, reason: String)? {
        guard case .object(let members) = value else { return nil }
        var constants: [String: [String]] = [:]
        for case .object(let object) in alternatives {
            for property in object.properties {
                if case .constant(let constant) = property.schema { constants[property.name, default: []].append(constant) }
            }
        }
        for (key, names) in constants.sorted(by: { $0.key < $1.key }) {
            guard case .string(let given)? = members[key], !names.contains(given) else { continue }
            var reason = "unknown \(key) \"\(ConfigurationJSONParser.printable(given))\""
            if let suggestion = KeySuggestion.suggestion(for: given, among: names) { reason += "; did you mean \"\(suggestion)\"?" }
            return (key, reason + " (known here: \(names.joined(separator: ", ")))")
        }
        return nil
    }
}

extension ConfigurationSchema {
    /// The alternative of a ``oneOf`` that `value` was written for, or nil when that is not
    /// clear (the decoder then reports what is wrong). Of several objects, the one that has
    /// every key given, else the only one whose required keys are all given.
    static func alternative(among alternatives: [ConfigurationSchema], for value: JSONValue) -> ConfigurationSchema? {
        let matching = alternatives.filter { $0.matches(value) }
        guard matching.count > 1, case .object(let members) = value else { return matching.first }
        let keys = Set(members.keys)
        func object(_ schema: ConfigurationSchema) -> ConfigurationObject? {
            if case .object(let object) = schema { object } else { nil }
        }
        if let covering = matching.first(where: { object($0).map { keys.isSubset(of: $0.properties.map(\.name)) } ?? false }) {
            return covering
        }
        let required = matching.filter { object($0).map { !$0.required.isEmpty && keys.isSuperset(of: $0.required) } ?? false }
        return required.count == 1 ? required[0] : nil
    }
}

extension ConfigurationObject {
    /// Why `name` is refused: an unknown key, with the key it most likely meant among those
    /// that take `value` (a boolean only a boolean key, …), else the keys there are.
    func unknownKeyReason(_ name: String, value: JSONValue) -> String {
        var reason = "unknown key \"\(ConfigurationJSONParser.printable(name))\""
        let fitting = properties.filter { value == .null || $0.schema.matches(value) }.map(\.name)
        if let suggestion = renamed[name] ?? KeySuggestion.suggestion(for: name, among: fitting) {
            reason += "; did you mean \"\(suggestion)\"?"
        } else if !properties.isEmpty {
            reason += "; known keys: \(properties.map(\.name).sorted().joined(separator: ", "))"
        } else {
            reason += "; this object takes no keys"
        }
        return reason
    }
}
