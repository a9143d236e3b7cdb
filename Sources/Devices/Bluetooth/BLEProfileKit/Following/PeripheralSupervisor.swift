public import BLETransport
import AsyncPrimitives
public import SampleBus
import GatewayRuntime
import FoundationEssentials

/// Discovers peripherals on one or more adapters and follows each one the filter accepts, up
/// to `maxDevices` in all, every one in its own child task: the discovery loop every Bluetooth
/// LE source shares. What following means (connect, subscribe, map) is the source's `follow`
/// closure, given the device's ``PeripheralSession``.
///
/// A device is followed once, on one adapter: of those that report it, the one with a free device
/// slot (``AdapterScheduler/claimSlot()``; the slots are shared with every source on the
/// adapter) and the fewest slots in use. A device every adapter that reports it is full for
/// waits for a slot, logged once and shown in those adapters' status, and is followed when a slot
/// comes free. Its presence condition
/// turns true again when that adapter reports it, and false when its object is gone, which the
/// session's reconnect logic waits on. Each adapter's discovery runs in its own task and is
/// retried with backoff on its own; no Bluetooth is logged once per adapter. While discovery
/// runs, each adapter's watchdog checks for silence (``AdapterScheduler/checkSilence()``). Only
/// cancellation ends the loop.
public struct PeripheralSupervisor: Sendable {
    /// The work for one followed device, given its session: runs until cancelled.
    public typealias Follow = @Sendable (PeripheralSession) async throws -> Void

    /// One adapter: its transport and its shared connection scheduler.
    public struct Radio: Sendable {
        public var transport: any BLECentralTransport
        public var scheduler: AdapterScheduler
        /// Whether the silence watchdog runs (real adapters; a simulated or scripted stack has
        /// nothing to power-cycle).
        public var watched: Bool

        public init(transport: any BLECentralTransport, scheduler: AdapterScheduler, watched: Bool) {
            self.transport = transport
            self.scheduler = scheduler
            self.watched = watched
        }
    }

    public let radios: [Radio]
    public let filter: DeviceFilter
    public let maxDevices: Int
    /// The backoff between discovery attempts that failed or ended, and each session's
    /// reconnect backoff.
    public let retry: ReconnectPolicy

    public init(radios: [Radio], filter: DeviceFilter, maxDevices: Int, retry: ReconnectPolicy) {
        self.radios = radios
        self.filter = filter
        self.maxDevices = maxDevices
        self.retry = retry
    }

    /// How logs name a peripheral: its advertised name and address, else the address.
    public static func displayName(of peripheral: DiscoveredPeripheral) -> String {
        let key = peripheral.address.uppercased()
        return peripheral.name.map { "\($0) [\(key)]" } ?? key
    }

    /// What every adapter's discovery reports, in arrival order, and the adapters' freed slots.
    enum Report: Sendable {
        case event(DiscoveryEvent, radio: Int)
        case unavailable(radio: Int, message: String)
        case available(radio: Int)
        /// A device slot of the radio's adapter was given back (by any source on it).
        case slotFreed(radio: Int)
    }

    /// Discovers and follows until cancelled (then throws `CancellationError`).
    ///
    /// A device is followed on the adapter, among those that report it, with a free device slot
    /// and the fewest slots in use (then the fewest links, then the configured order). When every
    /// adapter that reports it is full, the device waits: that is logged once and shown in each
    /// such adapter's status line, and it is followed as soon as one of them gives a slot back
    /// (``AdapterScheduler/slotReleased(after:)``, no polling) or another adapter with a free slot
    /// reports it.
    public func run(context: SourceContext, follow: @escaping Follow) async throws {
        let (reports, sink) = AsyncStream.makeStream(of: Report.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in radios.indices {
                group.addTask { try await discover(on: index, context: context, reports: sink) }
                if radios[index].watched { group.addTask { try await watch(radios[index], context: context) } }
                group.addTask { try await watchSlots(of: index, reports: sink) }
            }
            var following = Following(supervisor: self, context: context, follow: follow)
            for await report in reports {
                for work in following.take(report) { group.addTask(operation: work) }
            }
            group.cancelAll()
            try await group.waitForAll()
        }
        try Task.checkCancellation()
    }

