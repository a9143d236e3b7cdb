import Dispatch
import Foundation
import SampleBus

/// Turns SIGINT, SIGTERM and SIGHUP into stop requests: the first asks for a graceful stop, the
/// second forces it (``ShutdownSignal``). Signals are received through DispatchSources, so no code
/// runs in an async-signal context.
///
/// SIGHUP is a graceful stop like SIGTERM, not a configuration reload: a closed terminal sends
/// it, and reloading would mean rebuilding every plugin, which a restart does as well and more
/// simply (`systemctl restart healthgate`).
final class SignalWatcher: @unchecked Sendable {
    // The sources are created and cancelled on `queue` only; that is what makes this Sendable.
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "healthgate.signals")
    private static let signals = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP")]

    init(shutdown: ShutdownSignal, logger: Logger) {
        queue.sync {
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
        }
    }

    /// Stops watching and restores the default dispositions.
    func cancel() {
        queue.sync {
            for source in sources { source.cancel() }
            sources = []
            for (number, _) in Self.signals { signal(number, SIG_DFL) }
        }
    }
}
