internal import CSystemd
import LinuxSystem

/// The sd-bus entry points the DBus module calls, resolved from libsystemd by ``SDBusLibrary``.
///
/// Calling them is not thread-safe: sd-bus objects belong to one thread at a time, here the
/// connection's actor (``BusCore``). The table itself may be shared: C function pointers into a
/// library that is never unloaded (``LazyLibrary``).
struct SDBus: Sendable {
    let addMatchAsync: hg_sd_bus_add_match_async_fn
    let addObject: hg_sd_bus_add_object_fn
    let callAsync: hg_sd_bus_call_async_fn
    let closeUnref: hg_sd_bus_close_unref_fn
    let getEvents: hg_sd_bus_get_events_fn
    let getFd: hg_sd_bus_get_fd_fn
    let getTimeout: hg_sd_bus_get_timeout_fn
    let getUniqueName: hg_sd_bus_get_unique_name_fn
    let messageAppendBasic: hg_sd_bus_message_append_basic_fn
    let messageCloseContainer: hg_sd_bus_message_close_container_fn
    let messageEnterContainer: hg_sd_bus_message_enter_container_fn
    let messageExitContainer: hg_sd_bus_message_exit_container_fn
    let messageGetError: hg_sd_bus_message_get_error_fn
    let messageGetInterface: hg_sd_bus_message_get_interface_fn
    let messageGetMember: hg_sd_bus_message_get_member_fn
    let messageGetPath: hg_sd_bus_message_get_path_fn
    let messageGetSender: hg_sd_bus_message_get_sender_fn
    let messageIsMethodCall: hg_sd_bus_message_is_method_call_fn
    let messageNewMethodCall: hg_sd_bus_message_new_method_call_fn
    let messageNewMethodError: hg_sd_bus_message_new_method_error_fn
    let messageNewMethodReturn: hg_sd_bus_message_new_method_return_fn
    let messageOpenContainer: hg_sd_bus_message_open_container_fn
    let messagePeekType: hg_sd_bus_message_peek_type_fn
    let messageReadBasic: hg_sd_bus_message_read_basic_fn
    let messageRef: hg_sd_bus_message_ref_fn
    let messageRewind: hg_sd_bus_message_rewind_fn
    let messageUnref: hg_sd_bus_message_unref_fn
    let new: hg_sd_bus_new_fn
    let openSystem: hg_sd_bus_open_system_fn
    let process: hg_sd_bus_process_fn
    let send: hg_sd_bus_send_fn
    let setAddress: hg_sd_bus_set_address_fn
    let setBusClient: hg_sd_bus_set_bus_client_fn
    let slotUnref: hg_sd_bus_slot_unref_fn
    let start: hg_sd_bus_start_fn
    let unref: hg_sd_bus_unref_fn
    /// sd_bus_message_read, variadic: called through shim.h's typed wrappers.
    let messageRead: VariadicEntryPoint

    /// Reads one unix fd from `message` (see shim.h).
    func readUnixFD(_ message: OpaquePointer, _ fd: UnsafeMutablePointer<Int32>) -> Int32 {
        hg_sd_bus_message_read_unix_fd(messageRead, message, fd)
    }
}
