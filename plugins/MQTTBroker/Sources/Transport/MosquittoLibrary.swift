internal import CMosquitto
public import LinuxSystem

/// libmosquitto, opened with dlopen(3) when an `mqtt` sink starts (a ``LazyLibrary``), so a
/// gateway without one never maps it nor the TLS libraries it depends on.
///
/// A load resolves every entry point the client calls and runs `mosquitto_lib_init`. The library
/// is never unmapped: the client's network thread runs its code until `mosquitto_loop_stop`
/// returns.
public final class MosquittoLibrary: Sendable {
    /// The soname of libmosquitto 1 (Debian and Ubuntu package `libmosquitto1`).
    public static let defaultPath = "libmosquitto.so.1"

    /// What a failure to load says to do.
    static let remedy = "The mqtt sink needs libmosquitto 1 (2.0 or later) at run time: "
        + "install libmosquitto1 (`apt install libmosquitto1`)"

    private let library: LazyLibrary<MosquittoEntryPoints>

    /// The soname or path handed to dlopen(3).
    public var path: String { library.path }

    /// Creates a handle on the library without loading it.
    public init(path: String = MosquittoLibrary.defaultPath) {
        library = LazyLibrary(path: path, remedy: Self.remedy) { library throws(NativeLibraryError) in
            // `Function` is shim.h's `__typeof__(&name)`.
            let libInit = try library.resolve("mosquitto_lib_init", as: hg_mosquitto_lib_init_fn.self)
            let entryPoints = MosquittoEntryPoints(
                new: try library.resolve("mosquitto_new", as: hg_mosquitto_new_fn.self),
                destroy: try library.resolve("mosquitto_destroy", as: hg_mosquitto_destroy_fn.self),
                intOption: try library.resolve("mosquitto_int_option", as: hg_mosquitto_int_option_fn.self),
                willSet: try library.resolve("mosquitto_will_set_v5", as: hg_mosquitto_will_set_v5_fn.self),
                usernamePasswordSet: try library.resolve("mosquitto_username_pw_set", as: hg_mosquitto_username_pw_set_fn.self),
                tlsSet: try library.resolve("mosquitto_tls_set", as: hg_mosquitto_tls_set_fn.self),
                reconnectDelaySet: try library.resolve("mosquitto_reconnect_delay_set", as: hg_mosquitto_reconnect_delay_set_fn.self),
                connectAsync: try library.resolve("mosquitto_connect_async", as: hg_mosquitto_connect_async_fn.self),
                disconnect: try library.resolve("mosquitto_disconnect", as: hg_mosquitto_disconnect_fn.self),
                loopStart: try library.resolve("mosquitto_loop_start", as: hg_mosquitto_loop_start_fn.self),
                loopStop: try library.resolve("mosquitto_loop_stop", as: hg_mosquitto_loop_stop_fn.self),
                publish: try library.resolve("mosquitto_publish_v5", as: hg_mosquitto_publish_v5_fn.self),
                connectCallbackSet: try library.resolve("mosquitto_connect_callback_set", as: hg_mosquitto_connect_callback_set_fn.self),
                disconnectCallbackSet: try library.resolve(
                    "mosquitto_disconnect_callback_set", as: hg_mosquitto_disconnect_callback_set_fn.self),
                publishCallbackSet: try library.resolve(
                    "mosquitto_publish_v5_callback_set", as: hg_mosquitto_publish_v5_callback_set_fn.self),
                logCallbackSet: try library.resolve("mosquitto_log_callback_set", as: hg_mosquitto_log_callback_set_fn.self),
                propertyAddStringPair: try library.resolve(
                    "mosquitto_property_add_string_pair", as: hg_mosquitto_property_add_string_pair_fn.self),
                propertyFreeAll: try library.resolve("mosquitto_property_free_all", as: hg_mosquitto_property_free_all_fn.self),
                strerror: try library.resolve("mosquitto_strerror", as: hg_mosquitto_strerror_fn.self),
                connackString: try library.resolve("mosquitto_connack_string", as: hg_mosquitto_connack_string_fn.self),
                reasonString: try library.resolve("mosquitto_reason_string", as: hg_mosquitto_reason_string_fn.self))
            let code = libInit()
            guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
                throw library.initializationFailed("mosquitto_lib_init failed: \(entryPoints.describe(code))")
            }
            return entryPoints
        }
    }

    /// Loads the library unless it is loaded already. Blocks while the loader maps it.
    /// - Throws: ``NativeLibraryError`` naming the library and the step that failed.
    public func load() throws(NativeLibraryError) {
        _ = try library.entryPoints()
    }

    func entryPoints() throws(NativeLibraryError) -> MosquittoEntryPoints {
        try library.entryPoints()
    }
}

/// libmosquitto's entry points, resolved by ``MosquittoLibrary``: C function pointers into a
/// library that is never unloaded.
struct MosquittoEntryPoints: Sendable {
    let new: hg_mosquitto_new_fn
    let destroy: hg_mosquitto_destroy_fn
    let intOption: hg_mosquitto_int_option_fn
    let willSet: hg_mosquitto_will_set_v5_fn
    let usernamePasswordSet: hg_mosquitto_username_pw_set_fn
    let tlsSet: hg_mosquitto_tls_set_fn
    let reconnectDelaySet: hg_mosquitto_reconnect_delay_set_fn
    let connectAsync: hg_mosquitto_connect_async_fn
    let disconnect: hg_mosquitto_disconnect_fn
    let loopStart: hg_mosquitto_loop_start_fn
    let loopStop: hg_mosquitto_loop_stop_fn
    let publish: hg_mosquitto_publish_v5_fn
    let connectCallbackSet: hg_mosquitto_connect_callback_set_fn
    let disconnectCallbackSet: hg_mosquitto_disconnect_callback_set_fn
    let publishCallbackSet: hg_mosquitto_publish_v5_callback_set_fn
    let logCallbackSet: hg_mosquitto_log_callback_set_fn
    let propertyAddStringPair: hg_mosquitto_property_add_string_pair_fn
    let propertyFreeAll: hg_mosquitto_property_free_all_fn
    let strerror: hg_mosquitto_strerror_fn
    let connackString: hg_mosquitto_connack_string_fn
    let reasonString: hg_mosquitto_reason_string_fn

    /// libmosquitto's text for an error code.
    func describe(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }
}
