import Dispatch
import Foundation
import SampleBus

/// Turns SIGINT and SIGTERM into stop requests: the first asks for a graceful stop, the second
/// forces it (``ShutdownSignal``). Signals are received through DispatchSources, so no code runs in
/// an async-signal context.
final class SignalWatcher: @unchecked Sendable {
    // The sources are created and cancelled on `queue` only; that is what makes this Sendable.
    private var sources: [any DispatchSourceSignal] = []
    private let queue = DispatchQueue(label: "healthgate.signals")

    init(shutdown: ShutdownSignal, logger: Logger) {
        queue.sync {
            for (number, name) in [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")] {
                // The default disposition would kill the process before the source sees the signal.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
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
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }
}
