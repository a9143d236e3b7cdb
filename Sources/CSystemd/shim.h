#pragma once
#include <systemd/sd-bus.h>
#include <poll.h>
#include <time.h>

// Swift cannot call C variadic functions, so each variadic sd-bus call we need gets a typed
// static inline wrapper here (sd-bus(3), sd_bus_message_read(3)).

/// Reads one unix fd ('h') from `m`. The fd stays owned by the message: dup it to keep it.
static inline int hg_sd_bus_message_read_unix_fd(sd_bus_message *m, int *fd) {
    return sd_bus_message_read(m, "h", fd);
}

/// The current CLOCK_MONOTONIC time in microseconds, the clock sd_bus_get_timeout(3) uses.
static inline unsigned long long hg_monotonic_usec(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000ULL;
}
