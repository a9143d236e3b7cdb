import Foundation
import SampleBus

/// Finds and loads the configuration: `--config`, then `$XDG_CONFIG_HOME/healthgate/config.json`
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
    static func load(explicit: String?, variables: [String: String]) throws(ConfigurationError) -> GatewayConfiguration {
        if let explicit {
            return try GatewayConfiguration.load(from: URL(fileURLWithPath: explicit))
        }
        for url in candidates(variables) where FileManager.default.fileExists(atPath: url.path) {
            return try GatewayConfiguration.load(from: url)
        }
        return GatewayConfiguration()
    }

    /// Adds the embedded default sink (the SQLite store in the data directory) when the
    /// configuration names no sink.
    static func withDefaults(_ configuration: GatewayConfiguration, paths: GatewayPaths) -> GatewayConfiguration {
        var configuration = configuration
        if configuration.sinks.isEmpty {
            configuration.sinks = [
                PluginConfiguration(kind: "sqlite", config: .object([
                    "path": .string(paths.dataDirectory.appendingPathComponent("samples.sqlite").path)
                ]))
            ]
        }
        return configuration
    }
}
