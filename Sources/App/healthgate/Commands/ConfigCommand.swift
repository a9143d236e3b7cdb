import BuiltinPlugins
import FoundationEssentials
import HealthModel
import GatewayRuntime
import LinuxSystem
import SampleBus

/// `healthgate config check FILE` and `healthgate config init`.
enum ConfigCommand {
    static let command = Command(
        name: "config", summary: "Check or create a configuration file.", usage: "config SUBCOMMAND",
        subcommands: [check, initialize, schema, reference])

    static let reference = Command(
        name: "reference", summary: "Print the configuration reference (Markdown).",
        usage: "config reference",
        discussion: """
            Prints every key of the configuration file, the plugins' included, with its type, \
            default, accepted values and meaning, as Markdown: a table for the file and one for \
            every object below it. Generated from the same declarations as 'config schema' and \
            'config check'; docs/configuration-reference.md is this output.
            """
    ) { _, context in
        context.output.write(ConfigurationDocument.reference)
        return .success
    }

    static let schema = Command(
        name: "schema", summary: "Print the configuration's JSON Schema.",
        usage: "config schema",
        discussion: """
            Prints a JSON Schema (draft 2020-12) of the whole configuration file, generated from \
            the same declarations 'config check' and 'run' check numbers against: every plugin \
            kind as one alternative of sources[] or sinks[] chosen by its "kind", every key with \
            its type, range (minimum, maximum), unit (x-unit), default and description, and no \
            key beyond those (additionalProperties: false). Point an editor at it for completion \
            and checking as you type (see docs/configuration.md). Rules that tie several keys together (one \
            of path, rfcomm or udev; readable files) are checked by 'config check' alone.
            """
    ) { _, context in
        do {
            let data = try HealthJSON.makeEncoder(pretty: true).encode(ConfigurationDocument.jsonSchema)
            context.print(String(decoding: data, as: UTF8.self))
        } catch {
            throw CommandError(.software, "cannot encode the schema: \(ErrorText.of(error))")
        }
        return .success
    }

    static let check = Command(
        name: "check", summary: "Validate a configuration file without starting anything.",
        usage: "config check FILE",
        discussion: """
            Parses the file strictly and validates every setting, the plugins' and the profile's \
            included, with the same checks 'healthgate run' makes before it starts; it creates, \
            opens and connects to nothing. Prints "FILE: OK" and the plugins, or the file, the key \
            path and the reason, and exits 78 (66 when the file does not exist). Every unknown \
            key and every number out of range is reported at once, a line each; a misspelt key \
            gets the key it most likely meant among those that take the value given.
            """
    ) { arguments, context in
        let path = try arguments.positional(0, "FILE")
        let configuration = ConfigurationLocator.withDefaults(
            try ConfigurationLocator.load(explicit: path, variables: context.variables))
        let logger = Logger(label: "config", sink: StandardErrorLogSink(context: context), level: .warning)
        let validated = try ConfigurationValidation.validate(
            configuration, catalog: BuiltinCatalog.make(), context: context, logger: logger)
        context.print("\(path): OK")
        context.print("  store  \(validated.store.path)")
        let plugins = validated.plugins
        for plugin in plugins {
            if let queue = plugin.queue {
                context.print(
                    "  sink   \(plugin.name) (\(plugin.kind)), queue \(queue.capacity) records, \(queue.policy.rawValue)")
            } else if plugin.followsStore {
                context.print("  sink   \(plugin.name) (\(plugin.kind)), follows the store")
            } else {
                context.print("  source \(plugin.name) (\(plugin.kind))")
            }
        }
        return .success
    }

    static let initialize = Command(
        name: "init", summary: "Write a starting configuration.",
        usage: "config init [--output FILE] [--force]",
        discussion: """
            Writes a configuration that reads any Bluetooth heart-rate monitor into the store, \
            to $XDG_CONFIG_HOME/healthgate/config.json unless --output is given. Refuses to overwrite \
            an existing file without --force. The file is written whole (a temporary file renamed \
            over it), mode 0644; a symbolic link is followed, and a device or a named pipe (such \
            as /dev/stdout) is written into, with nothing else printed on standard output.
            """,
        options: [
            OptionSpec(name: "output", value: "FILE", help: "Where to write (default: the XDG config path)."),
            OptionSpec(name: "force", value: nil, help: "Overwrite an existing file."),
        ]
    ) { arguments, context in
        let path = arguments.value("output")
            ?? ConfigurationLocator.candidates(context.variables).first(where: { !$0.path.hasPrefix("/etc/") })?.path
            ?? "config.json"
        if FileSystem.exists(path), !arguments.flag("force") {
            throw CommandError(.cannotCreate, "\(path) exists; use --force to overwrite it")
        }
        let starter = GatewayConfiguration(
            sources: [PluginConfiguration(kind: "ble-heart-rate", name: "heart-rate", config: .object([
                "devices": .string("any"),
            ]))],
            sinks: [PluginConfiguration(kind: "sqlite", queue: QueueConfiguration())],
            profile: .object(["maximumHeartRate": .number(190)]),
            store: .object(["path": .string(context.paths.dataDirectory.appendingPathComponent("samples.sqlite").path)]))
        let data: Data
        do {
            data = try HealthJSON.makeEncoder(pretty: true).encode(starter.configurationJSON)
        } catch {
            throw CommandError(.software, "cannot encode the configuration: \(ErrorText.of(error))")
        }
        do {
            try FileSystem.makeDirectories(FileSystem.parentDirectory(of: path))
        } catch {
            throw CommandError(.cannotCreate, "cannot write \(path): cannot create the directory \(error)")
        }
        let method: FileWriteMethod
        do {
            method = try FileSystem.writeFile(Array(data), to: path, mode: 0o644)
        } catch {
            throw CommandError(.cannotCreate, "cannot write \(error)")
        }
        if method == .replacedAtomically {
            context.print("wrote \(path); check it with 'healthgate config check \(path)'")
        }
        return .success
    }
}
