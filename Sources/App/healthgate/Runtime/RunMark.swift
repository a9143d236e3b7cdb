import AsyncPrimitives
import FoundationEssentials
import GatewayRuntime
import LinuxSystem
import SampleBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// This run's mark in the state directory (LinuxSystem's ``RunMarker``): made once the control
/// socket has proved that no other daemon serves this configuration, ended by every stop the
/// gateway makes itself (a graceful one, a failed start, a forced exit), so that only a crash or
/// a kill leaves it. What the mark found of the previous run is what `status` shows.
///
/// Thread-safe: ``end()`` may be called from any thread (the forced exit calls it from its own),
/// any number of times.
final class RunMark: Sendable {
    /// What ``begin(statePath:startedAt:logger:)`` read of the previous run: nothing yet, or how
    /// it ended (nil after a clean stop).
    enum Reading: Sendable {
        case pending
        case read(StatusReport.PreviousRun?)
    }

    private let reading = AsyncCondition(Reading.pending)
    private let marker = Mutex<RunMarker?>(nil)

    /// How the previous run ended, when it did not stop cleanly. The control socket answers a
    /// moment before the mark is begun (it must first prove that no other daemon serves this
    /// configuration), so a `status` in that moment waits for the reading, a second at most.
    func previousRun(clock: any GatewayClock) async -> StatusReport.PreviousRun? {
        let outcome = try? await race(sleep: { try await clock.sleep(for: .seconds(1)) }) { [reading] in
            try await reading.wait { if case .read = $0 { true } else { false } }
            return reading.value
        }
        if case .event(.read(let previous)) = outcome { return previous }
        return nil
    }

    /// Marks this run and reads how the last one ended, which is also logged. A mark that cannot
    /// be made is a warning: the gateway runs on without it.
    func begin(statePath: String, startedAt: Date, logger: Logger) {
        let path = FileSystem.join(statePath, "run-marker")
        let milliseconds = Int64((startedAt.timeIntervalSince1970 * 1000).rounded())
        do {
            let (made, unclean) = try RunMarker.begin(path: path, pid: getpid(), startedAt: milliseconds)
            marker.withLock { $0 = made }
            let report = unclean.map(StatusReport.PreviousRun.init)
            if let report { logger.warning("the previous run \(report.text)") }
            reading.set(.read(report))
        } catch {
            logger.warning("cannot mark this run in \(path) (\(error)): a crash will not show in the next run's status")
            reading.set(.read(nil))
        }
    }

    /// Removes the mark: this run stopped cleanly.
    func end() {
        marker.withLock { $0 }?.end()
    }
}

extension GatewayRunner {
    /// The run's mark, right after the control socket: begun when the parts start, ended when
    /// they stop.
    static func runMarkPart(_ mark: RunMark, _ facts: RunFacts) -> GatewayPart {
        GatewayPart(
            name: "run mark",
            start: { mark.begin(statePath: facts.paths.statePath, startedAt: facts.clock.now(), logger: facts.logger) },
            stop: { mark.end() })
    }
}
