import AsyncPrimitives
import BLETransport
import BlueZ
import GatewayRuntime
import GatewayTime
import HealthModel
import HealthStore
import LinuxSystem
import SampleBus
import WorkoutRuntime
import Workouts
extension GatewayRunner {
    /// The configured plugins, made from the catalog with the run's Bluetooth adapters, off the
    /// cooperative pool (plugins open files and libraries as they are made: an outbox, libcurl);
    /// the store then readied for the remote sinks, and the sources ``silencedSources`` names
    /// wrapped.
    /// - Throws: ``ConfigurationError`` when a plugin cannot be made, ``CommandError`` when the
    ///   store cannot be readied.
    func makePlugins(_ facts: RunFacts, store: HealthStore) async throws -> BuiltPlugins {
        // The adapters through BlueZ, one scheduler each with the gateway's limits, for every
        // Bluetooth source: the catalog hands them to those sources.
        let bluetooth = BluetoothAdapters.bluez(
            limits: facts.bluetooth.adapterLimits, clock: facts.clock, logger: facts.logger, variables: facts.variables,
            adapters: facts.bluetooth.adapters)
        let pluginCatalog = catalog(bluetooth)
        let user = facts.profile.characteristics
        var built = try await QueueExecutor(label: "healthgate.plugins").run {
            // Read on this queue: the stored assignments are a blocking read of the store.
            let participants = try Self.participants(of: facts.configuration, store: store, logger: facts.logger)
            return try pluginCatalog.instantiate(facts.configuration) { name in
                PluginEnvironment(
                    name: name, logger: facts.logger.child(name), clock: facts.clock, ids: facts.ids, paths: facts.paths,
                    variables: facts.variables, gatewayName: facts.gatewayName, user: user, participants: participants,
                    store: store, clockTrust: facts.clockTrust)
            }
        }
        try await Self.prepareFollowers(built.followers, journalOnly: facts.journalOnly, store: store, logger: facts.logger)
        built.sources = built.sources.map { silenced($0, facts) }
        return built
    }

    /// `source` made to stop after the time ``silencedSources`` gives its name, if it does.
    func silenced(_ source: ConfiguredSource, _ facts: RunFacts) -> ConfiguredSource {
        guard let after = silencedSources[source.name] else { return source }
        var silenced = source
        silenced.source = SilencedSource(source: source.source, after: after, clock: facts.clock, logger: facts.logger.child(source.name))
        return silenced
    }

    /// Readies the store for the remote sinks that follow it: forgets followers no longer
    /// configured (so they hold no log), and, when the configuration has remote sinks but no
    /// `sqlite` sink, keeps records only until every remote sink acknowledged them.
    static func prepareFollowers(
        _ followers: [ConfiguredFollower], journalOnly: Bool, store: HealthStore, logger: Logger
    ) async throws {
        do {
            let removed = try await store.removeFollowers(keeping: followers.map(\.name))
            for name in removed {
                logger.notice("the remote sink \(name) is no longer configured: the store stops keeping its changes")
            }
            if journalOnly {
                try await store.setRetention(.untilAcknowledged)
                logger.info(
                    "no sqlite sink: the store keeps records only until every remote sink has them "
                        + "(add {\"kind\": \"sqlite\"} to keep them for queries)")
            }
        } catch {
            throw CommandError(.ioError, "cannot prepare the store for the remote sinks: \(error)")
        }
    }

    /// What plugins know of the participants: the configured roster with the run-time
    /// assignments stored so far applied (as the workouts restore it), each with their
    /// profile's figures. A stored assignment that cannot be read or applied is logged and left
    /// out; the workouts report it too.
    /// - Throws: ``ConfigurationError`` for a roster or profile that is wrong; checked with the
    ///   rest of the configuration before, so not at this point of a run.
    static func participants(
        of configuration: GatewayConfiguration, store: HealthStore, logger: Logger
    ) throws(ConfigurationError) -> [ParticipantCharacteristics] {
        var roster = try ConfigurationValidation.roster(of: configuration)
        do {
            for assignment in try store.storedParticipantAssignments() {
                do {
                    try roster.apply(assignment)
                } catch {
                    logger.warning("participants: stored assignment of \(assignment.device) not applied: \(error)")
                }
            }
        } catch {
            logger.warning("participants: stored assignments unreadable, using the configured devices: \(error)")
        }
        return roster.participants.map(\.pluginCharacteristics)
    }

    /// Opens the gateway's store read-write (creating and migrating it), off the cooperative pool,
    /// its writer telling idle quantity series on `uptime`, the gateway's monotonic clock.
    /// - Throws: ``CommandError``: 78 for a file that is not a healthgate store or comes from a
    ///   newer healthgate (the configuration points at it), 65 for a corrupt file, 74 for I/O.
    static func openStore(
        _ settings: StoreConfiguration.Settings, origin: String, uptime: @escaping @Sendable () -> Duration
    ) async throws -> HealthStore {
        do {
            return try await HealthStore.open(path: settings.path, maximumPageCount: settings.maximumPageCount, uptime: uptime)
        } catch {
            let advice = switch error.code {
            case .notAStore: " (set store.path in \(origin) to another file)"
            case .schemaTooNew: " (upgrade healthgate, or set store.path in \(origin) to another file)"
            case .corrupt: " (move the file aside and start again, or restore a backup)"
            default: ""
            }
            let status: ExitCode = switch error.code {
            case .notAStore, .schemaTooNew: .configuration
            case .corrupt, .invalidData: .dataError
            case .readOnly, .ioError, .diskFull, .busy: .ioError
            default: .software
            }
            throw CommandError(status, "cannot open the store: \(error)\(advice)")
        }
    }

    /// Whose heart rate a device's records are, for the heart-rate arbiter: the participant
    /// wearing it now (any of their listed identities naming it), else the strap itself. Read on
    /// every heart-rate record, so an assignment takes effect with the next one.
    static func wearer(in workouts: ParticipantWorkouts) -> @Sendable (Device) -> String? {
        { device in
            if let participant = workouts.roster.owner(of: device) { return "participant:\(participant.name)" }
            return HeartRateArbiter.strapGroup(device)
        }
    }

    /// What every record gets where its source set none: the gateway's name, this healthgate's
    /// version and the time zone (configured, else `$TZ` or the system's).
    static func provenance(of configuration: GatewayConfiguration, gatewayName: String, variables: [String: String]) -> Metadata {
        var stamp = Metadata()
        stamp[.gatewayName] = .string(gatewayName)
        stamp[.gatewayVersion] = .string(HealthgateCLI.version)
        // The name only: the configured one was checked when the configuration was, and the
        // host's is read without loading the tz database.
        stamp[.timeZone] = .string(configuration.timeZone ?? LocalTimeZoneName.resolve(variables: variables))
        return stamp
    }
}
