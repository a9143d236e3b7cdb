import AdapterHost
import FoundationEssentials
import GatewayRuntime
import HealthStore
import HealthgateAdapter
import LinuxSystem

/// `healthgate adapter check -- COMMAND…` and `healthgate adapter schema`: for people writing an
/// adapter (docs/adapter-protocol.md).
enum AdapterCommand {
    static let command = Command(
        name: "adapter", summary: "Check an adapter program, or print the adapter protocol's schema.", usage: "adapter SUBCOMMAND",
        discussion: "An adapter reads a device the gateway does not read itself and hands the gateway its readings through the adapter protocol (docs/adapter-protocol.md); the exec source runs it.",
        subcommands: [check, schema])

    static let check = Command(
        name: "check", summary: "Run an adapter against a private store and report whether it keeps the protocol.",
        usage: "adapter check COMMAND… [--config FILE] [--seconds SECONDS] [--verbose]",
        discussion: """
            Runs COMMAND (put -- before it when it has options of its own) three times through the \
            gateway's own exec source code, against a store in a temporary directory, and prints \
            each check with PASS or FAIL and what it found: the handshake; every line a valid \
            message (the schema: 'healthgate adapter schema'); every reading accepted (its unit \
            fits its type, its values are plausible, its dates are real); identifiers stable \
            across a restart (the second run gets no checkpoint, as after a lost store: a reading \
            sent in both runs must have the same id); resume from the checkpoint (the third run \
            gets the one the first committed and must send nothing it covers); what it does with \
            a refused reading (the second run's first reading is refused on purpose: it must go \
            on); a clean exit on stop (status 0 within its stop timeout).

            A run ends once the adapter has been quiet for a second with its checkpoints \
            acknowledged, or after --seconds (default 15).

            Example:
              healthgate adapter check --config check.json -- python3 cuff_csv.py

            Exits 0 when every check passes, 1 when one fails, 64 on a usage error, 66 when the \
            command cannot be found.
            """,
        options: [
            OptionSpec(name: "config", value: "FILE", help: "A JSON file with the adapter's own configuration block (its hello's config); default {}."),
            OptionSpec(name: "seconds", value: "SECONDS", help: "The longest each of the three runs lasts (default 15)."),
            OptionSpec(name: "verbose", value: nil, help: "Print the gateway's log of each run on stderr."),
        ]
    ) { arguments, context in
        guard let program = arguments.positional.first else {
            throw CommandError(.usage, "give the adapter's command, e.g. 'healthgate adapter check -- python3 my_adapter.py'")
        }
        let seconds = try arguments.double("seconds") ?? 15
        guard seconds >= 1, seconds <= 3600 else { throw CommandError(.usage, "--seconds must be from 1 to 3600") }
        var adapterConfiguration = JSONValue.object([:])
        if let file = arguments.value("config") {
            guard let bytes = FileManager.default.contents(atPath: file) else { throw CommandError(.noInput, "cannot read \(file)") }
            do {
                adapterConfiguration = try ConfigurationJSONParser.parse(Array(bytes))
            } catch {
                throw CommandError(.dataError, "\(file): \(error)")
            }
        }
        let path = context.variables["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        guard let executable = ChildProcess.resolve(program, path: path) else {
            throw CommandError(.noInput, program.contains("/") ? "\(program) does not exist or is not executable" : "no executable \(program) in PATH")
        }
        let directory = try temporaryDirectory(context)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = AdapterSettings.inherited(from: context.variables).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let settings = AdapterSettings(
            executable: executable, arguments: arguments.positional, environment: environment,
            directory: FileManager.default.currentDirectoryPath, adapterConfiguration: adapterConfiguration)
        let store: HealthStore
        do {
            store = try await HealthStore.open(path: "\(directory)/samples.sqlite")
        } catch {
            throw CommandError(.cannotCreate, "cannot open the private store: \(error)")
        }
        let logger = Logger(
            label: "adapter check", sink: StandardErrorLogSink(context: context), level: arguments.flag("verbose") ? .debug : .error)
        context.print("Checking \(arguments.positional.joined(separator: " ")) (three runs, at most \(ConfigurationDecoder.format(seconds)) s each)")
        let checks = await AdapterConformance(
            settings: settings, store: store, logger: logger, longest: .milliseconds(Int64(seconds * 1000))
        ).run()
        await store.close()
        for check in checks {
            context.print("\(check.passed ? "PASS" : "FAIL")  \(check.name): \(check.detail)")
        }
        let passed = checks.filter(\.passed).count
        let expected = AdapterConformance.checkNames.count
        context.print(
            passed == expected ? "adapter check: all \(expected) checks passed"
                : "adapter check: \(passed) of \(expected) checks passed\(checks.count < expected ? " (the others need a handshake)" : "")")
        return passed == expected ? .success : .failure
    }

    static let schema = Command(
        name: "schema", summary: "Print the adapter protocol's JSON Schema.",
        usage: "adapter schema",
        discussion: """
            Prints a JSON Schema (draft 2020-12) of every message of the adapter protocol, either \
            way, generated from the declarations the gateway decodes with: \
            $defs.adapterToGateway for what an adapter writes, $defs.gatewayToAdapter for what it \
            reads. docs/adapter-protocol.schema.json holds the same text.
            """
    ) { _, context in
        context.print(AdapterProtocol.schemaText)
        return .success
    }

    /// A new directory of the user's own under TMPDIR (or /tmp).
    private static func temporaryDirectory(_ context: CommandContext) throws(CommandError) -> String {
        let base = context.variables["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let path = "\(base)/healthgate-adapter-check-\(UInt64.random(in: 0...UInt64.max))"
        do {
            try FileSystem.makeDirectory(path, mode: 0o700)
        } catch {
            throw CommandError(.cannotCreate, "cannot make \(path): \(error)")
        }
        return path
    }
}
