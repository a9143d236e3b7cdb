import GatewayRuntime
import RemoteSinkKit
import SampleBus
import Synchronization

/// The records delivered batches did not carry because their format has no form for them
/// (`fhir-phd`: a type without an MDC code, a record without a device): each kind of record
/// is logged once, at `notice`, and all are counted in the status detail `leftOut`. They stay
/// in the store (other sinks, queries, `healthgate export` have them); nothing is lost.
/// Thread-safe: batches are delivered side by side.
final class LeftOutRecords: Sendable {
    private let state = Mutex<(count: Int, logged: Set<String>)>((0, []))

    /// A delivered batch left out `records` (each `type: reason`).
    func delivered(_ records: [String], format: RepositoryFormat, context: FollowerContext) {
        guard !records.isEmpty else { return }
        let (count, new) = state.withLock { state -> (Int, [String]) in
            state.count += records.count
            var new: [String] = []
            for record in records where state.logged.insert(record).inserted { new.append(record) }
            return (state.count, new)
        }
        for record in new {
            context.logger.notice(
                "\(format.rawValue) has no form for readings of \(record): they are not sent to this repository "
                    + "(they stay in the store; the status detail leftOut counts them)")
        }
        context.status.setDetail("leftOut", String(count))
    }
}
