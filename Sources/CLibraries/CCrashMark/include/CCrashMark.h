#pragma once
// The one piece of the crash mark that must be C: a handler for the fatal signals, which may
// call only async-signal-safe functions (signal-safety(7)) and reach only static storage.

/// Makes SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT and SIGTRAP append the line
/// "crashed <signal number> <milliseconds since the epoch>\n" to `fd` (opened with O_APPEND),
/// once, and then run the handler that was installed before (Swift's backtracer, or the default
/// action, which ends the process). Returns 0, or -1 with errno from sigaction(2) (the handlers
/// installed so far are restored then). Call it at most once before hg_crash_mark_disarm.
int hg_crash_mark_arm(int fd);

/// Restores the handlers hg_crash_mark_arm replaced; after it, nothing writes to its descriptor,
/// which may then be closed. Does nothing when not armed.
void hg_crash_mark_disarm(void);
