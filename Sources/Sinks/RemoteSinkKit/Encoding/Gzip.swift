internal import CZlib
public import FoundationEssentials

/// A zlib failure while compressing or decompressing, with zlib's return code.
public struct GzipError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var operation: String
    public var description: String { "zlib \(operation) failed with code \(code)" }
}

/// gzip (RFC 1952) through zlib, for `Content-Encoding: gzip` request bodies.
public enum Gzip {
    /// Compresses `data` into one gzip member. Level 1 (zlib's fastest): on JSON it already
    /// shrinks batches about sixfold, and higher levels cost several times the CPU.
    public static func compress(_ data: Data, level: Int32 = 1) throws(GzipError) -> Data {
        var stream = z_stream()
        // windowBits 15 + 16 asks zlib for a gzip header and trailer instead of a zlib wrapper
        // (zlib.h, deflateInit2).
        let initialized = shim_deflateInit2(&stream, level, 15 + 16)
        guard initialized == Z_OK else { throw GzipError(code: initialized, operation: "deflateInit2") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(data.count))) + 32
        var output = Data(count: bound)
        let result: Int32 = data.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        // With an output buffer of deflateBound bytes one Z_FINISH call always completes.
        guard result == Z_STREAM_END else { throw GzipError(code: result, operation: "deflate") }
        output.count = Int(stream.total_out)
        return output
    }

    /// Decompresses a gzip member: the outbox reads a batch's payloads back from its stored body
    /// with it (``OutboxRecordIndex``).
    public static func decompress(_ data: Data) throws(GzipError) -> Data {
        var stream = z_stream()
        let initialized = shim_inflateInit2(&stream, 15 + 16)
        guard initialized == Z_OK else { throw GzipError(code: initialized, operation: "inflateInit2") }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var status: Int32 = Z_OK
        data.withUnsafeBytes { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            repeat {
                let produced: Int = chunk.withUnsafeMutableBytes { out in
                    stream.next_out = out.bindMemory(to: Bytef.self).baseAddress
                    stream.avail_out = uInt(out.count)
                    status = inflate(&stream, Z_NO_FLUSH)
                    return out.count - Int(stream.avail_out)
                }
                output.append(contentsOf: chunk[0..<produced])
            } while status == Z_OK
        }
        guard status == Z_STREAM_END else { throw GzipError(code: status, operation: "inflate") }
        return output
    }
}
