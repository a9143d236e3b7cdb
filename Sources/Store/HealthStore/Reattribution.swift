public import HealthModel

/// One object ``HealthStore/attribute(_:to:)`` gave to a person: its uuid before and after (a
/// quantity series keeps its uuid; a sample or a correlation is a new object, its old uuid
/// deleted with a tombstone), and its kind.
public struct Reattribution: Hashable, Sendable {
    /// The object's uuid before.
    public var before: SampleID
    /// The new version's uuid.
    public var after: SampleID
    /// Its kind.
    public var kind: HealthRecordKind

    /// Creates a value.
    public init(before: SampleID, after: SampleID, kind: HealthRecordKind) {
        self.before = before
        self.after = after
        self.kind = kind
    }
}

extension HealthStore {
    /// Gives the objects `selection` names (by uuid, or a device's in a range) to `person` (nil:
    /// to nobody), each as a new version, in one transaction (see `RecordWriter.attribute`):
    /// every remote sink then sends the corrected objects.
    /// - Throws: ``StoreError`` `.invalidArgument` for an unknown uuid, an empty range, a
    ///   selection of nothing, a workout or a heartbeat series; `.inUse` for a quantity series
    ///   still being filled; `.readOnly`; or the SQLite failure. Nothing changes then.
    public func attribute(_ selection: DeletionSelection, to person: String?) async throws(StoreError) -> [Reattribution] {
        try await requireWriter().perform { writer throws(StoreError) in try writer.attribute(selection, to: person) }
    }
}
