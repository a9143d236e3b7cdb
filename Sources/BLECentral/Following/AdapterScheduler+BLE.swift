public import BLETransport
public import SampleBus

extension AdapterScheduler {
    /// The attempt failed with the transport's `code`: ``failed(_:inProgress:)``.
    public func failed(_ attempt: Attempt, code: BLETransportError.Code) -> Verdict {
        failed(attempt, inProgress: code == .inProgress)
    }

    /// Shows the counts in `status` as the detail `adapter.<name>`.
    public func publish(to status: StatusReporter) {
        status.setDetail("adapter.\(adapter)", snapshot.summary(limits))
    }
}
