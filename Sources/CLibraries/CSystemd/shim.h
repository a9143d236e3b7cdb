#pragma once
// sd-bus's types and constants only. No library is linked (the module map has no `link`): the
// BlueZ module opens libsystemd.so.0 with dlopen(3) when it opens a D-Bus connection
// (Sources/System/DBus/SDBusLibrary.swift), so a gateway without Bluetooth sources never maps
// libsystemd nor the compression and crypto libraries it pulls in. Calling an sd_bus_* function
// by name from Swift would fail to link, which is intended: every call goes through a pointer
// that dlsym(3) resolved.
#include <systemd/sd-bus.h>
#include <poll.h>
#include <time.h>

// The types of the entry points resolved with dlsym, taken from sd-bus.h's own prototypes so that
// the pointer's type can never disagree with the header. __typeof__ does not evaluate its operand:
// no reference to the symbol is emitted.
typedef __typeof__(&sd_bus_add_match_async) hg_sd_bus_add_match_async_fn;
typedef __typeof__(&sd_bus_add_object) hg_sd_bus_add_object_fn;
typedef __typeof__(&sd_bus_call_async) hg_sd_bus_call_async_fn;
typedef __typeof__(&sd_bus_close_unref) hg_sd_bus_close_unref_fn;
typedef __typeof__(&sd_bus_get_events) hg_sd_bus_get_events_fn;
typedef __typeof__(&sd_bus_get_fd) hg_sd_bus_get_fd_fn;
typedef __typeof__(&sd_bus_get_timeout) hg_sd_bus_get_timeout_fn;
typedef __typeof__(&sd_bus_get_unique_name) hg_sd_bus_get_unique_name_fn;
typedef __typeof__(&sd_bus_message_append_basic) hg_sd_bus_message_append_basic_fn;
typedef __typeof__(&sd_bus_message_close_container) hg_sd_bus_message_close_container_fn;
typedef __typeof__(&sd_bus_message_enter_container) hg_sd_bus_message_enter_container_fn;
typedef __typeof__(&sd_bus_message_exit_container) hg_sd_bus_message_exit_container_fn;
typedef __typeof__(&sd_bus_message_get_error) hg_sd_bus_message_get_error_fn;
typedef __typeof__(&sd_bus_message_get_interface) hg_sd_bus_message_get_interface_fn;
typedef __typeof__(&sd_bus_message_get_member) hg_sd_bus_message_get_member_fn;
typedef __typeof__(&sd_bus_message_get_path) hg_sd_bus_message_get_path_fn;
typedef __typeof__(&sd_bus_message_get_sender) hg_sd_bus_message_get_sender_fn;
typedef __typeof__(&sd_bus_message_is_method_call) hg_sd_bus_message_is_method_call_fn;
typedef __typeof__(&sd_bus_message_new_method_call) hg_sd_bus_message_new_method_call_fn;
typedef __typeof__(&sd_bus_message_new_method_error) hg_sd_bus_message_new_method_error_fn;
typedef __typeof__(&sd_bus_message_new_method_return) hg_sd_bus_message_new_method_return_fn;
typedef __typeof__(&sd_bus_message_open_container) hg_sd_bus_message_open_container_fn;
typedef __typeof__(&sd_bus_message_peek_type) hg_sd_bus_message_peek_type_fn;
typedef __typeof__(&sd_bus_message_read_basic) hg_sd_bus_message_read_basic_fn;
typedef __typeof__(&sd_bus_message_ref) hg_sd_bus_message_ref_fn;
typedef __typeof__(&sd_bus_message_rewind) hg_sd_bus_message_rewind_fn;
typedef __typeof__(&sd_bus_message_unref) hg_sd_bus_message_unref_fn;
typedef __typeof__(&sd_bus_new) hg_sd_bus_new_fn;
typedef __typeof__(&sd_bus_open_system) hg_sd_bus_open_system_fn;
typedef __typeof__(&sd_bus_process) hg_sd_bus_process_fn;
typedef __typeof__(&sd_bus_send) hg_sd_bus_send_fn;
typedef __typeof__(&sd_bus_set_address) hg_sd_bus_set_address_fn;
typedef __typeof__(&sd_bus_set_bus_client) hg_sd_bus_set_bus_client_fn;
typedef __typeof__(&sd_bus_slot_unref) hg_sd_bus_slot_unref_fn;
typedef __typeof__(&sd_bus_start) hg_sd_bus_start_fn;
typedef __typeof__(&sd_bus_unref) hg_sd_bus_unref_fn;

// sd_bus_message_read is variadic: Swift cannot call it, so the one use gets a typed wrapper that
// takes the address dlsym returned for it as C's generic function pointer, `void (*)(void)`
// (LinuxSystem's VariadicEntryPoint), and converts it back to the variadic type to call it: a
// function pointer converted to another function pointer type and back is the same pointer
// (C11 6.3.2.3p8).
typedef int (*hg_sd_bus_message_read_fn)(sd_bus_message *m, const char *types, ...);

/// Reads one unix fd ('h') from `m` (sd_bus_message_read(3)). The fd stays owned by the message:
/// dup it to keep it.
static inline int hg_sd_bus_message_read_unix_fd(void (*read)(void), sd_bus_message *m, int *fd) {
    return ((hg_sd_bus_message_read_fn)read)(m, "h", fd);
}

/// The current CLOCK_MONOTONIC time in microseconds, the clock sd_bus_get_timeout(3) uses.
static inline unsigned long long hg_monotonic_usec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}
