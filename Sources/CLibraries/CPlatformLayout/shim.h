#pragma once
// The sizes and field offsets of the C structs healthgate reads or writes through raw memory, as
// this platform's own headers and its C ABI lay them out, and C functions that fill or read them
// field by field. Test-only: LinuxSystemTests compares them with what the Swift code writes, on
// every architecture the tests run on (amd64 here, aarch64 under qemu-user: scripts/build-arm64
// arm64-tests). Links nothing; every function is static inline, compiled by the Swift compiler's
// clang for the target being built.
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <termios.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/timex.h>
#include <netinet/in.h>

// struct sockaddr_rc: BlueZ's <bluetooth/rfcomm.h> (libbluetooth-dev; a header only, nothing of
// libbluetooth is linked, and nothing outside the tests includes it) when it is installed, else
// the same declaration as the kernel's (include/net/bluetooth/rfcomm.h and bluetooth.h: bdaddr_t
// is a packed struct of six bytes), laid out by this target's C compiler.
#if __has_include(<bluetooth/bluetooth.h>) && __has_include(<bluetooth/rfcomm.h>)
#include <bluetooth/bluetooth.h>
#include <bluetooth/rfcomm.h>
typedef struct sockaddr_rc hg_layout_sockaddr_rc;
static inline int hg_layout_rfcomm_from_header(void) { return 1; }
static inline int hg_layout_af_bluetooth(void) { return AF_BLUETOOTH; }
static inline int hg_layout_btproto_rfcomm(void) { return BTPROTO_RFCOMM; }
#else
typedef struct { uint8_t b[6]; } __attribute__((packed)) hg_layout_bdaddr;
typedef struct {
    sa_family_t rc_family;
    hg_layout_bdaddr rc_bdaddr;
    uint8_t rc_channel;
} hg_layout_sockaddr_rc;
static inline int hg_layout_rfcomm_from_header(void) { return 0; }
// glibc's <sys/socket.h> (bits/socket.h) defines AF_BLUETOOTH; BTPROTO_RFCOMM is bluetooth.h's.
static inline int hg_layout_af_bluetooth(void) { return AF_BLUETOOTH; }
static inline int hg_layout_btproto_rfcomm(void) { return 3; }
#endif

/// sizeof(struct sockaddr_rc) and its fields' offsets.
static inline size_t hg_layout_sockaddr_rc_size(void) { return sizeof(hg_layout_sockaddr_rc); }
static inline size_t hg_layout_sockaddr_rc_family_offset(void) { return offsetof(hg_layout_sockaddr_rc, rc_family); }
static inline size_t hg_layout_sockaddr_rc_bdaddr_offset(void) { return offsetof(hg_layout_sockaddr_rc, rc_bdaddr); }
static inline size_t hg_layout_sockaddr_rc_channel_offset(void) { return offsetof(hg_layout_sockaddr_rc, rc_channel); }

/// A struct sockaddr_rc filled field by field (padding zeroed) into `out`, which holds
/// sizeof(struct sockaddr_rc) bytes. `printed` is the address in printed order (AA:BB:…), which
/// bdaddr_t holds reversed (least significant byte first).
static inline void hg_layout_fill_sockaddr_rc(const uint8_t printed[6], uint8_t channel, uint8_t *out) {
    hg_layout_sockaddr_rc address;
    memset(&address, 0, sizeof address);
    address.rc_family = AF_BLUETOOTH;
    for (int index = 0; index < 6; index++) address.rc_bdaddr.b[index] = printed[5 - index];
    address.rc_channel = channel;
    memcpy(out, &address, sizeof address);
}

/// struct sockaddr_un (unix(7)): its size, sun_path's offset and length.
static inline size_t hg_layout_sockaddr_un_size(void) { return sizeof(struct sockaddr_un); }
static inline size_t hg_layout_sockaddr_un_path_offset(void) { return offsetof(struct sockaddr_un, sun_path); }
static inline size_t hg_layout_sockaddr_un_path_length(void) { return sizeof(((struct sockaddr_un *)0)->sun_path); }

/// A struct sockaddr_un for `path` filled field by field (the rest zeroed) into `out`, which holds
/// sizeof(struct sockaddr_un) bytes; 0, or -1 when the path does not fit with its NUL.
static inline int hg_layout_fill_sockaddr_un(const char *path, uint8_t *out) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) return -1;
    strcpy(address.sun_path, path);
    memcpy(out, &address, sizeof address);
    return 0;
}

/// struct sockaddr_in (ip(7)): the test servers and the live board bind and connect with it.
static inline size_t hg_layout_sockaddr_in_size(void) { return sizeof(struct sockaddr_in); }
static inline size_t hg_layout_sockaddr_in_port_offset(void) { return offsetof(struct sockaddr_in, sin_port); }
static inline size_t hg_layout_sockaddr_in_addr_offset(void) { return offsetof(struct sockaddr_in, sin_addr); }

/// struct termios (termios(3), glibc's, which tcsetattr translates for the kernel): its size,
/// c_cc's offset and length (NCCS), and the control characters' indices.
static inline size_t hg_layout_termios_size(void) { return sizeof(struct termios); }
static inline size_t hg_layout_termios_cflag_offset(void) { return offsetof(struct termios, c_cflag); }
static inline size_t hg_layout_termios_cc_offset(void) { return offsetof(struct termios, c_cc); }
static inline size_t hg_layout_termios_cc_length(void) { return sizeof(((struct termios *)0)->c_cc); }
static inline int hg_layout_termios_vmin_index(void) { return VMIN; }
static inline int hg_layout_termios_vtime_index(void) { return VTIME; }
/// c_cc[VMIN] and c_cc[VTIME] of `attributes`, read by C.
static inline unsigned hg_layout_termios_vmin(const struct termios *attributes) { return attributes->c_cc[VMIN]; }
static inline unsigned hg_layout_termios_vtime(const struct termios *attributes) { return attributes->c_cc[VTIME]; }

/// struct timex (adjtimex(2)): its size and the offsets of the fields KernelClock sets and reads.
static inline size_t hg_layout_timex_size(void) { return sizeof(struct timex); }
static inline size_t hg_layout_timex_modes_offset(void) { return offsetof(struct timex, modes); }
static inline size_t hg_layout_timex_maxerror_offset(void) { return offsetof(struct timex, maxerror); }
static inline size_t hg_layout_timex_status_offset(void) { return offsetof(struct timex, status); }

/// The widths of the C types the Swift code passes by pointer as fixed-width Swift integers:
/// `int` (D-Bus 'b' and 'h' as Int32 through sd_bus_message_read_basic, ioctl's TIOCMGET/FIONREAD
/// argument), `long` (curl_easy_setopt's long options, Swift's Int), `size_t` (libcurl's and
/// libmicrohttpd's callbacks, Swift's Int), `double` (D-Bus 'd').
static inline size_t hg_layout_int_size(void) { return sizeof(int); }
static inline size_t hg_layout_long_size(void) { return sizeof(long); }
static inline size_t hg_layout_size_t_size(void) { return sizeof(size_t); }
static inline size_t hg_layout_double_size(void) { return sizeof(double); }
