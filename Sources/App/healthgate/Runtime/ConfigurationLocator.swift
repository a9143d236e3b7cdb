import FoundationEssentials
import SampleBus

/// Finds and loads the configuration: `--config`, then `$CONFIGURATION_DIRECTORY/config.json`
/// (systemd), then `$XDG_CONFIG_HOME/healthgate/config.json`
/// (default `~/.config`), then `/etc/healthgate/config.json`, else the embedded default.
enum ConfigurationLocator {
    /// The candidate files, in order.
    static func candidates(_ variables: [String: String]) -> [URL] {
        var urls: [URL] = []
        if let configDirectory = variables["CONFIGURATION_DIRECTORY"], !configDirectory.isEmpty {
            urls.append(URL(fileURLWithPath: String(configDirectory.split(separator: ":")[0]))
                .appendingPathComponent("config.json"))
        }
        if let xdg = variables["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            urls.append(URL(fileURLWithPath: xdg).appendingPathComponent("healthgate/config.json"))
        } else if let home = variables["HOME"], !home.isEmpty {
            urls.append(URL(fileURLWithPath: home).appendingPathComponent(".config/healthgate/config.json"))
        }
        urls.append(URL(fileURLWithPath: "/etc/healthgate/config.json"))
        return urls
    }

    /// Loads the configuration. An explicit path that does not exist is an error; missing
    /// default locations fall through to the embedded default.
    /// - Throws: ``CommandError`` with ``ExitCode/noInput`` (sysexits' EX_NOINPUT, 66) when the
    ///   explicit file does not exist; ``ConfigurationError`` (78) when it is wrong.
    static func load(explicit: String?, variables: [String: String]) throws -> GatewayConfiguration {
        if let explicit {
            return try load(URL(fileURLWithPath: explicit))
        }
        for url in candidates(variables) where FileManager.default.fileExists(atPath: url.path) {
            return try load(url)
        }
        return GatewayConfiguration()
    }

    private static func load(_ url: URL) throws -> GatewayConfiguration {
        let result = Result { () throws(ConfigurationError) -> GatewayConfiguration in
            try GatewayConfiguration.load(from: url, schema: ConfigurationDocument.schema)
        }
        switch result {
        case .success(let configuration):
            return configuration
        case .failure(let error) where error.isMissingFile:
            throw CommandError(.noInput, "cannot read the configuration \(url.path): no such file")
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
