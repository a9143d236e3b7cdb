import BLETransport
import DBus
@testable import BlueZ
import Foundation
import GatewayRuntime
import GatewayTesting
import LinuxSystem
import Synchronization
import XCTest

/// The management-socket scan path over a fake socket: a SOCK_SEQPACKET socket pair stands in for
/// the kernel's HCI control socket (one event per datagram, as the kernel sends them), beside a
/// private bus with dbusmock's bluetoothd (Tests/Fixtures/bluez_gatt.py).
final class ManagementSocketPathTests: XCTestCase {
    /// A value the test and the scan's tasks share.
    private final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ initial: Value) { value = Mutex(initial) }
    }

    private var bluez: PrivateBlueZ?

    override func tearDown() async throws {
        await bluez?.stop()
        bluez = nil
    }

    /// A connected pair: the transport's end (handed over by `open`) and the test's end.
    private func socketPair() throws -> (transport: Int32, kernel: FileDescriptor) {
        var ends: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
            throw SystemError("socketpair", errno: Errno.lastError)
        }
        return (ends[0], FileDescriptor(owning: ends[1]))
    }

    private func transport(_ bluez: PrivateBlueZ, access: ManagementSocketAccess) -> BlueZTransport {
        BlueZTransport(
            connection: bluez.connection, adapter: "hci0", clock: SystemClock(),
            logger: Logger(label: "bluez", sink: bluez.logSink, level: .debug), managementSocket: access)
    }

    /// Permitted: discovery runs over D-Bus, every Device Found of hci0 is an advertisement (a
    /// repeat too, which D-Bus would not signal), other controllers' and undecodable events are
    /// skipped, BlueZ's own device signals are not reported twice; when the socket ends the scan
    /// goes on by discovery and reports BlueZ's signals, and says so.
    func testManagementSocketPathAndItsFallback() async throws {
        let bluez = try await PrivateBlueZ()
        self.bluez = bluez
        try await bluez.addAdapter()
        let (ours, kernel) = try socketPair()
        let opened = Atomic<Int>(0)
        let access = ManagementSocketAccess(
            refusal: { nil },
            open: { () throws(SystemError) -> FileDescriptor in
                opened.add(1, ordering: .relaxed)
                return FileDescriptor(owning: ours)
            })
        let transport = transport(bluez, access: access)
        let heard = Shared<[Advertisement]>([])
        try await transport.withAdvertisements(matching: []) { stream in
            let collecting = Task { for try await advertisement in stream { heard.value.withLock { $0.append(advertisement) } } }
            defer { collecting.cancel() }
            try await waitUntil(timeout: .seconds(20), "the management-socket path") {
                transport.path == .managementSocket
            }
            try await waitUntil(timeout: .seconds(20), "discovery running") { try await bluez.discovering() }
            let filter = try await bluez.discoveryFilter()
            XCTAssertEqual(filter["DuplicateData"]?.bool, true)
            XCTAssertEqual(opened.load(ordering: .relaxed), 1)
            // BlueZ signals a device: on this path the socket reports, so this is not reported.
            try await bluez.advertise("C8:47:8C:01:02:03", name: "MIBFS", service: [0x181D: [0x22, 0x9E]])
            let polar = ManagementEventTests.deviceFound(data: ManagementEventTests.polarData)
            try kernel.writeAll(polar)
            try kernel.writeAll(ManagementEventTests.deviceFound(controller: 1, data: ManagementEventTests.polarData))
            try kernel.writeAll([0x12, 0x00, 0x00, 0x00, 0x40, 0x00, 0x01])  // cut short: skipped, counted
            try kernel.writeAll(polar)  // a repeat: reported again
            try kernel.writeAll(
                ManagementEventTests.deviceFound(address: [0x03, 0x02, 0x01, 0x8C, 0x47, 0xC8], data: ManagementEventTests.scaleData))
            try await waitUntil(timeout: .seconds(20), "three reports") { heard.value.withLock { $0.count } >= 3 }
            let reports = heard.value.withLock { $0 }
            XCTAssertEqual(reports.map(\.address), ["A0:9E:1A:12:34:56", "A0:9E:1A:12:34:56", "C8:47:8C:01:02:03"])
            XCTAssertEqual(reports[0].name, "Polar OH1 1A2B3C4D")
            // The scale's report carries no name: BlueZ's Device1 Name serves, if it came first.
            XCTAssertTrue(reports[2].name == "MIBFS" || reports[2].name == nil)
            XCTAssertEqual(reports[2].serviceData[BluetoothUUID(0x181D)]?.first, 0x22)
            XCTAssertTrue(bluez.logSink.contains("by the management socket"))
            XCTAssertTrue(bluez.logSink.contains("undecodable management event"))

            // The socket ends (the kernel's side closed): the scan goes on by discovery.
            kernel.close()
            try await waitUntil(timeout: .seconds(20), "the fallback to discovery") { transport.path == .discovery }
            XCTAssertTrue(bluez.logSink.contains("the management socket was closed on /org/bluez/hci0: scanning by discovery instead"))
            try await bluez.advertise("A0:9E:1A:65:43:21", name: "Polar H10 5E6F7A8B", manufacturer: [0x006B: [0x03, 0x00, 90, 80]])
            try await waitUntil(timeout: .seconds(20), "BlueZ's signal reported") {
                heard.value.withLock { $0.contains { $0.address == "A0:9E:1A:65:43:21" } }
            }
            XCTAssertEqual(heard.value.withLock { $0.filter { $0.address == "A0:9E:1A:12:34:56" }.count }, 2)
        }
        let stillDiscovering = try await bluez.discovering()
        XCTAssertFalse(stillDiscovering, "the scan stopped discovery when it ended")
    }

    /// On the adapter's shared scan: a scan for discovery only opens no socket; when it is widened
    /// by an advertisement interest it opens the socket, whose reports are the advertisements,
    /// while the devices found still come from BlueZ's signals (a device BlueZ signals is found,
    /// not reported as an advertisement).
    func testWideningOpensTheSocketAndDiscoveryStillComesFromDBus() async throws {
        let bluez = try await PrivateBlueZ()
        self.bluez = bluez
        try await bluez.addAdapter()
        let (ours, kernel) = try socketPair()
        let opened = Atomic<Int>(0)
        let access = ManagementSocketAccess(
            refusal: { nil },
            open: { () throws(SystemError) -> FileDescriptor in
                opened.add(1, ordering: .relaxed)
                return FileDescriptor(owning: ours)
            })
        let transport = transport(bluez, access: access)
        let discovery = DiscoveryInterest(services: [BluetoothUUID(0x180D)])
        let (widenings, widen) = AsyncStream.makeStream(of: ScanInterest.self)
        let events = Shared<[ScanEvent]>([])
        @Sendable func advertised() -> [String] {
            events.value.withLock {
                $0.compactMap { if case .advertisement(let advertisement) = $0 { advertisement.address } else { nil } }
            }
        }
        @Sendable func found() -> Set<String> {
            events.value.withLock {
                Set($0.compactMap { if case .discovery(.found(let peripheral)) = $0 { peripheral.address.uppercased() } else { nil } })
            }
        }
        try await transport.withScan(for: ScanInterest(discovery: discovery), widenedBy: widenings) { stream in
            let collecting = Task { for try await event in stream { events.value.withLock { $0.append(event) } } }
            defer { collecting.cancel() }
            try await waitUntil(timeout: .seconds(20), "discovery running") { try await bluez.discovering() }
            try await bluez.advertise("A0:9E:1A:00:00:01", name: "Polar H10 00000001")
            try await waitUntil(timeout: .seconds(20), "the strap found") { found().contains("A0:9E:1A:00:00:01") }
            XCTAssertEqual(opened.load(ordering: .relaxed), 0, "no advertisement interest, no socket")

            widen.yield(ScanInterest(advertisements: [], discovery: discovery))
            try await waitUntil(timeout: .seconds(20), "the management-socket path") { transport.path == .managementSocket }
            XCTAssertEqual(opened.load(ordering: .relaxed), 1)
            try await bluez.advertise("C8:47:8C:01:02:03", name: "MIBFS", service: [0x181D: [0x22, 0x9E]])
            try await waitUntil(timeout: .seconds(20), "the scale found through D-Bus") { found().contains("C8:47:8C:01:02:03") }
            try kernel.writeAll(ManagementEventTests.deviceFound(data: ManagementEventTests.polarData))
            try await waitUntil(timeout: .seconds(20), "the socket's report") { advertised().contains("A0:9E:1A:12:34:56") }
            XCTAssertEqual(advertised(), ["A0:9E:1A:12:34:56"], "only the socket reports advertisements")
        }
        widen.finish()
        let stillDiscovering = try await bluez.discovering()
        XCTAssertFalse(stillDiscovering, "the scan stopped discovery when it ended")
    }

    /// With matches, the path asks the kernel for an advertisement monitor of their patterns
    /// before discovery starts (which lifts the controller's duplicate filter) and removes it,
    /// by the handle the kernel answered, when the scan ends.
    func testKernelMonitorAddedBeforeDiscoveryAndRemovedAtTheEnd() async throws {
        let bluez = try await PrivateBlueZ()
        self.bluez = bluez
        try await bluez.addAdapter()
        let (ours, kernel) = try socketPair()
        try kernel.setNonBlocking()
        let access = ManagementSocketAccess(refusal: { nil }, open: { () throws(SystemError) -> FileDescriptor in FileDescriptor(owning: ours) })
        let transport = transport(bluez, access: access)
        let commands = Shared<[[UInt8]]>([])
        @Sendable func readCommands() -> Int {
            while let command = try? kernel.read(maximum: 512), !command.isEmpty { commands.value.withLock { $0.append(command) } }
            return commands.value.withLock { $0.count }
        }
        try await transport.withAdvertisements(matching: [.manufacturer(0x006B)]) { _ in
            try await waitUntil(timeout: .seconds(20), "discovery running") { try await bluez.discovering() }
            try await waitUntil(timeout: .seconds(20), "the monitor command") { readCommands() >= 1 }
            let add = commands.value.withLock { $0[0] }
            // Opcode 0x0052, hci0, 35 bytes: one pattern, ff at offset 0, 2 bytes 6b 00, zeros to 31.
            XCTAssertEqual(Array(add.prefix(11)), [0x52, 0x00, 0x00, 0x00, 0x23, 0x00, 0x01, 0xFF, 0x00, 0x02, 0x6B])
            XCTAssertEqual(add.count, 6 + 1 + 34)
            // Command Complete (0x0001): opcode 0x0052, status 0, Monitor_Handle 7.
            try kernel.writeAll([0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x52, 0x00, 0x00, 0x07, 0x00])
            try await waitUntil(timeout: .seconds(20), "the monitor's handle") {
                bluez.logSink.contains("kernel advertisement monitor 7 added on hci0")
            }
        }
        try await waitUntil(timeout: .seconds(20), "the remove command") { readCommands() >= 2 }
        XCTAssertEqual(commands.value.withLock { $0[1] }, [0x54, 0x00, 0x00, 0x00, 0x02, 0x00, 0x07, 0x00])
    }

    /// Not permitted (no CAP_NET_ADMIN): the socket is never opened, the scan is discovery and
    /// the log says why.
    func testWithoutPermissionTheScanIsDiscovery() async throws {
        let bluez = try await PrivateBlueZ()
        self.bluez = bluez
        try await bluez.addAdapter()
        let opened = Atomic<Int>(0)
        let access = ManagementSocketAccess(
            refusal: { "the process does not hold CAP_NET_ADMIN (CapEff 0)" },
            open: { () throws(SystemError) -> FileDescriptor in
                opened.add(1, ordering: .relaxed)
                throw SystemError("socket", errno: .permissionDenied)
            })
        let transport = transport(bluez, access: access)
        try await transport.withAdvertisements(matching: []) { stream in
            var iterator = stream.makeAsyncIterator()
            try await waitUntil(timeout: .seconds(20), "the discovery path") { transport.path == .discovery }
            try await bluez.advertise("A0:9E:1A:12:34:56", name: "Polar H10 1A2B3C4D", manufacturer: [0x006B: [0x03, 0x00, 90, 80]])
            let first = try await iterator.next()
            XCTAssertEqual(first?.address, "A0:9E:1A:12:34:56")
        }
        XCTAssertEqual(opened.load(ordering: .relaxed), 0)
        XCTAssertTrue(
            bluez.logSink.contains(
                "no management socket on /org/bluez/hci0: the process does not hold CAP_NET_ADMIN (CapEff 0): scanning by discovery"))
    }

    /// Permitted, but the socket cannot be opened (no AF_BLUETOOTH in a sandbox): discovery.
    func testASocketThatCannotBeOpenedFallsBackToDiscovery() async throws {
        let bluez = try await PrivateBlueZ()
        self.bluez = bluez
        try await bluez.addAdapter()
        let access = ManagementSocketAccess(
            refusal: { nil },
            open: { () throws(SystemError) -> FileDescriptor in throw SystemError("socket AF_BLUETOOTH BTPROTO_HCI", errno: .addressFamilyNotSupported) })
        let transport = transport(bluez, access: access)
        try await transport.withAdvertisements(matching: []) { _ in
            try await waitUntil(timeout: .seconds(20), "the discovery path") { transport.path == .discovery }
        }
        XCTAssertTrue(bluez.logSink.contains("cannot open the management socket for /org/bluez/hci0"))
    }
}
