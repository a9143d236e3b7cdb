extension ConfigurationSchema {
    /// The configuration reference in Markdown: a table of keys for the top object and one for
    /// every object below it (a plugin's `config` under the plugin's kind), each key with its
    /// type, default, accepted values and meaning. Generated from the declarations, like the
    /// JSON Schema, so the two never disagree; `healthgate config reference` prints it.
    public func markdownReference(title: String, introduction: String) -> String {
        var sections: [String] = []
        appendSections(of: self, path: "", heading: "The configuration file", to: &sections)
        return "# \(title)\n\n\(introduction)\n\n" + sections.joined(separator: "\n")
    }

    private func appendSections(of schema: ConfigurationSchema, path: String, heading: String, to sections: inout [String]) {
        switch schema {
        case .object(let object):
            var text = "## \(heading)\n\n"
            if let description = object.description { text += "\(description)\n\n" }
            if object.properties.isEmpty {
                text += "No keys.\n"
                sections.append(text)
                return
            }
            text += "| key | type | default | accepted | meaning |\n| --- | --- | --- | --- | --- |\n"
            var nested: [(ConfigurationSchema, String, String)] = []
            for property in object.properties {
                let keyPath = path.isEmpty ? property.name : "\(path).\(property.name)"
                let required = object.required.contains(property.name) ? " (required)" : ""
                text += "| `\(property.name)`\(required) | \(Self.typeName(property.schema)) | "
                    + "\(property.defaultValue.map(Self.inline) ?? "") | \(Self.accepted(property.schema)) | "
                    + "\(Self.escape(property.description)) |\n"
                for (child, suffix, title) in Self.children(of: property.schema, keyPath: keyPath) {
                    nested.append((child, suffix, title))
                }
            }
            sections.append(text)
            for (child, childPath, childHeading) in nested {
                appendSections(of: child, path: childPath, heading: childHeading, to: &sections)
            }
        default:
            return
        }
    }

    /// The objects below a property's shape, each with its key path and heading: an object, the
    /// objects an array holds, and each alternative of a choice (a plugin by its kind).
    private static func children(of schema: ConfigurationSchema, keyPath: String) -> [(ConfigurationSchema, String, String)] {
        switch schema {
        case .object(let object) where !object.properties.isEmpty:
            return [(schema, keyPath, "`\(keyPath)`")]
        case .array(let items, _, _):
            return children(of: items, keyPath: "\(keyPath)[]")
        case .oneOf(let alternatives):
            let objects = alternatives.filter {
                if case .object = $0 { return true }
                return false
            }
            return objects.enumerated().flatMap { index, alternative -> [(ConfigurationSchema, String, String)] in
                guard case .object(let object) = alternative else { return [] }
                let constant = object.properties.compactMap { property -> String? in
                    if case .constant(let value) = property.schema { return value }
                    return nil
                }.first
                guard let constant else {
                    // Forms told apart by their keys: numbered.
                    let form = objects.count > 1 ? " (form \(index + 1) of \(objects.count))" : ""
                    return children(of: alternative, keyPath: keyPath).map { ($0.0, $0.1, $0.2 + form) }
                }
                // A plugin: its keys go by its kind, `sources[ble-heart-rate].config`.
                let named = keyPath.hasSuffix("[]") ? "\(keyPath.dropLast(2))[\(constant)]" : "\(keyPath)[\(constant)]"
                return [(alternative, named, "`\(keyPath)` of kind `\(constant)`")]
            }
        default:
            return []
        }
    }

    private static func typeName(_ schema: ConfigurationSchema) -> String {
        switch schema {
        case .object: "object"
        case .number(let rule): rule.whole ? "whole number" : "number"
        case .string, .constant: "text"
        case .boolean: "true or false"
        case .delegated: "any"
        case .array(let items, _, _):
            switch typeName(items) {
            case "true or false": "list of true or false"
            case let name where name.contains(" or "): "list of (\(name))"
            case let name: "list of \(name)s"
            }
        case .oneOf(let alternatives):
            alternatives.map(typeName).reduce(into: [String]()) { names, name in
                if !names.contains(name) { names.append(name) }
            }.joined(separator: " or ")
        }
    }

    private static func accepted(_ schema: ConfigurationSchema) -> String {
        switch schema {
        case .number(let rule):
            if let values = rule.values { return values.map { ConfigurationDecoder.format($0) }.joined(separator: ", ") + " (\(rule.unit))" }
            return "\(ConfigurationDecoder.format(rule.range.lowerBound)) to \(ConfigurationDecoder.format(rule.range.upperBound)) \(rule.unit)"
        case .string(let values, let pattern, let minLength, let maxLength):
            if let values { return values.map { "`\($0)`" }.joined(separator: ", ") }
            var parts: [String] = []
            if let pattern { parts.append("matching `\(escape(pattern))`") }
            if let minLength, minLength > 0 { parts.append("at least \(minLength) characters") }
            if let maxLength { parts.append("at most \(maxLength) characters") }
            return parts.joined(separator: ", ")
        case .array(let items, let minItems, let maxItems):
            var parts: [String] = []
            if let minItems { parts.append("at least \(minItems)") }
            if let maxItems { parts.append("at most \(maxItems)") }
            let inner = accepted(items)
            return (parts + (inner.isEmpty ? [] : ["each " + inner])).joined(separator: ", ")
        case .oneOf(let alternatives):
            return alternatives.map(accepted).filter { !$0.isEmpty }.joined(separator: "; or ")
        case .constant(let value):
            return "`\(value)`"
        case .object, .boolean, .delegated:
            return ""
        }
    }

    /// A default value as inline code.
    private static func inline(_ value: JSONValue) -> String {
        "`" + escape(value.compactText) + "`"
    }

    private static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "|": escaped += "\\|"
            case "\n": escaped += " "
            default: escaped.append(character)
            }
        }
        return escaped
    }
}

extension JSONValue {
    /// The value as compact JSON with sorted keys.
    var compactText: String {
        switch self {
        case .null: "null"
        case .bool(let value): value ? "true" : "false"
        case .number(let value): ConfigurationDecoder.format(value)
        case .string(let value): "\"\(value)\""
        case .array(let elements): "[" + elements.map(\.compactText).joined(separator: ", ") + "]"
        case .object(let members):
            "{" + members.keys.sorted().map { "\"\($0)\": \(members[$0]?.compactText ?? "null")" }.joined(separator: ", ") + "}"
        }
    }
}
