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
    /// - Throws: ``ConfigurationError`` with the file, the key path and the reason: every
    ///   section is checked, and the errors after the first are in its `further`, so one run
    ///   reports them all.
    static func validate(
        _ configuration: GatewayConfiguration, catalog: PluginCatalog, context: CommandContext, logger: Logger
    ) throws(ConfigurationError) -> (
        plugins: [ValidatedPlugin], profile: UserProfile, store: StoreConfiguration.Settings, bluetooth: BluetoothConfiguration
    ) {
        var failures: [ConfigurationError] = []
        func add(_ error: ConfigurationError) {
            var first = error
            first.further = []
            failures += [first] + error.further
        }
        var bluetooth: BluetoothConfiguration?
        var plugins: [ValidatedPlugin]?
        var profile: UserProfile?
        var store: StoreConfiguration.Settings?
        do { bluetooth = try BluetoothConfiguration.decode(configuration.bluetooth, origin: configuration.origin) } catch { add(error) }
        do { profile = try Self.profile(of: configuration) } catch { add(error) }
        // The roster decodes each participant's profile over the default one: only when that is right.
        var participants: [ParticipantCharacteristics] = []
        if profile != nil {
            do { participants = try roster(of: configuration).participants.map(\.pluginCharacteristics) } catch { add(error) }
        }
        // The plugins see the participants as they will when they run (a sink that sends a
        // participant's identifiers checks them).
        let factory = EnvironmentFactory(context: context, logger: logger, ids: SampleIDGenerator(), participants: participants)
        do { plugins = try catalog.validate(configuration, environment: factory.make) } catch { add(error) }
        do { _ = try WebBoardConfiguration.decode(configuration.web, origin: configuration.origin) } catch { add(error) }
        do { _ = try WebBoardConfiguration.decode(configuration.metrics, origin: configuration.origin, key: "metrics") } catch { add(error) }
        do { store = try StoreConfiguration.settings(of: configuration, paths: context.paths) } catch { add(error) }
        if var first = failures.first {
            first.further = Array(failures.dropFirst())
            throw first
        }
        guard let bluetooth, let plugins, let profile, let store else {
            // Each check that yields nothing has added its error above: not reached.
            throw ConfigurationError(file: configuration.origin, keyPath: ConfigurationKeyPath.topLevel, reason: "not valid")
        }
        return (plugins, profile, store, bluetooth)
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
        var participants: [ParticipantCharacteristics]

        func make(_ name: String) -> PluginEnvironment {
            PluginEnvironment(
                name: name, logger: logger.child(name), clock: context.clock, ids: ids, paths: context.paths,
                variables: context.variables, participants: participants)
        }
    }
}
