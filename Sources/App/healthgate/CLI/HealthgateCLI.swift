import BLEAdvertisementKit
import BLEProfileKit
import BuiltinPlugins
import FoundationEssentials
import GatewayRuntime
import SampleBus
import SerialDevices

/// Dispatches `healthgate ARGS…` to a command, handles `--help`, and maps errors to exit codes.
enum HealthgateCLI {
    static let version = "0.1.0"

    /// What the catalog's sources read, in sentences for the top-level help: the Bluetooth
    /// devices it connects to (each profile's kinds), those that only advertise (the
    /// advertisement sources) and the serial family's (ANT+ straps through a stick, pedometers).
    /// A source added to the catalog shows here without a word written twice.
    static var devicesRead: String {
        let catalog = BuiltinCatalog.make()
        let connected = catalog.bluetoothSources.flatMap { $0.source.deviceKinds.map(\.plural) }
        let advertising = catalog.advertisementSources.map { $0.source.devicesRead }
        let serial = catalog.serialSources.map { $0.source.devicesRead }
        var bluetooth: [String] = []
        if !connected.isEmpty { bluetooth.append("those it connects to (\(list(connected)))") }
        if !advertising.isEmpty { bluetooth.append("those that only advertise (\(list(advertising)))") }
        var sentences: [String] = []
        if !bluetooth.isEmpty {
            sentences.append("healthgate reads Bluetooth LE devices through BlueZ: \(bluetooth.joined(separator: " and ")).")
        }
        if !serial.isEmpty { sentences.append("\(sentences.isEmpty ? "healthgate reads" : "It also reads") \(list(serial)).") }
        return sentences.joined(separator: " ")
    }

    /// `names` as a list in a sentence: "a, b and c".
    static func list(_ names: [String]) -> String {
        guard names.count > 1, let last = names.last else { return names.joined() }
        return names.dropLast().joined(separator: ", ") + " and " + last
    }

    static func main(_ arguments: [String], context: CommandContext) async -> ExitCode {
        let root = Command(
            name: "healthgate", summary: "A gateway that ingests data from health devices.",
            usage: "COMMAND [OPTIONS]",
            discussion: """
                \(devicesRead) It turns each reading into a HealthKit-style \
                sample, stores it in its SQLite store (a stream of readings, such as a strap's \
                heart rate, as compact quantity series), and forwards what it stores to an HTTP \
                repository (FHIR, Open mHealth or its own JSON) and to an MQTT broker. It records \
                live workouts from heart rate, for one person or a class on a web board. \
                'healthgate scan' lists the Bluetooth devices around it; 'healthgate plugins' lists \
                its sources and sinks.

                Start with 'healthgate demo' to see it work without any hardware.
                """,
            options: [OptionSpec(name: "version", value: nil, help: "Print the version.")],
            subcommands: Commands.all())
        var path: [String] = []
        var command = root
        var rest = Array(arguments.dropFirst())
        // `healthgate help query samples` is `healthgate query samples --help`.
        if rest.first == "help" { rest = Array(rest.dropFirst()) + ["--help"] }
        while let next = rest.first, !next.hasPrefix("-"),
            let sub = command.subcommands.first(where: { $0.name == next })
        {
            command = sub
            path.append(next)
            rest.removeFirst()
        }
        let pathText = path.joined(separator: " ")
        // `-h` is what many tools take for help; it is nobody's value here.
        if rest.contains("--help") || rest.contains("-h") || rest.first == "help" && !command.subcommands.isEmpty {
            context.print(command.help(path: pathText))
            return .success
        }
        if path.isEmpty, rest.first == "--version" || rest.first == "version" {
            context.print("healthgate \(version)")
            return .success
        }
        guard let run = command.run else {
            guard let unknown = rest.first else {
                context.printError(command.help(path: pathText))
                return .usage
            }
            let name = ([pathText, unknown]).filter { !$0.isEmpty }.joined(separator: " ")
            var message = "healthgate: unknown command '\(name)'"
            if let suggestion = KeySuggestion.closest(to: unknown, among: command.subcommands.map(\.name)) {
                message += "; did you mean '\(([pathText, suggestion]).filter { !$0.isEmpty }.joined(separator: " "))'?"
            }
            context.printError(message)
            context.printError("See 'healthgate \(pathText.isEmpty ? "" : pathText + " ")--help'.")
            return .usage
        }
        do {
            let parsed = try ParsedArguments.parse(rest, options: command.options, positionals: command.positionals)
            return try await run(parsed, context)
        } catch let error as CommandError {
            context.printError("healthgate \(pathText): \(error.message)")
            if error.exitCode == .usage { context.printError("See 'healthgate \(pathText) --help'.") }
            return error.exitCode
        } catch let error as ConfigurationError {
            context.printError("healthgate \(pathText): configuration error: \(error)")
            return .configuration
        } catch {
            context.printError("healthgate \(pathText): \(error)")
            return .failure
        }
    }
}
