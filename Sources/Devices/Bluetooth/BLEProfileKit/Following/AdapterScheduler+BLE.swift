public import BLETransport
public import SampleBus

extension AdapterScheduler {
    /// The attempt failed with the transport's `code`: ``failed(_:inProgress:)``.
    public func failed(_ attempt: Attempt, code: BLETransportError.Code) -> Verdict {
        failed(attempt, inProgress: code == .inProgress)
    }

    /// Shows the counts in `status` as the detail `adapter.<name>`.
    public func publish(to status: StatusReporter) {
        let snapshot = snapshot
        status.setDetail("adapter.\(adapter)", snapshot.summary(limits))
        let labels = ["adapter": adapter]
        status.setMetric("healthgate_adapter_links", labels, Double(snapshot.links))
        status.setMetric("healthgate_adapter_link_slots", labels, Double(limits.connections))
        status.setMetric("healthgate_adapter_devices", labels, Double(snapshot.devices))
        status.setMetric("healthgate_adapter_waiting_devices", labels, Double(snapshot.waiting))
        status.setMetric("healthgate_adapter_slot_waiting_devices", labels, Double(snapshot.waitingForSlot.count))
        status.setMetric("healthgate_adapter_power_cycles_total", labels, Double(snapshot.powerCycles))
    }
}
