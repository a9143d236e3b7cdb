public import HealthModel

/// The statistics of one device's samples in one bucket of ``StatisticsByDevice``.
public struct DeviceStatistics: Hashable, Sendable, Codable {
    /// The device, by the fields that identify it: name, manufacturer, model and local
    /// identifier (versions are left out: a firmware update does not make another device).
    /// Nil for the samples recorded without a device.
    public let device: Device?
    /// The statistics of the device's samples, computed as the overall ones are.
    public let statistics: QuantityStatistics

    /// One device's statistics.
    public init(device: Device?, statistics: QuantityStatistics) {
        self.device = device
        self.statistics = statistics
    }
}