    /// The order to try the adapters in for a device that `radios` (indices) report: the one with
    /// the fewest device slots in use first, then the fewest links, then the configured order.
    /// `snapshots` gives each radio's counts.
    public static func adapterPreference(of radios: Set<Int>, snapshots: (Int) -> AdapterScheduler.Snapshot) -> [Int] {
        radios.map { ($0, snapshots($0)) }
            .sorted { a, b in (a.1.devices, a.1.links, a.0) < (b.1.devices, b.1.links, b.0) }
            .map(\.0)
    }

    /// Reports every slot the radio's adapter gives back, whichever source gave it, until
    /// cancelled: the wake-up of the devices waiting for a slot.
    private func watchSlots(of index: Int, reports: AsyncStream<Report>.Continuation) async throws {
        let scheduler = radios[index].scheduler
        var generation = scheduler.slotReleaseCount
        while true {
            generation = try await scheduler.slotReleased(after: generation)
            reports.yield(.slotFreed(radio: index))
        }
    }

    func adapterSuffix(_ index: Int) -> String {
        radios.count > 1 ? " on \(radios[index].scheduler.adapter)" : ""
    }

    func detailKey(_ name: String, _ index: Int) -> String {
        radios.count > 1 ? "\(radios[index].scheduler.adapter).\(name)" : name
    }

    /// One adapter's discovery, retried with backoff until cancelled.
    private func discover(on index: Int, context: SourceContext, reports: AsyncStream<Report>.Continuation) async throws {
        let transport = radios[index].transport
        let logger = context.logger
        var failures = 0
        var unavailableLogged = false
        while !Task.isCancelled {
            do {
                for try await event in transport.discover(services: filter.services, addresses: filter.addresses) {
                    if unavailableLogged {
                        logger.notice("Bluetooth is available again\(adapterSuffix(index))")
                        reports.yield(.available(radio: index))
                        unavailableLogged = false
                    }
                    failures = 0
                    reports.yield(.event(event, radio: index))
                }
                failures += 1
            } catch let error as BLETransportError where error.code == .unavailable {
                failures += 1
                if !unavailableLogged {
                    logger.error("no Bluetooth\(adapterSuffix(index)): \(error.message); retrying until it appears")
                    unavailableLogged = true
                }
                reports.yield(.unavailable(radio: index, message: error.message))
            } catch is CancellationError {
                break
            } catch {
                failures += 1
                logger.warning("discovery failed\(adapterSuffix(index)): \(error)")
                context.status.reportError("discovery failed\(adapterSuffix(index)): \(error)", at: context.clock.now())
            }
            try await context.clock.sleep(for: retry.delay(afterFailures: failures))
        }
        throw CancellationError()
    }

    /// One adapter's watchdog and status line: every quarter of the silence limit (at most a
    /// minute), checks for silence and shows the scheduler's counts.
    private func watch(_ radio: Radio, context: SourceContext) async throws {
        let scheduler = radio.scheduler
        let period = Duration.seconds(min(60, max(1, scheduler.limits.silentSeconds / 4)))
        while true {
            scheduler.publish(to: context.status)
            try await context.clock.sleep(for: period)
            if case .powerCycle(let reason) = scheduler.checkSilence() {
                await Self.powerCycle(radio, reason: reason, context: context)
            }
        }
    }

    /// Power-cycles a wedged adapter once and says so.
    static func powerCycle(_ radio: Radio, reason: String, context: SourceContext) async {
        let adapter = radio.scheduler.adapter
        context.logger.warning("adapter \(adapter) looks wedged (\(reason)): power-cycling it")
        do {
            try await radio.transport.powerCycleAdapter()
            context.logger.notice("adapter \(adapter) was power-cycled")
        } catch {
            context.logger.error("power-cycling adapter \(adapter) failed: \(error)")
            context.status.reportError("power-cycling adapter \(adapter) failed: \(error)", at: context.clock.now())
        }
        radio.scheduler.publish(to: context.status)
    }
}
