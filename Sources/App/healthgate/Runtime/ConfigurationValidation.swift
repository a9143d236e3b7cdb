import BLEProfileKit
import BLETransport
import FoundationEssentials
import HealthModel
import GatewayRuntime
import SampleBus
import WebBoard
import Workouts

/// Everything a configuration must pass before anything starts, in one place: the gateway's own
/// settings, every plugin's settings (strict decoding, then each plugin's `validated(in:)`) and
/// the workout profile. `healthgate config check` runs exactly this; `healthgate run` and `demo`
/// run it first, so `check` rejects everything `run` rejects.
///
/// Contract: no side effects. Nothing is created, opened for writing or migrated; the only file
/// system access is checking that referenced files (a CA file, a token file) are readable.
enum ConfigurationValidation {
    /// Validates `configuration` (with the embedded default sink already added).
    /// - Returns: the plugins, in file order, the decoded profile, the store's settings and the
    ///   Bluetooth adapters' (`bluetooth`, checked first, as the gateway's own settings were).
    /// - Throws: ``ConfigurationError`` with the file, the key path and the reason.
    static func validate(
        _ configuration: GatewayConfiguration, catalog: PluginCatalog, context: CommandContext, logger: Logger
    ) throws -> (
        plugins: [ValidatedPlugin], profile: UserProfile, store: StoreConfiguration.Settings, bluetooth: BluetoothConfiguration
    ) {
        let bluetooth = try BluetoothConfiguration.decode(configuration.bluetooth, origin: configuration.origin)
        let factory = EnvironmentFactory(context: context, logger: logger, ids: SampleIDGenerator())
        let plugins = try catalog.validate(configuration, environment: factory.make)
        _ = try roster(of: configuration)
        _ = try WebBoardConfiguration.decode(configuration.web, origin: configuration.origin)
        _ = try WebBoardConfiguration.decode(configuration.metrics, origin: configuration.origin, key: "metrics")
        let store = try StoreConfiguration.settings(of: configuration, paths: context.paths)
        return (plugins, try profile(of: configuration), store, bluetooth)
    }

    /// The participants, decoded and checked as the workouts do (their profiles included).
    static func roster(of configuration: GatewayConfiguration) throws(ConfigurationError) -> ParticipantRoster {
        let defaultProfile = try profile(of: configuration)
        switch Result(catching: { () throws(WorkoutError) -> ParticipantRoster in
            try ParticipantRoster.decode(configuration.participants, defaultProfile: defaultProfile)
        }) {
        case .success(let roster):
            return roster
        case .failure(let error):
            throw ConfigurationError(file: configuration.origin, keyPath: error.keyPath ?? "participants", reason: error.reason)
        }
    }

    /// The workout profile, decoded and checked as the workout controller does.
    static func profile(of configuration: GatewayConfiguration) throws(ConfigurationError) -> UserProfile {
        switch Result(catching: { () throws(WorkoutError) -> UserProfile in try UserProfile.decode(configuration.profile) }) {
        case .success(let profile):
            return profile
        case .failure(let error):
            throw ConfigurationError(file: configuration.origin, keyPath: error.keyPath ?? "profile", reason: error.reason)
        }
    }

    /// Makes the environments validation hands to the plugins' `validated(in:)`.
    struct EnvironmentFactory {
        var context: CommandContext
        var logger: Logger
        var ids: SampleIDGenerator

        func make(_ name: String) -> PluginEnvironment {
            PluginEnvironment(
                name: name, logger: logger.child(name), clock: context.clock, ids: ids, paths: context.paths,
                variables: context.variables)
        }
    }
}
