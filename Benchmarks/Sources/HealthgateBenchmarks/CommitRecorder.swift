import Foundation
import HealthModel
import SQLiteStore
import Synchronization

/// What the SQLite sink committed, as ``SQLiteSink/onCommit`` reports it: each transaction's
/// commit date and size, and each committed quantity sample with its delay from its own dates
/// to the commit. The latency, ANT+ class and advertisements benchmarks take their delays and
/// load checks from it.
///
/// Only what is committed while recording is kept (``start()`` to ``stop()``), so that a
/// warm-up stays out. The totals are kept up to date as it records, so a benchmark polling them
/// while it measures CPU takes a lock rather than a walk over every sample.
final class CommitRecorder: Sendable {
    /// One committed quantity sample.
    struct Sample: Sendable {
        var type: QuantityType
        /// The device's local identifier (`ant:…`, a Bluetooth address), when the sample names one.
        var device: String?
        var start: Date
        /// Commit date − start date: for a heart rate, since the arrival stamp of the bytes that
        /// carried it.
        var sinceStart: Double
        /// Commit date − end date: for a pedometer's step count, since its line's bytes were made.
        var sinceEnd: Double
    }

    /// One committed transaction.
    struct Transaction: Sendable {
        var date: Date
        /// The records it committed, of every kind.
        var records: Int
        /// Its quantity samples.
        var samples: [Sample]
    }

    /// The running totals of what was recorded.
    struct Totals: Sendable {
        var transactions = 0
        var records = 0
        /// Committed samples per quantity type.
        var samples: [QuantityType: Int] = [:]
        /// The devices whose samples of each type were committed.
        var devices: [QuantityType: Set<String>] = [:]
    }

    /// Everything recorded.
    struct Recording: Sendable {
        var transactions: [Transaction] = []
        var totals = Totals()

        /// Every committed sample of `type`, in commit order.
        func samples(of type: QuantityType) -> [Sample] {
            transactions.flatMap { $0.samples.filter { $0.type == type } }
        }
    }

    private let state: Mutex<(recording: Bool, recorded: Recording)>

    /// A recorder that records from the start when `recording` is true, else from ``start()``.
    init(recording: Bool = false) {
        state = Mutex((recording, Recording()))
    }

    /// Makes this recorder `sink`'s ``SQLiteSink/onCommit``.
    func attach(to sink: inout SQLiteSink) {
        sink.onCommit = { [self] records, date in record(records, at: date) }
    }

    /// Starts recording.
    func start() {
        state.withLock { $0.recording = true }
    }

    /// Stops recording and returns what was recorded.
    func stop() -> Recording {
        state.withLock { state in
            state.recording = false
            return state.recorded
        }
    }

    /// The totals so far.
    var totals: Totals { state.withLock { $0.recorded.totals } }

    /// Records one committed transaction (the sink's task calls it; quick, never blocking).
    func record(_ records: [HealthRecord], at date: Date) {
        state.withLock { state in
            guard state.recording else { return }
            var samples: [Sample] = []
            for record in records {
                guard case .quantity(let sample) = record else { continue }
                let device = sample.device?.localIdentifier
                samples.append(Sample(
                    type: sample.type, device: device, start: sample.startDate,
                    sinceStart: date.timeIntervalSince(sample.startDate), sinceEnd: date.timeIntervalSince(sample.endDate)))
                state.recorded.totals.samples[sample.type, default: 0] += 1
                if let device { state.recorded.totals.devices[sample.type, default: []].insert(device) }
            }
            state.recorded.totals.transactions += 1
            state.recorded.totals.records += records.count
            state.recorded.transactions.append(Transaction(date: date, records: records.count, samples: samples))
        }
    }
}
