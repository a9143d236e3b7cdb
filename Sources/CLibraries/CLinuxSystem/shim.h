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

// Child processes (LinuxSystem's ChildProcess: the exec source's adapters).
#include <signal.h>
#include <grp.h>
#include <sys/wait.h>
#include <sys/syscall.h>

/// The signal numbers ChildProcess sends (SIGTERM, SIGKILL are macros Swift imports; kept here
/// beside the spawn for one place to read).
static const int hg_signal_terminate = SIGTERM;
static const int hg_signal_kill = SIGKILL;

/// Starts `path` with `argv` and `envp` in a new process group whose leader it is, with
/// `stdin_fd`, `stdout_fd` and `stderr_fd` as its descriptors 0, 1 and 2 and no other descriptor
/// open, every signal at its default disposition and none blocked, in `directory` (NULL: the
/// caller's), and, when `change_user` is set, as `uid` and `gid` with the `group_count`
/// supplementary `groups` (resolved by the caller: the child may only make async-signal-safe
/// calls between fork and exec, signal-safety(7), and getgrouplist is not one).
///
/// Returns the child's pid, or -1 with errno set: the fork's error, or the child's own before
/// its exec (chdir, setuid, execve), passed back through a close-on-exec pipe that the exec
/// closes (0 bytes read: the exec happened).
static inline pid_t hg_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                             int stdin_fd, int stdout_fd, int stderr_fd,
                             int change_user, uid_t uid, gid_t gid, const gid_t *groups, int group_count) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        int saved = errno;
        close(report[0]);
        close(report[1]);
        errno = saved;
        return -1;
    }
    if (pid == 0) {
        // The child: async-signal-safe calls only, until execve.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, 0);
        for (int number = 1; number < NSIG; number++) {
            if (number != SIGKILL && number != SIGSTOP) signal(number, SIG_DFL);
        }
        setpgid(0, 0);
        // Move the three descriptors above 2 first, so that one of them being 0, 1 or 2 already
        // (a gateway started with a closed stdin) is not closed by another's dup2.
        int in = fcntl(stdin_fd, F_DUPFD, 3), out = fcntl(stdout_fd, F_DUPFD, 3), err = fcntl(stderr_fd, F_DUPFD, 3);
        int code = 0;
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) code = errno;
        if (code == 0) {
            int keep = report[1];
            // Close every descriptor above 2 but the report pipe (close-on-exec), so the adapter
            // holds no socket, database or device of the gateway's.
            for (int fd = 3; fd < keep; fd++) close(fd);
            if (syscall(SYS_close_range, keep + 1, ~0U, 0) != 0) {
                for (int fd = keep + 1; fd < 65536; fd++) close(fd);
            }
        }
        if (code == 0 && change_user) {
            if (setgroups(group_count, groups) != 0 || setgid(gid) != 0 || setuid(uid) != 0) code = errno;
        }
        if (code == 0 && directory && chdir(directory) != 0) code = errno;
        if (code == 0) {
            execve(path, argv, envp);
            code = errno;
        }
        ssize_t ignored = write(report[1], &code, sizeof code);
        (void)ignored;
        _exit(127);
    }
    close(report[1]);
    int code = 0;
    ssize_t got;
    do { got = read(report[0], &code, sizeof code); } while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof code) {
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        errno = code;
        return -1;
    }
    return pid;
}

/// waitpid(2) for `pid`, blocking, retrying EINTR. Returns 0 and sets `*exit_code` (the exit
/// status) or `*signal_number` (the signal that ended it, the other -1), or -1 with errno set.
static inline int hg_wait_child(pid_t pid, int *exit_code, int *signal_number) {
    int status;
    pid_t got;
    do { got = waitpid(pid, &status, 0); } while (got < 0 && errno == EINTR);
    if (got < 0) return -1;
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    *signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
    return 0;
}

/// kill(2) of the process group `group` (its leader's pid).
static inline int hg_kill_group(pid_t group, int number) { return kill(-group, number); }
