public import Foundation
public import HealthModel
public import RemoteOutbox

/// Encodes a batch once into what the outbox stores and sends unchanged: the body in the
/// configured format, gzip-compressed when configured (by libdeflate, or zlib without it).
///
/// Runs on the outbox's queue when it seals or splits batches, and on the intake task for full
/// batches; pure apart from calling `compressionFailed`. Thread-safe.
public struct BatchEncoder: Sendable {
    /// The format.
    public let builder: PayloadBuilder
    /// Whether bodies are gzip-compressed.
    public let gzip: Bool
    /// Compresses bodies when it can be loaded; zlib does otherwise (the same gzip format).
    public let deflate: DeflateLibrary
    /// Told when zlib fails: the body is then stored uncompressed, which any repository accepts.
    let compressionFailed: @Sendable (GzipError) -> Void

    /// An encoder for `builder`'s format, compressing with `deflate` (libdeflate) or zlib.
    public init(
        builder: PayloadBuilder, gzip: Bool, deflate: DeflateLibrary,
        compressionFailed: @escaping @Sendable (GzipError) -> Void = { _ in }
    ) {
        self.builder = builder
        self.gzip = gzip
        self.deflate = deflate
        self.compressionFailed = compressionFailed
    }

    /// The stored body of `records`, decoding their HealthJSON where the format needs it.
    public func body(for records: [OutboxRecord]) -> OutboxBody {
        finish(builder.payload(for: records))
    }

    /// The stored body of records just taken from the bus (`stored[i]` is `records[i]`).
    func body(for stored: [OutboxRecord], samples records: [HealthRecord]) -> OutboxBody {
        finish(builder.payload(for: stored, samples: records))
    }

    private func finish(_ payload: Payload) -> OutboxBody {
        guard gzip else {
            return OutboxBody(
                bytes: Array(payload.body), contentEncoding: nil, unusable: payload.unusable, payloadOffsets: payload.payloadOffsets)
        }
        if let compressed = payload.body.withUnsafeBytes({ deflate.gzip($0) }) {
            return OutboxBody(
                bytes: compressed, contentEncoding: "gzip", unusable: payload.unusable, payloadOffsets: payload.payloadOffsets)
        }
        do {
            return OutboxBody(
                bytes: Array(try Gzip.compress(payload.body)), contentEncoding: "gzip", unusable: payload.unusable,
                payloadOffsets: payload.payloadOffsets)
        } catch {
            compressionFailed(error)
            return OutboxBody(
                bytes: Array(payload.body), contentEncoding: nil, unusable: payload.unusable, payloadOffsets: payload.payloadOffsets)
        }
    }
}
