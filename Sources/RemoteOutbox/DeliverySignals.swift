import AsyncPrimitives

/// Wake-ups between a remote sink's intake and delivery tasks: "records arrived", "room freed",
/// "intake finished" (which also ends a backoff: see ``waitForIntakeEnd()``).
///
/// A signal sent while nobody waits is remembered until the next wait takes it, so none is lost.
/// Waits end with `CancellationError` when the waiting task is cancelled. Thread-safe.
public final class DeliverySignals: Sendable {
    private struct State {
        var recordsPending = false
        var roomPending = false
        var intakeFinished = false
    }

    private let state = AsyncCondition(State())

    public init() {}

    public var intakeFinished: Bool { state.value.intakeFinished }

    public func recordsArrived() {
        state.update { $0.recordsPending = true }
    }

    public func roomFreed() {
        state.update { $0.roomPending = true }
    }

    /// The inbox ended: wakes the delivery task, and every backoff under way.
    public func finishIntake() {
        state.update {
            $0.intakeFinished = true
            $0.recordsPending = true
        }
    }

    /// Returns once the intake finished (the inbox ended: the gateway is stopping).
    public func waitForIntakeEnd() async throws {
        try await state.wait { $0.intakeFinished }
    }

    /// Returns once records arrived (or intake finished) since the last wait, and takes the signal.
    public func waitForRecords() async throws {
        try await state.wait { $0.recordsPending }
        state.update { $0.recordsPending = false }
    }

    /// Returns once room was freed since the last wait, and takes the signal.
    public func waitForRoom() async throws {
        try await state.wait { $0.roomPending }
        state.update { $0.roomPending = false }
    }
}
