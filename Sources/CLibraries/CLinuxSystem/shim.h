#pragma once
// Small non-variadic wrappers over libc calls Swift cannot import directly (ioctl is variadic,
// see ioctl(2)), plus the headers LinuxSystem needs. No library is linked: everything here is
// glibc. Nothing from libbluetooth (GPL) is included; the RFCOMM address layout is built in
// Swift from rfcomm.h's documented struct sockaddr_rc.
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/file.h>
#include <termios.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>
#include <malloc.h>
#include <sys/timex.h>

/// ioctl(2) for requests that take no argument (TIOCEXCL, TIOCNXCL).
static inline int hg_ioctl_none(int fd, unsigned long request) {
    return ioctl(fd, request);
}

/// ioctl(2) for requests that take a pointer to an int (TIOCMGET, TIOCMSET, FIONREAD).
static inline int hg_ioctl_int_pointer(int fd, unsigned long request, int *value) {
    return ioctl(fd, request, value);
}

/// The columns of the terminal `fd` refers to (TIOCGWINSZ, tty_ioctl(4)), or -1 when it is not
/// a terminal or reports no width.
static inline int hg_terminal_columns(int fd) {
    struct winsize size;
    if (ioctl(fd, TIOCGWINSZ, &size) != 0 || size.ws_col == 0) return -1;
    return size.ws_col;
}

/// fcntl(2) F_GETFL / F_SETFL (fcntl is variadic too).
static inline int hg_fcntl_getfl(int fd) { return fcntl(fd, F_GETFL); }
static inline int hg_fcntl_setfl(int fd, int flags) { return fcntl(fd, F_SETFL, flags); }

/// open(2) without a mode argument (open is variadic).
static inline int hg_open(const char *path, int flags) { return open(path, flags); }

/// open(2) with the mode a file created with O_CREAT gets (less the umask).
static inline int hg_open_mode(const char *path, int flags, mode_t mode) { return open(path, flags, mode); }

/// The errno of the calling thread (errno is a macro over a thread-local location).
static inline int hg_errno(void) { return errno; }

// pty(7) allocation. glibc declares these only under _XOPEN_SOURCE / _GNU_SOURCE, which the
// Swift Glibc module is not built with, so they are declared here (POSIX.1-2008 signatures;
// ptsname_r is a GNU extension) behind non-clashing names.
#include <stddef.h>
extern int posix_openpt(int flags);
extern int grantpt(int fd);
extern int unlockpt(int fd);
extern int ptsname_r(int fd, char *buf, size_t buflen);
static inline int hg_posix_openpt(int flags) { return posix_openpt(flags); }
static inline int hg_grantpt(int fd) { return grantpt(fd); }
static inline int hg_unlockpt(int fd) { return unlockpt(fd); }
static inline int hg_ptsname_r(int fd, char *buf, size_t buflen) { return ptsname_r(fd, buf, buflen); }

/// accept4(2) with the flags set atomically. Glibc declares it only under _GNU_SOURCE, which
/// Swift's Glibc module is not built with; the prototype below is the one in sys/socket.h.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
static inline int hg_accept4(int fd, int flags) { return accept4(fd, 0, 0, flags); }

/// fcntl(2) F_DUPFD_CLOEXEC: the lowest free descriptor at or above `minimum`.
static inline int hg_fcntl_dupfd_cloexec(int fd, int minimum) { return fcntl(fd, F_DUPFD_CLOEXEC, minimum); }

// epoll(7), for ReadinessSet. struct epoll_event is packed on x86-64 (__EPOLL_PACKED in
// sys/epoll.h) and not on arm64, so Swift never lays one out: these wrappers take and return its
// two fields.
#include <sys/epoll.h>
#include <stdint.h>

/// The event bits ReadinessSet uses (EPOLL_EVENTS is an enum Swift imports awkwardly).
static const uint32_t hg_epoll_in = EPOLLIN;
static const uint32_t hg_epoll_out = EPOLLOUT;
static const uint32_t hg_epoll_error = EPOLLERR;
static const uint32_t hg_epoll_hang_up = EPOLLHUP;
static const uint32_t hg_epoll_one_shot = EPOLLONESHOT;
static const int hg_epoll_add = EPOLL_CTL_ADD;
static const int hg_epoll_modify = EPOLL_CTL_MOD;
static const int hg_epoll_delete = EPOLL_CTL_DEL;

/// epoll_create1(2) with EPOLL_CLOEXEC.
static inline int hg_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

/// epoll_ctl(2) with the event's mask and its 64-bit key (data.u64).
static inline int hg_epoll_ctl(int epfd, int op, int fd, uint32_t events, uint64_t key) {
    struct epoll_event event = { .events = events, .data = { .u64 = key } };
    return epoll_ctl(epfd, op, fd, &event);
}

/// epoll_wait(2) that does not wait, for at most 64 ready entries, into parallel arrays of
/// masks and keys of `capacity` elements each.
static inline int hg_epoll_take(int epfd, uint32_t *masks, uint64_t *keys, int capacity) {
    struct epoll_event ready[64];
    int count = epoll_wait(epfd, ready, capacity < 64 ? capacity : 64, 0);
    for (int index = 0; index < count; index++) {
        masks[index] = ready[index].events;
        keys[index] = ready[index].data.u64;
    }
    return count;
}
