/// One option a command accepts.
struct OptionSpec: Sendable {
    /// The long name without dashes: `db` for `--db`.
    var name: String
    /// The value placeholder for help (`PATH`); nil for a flag.
    var value: String?
    var help: String
    /// May be given more than once (values accumulate).
    var repeatable = false
}

/// Parsed command-line arguments for one command.
struct ParsedArguments: Sendable {
    var positional: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []

    /// The last value of `--name`, or nil.
    func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable `--name` (comma-separated values are split too).
    func list(_ name: String) -> [String] {
        (values[name] ?? []).flatMap { $0.split(separator: ",").map(String.init) }
    }

    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// `--name` parsed as a number, or a usage error naming the option.
    func double(_ name: String) throws(CommandError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite else {
            throw CommandError(.usage, "--\(name) expects a number, got \"\(text)\"")
        }
        return number
    }

    /// `--name` parsed as an integer, or a usage error naming the option.
    func integer(_ name: String) throws(CommandError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text) else {
            throw CommandError(.usage, "--\(name) expects a whole number, got \"\(text)\"")
        }
        return number
    }

    /// Positional argument `index`, or a usage error naming what is missing.
    func positional(_ index: Int, _ what: String) throws(CommandError) -> String {
        guard index < positional.count else { throw CommandError(.usage, "missing \(what)") }
        return positional[index]
    }

    /// Parses `arguments` against `options`. `--name value`, `--name=value` and flags are
    /// accepted anywhere; `--` ends options. Unknown options are usage errors.
    static func parse(_ arguments: [String], options: [OptionSpec]) throws(CommandError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("--") || argument == "-" {
                // Negative numbers are values, not options.
                parsed.positional.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw CommandError(.usage, "unknown option --\(name)")
            }
            if spec.value == nil {
                guard inlineValue == nil else { throw CommandError(.usage, "--\(name) takes no value") }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    throw CommandError(.usage, "--\(name) needs a value (\(spec.value ?? "VALUE"))")
                }
                value = arguments[index]
                index += 1
            }
            if !spec.repeatable, parsed.values[name] != nil {
                throw CommandError(.usage, "--\(name) given twice")
            }
            parsed.values[name, default: []].append(value)
        }
        return parsed
    }
}
