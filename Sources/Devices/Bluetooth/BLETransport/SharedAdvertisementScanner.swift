import FoundationEssentials
import Synchronization

/// One scan of one adapter served to every consumer, advertisement sources and connection-based
/// sources' discovery alike: the first consumer starts the underlying scan, later ones join it,
/// and the scan stops when the last one stops iterating. On an adapter, this scan is the only
/// thing of the gateway's that scans (BlueZ: that calls SetDiscoveryFilter, StartDiscovery,
/// StopDiscovery and RegisterMonitor).
///
/// BlueZ keeps a discovery session per D-Bus client, and bluetoothd 5.66 answered only one of
/// two clients whose StartDiscovery calls met while discovery was starting (the other waits for
/// its reply until the call times out): the device lab saw the `ble-polar-broadcast` source time
/// out beside `ble-mi-scale`, and `healthgate scan`'s discovery, which ran beside its own
/// advertisement scan, wait out the whole scan before its first event. One scan per adapter
/// avoids the race and halves the bus traffic. A consumer that joins a running scan first gets
/// what the scan already knows: an advertisement consumer the latest advertisement of every
/// device heard, with the time it was received (a device heard just before it joined, and not
/// reported again while the controller's duplicate filter is on, is not lost to it); a discovery
/// consumer every device found so far that it wants. When the underlying scan fails, every
/// consumer's stream throws that error; the next consumer starts a new scan.
///
/// The scan hears what its consumers want (``ScanInterest/union(_:)``: any advertisement
/// consumer asking for everything makes it everything; the discovery consumers' services and
/// addresses together). A consumer that wants something the running scan does not hear widens
/// it: an underlying scanner that widens in place (``AdvertisementScanner/widensInPlace``; BlueZ
/// sets the new discovery filter on the running discovery, registers a new monitor before it
/// unregisters the old one) takes on the wider union while it runs, so that the adapter sees one
/// StartDiscovery however the consumers come; any other is restarted with it, keeping the
/// consumers it has, the new scan starting once the old one is over so that the two never meet
/// in the stack. The scan never narrows while it runs. A scoped consumer (``withAdvertisements(matching:_:)``) that is the
/// last to leave waits until the underlying scan is over (its monitor unregistered, its
/// discovery stopped).
public final class SharedAdvertisementScanner: AdvertisementScanner {
    private typealias Continuation = AsyncThrowingStream<Advertisement, any Error>.Continuation
    private typealias DiscoveryContinuation = AsyncThrowingStream<DiscoveryEvent, any Error>.Continuation

    /// Where a consumer's events go.
    private enum Delivery {
        case advertisements(Continuation)
        case discovery(DiscoveryContinuation, DiscoveryInterest)
    }

    private struct Consumer {
        var delivery: Delivery
        /// What it wants from the scan.
        var interest: ScanInterest
        /// The addresses (upper case) this discovery consumer was told were found: a device lost
        /// is reported to those only.
        var reported: Set<String> = []

        func finish(throwing failure: (any Error)?) {
            switch delivery {
            case .advertisements(let continuation):
                if let failure { continuation.finish(throwing: failure) } else { continuation.finish() }
            case .discovery(let continuation, _):
                if let failure { continuation.finish(throwing: failure) } else { continuation.finish() }
            }
        }
    }

    private struct State {
        var consumers: [UInt64: Consumer] = [:]
        var nextConsumer: UInt64 = 0
        /// The running scan's task and generation (a finished scan clears only its own state).
        var scan: Task<Void, Never>?
        var generation: UInt64 = 0
        /// What the running scan hears.
        var scanInterest = ScanInterest()
        /// Where the running scan takes wider interests (an underlying scanner that widens in
        /// place); only the newest matters, as each is a union with the ones before.
        var widen: AsyncStream<ScanInterest>.Continuation?
        /// The latest advertisement of each device heard by the running scan, by address.
        var latest: [String: Advertisement] = [:]
        /// Each device the running scan found and has not lost, by upper-case address.
        var found: [String: DiscoveredPeripheral] = [:]
    }

    /// The most devices whose latest advertisement, or discovery, is kept for consumers that
    /// join later.
    public static let rememberedDevices = 1024

    private let underlying: any AdvertisementScanner
    private let state = Mutex(State())

