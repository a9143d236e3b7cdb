internal import CMosquitto
import RemoteSinkKit
import Synchronization

/// libmosquitto, opened at run time with dlopen(3) instead of being linked into the executable,
/// like libcurl for the HTTP sink: only a process that starts an `mqtt` sink maps it (and the
/// TLS libraries it depends on).
///
/// - Nothing is loaded by the initializer; ``load()`` loads the library, resolves every entry
///   point the client calls and runs `mosquitto_lib_init`.
/// - A success is kept; a failure is not, so the next attempt tries again (installing
///   libmosquitto1 while the gateway runs is enough for the next delivery attempt).
/// - The library is never passed to dlclose(3): the client's network thread runs its code until
///   `mosquitto_loop_stop` returns, and dlopen(3) counts references anyway.
/// - Thread-safe: loading is serialized by a lock.
public final class MosquittoLibrary: Sendable {
    /// The soname of libmosquitto 1 (Debian and Ubuntu package `libmosquitto1`).
    public static let defaultPath = "libmosquitto.so.1"

    /// The soname or path handed to dlopen(3).
    public let path: String
    private let state = Mutex<MosquittoEntryPoints?>(nil)

    /// Creates a handle on the library without loading it.
    public init(path: String = MosquittoLibrary.defaultPath) {
        self.path = path
    }

    /// Loads the library unless it is loaded already. Blocks while the loader maps it.
    /// - Throws: ``MosquittoLibraryError`` naming the library and the step that failed.
    public func load() throws(MosquittoLibraryError) {
        _ = try entryPoints()
    }

    func entryPoints() throws(MosquittoLibraryError) -> MosquittoEntryPoints {
        try state.withLock { (loaded: inout MosquittoEntryPoints?) throws(MosquittoLibraryError) -> MosquittoEntryPoints in
            if let loaded { return loaded }
            let entryPoints = try Self.open(path)
            loaded = entryPoints
            return entryPoints
        }
    }

    private static func open(_ path: String) throws(MosquittoLibraryError) -> MosquittoEntryPoints {
        let library: DynamicLibrary
        do {
            library = try DynamicLibrary.open(path)
        } catch {
            throw MosquittoLibraryError(library: path, step: .open, reason: error.reason)
        }
        do throws(MosquittoLibraryError) {
            // `Function` is shim.h's `__typeof__(&name)`.
            func resolve<Function>(_ name: String, as type: Function.Type) throws(MosquittoLibraryError) -> Function {
                do {
                    return try library.resolve(name, as: type)
                } catch {
                    throw MosquittoLibraryError(library: path, step: .resolve(symbol: name), reason: error.reason)
                }
            }
            let libInit = try resolve("mosquitto_lib_init", as: hg_mosquitto_lib_init_fn.self)
            let entryPoints = MosquittoEntryPoints(
                new: try resolve("mosquitto_new", as: hg_mosquitto_new_fn.self),
                destroy: try resolve("mosquitto_destroy", as: hg_mosquitto_destroy_fn.self),
                intOption: try resolve("mosquitto_int_option", as: hg_mosquitto_int_option_fn.self),
                willSet: try resolve("mosquitto_will_set_v5", as: hg_mosquitto_will_set_v5_fn.self),
                usernamePasswordSet: try resolve("mosquitto_username_pw_set", as: hg_mosquitto_username_pw_set_fn.self),
                tlsSet: try resolve("mosquitto_tls_set", as: hg_mosquitto_tls_set_fn.self),
                reconnectDelaySet: try resolve("mosquitto_reconnect_delay_set", as: hg_mosquitto_reconnect_delay_set_fn.self),
                connectAsync: try resolve("mosquitto_connect_async", as: hg_mosquitto_connect_async_fn.self),
                disconnect: try resolve("mosquitto_disconnect", as: hg_mosquitto_disconnect_fn.self),
                loopStart: try resolve("mosquitto_loop_start", as: hg_mosquitto_loop_start_fn.self),
                loopStop: try resolve("mosquitto_loop_stop", as: hg_mosquitto_loop_stop_fn.self),
                publish: try resolve("mosquitto_publish_v5", as: hg_mosquitto_publish_v5_fn.self),
                connectCallbackSet: try resolve("mosquitto_connect_callback_set", as: hg_mosquitto_connect_callback_set_fn.self),
                disconnectCallbackSet: try resolve(
                    "mosquitto_disconnect_callback_set", as: hg_mosquitto_disconnect_callback_set_fn.self),
                publishCallbackSet: try resolve(
                    "mosquitto_publish_v5_callback_set", as: hg_mosquitto_publish_v5_callback_set_fn.self),
                logCallbackSet: try resolve("mosquitto_log_callback_set", as: hg_mosquitto_log_callback_set_fn.self),
                propertyAddStringPair: try resolve(
                    "mosquitto_property_add_string_pair", as: hg_mosquitto_property_add_string_pair_fn.self),
                propertyFreeAll: try resolve("mosquitto_property_free_all", as: hg_mosquitto_property_free_all_fn.self),
                strerror: try resolve("mosquitto_strerror", as: hg_mosquitto_strerror_fn.self),
                connackString: try resolve("mosquitto_connack_string", as: hg_mosquitto_connack_string_fn.self),
                reasonString: try resolve("mosquitto_reason_string", as: hg_mosquitto_reason_string_fn.self))
            let code = libInit()
            guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
                throw MosquittoLibraryError(
                    library: path, step: .initialize, reason: "mosquitto_lib_init failed: \(entryPoints.describe(code))")
            }
            return entryPoints
        } catch {
            library.abandon()
            throw error
        }
    }
}

/// libmosquitto could not be loaded, so the `mqtt` sink cannot publish anything.
public struct MosquittoLibraryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where loading stopped.
    public enum Step: Sendable, Hashable {
        /// dlopen(3) failed: the library or a dependency is missing.
        case open
        /// The library lacks an entry point (not libmosquitto, or older than 1.6).
        case resolve(symbol: String)
        /// `mosquitto_lib_init` failed.
        case initialize
    }

    public var library: String
    public var step: Step
    public var reason: String

    public var description: String {
        let what = switch step {
        case .open: "cannot load \(library)"
        case .resolve(let symbol): "cannot find \(symbol) in \(library)"
        case .initialize: "cannot initialize \(library)"
        }
        return "\(what): \(reason). The mqtt sink needs libmosquitto 1 (2.0 or later) at run time: "
            + "install libmosquitto1 (`apt install libmosquitto1`)"
    }
}

/// libmosquitto's entry points, resolved by ``MosquittoLibrary``.
///
/// `@unchecked Sendable`: immutable addresses of functions in a library that is never unloaded.
struct MosquittoEntryPoints: @unchecked Sendable {
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
