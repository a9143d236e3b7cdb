import FoundationEssentials
import Synchronization

/// One scan of one adapter served to every consumer: the first consumer starts the underlying
/// scanner, later ones join it, and the scan stops when the last one stops iterating.
///
/// BlueZ keeps a discovery session per D-Bus client, and bluetoothd 5.66 left a second client's
/// StartDiscovery unanswered while the first one's was starting (the device lab saw the
/// `ble-polar-broadcast` source time out beside `ble-mi-scale`): one scan per adapter avoids
/// the race and halves the bus traffic. A consumer that joins a running scan first gets the
/// latest advertisement of every device this scan has heard, with the time it was received,
/// so a device heard just before it joined (and not reported again while the controller's
/// duplicate filter is on) is not lost to it. When the underlying scan fails, every consumer's
/// stream throws that error; the next consumer starts a new scan.
public final class SharedAdvertisementScanner: AdvertisementScanner {
    private typealias Continuation = AsyncThrowingStream<Advertisement, any Error>.Continuation

    private struct State {
        var consumers: [UInt64: Continuation] = [:]
        var nextConsumer: UInt64 = 0
        /// The running scan's task and generation (a finished scan clears only its own state).
        var scan: Task<Void, Never>?
        var generation: UInt64 = 0
        /// The latest advertisement of each device heard by the running scan, by address.
        var latest: [String: Advertisement] = [:]
    }

    /// The most devices whose latest advertisement is kept for consumers that join later.
    public static let rememberedDevices = 1024

    private let underlying: any AdvertisementScanner
    private let state = Mutex(State())

    /// Shares `underlying`'s scan among every consumer of this scanner.
    public init(_ underlying: any AdvertisementScanner) {
        self.underlying = underlying
    }

    /// The underlying scanner's path.
    public var path: ScanPath? {
        get async { await underlying.path }
    }

    /// Joins the adapter's scan (starting it when none runs) until the consumer stops iterating.
    public func advertisements() -> AsyncThrowingStream<Advertisement, any Error> {
        // Bounded like the underlying stream: a consumer that falls behind loses the oldest.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Advertisement.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1024))
        let consumer = state.withLock { state -> UInt64 in
            let consumer = state.nextConsumer
            state.nextConsumer += 1
            state.consumers[consumer] = continuation
            for advertisement in state.latest.values.sorted(by: { $0.receivedAt < $1.receivedAt }) {
                continuation.yield(advertisement)
            }
            if state.scan == nil { startScan(&state) }
            return consumer
        }
        continuation.onTermination = { [weak self] _ in self?.leave(consumer) }
        return stream
    }

    /// The number of consumers of the running scan (for tests and status).
    public var consumerCount: Int {
        state.withLock { $0.consumers.count }
    }

    private func startScan(_ state: inout State) {
        state.generation += 1
        let generation = state.generation
        let advertisements = underlying.advertisements()
        state.scan = Task { [weak self] in
            var failure: (any Error)?
            do {
                for try await advertisement in advertisements {
                    self?.deliver(advertisement)
                }
            } catch {
                failure = error
            }
            self?.scanEnded(generation, failure: failure)
        }
    }

    private func deliver(_ advertisement: Advertisement) {
        state.withLock { state in
            if state.latest[advertisement.address] == nil, state.latest.count >= Self.rememberedDevices,
                let oldest = state.latest.min(by: { $0.value.receivedAt < $1.value.receivedAt })?.key
            {
                state.latest[oldest] = nil
            }
            state.latest[advertisement.address] = advertisement
            for consumer in state.consumers.values { consumer.yield(advertisement) }
        }
    }

    /// The underlying scan ended (failed, or finished): its consumers' streams end the same way.
    private func scanEnded(_ generation: UInt64, failure: (any Error)?) {
        let consumers = state.withLock { state -> [Continuation] in
            guard state.generation == generation, state.scan != nil else { return [] }
            let consumers = Array(state.consumers.values)
            state.consumers = [:]
            state.scan = nil
            state.latest = [:]
            return consumers
        }
        for consumer in consumers {
            if let failure { consumer.finish(throwing: failure) } else { consumer.finish() }
        }
    }

    /// A consumer stopped iterating: the scan stops with the last one.
    private func leave(_ consumer: UInt64) {
        let scan = state.withLock { state -> Task<Void, Never>? in
            guard state.consumers.removeValue(forKey: consumer) != nil, state.consumers.isEmpty else { return nil }
            let scan = state.scan
            state.scan = nil
            state.latest = [:]
            return scan
        }
        scan?.cancel()
    }
}
