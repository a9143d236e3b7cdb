import FoundationEssentials
import LinuxSystem
import SampleBus

/// Finds and loads the configuration: `--config`, then `$CONFIGURATION_DIRECTORY/config.json`
/// (systemd), then `$XDG_CONFIG_HOME/healthgate/config.json`
/// (default `~/.config`), then `/etc/healthgate/config.json`, else the embedded default.
enum ConfigurationLocator {
    /// The candidate files, in order.
    static func candidates(_ variables: [String: String]) -> [URL] {
        candidatePaths(variables).map { URL(fileURLWithPath: $0) }
    }

    /// The candidate files, in order, as paths: what `run` looks for, with no URL parsed on the
    /// way (see GatewayPaths).
    static func candidatePaths(_ variables: [String: String]) -> [String] {
        var paths: [String] = []
        if let configDirectory = variables["CONFIGURATION_DIRECTORY"], !configDirectory.isEmpty {
            paths.append(FileSystem.join(String(configDirectory.split(separator: ":")[0]), "config.json"))
        }
        if let xdg = variables["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            paths.append(FileSystem.join(xdg, "healthgate/config.json"))
        } else if let home = variables["HOME"], !home.isEmpty {
            paths.append(FileSystem.join(home, ".config/healthgate/config.json"))
        }
        paths.append("/etc/healthgate/config.json")
        return paths
    }

    /// Loads the configuration. An explicit path that does not exist is an error; missing
    /// default locations fall through to the embedded default.
    /// - Throws: ``CommandError`` with ``ExitCode/noInput`` (sysexits' EX_NOINPUT, 66) when the
    ///   explicit file does not exist; ``ConfigurationError`` (78) when it is wrong.
    static func load(explicit: String?, variables: [String: String]) throws -> GatewayConfiguration {
        if let explicit {
            return try load(path: FileSystem.absolute(explicit))
        }
        for path in candidatePaths(variables) where FileSystem.exists(path) {
            return try load(path: path)
        }
        return GatewayConfiguration()
    }

    private static func load(path: String) throws -> GatewayConfiguration {
        let result = Result { () throws(ConfigurationError) -> GatewayConfiguration in
            try GatewayConfiguration.load(path: path, fileSchema: ConfigurationDocument.file)
        }
        switch result {
        case .success(let configuration):
            return configuration
        case .failure(let error) where error.isMissingFile:
            throw CommandError(.noInput, "cannot read the configuration \(path): no such file")
        case .failure(let error):
            throw error
        }
    }

    /// Adds the `sqlite` sink, which commits the bus's records into the store, when the
    /// configuration names none: with no sinks at all it is the embedded default; beside remote
    /// sinks alone it makes the store their journal (see ``isJournalOnly(_:)``), named `store`
    /// (`store-journal` when a plugin already has that name).
    static func withDefaults(_ configuration: GatewayConfiguration) -> GatewayConfiguration {
        var configuration = configuration
        if !configuration.sinks.contains(where: { $0.kind == "sqlite" }) {
            let names = Set((configuration.sources + configuration.sinks).compactMap(\.name))
            let name = configuration.sinks.isEmpty ? nil : (names.contains("store") ? "store-journal" : "store")
            configuration.sinks.append(PluginConfiguration(kind: "sqlite", name: name))
        }
        return configuration
    }

    /// Whether the configuration names sinks but no `sqlite` sink: then the store keeps records
    /// only until every remote sink acknowledged them (``HealthStore/LogRetention/untilAcknowledged``).
    static func isJournalOnly(_ configuration: GatewayConfiguration) -> Bool {
        !configuration.sinks.isEmpty && !configuration.sinks.contains { $0.kind == "sqlite" }
    }
}
