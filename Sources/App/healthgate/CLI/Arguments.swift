import GatewayRuntime

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

/// One positional argument a command accepts, as its synopsis names it.
struct PositionalSpec: Sendable, Equatable {
    /// The placeholder: `FILE`, `ADDRESS`.
    var name: String
    var optional = false
    /// May be given more than once (`[UUID…]`).
    var repeatable = false

    /// The positional arguments a synopsis names: the upper-case words after the command's path
    /// and before its first option, group or alternative. `units convert VALUE FROM TO` takes
    /// three; a word in brackets is optional and one ending in `…` may repeat
    /// (`dead-letters drop [UUID…] [--sink NAME]`); `query samples --type TYPE …` takes none.
    /// The synopsis is the one declaration, so help and parsing cannot disagree.
    static func named(in usage: String) -> [PositionalSpec] {
        var specs: [PositionalSpec] = []
        // The path: lower-case words (`dead-letters`, `drop`).
        let words = usage.split(separator: " ").drop { $0.first?.isLowercase == true }
        for word in words {
            var text = Substring(word)
            let optional = text.hasPrefix("[") && text.hasSuffix("]")
            if optional { text = text.dropFirst().dropLast() }
            var repeatable = false
            for ellipsis in ["…", "..."] where text.hasSuffix(ellipsis) {
                text = text.dropLast(ellipsis.count)
                repeatable = true
            }
            guard let first = text.first, first.isUppercase,
                text.allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "_" })
            else { break }
            specs.append(PositionalSpec(name: String(text), optional: optional, repeatable: repeatable))
        }
        return specs
    }
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

    /// Parses `arguments` against `options` and `positionals`. `--name value`, `--name=value` and
    /// flags are accepted anywhere; `--` ends options. An unknown option is a usage error with
    /// the nearest known one; so is an argument no option and no positional takes, naming it, so
    /// an unquoted value with a space (`--device healthgate demo HRM`) cannot change what a
    /// command does. A `DATE` option also takes a time of day given as the next word
    /// (`--since 2026-11-25 17:36`), as a person types it.
    static func parse(
        _ arguments: [String], options: [OptionSpec], positionals: [PositionalSpec]
    ) throws(CommandError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        // The option whose value the previous argument was: an extra word after it is most
        // likely the rest of an unquoted value.
        var valueJustTaken: (option: String, value: String)?
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("--") || argument == "-" {
                // Negative numbers are values, not options.
                if !fits(parsed.positional.count, positionals) {
                    let following = arguments[(index - 1)...].prefix { !$0.hasPrefix("--") }
                    throw unexpected(argument, after: valueJustTaken, following: Array(following), positionals: positionals)
                }
                parsed.positional.append(argument)
                valueJustTaken = nil
                continue
            }
            valueJustTaken = nil
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
                var message = "unknown option --\(name)"
                if let suggestion = KeySuggestion.closest(to: name, among: options.map(\.name) + ["help"]) {
                    message += "; did you mean --\(suggestion)?"
                }
                throw CommandError(.usage, message)
            }
            if spec.value == nil {
                guard inlineValue == nil else { throw CommandError(.usage, "--\(name) takes no value") }
                parsed.flags.insert(name)
                continue
            }
            var value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    throw CommandError(.usage, "--\(name) needs a value (\(spec.value ?? "VALUE"))")
                }
                value = arguments[index]
                index += 1
            }
            if spec.value == "DATE", index < arguments.count, isTimeOfDay(arguments[index]), !value.contains(where: { $0 == "T" || $0 == " " }) {
                value += " " + arguments[index]
                index += 1
            }
            valueJustTaken = (name, value)
            if !spec.repeatable, parsed.values[name] != nil {
                throw CommandError(.usage, "--\(name) given twice")
            }
            parsed.values[name, default: []].append(value)
        }
        return parsed
    }

    /// Whether a positional argument beyond the first `count` has a place.
    private static func fits(_ count: Int, _ positionals: [PositionalSpec]) -> Bool {
        count < positionals.count || positionals.last?.repeatable == true
    }

    /// The usage error for an argument nothing takes.
    /// When it follows an option's value, `following` (it and the words up to the next option)
    /// is what quoting would have kept together.
    private static func unexpected(
        _ argument: String, after option: (option: String, value: String)?, following: [String],
        positionals: [PositionalSpec]
    ) -> CommandError {
        var message = "unexpected argument \"\(argument)\"; "
        message += positionals.isEmpty
            ? "this command takes no arguments, only options"
            : "this command takes only \(positionals.map(\.name).joined(separator: " "))"
        if let (name, value) = option {
            let whole = ([value] + following).joined(separator: " ")
            message += "; if it is part of the value of --\(name), quote the value: --\(name) \"\(whole)\""
        }
        return CommandError(.usage, message)
    }

    /// `17:36`, `17:36:00` or `17:36:00.5`: the time half of a date typed with a space.
    static func isTimeOfDay(_ text: String) -> Bool {
        text.wholeMatch(of: /[0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})?/) != nil
    }
}
