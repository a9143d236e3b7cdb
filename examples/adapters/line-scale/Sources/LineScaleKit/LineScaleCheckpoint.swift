public import HealthgateAdapter

/// The adapter's checkpoint for a regular file, `{"offset": 1234}`: the bytes of complete lines
/// consumed. Its key is declared once; the state sent and the state resumed from are both this.
///
/// A tty or a FIFO has none: what the scale sent on a serial line cannot be read again, so
/// there is nothing to resume from (README.md, "Checkpoints").
public struct LineScaleCheckpoint: DeclaredConfiguration, Equatable {
    /// The offset just after the last complete line consumed.
    public var offset = 0

    public init() {}
    /// The checkpoint at `offset`.
    public init(offset: Int) { self.offset = offset }

    /// Its one key, declared once.
    public static var configurationKeys: [ConfigurationKey<Self>] {
        [.required("offset", \.offset, .whole(0...Int(Int64(1) << 53), unit: "bytes"), "The bytes of complete lines consumed")]
    }

    /// The checkpoint's state, as a `checkpoint` message carries it.
    public var state: JSONValue { configurationJSON }

    /// The checkpoint in the gateway's hello: `nil` when it has none.
    /// - Throws: ``AdapterMessageError`` when it is no checkpoint of this adapter (another
    ///   adapter's, or an older version's).
    public static func resuming(from state: JSONValue?) throws(AdapterMessageError) -> Self? {
        guard let state else { return nil }
        return try decoded(from: state)
    }
}
