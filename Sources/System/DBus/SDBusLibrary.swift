internal import CSystemd
import LinuxSystem

/// libsystemd's sd-bus, opened with dlopen(3) when a D-Bus connection opens (a ``LazyLibrary``),
/// so a gateway that opens no D-Bus connection (no Bluetooth source) never maps libsystemd nor the libraries it depends on.
/// The library is never unmapped once loaded.
public final class SDBusLibrary: Sendable {
    /// The soname of libsystemd 0, from the Debian and Ubuntu package `libsystemd0`.
    public static let defaultPath = "libsystemd.so.0"

    /// What a failure to load says to do.
    static let remedy = "Bluetooth sources talk to BlueZ with libsystemd's sd-bus: install libsystemd0 "
        + "(`apt install libsystemd0`)"

    private let library: LazyLibrary<SDBus>

    /// The soname or path handed to dlopen(3).
    public var path: String { library.path }

    /// Creates a handle on the library without loading it.
    /// - Parameter path: a soname, searched for like any shared library (ld.so(8)), or a path.
    public init(path: String = SDBusLibrary.defaultPath) {
        library = LazyLibrary(path: path, remedy: Self.remedy) { library throws(NativeLibraryError) in
            // Each `hg_sd_bus_*_fn` type is declared in shim.h as `__typeof__(&name)`, from
            // sd-bus.h's prototype; the variadic read is a `VariadicEntryPoint`.
            SDBus(
                addMatchAsync: try library.resolve("sd_bus_add_match_async", as: hg_sd_bus_add_match_async_fn.self),
                addObject: try library.resolve("sd_bus_add_object", as: hg_sd_bus_add_object_fn.self),
                callAsync: try library.resolve("sd_bus_call_async", as: hg_sd_bus_call_async_fn.self),
                closeUnref: try library.resolve("sd_bus_close_unref", as: hg_sd_bus_close_unref_fn.self),
                getEvents: try library.resolve("sd_bus_get_events", as: hg_sd_bus_get_events_fn.self),
                getFd: try library.resolve("sd_bus_get_fd", as: hg_sd_bus_get_fd_fn.self),
                getTimeout: try library.resolve("sd_bus_get_timeout", as: hg_sd_bus_get_timeout_fn.self),
                getUniqueName: try library.resolve("sd_bus_get_unique_name", as: hg_sd_bus_get_unique_name_fn.self),
                messageAppendBasic: try library.resolve("sd_bus_message_append_basic", as: hg_sd_bus_message_append_basic_fn.self),
                messageCloseContainer: try library.resolve("sd_bus_message_close_container", as: hg_sd_bus_message_close_container_fn.self),
                messageEnterContainer: try library.resolve("sd_bus_message_enter_container", as: hg_sd_bus_message_enter_container_fn.self),
                messageExitContainer: try library.resolve("sd_bus_message_exit_container", as: hg_sd_bus_message_exit_container_fn.self),
                messageGetError: try library.resolve("sd_bus_message_get_error", as: hg_sd_bus_message_get_error_fn.self),
                messageGetInterface: try library.resolve("sd_bus_message_get_interface", as: hg_sd_bus_message_get_interface_fn.self),
                messageGetMember: try library.resolve("sd_bus_message_get_member", as: hg_sd_bus_message_get_member_fn.self),
                messageGetPath: try library.resolve("sd_bus_message_get_path", as: hg_sd_bus_message_get_path_fn.self),
                messageGetSender: try library.resolve("sd_bus_message_get_sender", as: hg_sd_bus_message_get_sender_fn.self),
                messageIsMethodCall: try library.resolve("sd_bus_message_is_method_call", as: hg_sd_bus_message_is_method_call_fn.self),
                messageNewMethodCall: try library.resolve("sd_bus_message_new_method_call", as: hg_sd_bus_message_new_method_call_fn.self),
                messageNewMethodError: try library.resolve("sd_bus_message_new_method_error", as: hg_sd_bus_message_new_method_error_fn.self),
                messageNewMethodReturn: try library.resolve("sd_bus_message_new_method_return", as: hg_sd_bus_message_new_method_return_fn.self),
                messageOpenContainer: try library.resolve("sd_bus_message_open_container", as: hg_sd_bus_message_open_container_fn.self),
                messagePeekType: try library.resolve("sd_bus_message_peek_type", as: hg_sd_bus_message_peek_type_fn.self),
                messageReadBasic: try library.resolve("sd_bus_message_read_basic", as: hg_sd_bus_message_read_basic_fn.self),
                messageRef: try library.resolve("sd_bus_message_ref", as: hg_sd_bus_message_ref_fn.self),
                messageRewind: try library.resolve("sd_bus_message_rewind", as: hg_sd_bus_message_rewind_fn.self),
                messageUnref: try library.resolve("sd_bus_message_unref", as: hg_sd_bus_message_unref_fn.self),
                new: try library.resolve("sd_bus_new", as: hg_sd_bus_new_fn.self),
                openSystem: try library.resolve("sd_bus_open_system", as: hg_sd_bus_open_system_fn.self),
                process: try library.resolve("sd_bus_process", as: hg_sd_bus_process_fn.self),
                send: try library.resolve("sd_bus_send", as: hg_sd_bus_send_fn.self),
                setAddress: try library.resolve("sd_bus_set_address", as: hg_sd_bus_set_address_fn.self),
                setBusClient: try library.resolve("sd_bus_set_bus_client", as: hg_sd_bus_set_bus_client_fn.self),
                slotUnref: try library.resolve("sd_bus_slot_unref", as: hg_sd_bus_slot_unref_fn.self),
                start: try library.resolve("sd_bus_start", as: hg_sd_bus_start_fn.self),
                unref: try library.resolve("sd_bus_unref", as: hg_sd_bus_unref_fn.self),
                messageRead: try library.resolve("sd_bus_message_read", as: VariadicEntryPoint.self))
        }
    }

    /// The entry points, loading the library first if needed. Blocks while the dynamic loader
    /// maps it: called where a connection opens, which blocks anyway.
    func entryPoints() throws(NativeLibraryError) -> SDBus {
        try library.entryPoints()
    }
}
