#pragma once
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

// libmicrohttpd is opened with dlopen when the board starts (WebBoard's MicroHTTPDLibrary), not
// linked: a gateway without a board never maps it nor its TLS libraries. Each entry point's type
// comes from microhttpd.h's own prototype.
typedef __typeof__(&MHD_start_daemon) hg_mhd_start_daemon_fn;
typedef __typeof__(&MHD_stop_daemon) hg_mhd_stop_daemon_fn;
typedef __typeof__(&MHD_get_daemon_info) hg_mhd_get_daemon_info_fn;
typedef __typeof__(&MHD_lookup_connection_value) hg_mhd_lookup_connection_value_fn;
typedef __typeof__(&MHD_create_response_from_buffer) hg_mhd_create_response_from_buffer_fn;
typedef __typeof__(&MHD_create_response_from_callback) hg_mhd_create_response_from_callback_fn;
typedef __typeof__(&MHD_destroy_response) hg_mhd_destroy_response_fn;
typedef __typeof__(&MHD_add_response_header) hg_mhd_add_response_header_fn;
typedef __typeof__(&MHD_queue_response) hg_mhd_queue_response_fn;

// MHD_start_daemon and MHD_get_daemon_info are variadic, which Swift can neither call nor keep a
// Sendable pointer to (a variadic function's pointer imports as OpaquePointer). So the board holds
// each as C's generic function pointer, `void (*)(void)` (LinuxSystem's VariadicEntryPoint), and
// these wrappers convert it back to the variadic type to call it: a function pointer converted to
// another function pointer type and back is the same pointer (C11 6.3.2.3p8).

// This wrapper starts a daemon on one
// IPv4 address (network byte order) and port (0: any free port), with a thread per connection
// under MHD's own listening thread: the board's event streams block in their content readers
// on MHD's threads, never on Swift's. MHD binds before it returns, so the sockaddr may live on
// the stack. The daemon accepts at most `connection_limit` connections at once.
// `completed` is called when a request ends, however it ends (MHD_OPTION_NOTIFY_COMPLETED), so
// that the state a POST's body is gathered in is released even when the client goes away.
static inline struct MHD_Daemon *shim_mhd_start_ipv4(
    void (*start)(void), uint32_t address, uint16_t port, unsigned int connection_limit,
    MHD_AccessHandlerCallback handler, void *context, MHD_RequestCompletedCallback completed) {
    struct sockaddr_in socket_address;
    memset(&socket_address, 0, sizeof socket_address);
    socket_address.sin_family = AF_INET;
    socket_address.sin_port = htons(port);
    socket_address.sin_addr.s_addr = address;
    return ((hg_mhd_start_daemon_fn)start)(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD, port, NULL, NULL, handler, context,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &socket_address,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int) 1,
        MHD_OPTION_NOTIFY_COMPLETED, completed, context,
        MHD_OPTION_END);
}

// The port the daemon listens on (the one chosen when 0 was asked), 0 if unknown.
static inline uint16_t shim_mhd_bound_port(void (*get_info)(void), struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = ((hg_mhd_get_daemon_info_fn)get_info)(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

// MHD_SIZE_UNKNOWN is a cast macro Swift cannot import.
static inline struct MHD_Response *shim_mhd_create_stream_response(
    hg_mhd_create_response_from_callback_fn create, size_t block_size, MHD_ContentReaderCallback reader,
    void *context, MHD_ContentReaderFreeCallback free_context) {
    return create(MHD_SIZE_UNKNOWN, block_size, reader, context, free_context);
}
