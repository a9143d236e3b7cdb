import LinuxSystem
internal import CDeflate
import Synchronization

/// libdeflate, opened at run time with dlopen(3): gzip for whole buffers, which is what a batch
/// body is, at a fraction of zlib's CPU.
///
/// libdeflate compresses a buffer in one call, without zlib's streaming state and at a fraction
/// of its CPU; compressing is a large part of what the HTTP sink spends per sample.
///
/// - Nothing is loaded by the initializer; ``load()`` (a sink calls it when it starts) or the
///   first ``gzip(_:level:)`` loads the library and resolves its entry points.
/// - The outcome is kept, a failure too: a missing library is searched for once, not once per
///   batch; the caller compresses with zlib instead (``Gzip``), which every repository reads the
///   same.
/// - The library stays mapped for the life of the process (never passed to dlclose(3)).
/// - Thread-safe: loading is serialized by a lock, and each call allocates its own compressor
///   (libdeflate's compressors are not shared between threads).
public final class DeflateLibrary: Sendable {
    /// The soname of libdeflate, from the Debian and Ubuntu package `libdeflate0`.
    public static let defaultPath = "libdeflate.so.0"

    /// The soname or path handed to dlopen(3).
    public let path: String
    private let state = Mutex<Result<DeflateEntryPoints, DeflateLibraryError>?>(nil)

    /// Creates a handle on the library without loading it.
    /// - Parameter path: a soname, searched for like any shared library (ld.so(8)), or a path.
    public init(path: String = DeflateLibrary.defaultPath) {
        self.path = path
    }

    /// Loads the library unless that was tried already. Blocks while the dynamic loader maps it.
    /// - Throws: ``DeflateLibraryError`` naming the library and dlerror(3)'s text.
    public func load() throws(DeflateLibraryError) {
        _ = try entryPoints().get()
    }

    /// `bytes` as one gzip member (RFC 1952) at `level` (1, the fastest, to 12); nil when the
    /// library cannot be loaded or the compression failed, and the caller uses zlib.
    public func gzip(_ bytes: UnsafeRawBufferPointer, level: Int32 = 1) -> [UInt8]? {
        guard case .success(let library) = entryPoints(), let compressor = library.allocate(level) else { return nil }
        defer { library.free(compressor) }
        let bound = library.bound(compressor, bytes.count)
        var written = 0
        let output = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            written = library.compress(compressor, bytes.baseAddress, bytes.count, buffer.baseAddress, bound)
            count = written
        }
        // 0: the output did not fit, which the bound rules out; zlib then does the work.
        return written > 0 ? output : nil
    }

    private func entryPoints() -> Result<DeflateEntryPoints, DeflateLibraryError> {
        state.withLock { loaded in
            if let loaded { return loaded }
            let outcome = Result { () throws(DeflateLibraryError) in try Self.open(path) }
            loaded = outcome
            return outcome
        }
    }

    private static func open(_ path: String) throws(DeflateLibraryError) -> DeflateEntryPoints {
        do throws(DynamicLibraryError) {
            let library = try DynamicLibrary.open(path)
            do throws(DynamicLibraryError) {
                return DeflateEntryPoints(
                    allocate: try library.resolve("libdeflate_alloc_compressor", as: hg_libdeflate_alloc_compressor_fn.self),
                    compress: try library.resolve("libdeflate_gzip_compress", as: hg_libdeflate_gzip_compress_fn.self),
                    bound: try library.resolve("libdeflate_gzip_compress_bound", as: hg_libdeflate_gzip_compress_bound_fn.self),
                    free: try library.resolve("libdeflate_free_compressor", as: hg_libdeflate_free_compressor_fn.self))
            } catch {
                library.abandon()
                throw error
            }
        } catch {
            throw DeflateLibraryError(
                library: path, reason: error.symbol.map { "no \($0): \(error.reason)" } ?? error.reason)
        }
    }
}

/// libdeflate could not be loaded; bodies are compressed with zlib instead.
public struct DeflateLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The soname or path handed to dlopen(3).
    public var library: String
    /// dlerror(3)'s text.
    public var reason: String

    public var description: String {
        "cannot load \(library): \(reason); compressing with zlib, which takes more CPU "
            + "(install libdeflate0: `apt install libdeflate0`)"
    }
}

/// libdeflate's entry points, resolved by ``DeflateLibrary``.
///
// @unchecked Sendable: immutable addresses of functions in a library that is never unloaded; the
// compiler cannot see that C function pointers are plain values.
struct DeflateEntryPoints: @unchecked Sendable {
    let allocate: hg_libdeflate_alloc_compressor_fn
    let compress: hg_libdeflate_gzip_compress_fn
    let bound: hg_libdeflate_gzip_compress_bound_fn
    let free: hg_libdeflate_free_compressor_fn
}
