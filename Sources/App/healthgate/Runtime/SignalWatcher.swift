import Dispatch
import FoundationEssentials
import GatewayRuntime
import SampleBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Turns SIGINT, SIGTERM and SIGHUP into stop requests: the first asks for a graceful stop, the
/// second forces it (``ShutdownSignal``). Signals are received through DispatchSources, so no code
/// runs in an async-signal context.
///
/// SIGHUP is a graceful stop like SIGTERM, not a configuration reload: a closed terminal sends
/// it, and reloading would mean rebuilding every plugin, which a restart does as well and more
/// simply (`systemctl restart healthgate`).
final class SignalWatcher: Sendable {
    private let sources: Mutex<[any DispatchSourceSignal]>
    private static let signals = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    init(shutdown: ShutdownSignal, logger: Logger) {
        let queue = DispatchQueue(label: "healthgate.signals")
        var sources: [any DispatchSourceSignal] = []
        for (number, name) in Self.signals {
            // The default disposition would kill the process before the source sees the signal.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                // The stop request comes first: the forced exit is armed before anything is
                // logged (a log write can block on a full pipe).
                switch shutdown.requestStop() {
                case .stopping:
                    logger.notice("received \(name): stopping sources and draining sinks (send it again to force)")
                default:
                    logger.warning("received \(name) again: forcing shutdown")
                }
            }
            source.resume()
            sources.append(source)
        }
        self.sources = Mutex(sources)
    }

    /// Stops watching and restores the default dispositions.
    func cancel() {
        sources.withLock { sources in
            for source in sources { source.cancel() }
            sources = []
        }
        for (number, _) in Self.signals { signal(number, SIG_DFL) }
    }
}
