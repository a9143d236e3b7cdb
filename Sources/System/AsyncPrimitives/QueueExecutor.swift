public import Dispatch

/// A serial executor that runs jobs on one `DispatchQueue`.
///
/// An actor whose `unownedExecutor` is a `QueueExecutor`'s runs every isolated method on that
/// queue, so a blocking C call made inside it (`sqlite3_step`, `sd_bus_open`, `udev_enumerate`)
/// stays off Swift's cooperative thread pool while the compiler still checks the isolation:
///
/// ```swift
/// actor Database {
///     private let executor = QueueExecutor(label: "healthgate.sqlite")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
///
/// Swift's own `DispatchSerialQueue` executor conformance exists only on Apple platforms; this is
/// the same thing for Linux.
public final class QueueExecutor: SerialExecutor {
    /// The queue jobs run on. Code that must run on it outside the actor (C callbacks from a
    /// `DispatchSource` made on it) can rely on being serialized with the actor's methods.
    public let queue: DispatchQueue

    /// An executor over a new serial queue labelled `label`.
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedSerialExecutor()) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Traps unless the caller runs on the queue. Swift asks this when code outside a job (a
    /// DispatchSource handler made on the queue) enters an actor on this executor with
    /// `assumeIsolated`: running on the queue is being isolated to that actor.
    public func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }

    /// Runs `body` on the queue and returns its result to the suspended caller. For the few
    /// one-off blocking calls that have no actor to live in (a command's single udev query).
    public func run<Result: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let outcome: Swift.Result<Result, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try outcome.get()
    }
}
