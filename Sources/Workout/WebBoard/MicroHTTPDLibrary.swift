internal import CMicroHTTPD
import LinuxSystem

/// libmicrohttpd, opened with dlopen(3) when the board starts (a ``LazyLibrary``), so a gateway
/// without a board never maps it nor the TLS libraries it depends on (GnuTLS, p11-kit, nettle
/// and theirs).
public final class MicroHTTPDLibrary: Sendable {
    /// The soname of libmicrohttpd 12 (Debian and Ubuntu package `libmicrohttpd12`).
    public static let defaultPath = "libmicrohttpd.so.12"

    /// What a failure to load says to do.
    static let remedy = "The live board (`web`) needs libmicrohttpd 12 at run time: "
        + "install libmicrohttpd12 (`apt install libmicrohttpd12`; libmicrohttpd12t64 on Debian 13)"

    private let library: LazyLibrary<MicroHTTPDEntryPoints>

    /// Creates a handle on the library without loading it.
    public init(path: String = MicroHTTPDLibrary.defaultPath) {
        library = LazyLibrary(path: path, remedy: Self.remedy) { library throws(NativeLibraryError) in
            MicroHTTPDEntryPoints(
                // Variadic: called only through shim.h's typed wrappers.
                startDaemon: try library.resolve("MHD_start_daemon", as: VariadicEntryPoint.self),
                stopDaemon: try library.resolve("MHD_stop_daemon", as: hg_mhd_stop_daemon_fn.self),
                getDaemonInfo: try library.resolve("MHD_get_daemon_info", as: VariadicEntryPoint.self),
                lookupConnectionValue: try library.resolve(
                    "MHD_lookup_connection_value", as: hg_mhd_lookup_connection_value_fn.self),
                createResponseFromBuffer: try library.resolve(
                    "MHD_create_response_from_buffer", as: hg_mhd_create_response_from_buffer_fn.self),
                createResponseFromCallback: try library.resolve(
                    "MHD_create_response_from_callback", as: hg_mhd_create_response_from_callback_fn.self),
                destroyResponse: try library.resolve("MHD_destroy_response", as: hg_mhd_destroy_response_fn.self),
                addResponseHeader: try library.resolve("MHD_add_response_header", as: hg_mhd_add_response_header_fn.self),
                queueResponse: try library.resolve("MHD_queue_response", as: hg_mhd_queue_response_fn.self))
        }
    }

    /// The entry points, loading the library first if needed (blocks while the loader maps it).
    /// - Throws: ``NativeLibraryError`` naming the library, the step and what to install.
    func entryPoints() throws(NativeLibraryError) -> MicroHTTPDEntryPoints {
        try library.entryPoints()
    }
}

/// libmicrohttpd's entry points, resolved by ``MicroHTTPDLibrary``: C function pointers into a
/// library that is never unloaded (its threads may still run its code while a daemon stops).
struct MicroHTTPDEntryPoints: Sendable {
    /// `MHD_start_daemon`, variadic: called only through shim.h's `shim_mhd_start_ipv4`.
    let startDaemon: VariadicEntryPoint
    let stopDaemon: hg_mhd_stop_daemon_fn
    /// `MHD_get_daemon_info`, variadic: called only through shim.h's `shim_mhd_bound_port`.
    let getDaemonInfo: VariadicEntryPoint
    let lookupConnectionValue: hg_mhd_lookup_connection_value_fn
    let createResponseFromBuffer: hg_mhd_create_response_from_buffer_fn
    let createResponseFromCallback: hg_mhd_create_response_from_callback_fn
    let destroyResponse: hg_mhd_destroy_response_fn
    let addResponseHeader: hg_mhd_add_response_header_fn
    let queueResponse: hg_mhd_queue_response_fn
}
