public import LinuxSystem
internal import CDeflate
import Synchronization

/// libdeflate, opened with dlopen(3) when a sink that compresses starts (a ``LazyLibrary``): gzip
/// for whole buffers, which is what a batch body is.
///
/// libdeflate compresses a buffer in one call, without zlib's streaming state and at a fraction
/// of its CPU; compressing is a large part of what the HTTP sink spends per sample.
///
/// - Nothing is loaded by the initializer; ``load()`` (a sink calls it when it starts) or the
///   first ``gzip(_:level:)`` loads the library and resolves its entry points.
/// - Unlike the other libraries, a failure is kept too: a missing library is searched for once,
///   not once per batch; the caller compresses with zlib instead (``Gzip``), which every
///   repository reads the same.
/// - The library stays mapped for the life of the process (never passed to dlclose(3)).
/// - Thread-safe: loading is serialized by a lock, and each call allocates its own compressor
///   (libdeflate's compressors are not shared between threads).
public final class DeflateLibrary: Sendable {
    /// The soname of libdeflate, from the Debian and Ubuntu package `libdeflate0`.
    public static let defaultPath = "libdeflate.so.0"

    /// What a failure to load says to do.
    static let remedy = "Compressing with zlib instead, which takes more CPU: install libdeflate0 (`apt install libdeflate0`)"

    private let library: LazyLibrary<DeflateEntryPoints>
    /// The first failure to load, kept so that no later call searches for the library again.
    private let failure = Mutex<NativeLibraryError?>(nil)

    /// The soname or path handed to dlopen(3).
    public var path: String { library.path }

    /// Creates a handle on the library without loading it.
    /// - Parameter path: a soname, searched for like any shared library (ld.so(8)), or a path.
    public init(path: String = DeflateLibrary.defaultPath) {
        library = LazyLibrary(path: path, remedy: Self.remedy) { library throws(NativeLibraryError) in
            // Each `hg_libdeflate_*_fn` type is declared in shim.h as `__typeof__(&name)`.
            DeflateEntryPoints(
                allocate: try library.resolve("libdeflate_alloc_compressor", as: hg_libdeflate_alloc_compressor_fn.self),
                compress: try library.resolve("libdeflate_gzip_compress", as: hg_libdeflate_gzip_compress_fn.self),
                bound: try library.resolve("libdeflate_gzip_compress_bound", as: hg_libdeflate_gzip_compress_bound_fn.self),
                free: try library.resolve("libdeflate_free_compressor", as: hg_libdeflate_free_compressor_fn.self))
        }
    }

    /// Loads the library unless that was tried already. Blocks while the dynamic loader maps it.
    /// - Throws: ``NativeLibraryError`` naming the library, the step that failed and what to
    ///   install; the same error on every call after a failure.
    public func load() throws(NativeLibraryError) {
        _ = try entryPoints()
    }

    /// `bytes` as one gzip member (RFC 1952) at `level` (1, the fastest, to 12); nil when the
    /// library cannot be loaded or the compression failed, and the caller uses zlib.
    public func gzip(_ bytes: UnsafeRawBufferPointer, level: Int32 = 1) -> [UInt8]? {
        guard let library = try? entryPoints(), let compressor = library.allocate(level) else { return nil }
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

    private func entryPoints() throws(NativeLibraryError) -> DeflateEntryPoints {
        try failure.withLock { (failure: inout NativeLibraryError?) throws(NativeLibraryError) -> DeflateEntryPoints in
            if let failure { throw failure }
            do throws(NativeLibraryError) {
                return try library.entryPoints()
            } catch {
                failure = error
                throw error
            }
        }
    }
}

/// libdeflate's entry points, resolved by ``DeflateLibrary``.
struct DeflateEntryPoints: Sendable {
    let allocate: hg_libdeflate_alloc_compressor_fn
    let compress: hg_libdeflate_gzip_compress_fn
    let bound: hg_libdeflate_gzip_compress_bound_fn
    let free: hg_libdeflate_free_compressor_fn
}
