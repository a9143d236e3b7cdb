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

    /// A private bluetoothd with hci0 and a transport whose management socket is one end of a
    /// socket pair: the bus, the test's (kernel's) end, how often the socket was opened.
    private func permittedTransport() async throws -> (bluez: PrivateBlueZ, transport: BlueZTransport, kernel: FileDescriptor, opened: Shared<Int>) {
        let bluez = try await PrivateBlueZ()
        self.bluez = bluez
        try await bluez.addAdapter()
        let (ours, kernel) = try socketPair()
        let opened = Shared(0)
        let access = ManagementSocketAccess(
            refusal: { nil },
            open: { () throws(SystemError) -> FileDescriptor in
                opened.value.withLock { $0 += 1 }
                return FileDescriptor(owning: ours)
            })
        return (bluez, transport(bluez, access: access), kernel, opened)
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
        let (bluez, transport, kernel, opened) = try await permittedTransport()
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
            XCTAssertEqual(opened.value.withLock { $0 }, 1)
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
        let (bluez, transport, kernel, opened) = try await permittedTransport()
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
            XCTAssertEqual(opened.value.withLock { $0 }, 0, "no advertisement interest, no socket")

            widen.yield(ScanInterest(advertisements: [], discovery: discovery))
            try await waitUntil(timeout: .seconds(20), "the management-socket path") { transport.path == .managementSocket }
            XCTAssertEqual(opened.value.withLock { $0 }, 1)
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

    /// An Advertisement Monitor bluetoothd releases on its own falls back to the best remaining
    /// path: the management socket when the process may read it (discovery over D-Bus, the
    /// socket's reports the advertisements), and the log and the path say so.
    func testAReleasedMonitorFallsBackToTheManagementSocket() async throws {
        let (bluez, transport, kernelEnd, opened) = try await permittedTransport()
        let kernel = try FakeKernel(kernelEnd)
        try await bluez.offerAdvertisementMonitor()
        let heard = Shared<[Advertisement]>([])
        try await transport.withAdvertisements(matching: [.manufacturer(0x006B)]) { stream in
            let collecting = Task { for try await advertisement in stream { heard.value.withLock { $0.append(advertisement) } } }
            defer { collecting.cancel() }
            try await waitUntil(timeout: .seconds(20), "the monitor activated") {
                try await bluez.monitorEvents().events.contains("Activate")
            }
            XCTAssertEqual(transport.path, .advertisementMonitor)
            XCTAssertEqual(opened.value.withLock { $0 }, 0, "no socket while the monitor serves")
            try await bluez.releaseMonitors()
            try await waitUntil(timeout: .seconds(20), "the management-socket path") { transport.path == .managementSocket }
            try await waitUntil(timeout: .seconds(20), "discovery running") { try await bluez.discovering() }
            XCTAssertEqual(opened.value.withLock { $0 }, 1)
            XCTAssertTrue(bluez.logSink.contains("bluetoothd released the Advertisement Monitor on /org/bluez/hci0: falling back to the next path"))
            XCTAssertTrue(bluez.logSink.contains("scanning advertisements on /org/bluez/hci0 by the management socket"))
            kernel.write(ManagementEventTests.deviceFound(data: ManagementEventTests.polarData), times: 1)
            try await waitUntil(timeout: .seconds(20), "the socket's report") {
                heard.value.withLock { $0.contains { $0.address == "A0:9E:1A:12:34:56" } }
            }
        }
        let stillDiscovering = try await bluez.discovering()
        XCTAssertFalse(stillDiscovering, "the discovery started after the release is stopped with the scan")
        // The kernel monitor the fallback added is gone with the scan.
        XCTAssertTrue(bluez.logSink.contains("kernel advertisement monitor 7 removed on hci0"))
        kernel.close()
    }

    /// A scan that fell back to the management socket stays on it when a wider interest joins:
    /// no new Advertisement Monitor is registered (bluetoothd released the last), the kernel
    /// monitor is replaced by one with the wider patterns, and the scan's end removes that one.
    func testAWideningAfterTheFallbackStaysOnTheSocketAndReplacesTheKernelMonitor() async throws {
        let (bluez, transport, kernelEnd, _) = try await permittedTransport()
        let kernel = try FakeKernel(kernelEnd)
        try await bluez.offerAdvertisementMonitor()
        let (widenings, widen) = AsyncStream.makeStream(of: ScanInterest.self)
        try await transport.withScan(for: ScanInterest(advertisements: [.manufacturer(0x006B)]), widenedBy: widenings) { _ in
            try await waitUntil(timeout: .seconds(20), "the monitor activated") {
                try await bluez.monitorEvents().events.contains("Activate")
            }
            try await bluez.releaseMonitors()
            try await waitUntil(timeout: .seconds(20), "the kernel monitor") {
                bluez.logSink.contains("kernel advertisement monitor 7 added on hci0")
            }
            // The kernel adds its monitor before the fallback's discovery is set up over D-Bus,
            // which is when the scan reports the socket as its path: the widening is tested from there.
            try await waitUntil(timeout: .seconds(20), "the fallback on the socket") { transport.path == .managementSocket }
            let registered = try await bluez.monitorEvents().events.filter { $0 == "GetManagedObjects" }.count
            widen.yield(ScanInterest(advertisements: [.manufacturer(0x006B), .serviceData(BluetoothUUID(0x181D))]))
            try await waitUntil(timeout: .seconds(20), "the kernel monitor replaced") {
                bluez.logSink.contains("kernel advertisement monitor 7 removed on hci0")
            }
            XCTAssertTrue(bluez.logSink.contains("kernel advertisement monitor 8 replaces 7 on hci0"))
            XCTAssertEqual(transport.path, .managementSocket)
            let registeredAfter = try await bluez.monitorEvents().events.filter { $0 == "GetManagedObjects" }.count
            XCTAssertEqual(registeredAfter, registered, "no Advertisement Monitor registered again")
        }
        widen.finish()
        XCTAssertTrue(bluez.logSink.contains("kernel advertisement monitor 8 removed on hci0"))
        XCTAssertEqual(kernel.commands.map { $0[0] }, [0x52, 0x52, 0x53, 0x53])
        kernel.close()
    }

    /// With matches, the path asks the kernel for an advertisement monitor of their patterns
    /// before discovery starts (which lifts the controller's duplicate filter) and removes it,
    /// by the handle the kernel answered, when the scan ends, which waits for that answer.
    func testKernelMonitorAddedBeforeDiscoveryAndRemovedAtTheEnd() async throws {
        let bluez = try await PrivateBlueZ()
        self.bluez = bluez
        try await bluez.addAdapter()
        let (ours, kernelEnd) = try socketPair()
        let kernel = try FakeKernel(kernelEnd)
        let access = ManagementSocketAccess(refusal: { nil }, open: { () throws(SystemError) -> FileDescriptor in FileDescriptor(owning: ours) })
        let transport = transport(bluez, access: access)
        try await transport.withAdvertisements(matching: [.manufacturer(0x006B)]) { _ in
            try await waitUntil(timeout: .seconds(20), "discovery running") { try await bluez.discovering() }
            try await waitUntil(timeout: .seconds(20), "the monitor's handle") {
                bluez.logSink.contains("kernel advertisement monitor 7 added on hci0")
            }
            let add = kernel.commands[0]
            // Opcode 0x0052, hci0, 35 bytes: one pattern, ff at offset 0, 2 bytes 6b 00, zeros to 31.
            XCTAssertEqual(Array(add.prefix(11)), [0x52, 0x00, 0x00, 0x00, 0x23, 0x00, 0x01, 0xFF, 0x00, 0x02, 0x6B])
            XCTAssertEqual(add.count, 6 + 1 + 34)
        }
        // The scan's end waited for the removal's answer.
        XCTAssertEqual(kernel.commands.count, 2)
        XCTAssertEqual(kernel.commands.last, [0x53, 0x00, 0x00, 0x00, 0x02, 0x00, 0x07, 0x00])
        XCTAssertTrue(bluez.logSink.contains("kernel advertisement monitor 7 removed on hci0"))
        kernel.close()
    }

    /// A reader whose consumer has stopped (the scan's loop is gone: its stream, bounded, is no
    /// longer read) while the kernel floods it with reports still gets the removal of its monitor
    /// out and reads the kernel's answer: it reads (and drops) the reports while it closes.
    func testClosingReaderRemovesItsMonitorAndReadsTheAnswerWhileReportsFlood() async throws {
        let (ours, kernelEnd) = try socketPair()
        let report = ManagementEventTests.deviceFound(data: ManagementEventTests.polarData)
        let kernel = try FakeKernel(kernelEnd, reportsBeforeRemovalAnswer: (report, 3000))
        let logs = RecordingLogSink()
        let drops = Atomic<Int>(0)
        let reader = try ManagementAdvertisementReader(
            descriptor: FileDescriptor(owning: ours), controller: 0, clock: SystemClock(),
            logger: Logger(label: "bluez", sink: logs, level: .debug), ready: {}, dropped: { drops.add(1, ordering: .relaxed) },
            ended: { _ in })
        try reader.start()
        XCTAssertTrue(try reader.addMonitor(patterns: [AdvertisingDataPattern(type: 0xFF, content: [0x6B, 0x00])]))
        try await waitUntil(timeout: .seconds(20), "the monitor added") { logs.contains("kernel advertisement monitor 7 added on hci0") }
        // More reports than the reader keeps, none taken; the kernel queues more ahead of the
        // removal's answer (FakeKernel), which the reader must read through.
        kernel.write(report, times: 2 * ManagementAdvertisementReader.bufferedReports)
        let removal = await reader.close(within: .seconds(20))
        XCTAssertEqual(removal, .answered(handle: 7, status: 0))
        XCTAssertEqual(kernel.commands.last, ManagementCommand.removeMonitor(controller: 0, handle: 7))
        XCTAssertTrue(logs.contains("kernel advertisement monitor 7 removed on hci0"))
        XCTAssertTrue(logs.contains("report(s) read on hci0 while closing, not handed on"))
        // The consumer never took a report: the buffer kept the newest, the rest were counted.
        XCTAssertEqual(reader.takeReports().count, ManagementAdvertisementReader.bufferedReports)
        XCTAssertGreaterThan(drops.load(ordering: .relaxed), 0)
        kernel.close()
    }

    /// The kernel's answer is the outcome: a refusal (Command Status busy) is logged with its
    /// status; a removal the kernel never answers ends at the time given.
    func testARefusedRemovalIsLoggedAndAnUnansweredOneTimesOut() async throws {
        for answer in [FakeKernel.RemovalAnswer.busy, .none] {
            let (ours, kernelEnd) = try socketPair()
            let kernel = try FakeKernel(kernelEnd, removal: answer)
            let logs = RecordingLogSink()
            let reader = try ManagementAdvertisementReader(
                descriptor: FileDescriptor(owning: ours), controller: 0, clock: SystemClock(),
                logger: Logger(label: "bluez", sink: logs, level: .debug), ready: {}, dropped: {}, ended: { _ in })
            try reader.start()
            _ = try reader.addMonitor(patterns: [AdvertisingDataPattern(type: 0x16, content: [0x1D, 0x18])])
            try await waitUntil(timeout: .seconds(20), "the monitor added") { logs.contains("kernel advertisement monitor 7 added on hci0") }
            let removal = await reader.close(within: .milliseconds(300))
            switch answer {
            case .busy:
                XCTAssertEqual(removal, .answered(handle: 7, status: 0x0A))
                XCTAssertTrue(logs.contains("the kernel did not remove advertisement monitor 7 on hci0 (status 0xa)"))
            case .none, .complete:
                XCTAssertEqual(removal, .timedOut(handle: 7))
                XCTAssertTrue(logs.contains("no answer within"))
            }
            kernel.close()
        }
    }

    /// Wider patterns while the socket is open replace the kernel monitor: the new one is asked
    /// for, and the old one removed once the kernel added the new one; the close removes the new.
    func testWiderPatternsReplaceTheKernelMonitor() async throws {
        let (ours, kernelEnd) = try socketPair()
        let kernel = try FakeKernel(kernelEnd)
        let logs = RecordingLogSink()
        let reader = try ManagementAdvertisementReader(
            descriptor: FileDescriptor(owning: ours), controller: 0, clock: SystemClock(),
            logger: Logger(label: "bluez", sink: logs, level: .debug), ready: {}, dropped: {}, ended: { _ in })
        try reader.start()
        let strap = AdvertisingDataPattern(type: 0xFF, content: [0x6B, 0x00])
        let scale = AdvertisingDataPattern(type: 0x16, content: [0x1D, 0x18])
        _ = try reader.addMonitor(patterns: [strap])
        try await waitUntil(timeout: .seconds(20), "the first monitor") { logs.contains("kernel advertisement monitor 7 added on hci0") }
        _ = try reader.addMonitor(patterns: [strap, scale])
        try await waitUntil(timeout: .seconds(20), "the old monitor removed") { logs.contains("kernel advertisement monitor 7 removed on hci0") }
        XCTAssertTrue(logs.contains("kernel advertisement monitor 8 replaces 7 on hci0"))
        let removal = await reader.close(within: .seconds(20))
        XCTAssertEqual(removal, .answered(handle: 8, status: 0))
        let opcodes = kernel.commands.map { UInt16($0[0]) | UInt16($0[1]) << 8 }
        XCTAssertEqual(opcodes, [0x52, 0x52, 0x53, 0x53])
        XCTAssertEqual(kernel.commands[2], ManagementCommand.removeMonitor(controller: 0, handle: 7))
        XCTAssertEqual(kernel.commands[3], ManagementCommand.removeMonitor(controller: 0, handle: 8))
        kernel.close()
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

/// The kernel's side of a management socket pair: reads each command the reader writes (on its
/// own queue) and answers Add Advertisement Patterns Monitor with handles 7, 8, … and Remove
/// Advertisement Monitor as told, as net/bluetooth/mgmt.c does (Command Complete with the
/// handle, or Command Status), after the reports it was told to queue ahead of that answer.
private final class FakeKernel: Sendable {
    /// How Remove Advertisement Monitor is answered.
    enum RemovalAnswer: Sendable {
        /// Command Complete, status 0, the handle.
        case complete
        /// Command Status 0x0A (busy).
        case busy
        /// Not at all.
        case none
    }

    /// What the kernel's queue keeps: the commands read, the next monitor handle.
    private final class Memory: Sendable {
        let commands = Mutex<[[UInt8]]>([])
        let nextHandle = Atomic<UInt16>(7)
    }

    private let end: FileDescriptor
    private let reader: DatagramReader
    private let memory = Memory()

    /// The commands read, in order.
    var commands: [[UInt8]] { memory.commands.withLock { $0 } }

    init(_ end: FileDescriptor, removal: RemovalAnswer = .complete, reportsBeforeRemovalAnswer: ([UInt8], Int)? = nil) throws {
        self.end = end
        let memory = self.memory
        reader = try DatagramReader(
            descriptor: end, maximumLength: 512, queue: DispatchQueue(label: "fake-kernel"),
            deliver: { command in
                memory.commands.withLock { $0.append(command) }
                guard command.count >= 6 else { return }
                let answer: [UInt8]?
                switch (command[0], removal) {
                case (0x52, _):
                    let handle = memory.nextHandle.add(1, ordering: .relaxed).oldValue
                    answer = [0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x52, 0x00, 0x00, UInt8(handle & 0xFF), UInt8(handle >> 8)]
                case (0x53, .complete): answer = [0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x53, 0x00, 0x00] + command[6..<8]
                case (0x53, .busy): answer = [0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x53, 0x00, 0x0A]
                default: answer = nil
                }
                guard let answer else { return }
                // writeAll waits while the reader's socket is full: these go in as it reads.
                if command[0] == 0x53, let (report, count) = reportsBeforeRemovalAnswer {
                    for _ in 0..<count { try? end.writeAll(report) }
                }
                try? end.writeAll(answer)
            },
            ended: { _ in })
        try reader.start()
    }

    /// Writes `event` `times` times, waiting while the peer's socket is full.
    func write(_ event: [UInt8], times: Int) {
        for _ in 0..<times { try? end.writeAll(event) }
    }

    func close() { reader.close() }
}