    /// Shares `underlying`'s scans among every consumer of this scanner.
    public init(_ underlying: any AdvertisementScanner) {
        self.underlying = underlying
    }

    /// The underlying scanner's path.
    public var path: ScanPath? {
        get async { await underlying.path }
    }

    /// The underlying scanner's dropped advertisements.
    public var droppedAdvertisements: Int {
        get async { await underlying.droppedAdvertisements }
    }

    /// Joins the adapter's scan (starting it, or widening it to `matches`, when needed) until the
    /// consumer stops iterating.
    public func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
        let (stream, continuation) = Self.advertisementStream()
        let consumer = join(ScanInterest(advertisements: matches), .advertisements(continuation))
        continuation.onTermination = { [weak self] _ in _ = self?.leave(consumer) }
        return stream
    }

    /// Joins the adapter's scan for `body`; when `body` returned or threw, leaves it, and when it
    /// was the last consumer, waits until the underlying scan is over.
    public func withAdvertisements<Result>(
        matching matches: [AdvertisementMatch], _ body: (AsyncThrowingStream<Advertisement, any Error>) async throws -> Result
    ) async throws -> Result {
        let (stream, continuation) = Self.advertisementStream()
        // A scoped consumer leaves explicitly (and waits for the scan's end); the stream ending
        // under it (a failed scan) leaves nothing more to do.
        let consumer = join(ScanInterest(advertisements: matches), .advertisements(continuation))
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

    /// Joins the adapter's scan as a connection-based source's discovery: reports the devices
    /// that advertise one of `services` or are at one of `addresses` (``DiscoveryInterest``),
    /// first those the running scan already found, then as they appear, change and go. The scan
    /// is started, or widened to this interest, when needed; the consumer leaves when it stops
    /// iterating. Throws what the scan throws (``BLETransportError`` `.unavailable` without
    /// Bluetooth).
    public func discover(services: [BluetoothUUID], addresses: Set<String> = []) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        // Bounded: discovery events are state updates; if the consumer falls behind, the newest
        // state of each device is what matters.
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: DiscoveryEvent.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(512))
        let interest = DiscoveryInterest(services: services, addresses: addresses)
        let consumer = join(ScanInterest(discovery: interest), .discovery(continuation, interest))
        continuation.onTermination = { [weak self] _ in _ = self?.leave(consumer) }
        return stream
    }

    private static func advertisementStream() -> (AsyncThrowingStream<Advertisement, any Error>, Continuation) {
        // Bounded like the underlying stream: a consumer that falls behind loses the oldest.
        AsyncThrowingStream.makeStream(of: Advertisement.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1024))
    }

    private func join(_ interest: ScanInterest, _ delivery: Delivery) -> UInt64 {
        let (consumer, replaced) = state.withLock { state -> (UInt64, Task<Void, Never>?) in
            let consumer = state.nextConsumer
            state.nextConsumer += 1
            var joined = Consumer(delivery: delivery, interest: interest)
            // What the scan already knows, before anything new (under the same lock as delivery).
            switch delivery {
            case .advertisements(let continuation):
                for advertisement in state.latest.values.sorted(by: { $0.receivedAt < $1.receivedAt }) {
                    continuation.yield(advertisement)
                }
            case .discovery(let continuation, let wanted):
                for (key, peripheral) in state.found.sorted(by: { $0.key < $1.key }) where wanted.accepts(peripheral) {
                    continuation.yield(.found(peripheral))
                    joined.reported.insert(key)
                }
            }
            state.consumers[consumer] = joined
            // In the consumers' order of joining, so that a scan's interest does not depend on a
            // dictionary's order.
            let wanted = ScanInterest.union(state.consumers.sorted { $0.key < $1.key }.map(\.value.interest))
            if state.scan == nil {
                startScan(&state, for: wanted, after: nil)
                return (consumer, nil)
            }
            guard !state.scanInterest.covers(wanted) else { return (consumer, nil) }
            // The running scan does not hear what this consumer wants: it takes on the wider
            // interest, or a wider scan replaces it once it is over.
            if let widen = state.widen {
                state.scanInterest = wanted
                widen.yield(wanted)
                return (consumer, nil)
            }
            let replaced = state.scan
            startScan(&state, for: wanted, after: replaced)
            return (consumer, replaced)
        }
        replaced?.cancel()
        return consumer
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

    /// What the running scan hears; nil when none runs (for tests and status).
    public var interest: ScanInterest? {
        state.withLock { $0.scan == nil ? nil : $0.scanInterest }
    }

    /// Starts the scan for `interest` once `previous` (the scan it replaces) is over: the stack
    /// then never sees the two at once (BlueZ: one client's StopDiscovery after the other's
    /// StartDiscovery would end both).
    private func startScan(_ state: inout State, for interest: ScanInterest, after previous: Task<Void, Never>?) {
        state.generation += 1
        state.scanInterest = interest
        let generation = state.generation
        let underlying = self.underlying
        let (widenings, widen) = AsyncStream.makeStream(of: ScanInterest.self, bufferingPolicy: .bufferingNewest(1))
        state.widen = underlying.widensInPlace ? widen : nil
        if !underlying.widensInPlace { widen.finish() }
        state.scan = Task { [weak self] in
            defer { widen.finish() }
            await previous?.value
            // Replaced again, or left by its last consumer, while it waited: that one's state.
            guard !Task.isCancelled else { return }
            var failure: (any Error)?
            do {
                // Scoped: cancelling this task ends the scan, and the task ends after it is over.
                try await underlying.withScan(for: interest, widenedBy: widenings) { events in
                    for try await event in events {
                        self?.deliver(event)
                    }
                }
            } catch {
                failure = error
            }
            self?.scanEnded(generation, failure: failure)
        }
    }

    private func deliver(_ event: ScanEvent) {
        state.withLock { state in
            switch event {
            case .advertisement(let advertisement):
                if state.latest[advertisement.address] == nil, state.latest.count >= Self.rememberedDevices,
                    let oldest = state.latest.min(by: { $0.value.receivedAt < $1.value.receivedAt })?.key
                {
                    state.latest[oldest] = nil
                }
                state.latest[advertisement.address] = advertisement
                for consumer in state.consumers.values {
                    if case .advertisements(let continuation) = consumer.delivery { continuation.yield(advertisement) }
                }
            case .discovery(.found(let peripheral)):
                let key = peripheral.address.uppercased()
                if state.found[key] == nil, state.found.count >= Self.rememberedDevices, let any = state.found.keys.first {
                    state.found[any] = nil
                }
                state.found[key] = peripheral
                for (id, consumer) in state.consumers {
                    guard case .discovery(let continuation, let wanted) = consumer.delivery, wanted.accepts(peripheral) else { continue }
                    continuation.yield(.found(peripheral))
                    state.consumers[id]?.reported.insert(key)
                }
            case .discovery(.lost(let address)):
                let key = address.uppercased()
                state.found[key] = nil
                for (id, consumer) in state.consumers where consumer.reported.contains(key) {
                    guard case .discovery(let continuation, _) = consumer.delivery else { continue }
                    continuation.yield(.lost(address: address))
                    state.consumers[id]?.reported.remove(key)
                }
            }
        }
    }

    /// The underlying scan ended (failed, or finished): its consumers' streams end the same way.
    private func scanEnded(_ generation: UInt64, failure: (any Error)?) {
        let consumers = state.withLock { state -> [Consumer] in
            guard state.generation == generation, state.scan != nil else { return [] }
            let consumers = Array(state.consumers.values)
            state.consumers = [:]
            state.scan = nil
            state.widen = nil
            state.latest = [:]
            state.found = [:]
            return consumers
        }
        for consumer in consumers { consumer.finish(throwing: failure) }
    }

    /// A consumer left: the scan stops with the last one. Returns the stopped scan's task (which
    /// ends once the underlying scan is over), or nil when others remain or it was gone.
    @discardableResult
    private func leave(_ consumer: UInt64) -> Task<Void, Never>? {
        let scan = state.withLock { state -> Task<Void, Never>? in
            guard state.consumers.removeValue(forKey: consumer) != nil, state.consumers.isEmpty else { return nil }
            let scan = state.scan
            state.scan = nil
            state.widen = nil
            state.latest = [:]
            state.found = [:]
            return scan
        }
        scan?.cancel()
        return scan
    }
}
