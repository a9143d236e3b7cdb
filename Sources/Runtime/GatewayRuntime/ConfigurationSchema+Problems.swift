extension ConfigurationSchema {
    /// Every problem in `value` this shape can tell without decoding, in key order: each key
    /// the object does not have (with the key it most likely meant, among those that take a
    /// value of the shape given, or the keys it has), each refused key (with its reason), and
    /// each number outside its declared range. A file with several mistakes then hears of all
    /// of them at once.
    ///
    /// A value of another shape than declared, a missing required key and rules that tie keys
    /// together are left to the decoder and the types' validation, as in ``check(_:)``; so is
    /// everything under a ``delegated`` key or in an alternative of ``oneOf`` that no value
    /// matches (an unknown plugin kind).
    /// - Returns: errors whose key paths are inside `value` (`sinks[0].config.baud`).
    public func problems(in value: JSONValue) -> [PluginConfigurationError] {
        var found: [PluginConfigurationError] = []
        collectProblems(in: value, at: "", into: &found)
        return found
    }

    private func collectProblems(in value: JSONValue, at path: String, into found: inout [PluginConfigurationError]) {
        func child(_ name: String) -> String { path.isEmpty ? name : "\(path).\(name)" }
        switch (self, value) {
        case (.number(let rule), .number(let number)):
            if let problem = rule.problem(with: number) { found.append(PluginConfigurationError(keyPath: path, reason: problem)) }
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
        case (.array(let items, _, _), .array(let elements)):
            for (index, element) in elements.enumerated() { items.collectProblems(in: element, at: "\(path)[\(index)]", into: &found) }
        case (.oneOf(let alternatives), _):
            Self.alternative(among: alternatives, for: value)?.collectProblems(in: value, at: path, into: &found)
        default:
            // Another shape than declared, or a delegated value: the decoder reports it.
            return
        }
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
