import FoundationEssentials
import HealthModel
import HealthStore
import GatewayRuntime

/// `healthgate dead-letters list|retry|drop|export`: the changes a remote sink's receiver refused.
enum DeadLettersCommand {
    static let options = [
        OptionSpec(name: "sink", value: "NAME", help: "Only the dead letters of this remote sink (its instance name)."),
        OptionSpec(name: "format", value: "json", help: "Print JSON instead of a table (list)."),
    ] + StoreAccess.options

    static let command = Command(
        name: "dead-letters", summary: "List, retry, drop or export the changes a remote sink's receiver refused.",
        usage: "dead-letters SUBCOMMAND [--sink NAME] [--db PATH]",
        discussion: """
            A change a receiver refuses (an HTTP repository's 4xx other than 401, 403, 408 and \
            429) is narrowed down to the one record or deletion and kept in the store as a dead \
            letter, with the status and the answer; the sink goes on with the next changes. \
            'retry' marks dead letters to be sent again: a running gateway sends them within a \
            second, when its sink is idle; a stopped one at its next start. Each is sent as the \
            store holds its object then (a series that grew since it was refused, in its latest \
            version), so the receiver ends with the store's version. 'drop' forgets them. \
            These commands work on the store, so they work with the gateway running or stopped.
            """,
        subcommands: [
            Command(name: "list", summary: "List dead letters.", usage: "dead-letters list [--sink NAME] [--db PATH] [--format json]",
                    options: options) { arguments, context in try await list(arguments, context, export: false) },
            Command(name: "retry", summary: "Send dead letters again (all, or those with the given uuids).",
                    usage: "dead-letters retry [UUID…] [--sink NAME] [--db PATH]",
                    options: options) { arguments, context in try await retry(arguments, context) },
            Command(name: "drop", summary: "Forget dead letters (all, or those with the given uuids).",
                    usage: "dead-letters drop [UUID…] [--sink NAME] [--db PATH] [--yes]",
                    discussion: """
                        On a terminal it asks before dropping; --yes does not ask. Without a terminal \
                        (a script, a pipe) it drops only with --yes (exit 64 without).
                        """,
                    options: options + [Confirmation.option]) { arguments, context in try await drop(arguments, context) },
            Command(name: "export", summary: "Print dead letters as JSON lines (sink, uuid, status, answer, record).",
                    usage: "dead-letters export [--sink NAME] [--db PATH]",
                    options: options) { arguments, context in try await list(arguments, context, export: true) },
        ])

    static func list(_ arguments: ParsedArguments, _ context: CommandContext, export: Bool) async throws -> ExitCode {
        _ = try arguments.choice("format", among: ["json"])
        let store = try await StoreAccess.open(arguments, context: context)
        let sink = arguments.value("sink")
        let letters = try await StoreAccess.call { () async throws(StoreError) in try await store.deadLetters(follower: sink) }
        if export || arguments.value("format") == "json" {
            for letter in letters { context.print(try line(letter)) }
        } else {
            context.print("\(String(count: letters.count, "dead letter"))" + (sink.map { " of \($0)" } ?? ""))
            for letter in letters {
                let answer = letter.response.replacing("\n", with: " ").prefix(80)
                let what = letter.isDeletion ? "deletion of \(letter.kind.rawValue)" : letter.kind.rawValue
                context.print(
                    "  \(letter.follower)  \(letter.id)  \(what) \(letter.type)  status \(letter.status)  "
                        + "\(RFC3339.string(from: letter.failedAt))\(letter.retry ? "  (retry asked)" : "")  \(answer)")
            }
        }
        return .success
    }

    /// One JSON line: the letter's fields and the record's HealthJSON.
    static func line(_ letter: DeadLetter) throws -> String {
        var object: [String: JSONValue] = [
            "sink": .string(letter.follower), "uuid": .string(letter.id.uuidString), "kind": .string(letter.kind.rawValue),
            "type": .string(letter.type), "deleted": .bool(letter.isDeletion), "status": .number(Double(letter.status)),
            "response": .string(letter.response), "failedAt": .string(RFC3339.string(from: letter.failedAt)),
            "retry": .bool(letter.retry),
        ]
        if let payload = letter.payload, let record = try? JSONDecoder().decode(JSONValue.self, from: Data(payload)) {
            object["record"] = record
        }
        return String(decoding: try HealthJSON.makeEncoder().encode(JSONValue.object(object)), as: UTF8.self)
    }

    static func ids(_ arguments: ParsedArguments) throws -> [SampleID]? {
        guard !arguments.positional.isEmpty else { return nil }
        return try arguments.positional.map { text in
            guard let id = SampleID(string: text) else { throw CommandError(.usage, "\"\(text)\" is not a uuid") }
            return id
        }
    }

    static func retry(_ arguments: ParsedArguments, _ context: CommandContext) async throws -> ExitCode {
        let ids = try ids(arguments)
        let sink = arguments.value("sink")
        let marked = try await StoreAccess.withStore(arguments, context: context, access: .readWrite) { store in
            try await StoreAccess.call { () async throws(StoreError) in try await store.retryDeadLetters(follower: sink, ids: ids) }
        }
        context.print("\(String(count: marked, "dead letter")) marked to be sent again")
        return .success
    }

    static func drop(_ arguments: ParsedArguments, _ context: CommandContext) async throws -> ExitCode {
        let ids = try ids(arguments).map(Set.init)
        let sink = arguments.value("sink")
        let removed = try await StoreAccess.withStore(arguments, context: context, access: .readWrite) { store in
            let letters = try await StoreAccess.call { () async throws(StoreError) in
                try await store.deadLetters(follower: sink).filter { ids?.contains($0.id) ?? true }
            }
            if !letters.isEmpty {
                try await Confirmation.require(
                    "Drop \(String(count: letters.count, "dead letter"))\(sink.map { " of \($0)" } ?? "")? They will not be sent again.",
                    declined: "not confirmed; nothing was dropped", arguments, context: context)
            }
            return try await StoreAccess.call { () async throws(StoreError) in try await store.removeDeadLetters(letters.map(\.rowID)) }
        }
        context.print("\(String(count: removed, "dead letter")) dropped")
        return .success
    }
}
