internal import CCurl
import RemoteSinkKit
import Synchronization

/// libcurl, opened at run time with dlopen(3) instead of being linked into the executable.
///
/// Linking libcurl made every `healthgate` process map it and the TLS, HTTP/2, SSH and LDAP
/// libraries it depends on at start-up, several MiB of resident memory even with no HTTP sink
/// configured. Now only a process that starts an `http-repository` sink loads it.
///
/// - Nothing is loaded by the initializer; ``load()`` or the first transfer of a
///   ``CurlTransport`` loads the library, resolves every entry point the transport calls, and
///   runs `curl_global_init`.
/// - A success is kept. A failure is not: the next call tries again, so installing libcurl
///   while the gateway runs is enough for the sink's next restart to work.
/// - The library stays mapped for the life of the process: it is never passed to dlclose(3).
///   libcurl's threaded resolver may leave a detached thread running libcurl code after
///   `curl_easy_cleanup` returns, and unmapping the library under it would crash the process.
///   dlopen(3) counts references, so several instances share one mapping.
/// - Thread-safe: loading is serialized by a lock.
public final class CurlLibrary: Sendable {
    /// The soname of libcurl 4, from the Debian and Ubuntu package `libcurl4` (`libcurl4t64` since
    /// Debian 13 and Ubuntu 24.04).
    public static let defaultPath = "libcurl.so.4"

    /// The soname or path handed to dlopen(3).
    public let path: String
    private let state = Mutex<CurlEntryPoints?>(nil)

    /// Creates a handle on the library without loading it.
    /// - Parameter path: a soname, searched for like any shared library (ld.so(8)), or a path.
    public init(path: String = CurlLibrary.defaultPath) {
        self.path = path
    }

    deinit {
        // Pairs the curl_global_init of a successful load (libcurl counts the calls).
        if let entryPoints = state.withLock({ $0 }) {
            entryPoints.globalCleanup()
        }
    }

    /// Loads the library unless it is loaded already.
    ///
    /// Blocks while the dynamic loader reads and maps the library and its dependencies: call it
    /// from a Dispatch queue, not from the cooperative pool (``CurlTransport/prepare()`` does).
    /// - Throws: ``CurlLibraryError`` naming the library and the step that failed, with
    ///   dlerror(3)'s text.
    public func load() throws(CurlLibraryError) {
        _ = try entryPoints()
    }

    /// The resolved entry points, loading the library first if needed. Blocks like ``load()``.
    func entryPoints() throws(CurlLibraryError) -> CurlEntryPoints {
        try state.withLock { (loaded: inout CurlEntryPoints?) throws(CurlLibraryError) -> CurlEntryPoints in
            if let loaded { return loaded }
            let entryPoints = try Self.open(path)
            loaded = entryPoints
            return entryPoints
        }
    }

    private static func open(_ path: String) throws(CurlLibraryError) -> CurlEntryPoints {
        let library: DynamicLibrary
        do {
            library = try DynamicLibrary.open(path)
        } catch {
            throw CurlLibraryError(library: path, step: .open, reason: error.reason)
        }
        do throws(CurlLibraryError) {
            // Each `hg_curl_*_fn` type is declared in shim.h as `__typeof__(&name)`, from curl.h's
            // prototype; the variadic two stay raw addresses.
            func resolve<Function>(_ name: String, as type: Function.Type) throws(CurlLibraryError) -> Function {
                do {
                    return try library.resolve(name, as: type)
                } catch {
                    throw CurlLibraryError(library: path, step: .resolve(symbol: name), reason: error.reason)
                }
            }
            let globalInit = try resolve("curl_global_init", as: hg_curl_global_init_fn.self)
            let entryPoints = CurlEntryPoints(
                globalCleanup: try resolve("curl_global_cleanup", as: hg_curl_global_cleanup_fn.self),
                easyInit: try resolve("curl_easy_init", as: hg_curl_easy_init_fn.self),
                easyCleanup: try resolve("curl_easy_cleanup", as: hg_curl_easy_cleanup_fn.self),
                easyPerform: try resolve("curl_easy_perform", as: hg_curl_easy_perform_fn.self),
                easyStrerror: try resolve("curl_easy_strerror", as: hg_curl_easy_strerror_fn.self),
                slistAppend: try resolve("curl_slist_append", as: hg_curl_slist_append_fn.self),
                slistFreeAll: try resolve("curl_slist_free_all", as: hg_curl_slist_free_all_fn.self),
                // Variadic: kept as plain addresses for shim.h's typed wrappers.
                setopt: try resolve("curl_easy_setopt", as: UnsafeMutableRawPointer.self),
                getinfo: try resolve("curl_easy_getinfo", as: UnsafeMutableRawPointer.self))
            let code = globalInit(Int(CURL_GLOBAL_DEFAULT))
            guard code == CURLE_OK else {
                let text = entryPoints.easyStrerror(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                throw CurlLibraryError(library: path, step: .initialize, reason: "curl_global_init failed: \(text)")
            }
            return entryPoints
        } catch {
            // Nothing from the library is in use yet, so this reference can go.
            library.abandon()
            throw error
        }
    }
}

/// libcurl could not be loaded, so the `http-repository` sink cannot send anything.
public struct CurlLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where loading stopped.
    public enum Step: Sendable, Hashable {
        /// dlopen(3) failed: the library is missing, or it or a dependency cannot be loaded.
        case open
        /// The library opened but lacks an entry point (not libcurl, or too old a libcurl).
        case resolve(symbol: String)
        /// `curl_global_init` failed.
        case initialize
    }

    /// The soname or path handed to dlopen(3).
    public var library: String
    public var step: Step
    /// dlerror(3)'s text, or libcurl's for ``Step/initialize``.
    public var reason: String

    public init(library: String, step: Step, reason: String) {
        self.library = library
        self.step = step
        self.reason = reason
    }

    public var description: String {
        let what = switch step {
        case .open: "cannot load \(library)"
        case .resolve(let symbol): "cannot find \(symbol) in \(library)"
        case .initialize: "cannot initialize \(library)"
        }
        return "\(what): \(reason). The http-repository sink needs libcurl 4 at run time: install libcurl4 "
            + "(`apt install libcurl4`; the package is libcurl4t64 on Debian 13 and Ubuntu 24.04 or later)"
    }
}

/// libcurl's entry points, resolved by ``CurlLibrary``.
///
/// `@unchecked Sendable`: immutable addresses of functions in a library that is never unloaded;
/// the raw pointers are never dereferenced as data.
struct CurlEntryPoints: @unchecked Sendable {
    let globalCleanup: hg_curl_global_cleanup_fn
    let easyInit: hg_curl_easy_init_fn
    let easyCleanup: hg_curl_easy_cleanup_fn
    let easyPerform: hg_curl_easy_perform_fn
    let easyStrerror: hg_curl_easy_strerror_fn
    let slistAppend: hg_curl_slist_append_fn
    let slistFreeAll: hg_curl_slist_free_all_fn
    /// `curl_easy_setopt`, variadic: called only through shim.h's `hg_curl_setopt_*` wrappers.
    let setopt: UnsafeMutableRawPointer
    /// `curl_easy_getinfo`, variadic: called only through shim.h's `hg_curl_response_code`.
    let getinfo: UnsafeMutableRawPointer
}
