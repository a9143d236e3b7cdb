import HealthModel

extension StatisticsCalculator {
    /// Each device's running values, a bucket each, for
    /// ``StatisticsCalculator/byDevice(_:type:edges:filter:path:)``: a sample's device row id is
    /// resolved to its identity, so that the values of one device add up whichever row names it.
    struct DeviceAccumulators {
        /// Every stored device's identity, by its row id.
        let identities: [Int64: DeviceIdentity]
        /// The type whose samples are added.
        let type: QuantityType
        /// How many buckets each device has.
        let buckets: Int
        /// The store's path, for errors.
        let path: String
        /// Each device's buckets; nil is the samples without a device.
        private var accumulators: [DeviceIdentity?: [Accumulator]] = [:]

        init(identities: [Int64: DeviceIdentity], type: QuantityType, buckets: Int, path: String) {
            self.identities = identities
            self.type = type
            self.buckets = buckets
            self.path = path
        }

        /// Adds a value to `bucket` of the device with row id `deviceID`.
        /// - Throws: `invalidData` when no device has that row id.
        mutating func add(_ value: Double, at start: Int64, bucket: Int, device deviceID: Int64?) throws(StoreError) {
            let key = try identity(of: deviceID)
            accumulators[key, default: Array(repeating: Accumulator(), count: buckets)][bucket].add(value, at: start)
        }

        /// Adds a series' summary to `bucket` of the device with row id `deviceID`.
        /// - Throws: `invalidData` when no device has that row id.
        mutating func add(
            count: Int, sum: Double, minimum: Double, maximum: Double, last: Double, at lastStart: Int64, bucket: Int,
            device deviceID: Int64?
        ) throws(StoreError) {
            let key = try identity(of: deviceID)
            accumulators[key, default: Array(repeating: Accumulator(), count: buckets)][bucket]
                .add(count: count, sum: sum, minimum: minimum, maximum: maximum, last: last, at: lastStart)
        }

        /// Spreads a cumulative value from `start` to `stop` over the buckets of the device with
        /// row id `deviceID` (``StatisticsCalculator/spread(start:stop:value:_:_:)``).
        /// - Throws: `invalidData` when no device has that row id.
        mutating func spread(start: Int64, stop: Int64, value: Double, edges: [Int64], device deviceID: Int64?) throws(StoreError) {
            let key = try identity(of: deviceID)
            let buckets = buckets
            StatisticsCalculator.spread(start: start, stop: stop, value: value, edges) { bucket, amount in
                accumulators[key, default: Array(repeating: Accumulator(), count: buckets)][bucket].add(amount, at: start)
            }
        }

        /// Per bucket, the statistics of each device with values in it: named devices first in
        /// their order, then the samples without a device.
        func statistics(edges: [Int64]) -> [[DeviceStatistics]] {
            let order = accumulators.keys.sorted { left, right in
                switch (left, right) {
                case let (left?, right?): left < right
                case (.some, nil): true
                case (nil, _): false
                }
            }
            return (0..<buckets).map { bucket in
                let (start, stop) = StatisticsCalculator.bounds(bucket, edges)
                return order.compactMap { key -> DeviceStatistics? in
                    guard let values = accumulators[key]?[bucket], values.count > 0 else { return nil }
                    let statistics = switch type.aggregationStyle {
                    case .discrete:
                        QuantityStatistics(
                            type: type, startDate: start, endDate: stop, sampleCount: values.count,
                            average: values.sum / Double(values.count), minimum: values.minimum, maximum: values.maximum,
                            mostRecent: values.mostRecent,
                            mostRecentDate: StoreTime.date(microseconds: values.mostRecentStart))
                    case .cumulative:
                        QuantityStatistics(type: type, startDate: start, endDate: stop, sampleCount: values.count, sum: values.sum)
                    }
                    return DeviceStatistics(device: key?.device, statistics: statistics)
                }
            }
        }

        /// The identity of the device with row id `deviceID`; nil for a sample without a device.
        private func identity(of deviceID: Int64?) throws(StoreError) -> DeviceIdentity? {
            guard let deviceID else { return nil }
            guard let identity = identities[deviceID] else {
                throw StoreError(.invalidData, path: path, message: "a \(type) sample names device \(deviceID), which is not stored")
            }
            return identity
        }
    }
}
