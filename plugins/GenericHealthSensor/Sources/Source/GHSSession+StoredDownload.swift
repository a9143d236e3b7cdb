import GATTDecoding
import Synchronization

extension GHSSession {
    /// One connection's download of the sensor's stored observations through the Record Access
    /// Control Point: a count (op code 0x04), then a report (0x01) unless the count is 0; a
    /// report at once when the sensor answers the count with a response code instead.
    ///
    /// Events in, decisions out: the notification loop feeds it the indications (``take(_:)``)
    /// and what arrives on Stored Health Observations, and acts on the ``Step`` it returns; the
    /// download's child task waits for the report's end (``reportEnd()``) and reads its
    /// ``progress`` to see a stall. No I/O and no clock: times are the caller's readings of the
    /// injected clock's monotonic time. Thread-safe: the loop and the child share it, its state
    /// behind a `Mutex`.
    final class StoredDownload: Sendable {
        /// What the session does after an indication.
        enum Step: Equatable, Sendable {
            /// Ask for the records: the sensor holds `announced` (more than 0) of them.
            case report(announced: UInt32)
            /// Ask for the records without a count: the sensor answered the count with this code
            /// (op code not supported, most often).
            case reportUncounted(GHSRecordAccessControlPoint.ResponseCode)
            /// Ask for nothing: the sensor holds no record the filter selects.
            case nothingStored
            /// The report ended with this code, after `received` records of the `announced` (nil
            /// when the sensor did not count them).
            case reportEnded(GHSRecordAccessControlPoint.ResponseCode, announced: UInt32?, received: Int)
            /// The sensor answered an abort with this code.
            case aborted(GHSRecordAccessControlPoint.ResponseCode)
        }

        private enum Phase: Equatable {
            case counting
            case reporting(announced: UInt32?)
            case over
        }

        private struct State {
            var phase = Phase.counting
            var received = 0
            var lastRecord: UInt32?
            var lastActivity = Duration.zero
        }

        /// The records counted and asked for: every one, or from one past the checkpoint.
        let filter: GHSRecordAccessControlPoint.Filter
        private let state = Mutex(State())
        /// The report's response code, yielded once; finished by an abort's response.
        private let ends: AsyncStream<GHSRecordAccessControlPoint.ResponseCode>
        private let end: AsyncStream<GHSRecordAccessControlPoint.ResponseCode>.Continuation

        /// A download whose count of `filter` the session asked for.
        init(filter: GHSRecordAccessControlPoint.Filter) {
            self.filter = filter
            (ends, end) = AsyncStream.makeStream(of: GHSRecordAccessControlPoint.ResponseCode.self, bufferingPolicy: .bufferingOldest(1))
        }

        /// Takes a Record Access Control Point indication: the step it calls for, nil when it is
        /// not about this download (the response to an erase, one out of turn).
        func take(_ indication: GHSRecordAccessControlPoint.Indication) -> Step? {
            let step = state.withLock { state -> Step? in
                switch (state.phase, indication) {
                case (.counting, .numberOfRecords(let count)):
                    state.phase = count == 0 ? .over : .reporting(announced: count)
                    return count == 0 ? .nothingStored : .report(announced: count)
                // A sensor may answer a count of nothing with "no records found" rather than 0.
                case (.counting, .response(request: 0x04, code: .noRecordsFound)):
                    state.phase = .over
                    return .nothingStored
                case (.counting, .response(request: 0x04, let code)):
                    state.phase = .reporting(announced: nil)
                    return .reportUncounted(code)
                case (.reporting(let announced), .response(request: 0x01, let code)):
                    state.phase = .over
                    return .reportEnded(code, announced: announced, received: state.received)
                case (.reporting, .response(request: 0x03, let code)):
                    state.phase = .over
                    return .aborted(code)
                default:
                    return nil
                }
            }
            switch step {
            case .reportEnded(let code, _, _)?: end.yield(code)
            case .aborted?: end.finish()
            default: break
            }
            return step
        }

        /// The report was asked for, or one of its segments arrived, at `uptime`: the stall
        /// timeout counts from the latest.
        func noteActivity(at uptime: Duration) {
            state.withLock { $0.lastActivity = max($0.lastActivity, uptime) }
        }

        /// A stored observation arrived: counted while a report runs, and the highest record
        /// number kept (what an erase may reach).
        func recordArrived(_ number: UInt32) {
            state.withLock { state in
                if case .reporting = state.phase { state.received += 1 }
                state.lastRecord = max(state.lastRecord ?? number, number)
            }
        }

        /// The highest record number that arrived, and the time of the latest activity.
        var progress: (lastRecord: UInt32?, lastActivity: Duration) {
            state.withLock { ($0.lastRecord, $0.lastActivity) }
        }

        /// Waits for the report's response code; nil when the report was aborted, or the
        /// waiting task cancelled. For one waiter, the download's child task.
        func reportEnd() async -> GHSRecordAccessControlPoint.ResponseCode? {
            for await code in ends { return code }
            return nil
        }
    }
}
