public import HealthStore

/// Whether the gateway's pipeline makes progress: the pure state machine behind systemd's
/// watchdog (observations in, decisions out; tested without systemd).
///
/// At each check its driver shows it what the pipeline did, with the time on a monotonic clock:
/// the store writer's activity (calls begun and ended, ``HealthStore/WriterActivity``) and each
/// sink queue's head (records waiting, records the sink acknowledged). It answers `.ping` while
/// - **the writer** is idle, or the call it is in was first seen less than `threshold` ago (one
///   call seen in progress for `threshold` hangs: a lock another process holds that long, a disk
///   that does not answer, a sync that never ends);
/// - **every sink** has an empty queue, or acknowledged records less than `threshold` ago, plus
///   the sink's own batch window (a queue that holds records its sink acknowledges none of for
///   that long: a sink stuck in a write, or failing and retrying the same batch).
///
/// Otherwise it answers `.withhold` with the reason; pings resume as soon as the pipeline moves.
/// What it does not watch, on purpose: the sources and the followers. A source waiting for its
/// radio (bluetoothd down, an ANT stick unplugged, a strap out of range) or a remote receiver
/// that is down publishes or sends nothing, which is no hang of the gateway: restarting it
/// would bring neither back. An idle pipeline pings.
public struct PipelineWatchdog: Sendable {
    /// One sink's queue as the watchdog sees it.
    public struct QueueHead: Sendable, Hashable {
        /// The sink's name.
        public var sink: String
        /// Records queued or handed to the sink and not yet acknowledged.
        public var pending: Int
        /// Records the sink has acknowledged since the gateway started.
        public var acknowledged: Int
        /// How long the sink holds records on purpose (``SampleSink/batchWindow``).
        public var window: Duration

        public init(sink: String, pending: Int, acknowledged: Int, window: Duration = .zero) {
            self.sink = sink
            self.pending = pending
            self.acknowledged = acknowledged
            self.window = window
        }
    }

    /// What the pipeline did, at one check.
    public struct Observation: Sendable, Hashable {
        /// The store writer's activity; nil without a writer.
        public var writer: WriterActivity?
        /// Every sink queue's head.
        public var queues: [QueueHead]

        public init(writer: WriterActivity?, queues: [QueueHead]) {
            self.writer = writer
            self.queues = queues
        }
    }

    /// What to tell systemd.
    public enum Decision: Sendable, Hashable {
        /// The pipeline moves (or has nothing to do): send `WATCHDOG=1`.
        case ping
        /// It does not: send nothing, for the reason given.
        case withhold(reason: String)
    }

    /// How long a writer call, or a queue holding records without an acknowledgement, may last
    /// before the pings stop.
    public let threshold: Duration
    /// The writer call in progress (by its number: calls are serial) and when it was first seen.
    private var writerCall: (number: UInt64, since: Duration)?
    /// Per sink: its acknowledged count and when it last moved (or was last seen empty).
    private var queues: [String: (acknowledged: Int, since: Duration)] = [:]

    public init(threshold: Duration) {
        self.threshold = threshold
    }

    /// Takes one observation made at `now` (a monotonic time; only differences count) and
    /// decides.
    public mutating func decide(_ observation: Observation, at now: Duration) -> Decision {
        var stalls: [String] = []
        if let writer = observation.writer, writer.isBusy {
            if writerCall?.number != writer.begun { writerCall = (writer.begun, now) }
            if let call = writerCall, now - call.since >= threshold {
                stalls.append("the store's writer has been in one call for \(Self.seconds(now - call.since)) s")
            }
        } else {
            writerCall = nil
        }
        var seen: [String: (acknowledged: Int, since: Duration)] = [:]
        for head in observation.queues {
            var entry = queues[head.sink] ?? (head.acknowledged, now)
            if head.pending == 0 || head.acknowledged != entry.acknowledged { entry = (head.acknowledged, now) }
            seen[head.sink] = entry
            if now - entry.since >= threshold + head.window {
                stalls.append(
                    "the sink \(head.sink) has acknowledged nothing for \(Self.seconds(now - entry.since)) s "
                        + "with \(head.pending) records waiting")
            }
        }
        queues = seen
        return stalls.isEmpty ? .ping : .withhold(reason: stalls.joined(separator: "; "))
    }

    /// Whole seconds, rounded down.
    private static func seconds(_ duration: Duration) -> Int64 { duration.components.seconds }
}
