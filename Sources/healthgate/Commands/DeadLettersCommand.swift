import Foundation
import HealthModel
import HTTPRepository
import RemoteOutbox
import SampleBus

/// `healthgate dead-letters list|retry|export`: the records an HTTP repository refused.
enum DeadLettersCommand {
    static let options = [
        OptionSpec(name: "outbox", value: "PATH", help: "The outbox file (<state dir>/<sink name>-outbox.sqlite)."),
        OptionSpec(name: "config", value: "FILE", help: "Find the outboxes of the configuration's http-repository sinks."),
        OptionSpec(name: "format", value: "json", help: "Print JSON instead of a table (list)."),
    ]

    static let command = Command(
        name: "dead-letters", summary: "List, retry or export records an HTTP repository refused.",
        usage: "dead-letters SUBCOMMAND [--outbox PATH | --config FILE]",
        discussion: """
            A record the repository refused with a 4xx other than 401, 403, 408 and 429 is moved \
            to the outbox's dead-letter table with the status and the server's answer. These \
            commands work on the outbox file directly, so they also work while the gateway is \
            stopped. 'retry' moves the records back to pending; a running gateway sends them \
            with its next delivery, a stopped one at its next start.
            """,
        subcommands: [
            Command(name: "list", summary: "List dead letters.", usage: "dead-letters list [--outbox PATH | --config FILE] [--format json]",
                    options: options) { arguments, context in try await list(arguments, context, export: false) },
            Command(name: "retry", summary: "Move dead letters back to pending.",
                    usage: "dead-letters retry [UUID…] [--outbox PATH | --config FILE]",
                    options: options) { arguments, context in try await retry(arguments, context) },
            Command(name: "export", summary: "Print dead letters as JSON lines (uuid, status, answer, sample).",
                    usage: "dead-letters export [--outbox PATH | --config FILE]",
                    options: options) { arguments, context in try await list(arguments, context, export: true) },
        ])

    static func outboxes(_ arguments: ParsedArguments, _ context: CommandContext) throws -> [String] {
        if let path = arguments.value("outbox") {
            guard FileManager.default.fileExists(atPath: path) else {
                throw CommandError(.noInput, "no outbox at \(path)")
            }
            return [path]
        }
        let configuration = try ConfigurationLocator.load(explicit: arguments.value("config"), variables: context.variables)
        let sinks = configuration.sinks.enumerated().filter { $0.element.kind == HTTPRepositorySink.kind }
        guard !sinks.isEmpty else {
            throw CommandError(.configuration, "\(configuration.origin) has no \(HTTPRepositorySink.kind) sink; use --outbox PATH")
        }
        let count = configuration.sinks.filter { $0.kind == HTTPRepositorySink.kind }.count
        let paths = sinks.map { index, sink in
            // The same default name the plugin catalog gives an unnamed instance.
            let name = sink.name ?? (count > 1 ? "\(sink.kind)-\(index)" : sink.kind)
            return HTTPRepositorySink.outboxPath(stateDirectory: context.paths.stateDirectory, name: name)
        }
        let existing = paths.filter { FileManager.default.fileExists(atPath: $0) }
        guard !existing.isEmpty else {
            throw CommandError(.noInput, "no outbox yet (looked for \(paths.joined(separator: ", ")))")
        }
        return existing
    }

    static func open(_ path: String) throws -> Outbox {
        do {
            return try Outbox(path: path)
        } catch {
            throw CommandError(.ioError, "cannot open the outbox \(path): \(error)")
        }
    }

    static func list(_ arguments: ParsedArguments, _ context: CommandContext, export: Bool) async throws -> ExitCode {
        if let format = arguments.value("format"), format != "json" {
            throw CommandError(.usage, "--format accepts only json")
        }
        let encoder = HealthJSON.makeEncoder()
        for path in try outboxes(arguments, context) {
            let letters = try await open(path).deadLetters()
            if export || arguments.value("format") == "json" {
                for letter in letters {
                    context.print(String(decoding: try encoder.encode(letter), as: UTF8.self))
                }
            } else {
                context.print("\(path): \(letters.count) dead letter(s)")
                for letter in letters {
                    let answer = letter.response.replacingOccurrences(of: "\n", with: " ").prefix(80)
                    context.print("  \(letter.id)  \(letter.kind.rawValue)  HTTP \(letter.status)  \(RFC3339.string(from: letter.failedAt))  \(answer)")
                }
            }
        }
        return .success
    }

    static func retry(_ arguments: ParsedArguments, _ context: CommandContext) async throws -> ExitCode {
        var ids: [SampleID]?
        if !arguments.positional.isEmpty {
            ids = try arguments.positional.map { text in
                guard let id = SampleID(string: text) else { throw CommandError(.usage, "\"\(text)\" is not a uuid") }
                return id
            }
        }
        for path in try outboxes(arguments, context) {
            let moved = try await open(path).retryDeadLetters(ids: ids)
            context.print("\(path): \(moved) record(s) moved back to pending")
        }
        return .success
    }
}
