public import FoundationEssentials
public import HealthModel

/// A form a person's data can be exported in besides healthgate's own JSON (`healthgate
/// participant export --format NAME`), provided by the plugin that knows the form (the
/// `http-repository` sink: FHIR) and listed in the catalog (``PluginCatalog/exportFormats``), so
/// the executable names no plugin.
public protocol PersonExportFormat: Sendable {
    /// The `--format` value, kebab-case (`fhir`).
    static var name: String { get }
    /// One line for `--help`: what the file holds.
    static var summary: String { get }
    /// The file for `person`'s `records` (every record of theirs as on the bus, workouts
    /// included), exported at `date`.
    /// - Throws: when a record cannot be encoded.
    static func export(person: ParticipantCharacteristics, records: [HealthRecord], at date: Date) throws -> PersonExportFile
}

/// What a ``PersonExportFormat`` made of a person's data.
public struct PersonExportFile: Sendable {
    /// The file's bytes.
    public var bytes: [UInt8]
    /// What it holds, for the command's report (`3 Observations (subject Patient/ana-7)`),
    /// including what the form could not hold.
    public var description: String

    public init(bytes: [UInt8], description: String) {
        self.bytes = bytes
        self.description = description
    }
}
