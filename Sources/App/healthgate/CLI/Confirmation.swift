import AsyncPrimitives
import GatewayRuntime

/// The question a destructive command (`delete`, `dead-letters drop`) asks before it acts, and
/// its `--yes`.
///
/// On a terminal (stdin a tty) it asks and acts on "y" or "yes" alone. Without a terminal
/// nobody can answer, so it refuses unless `--yes` is given: a script says what it means, and a
/// command piped into by mistake deletes nothing.
enum Confirmation {
    /// The `--yes` option.
    static let option = OptionSpec(
        name: "yes", value: nil, help: "Do it without asking (needed when stdin is not a terminal, as in scripts).")

    /// Returns when `--yes` was given or the user answered yes to `question` on the terminal.
    /// - Throws: ``CommandError`` with ``ExitCode/usage`` (64) naming `--yes` when stdin is not a
    ///   terminal; with ``ExitCode/failure`` (1) when the user declines (`declined` is the message).
    static func require(
        _ question: String, declined: String, _ arguments: ParsedArguments, context: CommandContext
    ) async throws(CommandError) {
        if arguments.flag("yes") { return }
        guard context.stdinIsTerminal else {
            throw CommandError(.usage, "\(question) Not without --yes: stdin is not a terminal to ask on; add --yes to confirm")
        }
        context.errors.write("\(question) [y/N] ")
        // readLine blocks: off the cooperative pool, as PairCommand's passkey prompt.
        let answer = await QueueExecutor(label: "healthgate.confirmation").run { readLine() }
        guard let answer, ["y", "yes"].contains(answer.trimmed().lowercased()) else {
            throw CommandError(.failure, declined)
        }
    }
}
