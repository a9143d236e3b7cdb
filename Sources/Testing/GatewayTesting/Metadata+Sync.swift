public import HealthModel

extension Metadata {
    /// These entries with a sync identifier and version, as a device that syncs its records
    /// stamps them (HealthKit's HKMetadataKeySyncIdentifier and HKMetadataKeySyncVersion).
    public func synced(_ identifier: String, version: Int64) -> Metadata {
        var metadata = self
        metadata.syncIdentifier = identifier
        metadata.syncVersion = version
        return metadata
    }
}
