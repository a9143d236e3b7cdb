internal import CCurl
public import LinuxSystem

/// libcurl, opened with dlopen(3) when an `http-repository` sink starts (a ``LazyLibrary``), so a
/// gateway without one never maps it nor the TLS, HTTP/2, SSH and LDAP libraries it depends on.
///
/// A load resolves every entry point the transport calls and runs `curl_global_init`; the
/// instance's deinit pairs it with `curl_global_cleanup`. The library is never unmapped: libcurl's
/// threaded resolver may leave a detached thread running libcurl code after `curl_easy_cleanup`.
public final class CurlLibrary: Sendable {
    /// The soname of libcurl 4, from the Debian and Ubuntu package `libcurl4` (`libcurl4t64` since
    /// Debian 13 and Ubuntu 24.04).
    public static let defaultPath = "libcurl.so.4"

    /// What a failure to load says to do.
    static let remedy = "The http-repository sink needs libcurl 4 at run time: install libcurl4 "
        + "(`apt install libcurl4`; the package is libcurl4t64 on Debian 13 and Ubuntu 24.04 or later)"

    private let library: LazyLibrary<CurlEntryPoints>

    /// The soname or path handed to dlopen(3).
    public var path: String { library.path }

    /// Creates a handle on the library without loading it.
    /// - Parameter path: a soname, searched for like any shared library (ld.so(8)), or a path.
    public init(path: String = CurlLibrary.defaultPath) {
        library = LazyLibrary(path: path, remedy: Self.remedy) { library throws(NativeLibraryError) in
            // Each `hg_curl_*_fn` type is declared in shim.h as `__typeof__(&name)`, from curl.h's
            // prototype; the variadic two are `VariadicEntryPoint`s.
            let globalInit = try library.resolve("curl_global_init", as: hg_curl_global_init_fn.self)
            let entryPoints = CurlEntryPoints(
                globalCleanup: try library.resolve("curl_global_cleanup", as: hg_curl_global_cleanup_fn.self),
                easyInit: try library.resolve("curl_easy_init", as: hg_curl_easy_init_fn.self),
                easyCleanup: try library.resolve("curl_easy_cleanup", as: hg_curl_easy_cleanup_fn.self),
                easyPerform: try library.resolve("curl_easy_perform", as: hg_curl_easy_perform_fn.self),
                easyStrerror: try library.resolve("curl_easy_strerror", as: hg_curl_easy_strerror_fn.self),
                slistAppend: try library.resolve("curl_slist_append", as: hg_curl_slist_append_fn.self),
                slistFreeAll: try library.resolve("curl_slist_free_all", as: hg_curl_slist_free_all_fn.self),
                // Variadic: called only through shim.h's typed wrappers.
                setopt: try library.resolve("curl_easy_setopt", as: VariadicEntryPoint.self),
                getinfo: try library.resolve("curl_easy_getinfo", as: VariadicEntryPoint.self))
            let code = globalInit(Int(CURL_GLOBAL_DEFAULT))
            guard code == CURLE_OK else {
                let text = entryPoints.easyStrerror(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                throw library.initializationFailed("curl_global_init failed: \(text)")
            }
            return entryPoints
        }
    }

    deinit {
        // Pairs the curl_global_init of a successful load (libcurl counts the calls).
        library.loadedEntryPoints?.globalCleanup()
    }

    /// Loads the library unless it is loaded already.
    ///
    /// Blocks while the dynamic loader reads and maps the library and its dependencies: call it
    /// from a Dispatch queue, not from the cooperative pool (``CurlTransport/prepare()`` does).
    /// - Throws: ``NativeLibraryError`` naming the library and the step that failed, with
    ///   dlerror(3)'s or libcurl's text.
    public func load() throws(NativeLibraryError) {
        _ = try library.entryPoints()
    }

    /// The resolved entry points, loading the library first if needed. Blocks like ``load()``.
    func entryPoints() throws(NativeLibraryError) -> CurlEntryPoints {
        try library.entryPoints()
    }
}

/// libcurl's entry points, resolved by ``CurlLibrary``: C function pointers into a library that
/// is never unloaded.
struct CurlEntryPoints: Sendable {
    let globalCleanup: hg_curl_global_cleanup_fn
    let easyInit: hg_curl_easy_init_fn
    let easyCleanup: hg_curl_easy_cleanup_fn
    let easyPerform: hg_curl_easy_perform_fn
    let easyStrerror: hg_curl_easy_strerror_fn
    let slistAppend: hg_curl_slist_append_fn
    let slistFreeAll: hg_curl_slist_free_all_fn
    /// `curl_easy_setopt`, variadic: called only through shim.h's `hg_curl_setopt_*` wrappers.
    let setopt: VariadicEntryPoint
    /// `curl_easy_getinfo`, variadic: called only through shim.h's `hg_curl_response_code`.
    let getinfo: VariadicEntryPoint
}
