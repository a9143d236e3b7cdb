#include "CCrashMark.h"
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// A signal handler can reach nothing but static storage (signal-safety(7)). These are written
// by hg_crash_mark_arm before any handler can run and by hg_crash_mark_disarm after the last one
// is replaced, and only read by the handler.
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP };
enum { fatal_signal_count = sizeof(fatal_signals) / sizeof(fatal_signals[0]) };
static struct sigaction previous_actions[fatal_signal_count];
static int armed_count = 0;
static volatile sig_atomic_t mark_descriptor = -1;

/// Writes `value` in decimal at `out`; returns the number of digits.
static size_t format_decimal(char *out, unsigned long long value) {
    char reversed[24];
    size_t count = 0;
    do {
        reversed[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    for (size_t index = 0; index < count; index++) out[index] = reversed[count - 1 - index];
    return count;
}

static void on_fatal_signal(int signal_number, siginfo_t *info, void *context) {
    int descriptor = mark_descriptor;
    // One mark, even when the handler chained to below faults again.
    mark_descriptor = -1;
    if (descriptor >= 0) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        char line[64];
        size_t length = 0;
        memcpy(line, "crashed ", 8);
        length = 8;
        length += format_decimal(line + length, (unsigned long long)signal_number);
        line[length++] = ' ';
        length += format_decimal(
            line + length, (unsigned long long)now.tv_sec * 1000ULL + (unsigned long long)now.tv_nsec / 1000000ULL);
        line[length++] = '\n';
        // Nothing to do about a failure here: the process is going down either way.
        ssize_t written = write(descriptor, line, length);
        (void)written;
    }
    for (int index = 0; index < fatal_signal_count; index++) {
        if (fatal_signals[index] != signal_number) continue;
        struct sigaction previous = previous_actions[index];
        sigaction(signal_number, &previous, NULL);
        if ((previous.sa_flags & SA_SIGINFO) != 0) {
            if (previous.sa_sigaction != NULL) previous.sa_sigaction(signal_number, info, context);
            return;
        }
        if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
            previous.sa_handler(signal_number);
            return;
        }
        // The default action, which ends the process: the signal is blocked while this handler
        // runs, so it is delivered as soon as the handler returns (for a fault, the faulting
        // instruction would raise it again anyway).
        raise(signal_number);
        return;
    }
}

int hg_crash_mark_arm(int fd) {
    if (armed_count != 0) {
        errno = EBUSY;
        return -1;
    }
    mark_descriptor = fd;
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = on_fatal_signal;
    // SA_ONSTACK: on the alternate stack where one is set up, so that a stack overflow is marked too.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int index = 0; index < fatal_signal_count; index++) {
        if (sigaction(fatal_signals[index], &action, &previous_actions[index]) != 0) {
            int error = errno;
            hg_crash_mark_disarm();
            errno = error;
            return -1;
        }
        armed_count = index + 1;
    }
    return 0;
}

void hg_crash_mark_disarm(void) {
    mark_descriptor = -1;
    for (int index = armed_count - 1; index >= 0; index--) {
        sigaction(fatal_signals[index], &previous_actions[index], NULL);
    }
    armed_count = 0;
}
