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
///
/// The scan listens for what its consumers listen for (the union of their matches; any consumer
/// asking for everything makes it everything): a consumer that asks for a match the running scan
/// lacks restarts the underlying scan with the wider union (BlueZ registers a new monitor), and
/// keeps the consumers it has. A scoped consumer (``withAdvertisements(matching:_:)``) that is
/// the last to leave waits until the underlying scan is over (its monitor unregistered).
public final class SharedAdvertisementScanner: AdvertisementScanner {
    private typealias Continuation = AsyncThrowingStream<Advertisement, any Error>.Continuation

    private struct Consumer {
        var continuation: Continuation
        /// What it listens for; empty: everything.
        var matches: [AdvertisementMatch]
    }

    private struct State {
        var consumers: [UInt64: Consumer] = [:]
        var nextConsumer: UInt64 = 0
        /// The running scan's task and generation (a finished scan clears only its own state).
        var scan: Task<Void, Never>?
        var generation: UInt64 = 0
        /// What the running scan listens for.
        var scanMatches: [AdvertisementMatch] = []
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

    /// Joins the adapter's scan (starting it, or widening it to `matches`, when needed) until the
    /// consumer stops iterating.
    public func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
        join(matches, scoped: false).stream
    }

    /// Joins the adapter's scan for `body`; when `body` returned or threw, leaves it, and when it
    /// was the last consumer, waits until the underlying scan is over.
    public func withAdvertisements<Result>(
        matching matches: [AdvertisementMatch], _ body: (AsyncThrowingStream<Advertisement, any Error>) async throws -> Result
    ) async throws -> Result {
        let (stream, consumer) = join(matches, scoped: true)
        let result: Result
        do {
            result = try await body(stream)
        } catch {
            await leave(consumer)?.value
            throw error
        }
        await leave(consumer)?.value
        return result
    }

    private func join(_ matches: [AdvertisementMatch], scoped: Bool) -> (stream: AsyncThrowingStream<Advertisement, any Error>, consumer: UInt64) {
        // Bounded like the underlying stream: a consumer that falls behind loses the oldest.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Advertisement.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1024))
        let (consumer, replaced) = state.withLock { state -> (UInt64, Task<Void, Never>?) in
            let consumer = state.nextConsumer
            state.nextConsumer += 1
            state.consumers[consumer] = Consumer(continuation: continuation, matches: matches)
            for advertisement in state.latest.values.sorted(by: { $0.receivedAt < $1.receivedAt }) {
                continuation.yield(advertisement)
            }
            // In the consumers' order of joining, so that a scan's matches do not depend on a
            // dictionary's order.
            let wanted = Self.union(state.consumers.sorted { $0.key < $1.key }.map(\.value.matches))
            if state.scan == nil {
                startScan(&state, matching: wanted)
                return (consumer, nil)
            }
            guard Set(wanted) != Set(state.scanMatches) else { return (consumer, nil) }
            // The running scan does not listen for this consumer: a wider one replaces it.
            let replaced = state.scan
            startScan(&state, matching: wanted)
            return (consumer, replaced)
        }
        replaced?.cancel()
        // A scoped consumer leaves explicitly (and waits for the scan's end); the stream ending
        // under it (a failed scan) leaves nothing more to do.
        if !scoped {
            continuation.onTermination = { [weak self] _ in _ = self?.leave(consumer) }
        }
        return (stream, consumer)
    }

    /// What a scan for consumers with `matches` listens for: every match once, in order; empty
    /// (everything) when any consumer listens for everything.
    public static func union(_ matches: [[AdvertisementMatch]]) -> [AdvertisementMatch] {
        var union: [AdvertisementMatch] = []
        for consumer in matches {
            if consumer.isEmpty { return [] }
            for match in consumer where !union.contains(match) { union.append(match) }
        }
        return union
    }

    /// The number of consumers of the running scan (for tests and status).
    public var consumerCount: Int {
        state.withLock { $0.consumers.count }
    }

    private func startScan(_ state: inout State, matching matches: [AdvertisementMatch]) {
        state.generation += 1
        state.scanMatches = matches
        let generation = state.generation
        let underlying = self.underlying
        state.scan = Task { [weak self] in
            var failure: (any Error)?
            do {
                // Scoped: cancelling this task ends the scan, and the task ends after it is over.
                try await underlying.withAdvertisements(matching: matches) { advertisements in
                    for try await advertisement in advertisements {
                        self?.deliver(advertisement)
                    }
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
            for consumer in state.consumers.values { consumer.continuation.yield(advertisement) }
        }
    }

    /// The underlying scan ended (failed, or finished): its consumers' streams end the same way.
    private func scanEnded(_ generation: UInt64, failure: (any Error)?) {
        let consumers = state.withLock { state -> [Continuation] in
            guard state.generation == generation, state.scan != nil else { return [] }
            let consumers = state.consumers.values.map(\.continuation)
            state.consumers = [:]
            state.scan = nil
            state.latest = [:]
            return consumers
        }
        for consumer in consumers {
            if let failure { consumer.finish(throwing: failure) } else { consumer.finish() }
        }
    }

    /// A consumer left: the scan stops with the last one. Returns the stopped scan's task (which
    /// ends once the underlying scan is over), or nil when others remain or it was gone.
    @discardableResult
    private func leave(_ consumer: UInt64) -> Task<Void, Never>? {
        let scan = state.withLock { state -> Task<Void, Never>? in
            guard state.consumers.removeValue(forKey: consumer) != nil, state.consumers.isEmpty else { return nil }
            let scan = state.scan
            state.scan = nil
            state.latest = [:]
            return scan
        }
        scan?.cancel()
        return scan
    }
}
