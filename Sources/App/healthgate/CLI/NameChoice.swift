import GatewayRuntime

/// A value a person types from a closed set of names (`--format`, `--activity`, `--type`,
/// `--order`, `scan --kind`): the name as given; else the one name it matches ignoring case;
/// else a usage error that names the option, the value, the names it most likely meant and
/// every name there is.
enum NameChoice {
    /// The name of `names` that `text` gives.
    /// - Parameters:
    ///   - what: how the message names the value (`--format`, `activity`, `type`).
    /// - Throws: ``CommandError`` (usage) with the closest names and the list.
    ///   - alternative: what else the option takes, for the list (`a length such as 30s`).
    static func pick(_ text: String, among names: [String], what: String, or alternative: String? = nil) throws(CommandError) -> String {
        if names.contains(text) { return text }
        let sameLetters = names.filter { $0.lowercased() == text.lowercased() }
        if sameLetters.count == 1 { return sameLetters[0] }
        throw CommandError(.usage, unknown(text, among: names, what: what, or: alternative))
    }

    /// `unknown --format "jsn"; did you mean json? (one of: table, json, csv)`.
    static func unknown(_ text: String, among names: [String], what: String, or alternative: String? = nil) -> String {
        var message = "unknown \(what) \"\(text)\""
        let near = closest(to: text, among: names)
        if !near.isEmpty { message += "; did you mean \(near.joined(separator: " or "))?" }
        return message + " (one of: \(names.joined(separator: ", "))\(alternative.map { ", or \($0)" } ?? ""))"
    }

    /// The names `text` most likely meant (at most three, all equally near): those fewest
    /// letters away, if at most a third of the longer name's letters (one at least) differ
    /// (a swap of neighbours is one); else a name it begins or that begins with it (three
    /// characters at least: `descending` → `desc`).
    static func closest(to text: String, among names: [String]) -> [String] {
        let lowered = Array(text.lowercased())
        guard !lowered.isEmpty else { return [] }
        // An edit ranks by its distance; a prefix after every edit.
        let prefixRank = Int.max
        var ranked: [(name: String, rank: Int)] = []
        for name in names {
            let other = Array(name.lowercased())
            let distance = KeySuggestion.editDistance(lowered, other)
            if distance <= max(1, max(lowered.count, other.count) / 3) {
                ranked.append((name, distance))
            } else if min(other.count, lowered.count) >= 3, other.starts(with: lowered) || lowered.starts(with: other) {
                ranked.append((name, prefixRank))
            }
        }
        // Only the nearest: `runing` is running, though rowing is two letters away too.
        guard let best = ranked.map(\.rank).min() else { return [] }
        return ranked.filter { $0.rank == best }.prefix(3).map(\.name)
    }
}

extension ParsedArguments {
    /// `--name`'s value among `names` (see ``NameChoice/pick(_:among:what:)``), or `fallback`
    /// when the option is absent.
    func choice(_ name: String, among names: [String], default fallback: String? = nil) throws(CommandError) -> String? {
        guard let text = value(name) else { return fallback }
        return try NameChoice.pick(text, among: names, what: "--\(name)")
    }

    /// `--format` among `names`; the first name when absent.
    func format(among names: [String]) throws(CommandError) -> String {
        try choice("format", among: names, default: names.first) ?? ""
    }
}
