public import FoundationEssentials

extension UUID {
    /// The name-based UUID of `name` in `namespace` (RFC 9562, section 5.5, version 5: SHA-1
    /// of the namespace's 16 bytes followed by the name's UTF-8, version and variant bits set).
    /// The same name always gives the same UUID.
    public init(nameBased name: String, in namespace: UUID) {
        var bytes = withUnsafeBytes(of: namespace.uuid) { Array($0) }
        bytes.append(contentsOf: name.utf8)
        var hash = Array(SHA1.digest(bytes).prefix(16))
        hash[6] = hash[6] & 0x0F | 0x50
        hash[8] = hash[8] & 0x3F | 0x80
        self = UUID(uuid: (
            hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7],
            hash[8], hash[9], hash[10], hash[11], hash[12], hash[13], hash[14], hash[15]))
    }
}

extension SampleID {
    /// The namespace of the ids healthgate derives from sync identifiers
    /// (``Metadata/syncIdentifier``): a record a device sends again gets the same id again.
    public static let syncIdentifierNamespace = UUID(uuidString: "5f0c2b8e-7a1d-4c3e-9b6a-3d8e4f1a2c70")!

    /// The id of the object with `syncIdentifier` at `version` (a name-based UUID of
    /// "SYNCIDENTIFIER#VERSION"): every download of the same record gives the same id, so a
    /// repository that deduplicates by uuid keeps it once.
    public init(syncIdentifier: String, version: Int64) {
        self.init(UUID(nameBased: "\(syncIdentifier)#\(version)", in: Self.syncIdentifierNamespace))
    }
}
