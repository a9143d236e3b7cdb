public import BLETransport
public import HealthModel
import GatewayRuntime
import SampleBus

extension ConnectionFollower {
    /// Follows one connection's notifications until they end: hands each to `handle` in the
    /// order it arrived, then, once they ended (the link dropped; logged at debug level with the
    /// reason), cancels the work `handle` started beside the loop and waits for it, and calls
    /// `ended` (what the profile does at a link's end: a record still being reassembled is
    /// reported). This is the loop of every profile's ``follow(_:information:badPayloads:)``.
    ///
    /// Work that waits for the device (a stored download's watch) goes in `beside`, never in
    /// `handle`: a loop that waited would leave the transport's buffer to overflow with the
    /// notifications of that time.
    /// - Parameters:
    ///   - badPayloads: the device's count of payloads that did not decode, handed to `handle`
    ///     and `ended`.
    /// - Returns: whether any notification arrived.
    /// - Throws: `CancellationError` when the task is cancelled, after `ended`.
    public func receive(
        _ notifications: AsyncThrowingStream<BLENotification, any Error>, device: Device, badPayloads: inout Int,
        _ handle: (_ notification: BLENotification, _ beside: inout DiscardingTaskGroup, _ badPayloads: inout Int) async -> Void,
        ended: (_ badPayloads: inout Int) async -> Void = { _ in }
    ) async throws -> Bool {
        var received = false
        await withDiscardingTaskGroup { beside in
            do {
                for try await notification in notifications {
                    received = true
                    await handle(notification, &beside, &badPayloads)
                }
                context.logger.debug("notifications ended", device: device.displayName)
            } catch {
                context.logger.debug("notifications ended: \(error)", device: device.displayName)
            }
            beside.cancelAll()
        }
        await ended(&badPayloads)
        try Task.checkCancellation()
        return received
    }
}
