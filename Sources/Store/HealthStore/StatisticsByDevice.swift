public import HealthModel

/// Statistics of one bucket separated by device, as HealthKit's `separateBySource` option gives
/// per source: the value over every sample, and one value per device that has samples in the
/// bucket.
///
/// The per-device values are computed from the device's own samples, never derived from the
/// overall ones, and the overall value is computed from all samples, never from the devices':
/// the overall average is the mean of every sample (not a mean of the devices' averages), the
/// overall minimum, maximum and most recent value are those of every sample, and for a
/// cumulative type the devices' sums add up to the overall sum (up to floating-point rounding).
public struct StatisticsByDevice: Hashable, Sendable, Codable {
    /// The statistics over every sample of the bucket, equal to the unseparated statistics.
    public let overall: QuantityStatistics
    /// One entry per device with samples in the bucket, ordered by name, manufacturer, model
    /// and local identifier; samples without a device come last. Empty for an empty bucket.
    public let devices: [DeviceStatistics]

    /// A bucket's statistics, overall and per device.
    public init(overall: QuantityStatistics, devices: [DeviceStatistics]) {
        self.overall = overall
        self.devices = devices
    }

    /// The statistics of the samples of `device` (matched by name, manufacturer, model and
    /// local identifier; nil for samples without a device), or nil when it has none in the bucket.
    public func statistics(for device: Device?) -> QuantityStatistics? {
        let identity = device.map(DeviceIdentity.init)
        return devices.first { $0.device.map(DeviceIdentity.init) == identity }?.statistics
    }
}
