public import FoundationEssentials
public import HealthModel

/// Which stored objects ``SQLiteSampleWriter/delete(_:)`` deletes.
///
/// A correlation is deleted whole: selecting it, or one of its member samples, deletes the
/// correlation and all its members.
public enum DeletionSelection: Hashable, Sendable {
    /// The objects with these uuids (any kind); an unknown uuid is an error.
    case ids([SampleID])
    /// The quantity samples, correlations and heartbeat series of the device with this name or
    /// local identifier whose start date is in `[from, to)`.
    case device(String, from: Date, to: Date)
    /// The objects of `type` whose start date is in `[from, to)`.
    case type(ChangeType, from: Date, to: Date)
    /// Everything of the person with this name (`healthgate participant erase`): the readings
    /// attributed to them (``HealthModel/MetadataKey/person``), their workouts
    /// (``HealthModel/MetadataKey/participant``) with their curves, and their device assignments
    /// and wear intervals, which leave no tombstone.
    case person(String)
}
