public import FoundationEssentials

/// One Bluetooth LE advertisement as a scanner reports it: who sent it and the data it carried.
///
/// The scanner reports each advertisement it receives (BlueZ: each change of a device's
/// `ManufacturerData`, `ServiceData`, `RSSI`), stamped with the scanner's clock.
public struct Advertisement: Sendable, Hashable {
    /// The advertiser's address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// The advertised local name, when known.
    public var name: String?
    /// Signal strength in dBm, when known.
    public var rssi: Int?
    /// Manufacturer-specific data by company identifier, the bytes after the identifier.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by service UUID, the bytes after the UUID.
    public var serviceData: [BluetoothUUID: [UInt8]]
    /// When it was received.
    public var receivedAt: Date

    /// An advertisement from `address` received at `receivedAt`.
    public init(
        address: String, name: String? = nil, rssi: Int? = nil, manufacturerData: [UInt16: [UInt8]] = [:],
        serviceData: [BluetoothUUID: [UInt8]] = [:], receivedAt: Date
    ) {
        self.address = address
        self.name = name
        self.rssi = rssi
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.receivedAt = receivedAt
    }
}

/// How a scanner hears advertisements, best first: what `status` and the log name.
public enum ScanPath: String, Sendable, Hashable, CaseIterable {
    /// BlueZ's Advertisement Monitor (`org.bluez.AdvertisementMonitorManager1`, experimental):
    /// passive scanning, the controller's duplicate filter lifted while a monitor is registered.
    case advertisementMonitor = "advertisement-monitor"
    /// Discovery with a filter (`Transport` le, `DuplicateData` true): the kernel may still turn
    /// the controller's duplicate filter on, so a changing advertisement can be reported less often.
    case discovery
    /// The kernel's management socket (Device Found events; needs `CAP_NET_ADMIN`).
    case managementSocket = "management-socket"
    /// Simulated advertisers (`transport: simulated`).
    case simulated

    /// Whether the path is known to report every advertisement of a device whose data changes
    /// (no duplicate filter in the way).
    public var reportsEveryChange: Bool { self != .discovery }
}

/// A source of advertisements on one adapter: BlueZ, or simulated advertisers.
///
/// `advertisements(matching:)` starts scanning and yields every advertisement heard, until the
/// consumer stops iterating (scanning then stops) or the scanner fails (the stream throws a
/// ``BLETransportError``). ``path`` says how the scanner hears them once scanning started.
public protocol AdvertisementScanner: Sendable {
    /// Scans and yields advertisements. Cancellation stops the scan.
    ///
    /// `matches` says what the caller listens for: a scanner may hear only those (BlueZ's
    /// Advertisement Monitor is given them as patterns) and may yield others too, so the caller
    /// still filters. Empty means every advertisement.
    func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error>
    /// Runs `body` with the advertisements of one scan (as ``advertisements(matching:)``) and
    /// returns, or rethrows, once `body` did and the scan is over: what the scan registered with
    /// the system (BlueZ: its monitor, its discovery) is undone before this returns, also when
    /// the task was cancelled. The default runs `body` on ``advertisements(matching:)``.
    func withAdvertisements<Result>(
        matching matches: [AdvertisementMatch], _ body: (AsyncThrowingStream<Advertisement, any Error>) async throws -> Result
    ) async throws -> Result
    /// The path the scanner's latest scan uses; nil before scanning started.
    var path: ScanPath? { get async }
    /// Advertisements the scanner heard but dropped before yielding them (a buffer of its own
    /// overflowed), over its lifetime. The default is 0: nothing is buffered apart from the stream.
    var droppedAdvertisements: Int { get async }
    /// Runs `body` with the events of one scan for `interest`, scoped like
    /// ``withAdvertisements(matching:_:)``: advertisements for its advertisement interest, devices
    /// found and lost for its discovery interest. Each interest that arrives on `widenings` (a
    /// wider one: ``ScanInterest/union(_:)`` with a new consumer's) is taken on while the scan
    /// runs, when ``widensInPlace``. A stack whose adapter is also its connections' (BlueZ)
    /// implements it, so that one scan serves both (``SharedAdvertisementScanner``). The default
    /// serves advertisements only (``withAdvertisements(matching:_:)``), ignores `widenings` and
    /// throws `.notSupported` for a discovery interest.
    func withScan<Result>(
        for interest: ScanInterest, widenedBy widenings: AsyncStream<ScanInterest>,
        _ body: (AsyncThrowingStream<ScanEvent, any Error>) async throws -> Result
    ) async throws -> Result
    /// Whether ``withScan(for:widenedBy:_:)`` takes on wider interests while it scans (BlueZ: a
    /// new discovery filter, a new monitor); when false, a shared scan restarts for a wider one.
    var widensInPlace: Bool { get }
}

extension AdvertisementScanner {
    /// Runs `body` on ``advertisements(matching:)``: for scanners with nothing to undo.
    public func withAdvertisements<Result>(
        matching matches: [AdvertisementMatch], _ body: (AsyncThrowingStream<Advertisement, any Error>) async throws -> Result
    ) async throws -> Result {
        try await body(advertisements(matching: matches))
    }

    /// Scanners of advertisements only restart for a wider interest.
    public var widensInPlace: Bool { false }

    /// None: a scanner that buffers nothing of its own drops nothing.
    public var droppedAdvertisements: Int { 0 }

    /// Runs one scan for `interest` that is never widened (``withScan(for:widenedBy:_:)``).
    public func withScan<Result>(
        for interest: ScanInterest, _ body: (AsyncThrowingStream<ScanEvent, any Error>) async throws -> Result
    ) async throws -> Result {
        try await withScan(for: interest, widenedBy: AsyncStream { $0.finish() }, body)
    }

    /// Serves an advertisement interest by ``withAdvertisements(matching:_:)``; a discovery
    /// interest throws `.notSupported` (a scanner of advertisements only). `widenings` are not
    /// taken on (``widensInPlace`` is false).
    public func withScan<Result>(
        for interest: ScanInterest, widenedBy widenings: AsyncStream<ScanInterest>,
        _ body: (AsyncThrowingStream<ScanEvent, any Error>) async throws -> Result
    ) async throws -> Result {
        guard interest.discovery == nil else {
            throw BLETransportError(.notSupported, "this scanner hears advertisements only; it does not discover devices")
        }
        return try await withAdvertisements(matching: interest.advertisements ?? []) { advertisements in
            let (events, continuation) = AsyncThrowingStream.makeStream(
                of: ScanEvent.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1024))
            // Relays in order in a child task, so that `body` reads scan events; it ends with
            // the advertisements (their failure passed on) or when `body` returned.
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await advertisement in advertisements { continuation.yield(.advertisement(advertisement)) }
                        continuation.finish()
                    } catch {
                        continuation.finish(throwing: error)
                    }
                }
                defer { group.cancelAll() }
                return try await body(events)
            }
        }
    }

    /// Every advertisement the scanner hears (``advertisements(matching:)`` with no match).
    public func advertisements() -> AsyncThrowingStream<Advertisement, any Error> {
        advertisements(matching: [])
    }
}
