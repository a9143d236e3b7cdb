import AsyncPrimitives
import FoundationEssentials
import GatewayControl
import GatewayRuntime
import GatewayTime
import HealthStore
import LinuxSystem
import SampleBus
#if canImport(Glibc)
import Glibc
#endif

extension GatewayRunner {
    /// The control socket (`controlSocket`, else `control.sock` in the runtime directory),
    /// answering `handlers`.
    func makeControl(_ facts: RunFacts, handlers: [String: ControlHandler]) -> ControlServer {
        let socketPath = facts.configuration.controlSocket ?? FileSystem.join(facts.paths.runtimePath, "control.sock")
        return ControlServer(path: socketPath, handlers: handlers, logger: facts.logger.child("control"))
    }

    /// The control socket's part: it listens from before the bus starts until every later part
    /// has stopped.
    static func controlPart(_ control: ControlServer, logger: Logger) -> GatewayPart {
        GatewayPart(
            name: "control socket",
            start: { try await start(control, logger: logger) },
            stop: { control.stop() })
    }

    /// Starts `control`. Another daemon listening on its socket fails the start; any other
    /// failure leaves the gateway running without it, and says so.
    private static func start(_ control: ControlServer, logger: Logger) async throws {
        do {
            try await control.start()
        } catch let error where error.errno == EADDRINUSE {
            throw CommandError(.unavailable, "\(error); stop it first or set \"controlSocket\" in the configuration")
        } catch {
            // The gateway still works without its control socket; say so loudly.
            logger.warning("control socket unavailable (\(error)); 'healthgate status' will not reach this process")
        }
    }

    /// `status` (what ``StatusReport`` holds) and `ping`. Nothing here waits on the store's disk:
    /// the migration's steps and whether the store answers come from `storeFacts`.
    static func statusHandlers(
        _ facts: RunFacts, store: HealthStore, storeFacts: StoreFactsWatch, statusBoard: StatusBoard, arbiter: HeartRateArbiter,
        notifications: ServiceNotifications, runMark: RunMark
    ) -> [String: ControlHandler] {
        let clock = facts.clock, clockTrust = facts.clockTrust, origin = facts.configuration.origin
        let started = clock.now()
        let status: ControlHandler = { _ in
            let previousRun = await runMark.previousRun(clock: clock)
            let snapshot = storeFacts.snapshot
            return try JSONValue.encoding(StatusReport(
                version: HealthgateCLI.version, pid: Int(getpid()), startedAt: started,
                configuration: origin, store: store.path, storeSchema: StoreSchema.version, clock: clockTrust.state().description,
                plugins: statusBoard.snapshot(), heartRate: arbiter.counts, attribution: store.attributionCounts,
                migration: snapshot.overview?.migrationSteps.map(StatusReport.MigrationStep.init),
                watchdog: notifications.report, previousRun: previousRun, storeStuckSince: snapshot.stuckSince))
        }
        return ["status": status, "ping": { _ in .string("pong") }]
    }
}
