#if canImport(Glibc)
import Glibc
#endif

/// A mutex and a condition variable for threads that block (pthread_cond_timedwait(3)), the
/// web server's connection threads. Waits measure their timeout on CLOCK_MONOTONIC, so a step of
/// the wall clock neither cuts a wait short nor stretches it.
// @unchecked Sendable: the only state is two immutable pointers to a pthread mutex and condition
// variable, which POSIX makes for use from many threads (pthread_mutex_lock(3),
// pthread_cond_wait(3)); the compiler cannot see that of raw pointers.
final class ThreadCondition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func broadcast() { pthread_cond_broadcast(condition) }

    /// A deadline `seconds` from now on CLOCK_MONOTONIC, for ``wait(until:)``.
    static func deadline(after seconds: Double) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let whole = seconds.rounded(.down)
        var nanoseconds = Int(now.tv_nsec) + Int((seconds - whole) * 1_000_000_000)
        var wholeSeconds = Int(now.tv_sec) + Int(whole)
        if nanoseconds >= 1_000_000_000 {
            nanoseconds -= 1_000_000_000
            wholeSeconds += 1
        }
        return timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
    }

    /// Waits for a broadcast with the mutex held; false once the deadline has passed.
    func wait(until deadline: timespec) -> Bool {
        var deadline = deadline
        return pthread_cond_timedwait(condition, mutex, &deadline) != ETIMEDOUT
    }
}
