import BLEProfileKit
import BLETransport
import BlueZ
import DBus
import Foundation
import Glibc
import GatewayTesting
import HeartRateMonitor
import GatewayRuntime
import Synchronization
import XCTest

/// A private dbus-daemon with python3-dbusmock's bluez5 template extended by
/// Tests/Fixtures/bluez_gatt.py, standing in for bluetoothd. Both are hard requirements.
final class PrivateBlueZ: @unchecked Sendable {
    static let python = "/usr/bin/python3"
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/bluez_gatt.py").path

    let directory: URL
    let address: String

    /// The gateway's Bluetooth on this bus, as the executable makes it (BlueZ transports) with
    /// `limits`, logging to `logs`.
    func adapters(
        limits: AdapterScheduler.Limits = AdapterScheduler.Limits(), adapters: AdapterSelection? = nil, logs: RecordingLogSink
    ) -> BluetoothAdapters {
        .bluez(
            limits: limits, clock: SystemClock(), logger: Logger(label: "gateway", sink: logs, level: .debug),
            variables: ["DBUS_SYSTEM_BUS_ADDRESS": address], adapters: adapters)
    }
    /// The test's own connection to the private bus.
    let connection: DBusConnection
    private let bus: PrivateDBusDaemon
    private var mock: Process?
    let logSink = RecordingLogSink()

    /// Runs `body` with a private BlueZ that has one adapter and a temporary directory named
    /// after `name`; stops BlueZ and removes the directory on every path.
    static func withAdapter(_ name: String, _ body: (PrivateBlueZ, URL) async throws -> Void) async throws {
        let bluez = try await PrivateBlueZ()
        let directory = try TestEnvironment.temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            try await bluez.addAdapter()
            try await body(bluez, directory)
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }

    /// Starts the bus, and bluetoothd's stand-in unless `withBluetoothd` is false.
    init(withBluetoothd: Bool = true) async throws {
        bus = try await PrivateDBusDaemon(prefix: "healthgate-bluez")
        directory = bus.directory
        address = bus.address
        do {
            connection = try DBusConnection(address: address)
        } catch {
            await bus.stop()
            throw error
        }
        do {
            if withBluetoothd { try await startBluetoothd() }
        } catch {
            // No stop() follows a failed init: do not leave the daemons behind.
            await stop()
            throw error
        }
    }

    /// Starts dbusmock with the fixture template and waits until it owns org.bluez.
    func startBluetoothd() async throws {
        let check = Process()
        check.executableURL = URL(fileURLWithPath: Self.python)
        check.arguments = ["-c", "import dbusmock"]
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            check.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try check.run() } catch { continuation.resume(returning: -1) }
        }
        guard status == 0 else {
            throw PrivateDBusDaemon.Missing(what: "python3-dbusmock for /usr/bin/python3 (apt-get install python3-dbusmock)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [
            "-m", "dbusmock", "--template", Self.fixture, "-l", directory.appendingPathComponent("mock.log").path,
        ]
        process.environment = ["DBUS_SYSTEM_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"]
        // Output goes to the -l log; inherited pipes would keep `swift test` waiting.
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        mock = process
        try await waitUntil("dbusmock owning org.bluez") { [connection] in
            let reply = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "NameHasOwner", arguments: [.string("org.bluez")])
            return reply.first?.bool == true
        }
    }

    /// Kills bluetoothd's stand-in and the bus. SIGKILL, because children of the test process
    /// inherit its blocked signal mask (Dispatch blocks SIGTERM), so SIGTERM would not arrive.
    func stop() async {
        connection.close()
        await Self.kill(mock)
        await bus.stop()
    }

    /// Kills bluetoothd's stand-in only (bluetoothd crashing or being stopped).
    /// Sends `signal` to the private bus daemon (SIGSTOP to hold every reply, SIGKILL to drop it).
    func signalBus(_ signal: Int32) {
        bus.signal(signal)
    }

    func stopBluetoothd() async {
        await Self.kill(mock)
        mock = nil
    }

    private static func kill(_ process: Process?) async {
        guard let process, process.isRunning else { return }
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        try? await waitUntil("process \(process.processIdentifier) to exit") { !process.isRunning }
    }

    /// A transport on this bus, logging into ``logSink``.
    func transport(adapter: String? = "hci0", clock: any GatewayClock = SystemClock()) -> BlueZTransport {
        BlueZTransport(
            connection: connection, adapter: adapter, clock: clock, logger: Logger(label: "bluez", sink: logSink, level: .debug),
            resolveTimeout: .seconds(10))
    }

    // MARK: Driving the fixture

    @discardableResult
    private func control(_ member: String, _ arguments: [DBusValue], interface: String = "org.healthgate.Test")
        async throws -> [DBusValue]
    {
        try await connection.call(
            destination: "org.bluez", path: "/", interface: interface, member: member, arguments: arguments)
    }

    /// Adds an adapter that announces bluetoothd `version` in its Modalias (BlueZ's own Device ID),
    /// by default one whose failed AcquireNotify cleans up after itself (``BlueZVersion``).
    func addAdapter(_ name: String = "hci0", version: String = "usb:v1D6Bp0246d0554") async throws {
        try await control("AddAdapter", [.string(name), .string("healthgate-test")], interface: "org.bluez.Mock")
        try await control("SetAdapterModalias", [.string(name), .string(version)])
    }

    /// Adds a plain device without our services (the bluez5 template's AddDevice).
    func addOtherDevice(_ address: String, name: String) async throws {
        try await control("AddDevice", [.string("hci0"), .string(address), .string(name)], interface: "org.bluez.Mock")
    }

    /// Adds a heart-rate monitor and returns its object path.
    func addMonitor(
        _ address: String, name: String = "Polar H10 TEST", acquire: Bool = true, adapter: String = "hci0"
    ) async throws -> String {
        let reply = try await control(
            "AddHeartRateMonitor", [.string(adapter), .string(address), .string(name), .bool(acquire)])
        return reply.first?.string ?? ""
    }

    /// Adds a glucose meter (Glucose service with a Record Access Control Point) and returns its path.
    func addGlucoseMeter(_ address: String, name: String = "Meter", adapter: String = "hci0") async throws -> String {
        let reply = try await control("AddGlucoseMeter", [.string(adapter), .string(address), .string(name)])
        return reply.first?.string ?? ""
    }

    /// Adds a Generic Health Sensor whose Health Sensor Features carries two Observation Schedule
    /// and two Valid Range and Accuracy descriptors, and returns its path.
    func addHealthSensor(_ address: String, name: String = "Oximeter", adapter: String = "hci0") async throws -> String {
        let reply = try await control("AddHealthSensor", [.string(adapter), .string(address), .string(name)])
        return reply.first?.string ?? ""
    }

    /// The health sensor's `number`th descriptor object below Health Sensor Features (from 0, in
    /// handle order: schedule, range, schedule, range).
    static func healthSensorDescriptor(_ device: String, _ number: Int) -> String {
        device + "/service0000/char0000/desc" + String(format: "%04x", number + 2)
    }

    /// Stores a record in the meter, sent when the Record Access Control Point asks for it.
    func addGlucoseRecord(_ device: String, _ bytes: [UInt8]) async throws {
        try await control("AddGlucoseRecord", [.objectPath(device), .array(elementSignature: "y", bytes.map { .byte($0) })])
    }

    static func recordAccessControlPoint(_ device: String) -> String { device + "/service0000/char0001" }

    func failNextConnect(_ device: String, error: String) async throws {
        try await control("FailNextConnect", [.objectPath(device), .string(error)])
    }

    func failNextStartNotify(_ device: String, error: String) async throws {
        try await control("FailNextStartNotify", [.objectPath(device), .string(error)])
    }

    func resolveBeforeObjects(_ device: String) async throws {
        try await control("ResolveBeforeObjects", [.objectPath(device), .bool(true)])
    }

    /// The next Connect changes Connected and ServicesResolved without a PropertiesChanged signal.
    func connectSilently(_ device: String) async throws {
        try await control("ConnectSilently", [.objectPath(device)])
    }

    /// The next Connect ends with the characteristic `uuid` notifying `bytes` before anyone
    /// subscribes: what bluetoothd does when it re-enables a cached subscription itself.
    func notifyOnConnect(_ device: String, uuid: UInt16, _ bytes: [UInt8]) async throws {
        try await control("NotifyOnConnect", [.objectPath(device), .uint16(uuid), .byteArray(bytes)])
    }

    func notify(_ characteristic: String, _ bytes: [UInt8]) async throws {
        try await control("Notify", [.objectPath(characteristic), .byteArray(bytes)])
    }

    func notifyState(_ characteristic: String) async throws -> (acquired: Bool, notifying: Bool) {
        let reply = try await control("NotifyState", [.objectPath(characteristic)])
        return (reply[0].bool ?? false, reply[1].bool ?? false)
    }

    /// Makes the device require bonding: `passkey` to be entered, or -1 for "just works".
    func requirePairing(_ device: String, passkey: Int32) async throws {
        try await control("RequirePairing", [.objectPath(device), .int32(passkey)])
    }

    /// Whether the device is paired and trusted, and how often Pair asked an agent for a passkey.
    func pairingState(_ device: String) async throws -> (paired: Bool, trusted: Bool, passkeyRequests: Int) {
        let reply = try await control("PairingState", [.objectPath(device)])
        return (reply[0].bool ?? false, reply[1].bool ?? false, reply[2].integer ?? -1)
    }

    func written(_ characteristic: String) async throws -> [[UInt8]] {
        let reply = try await control("Written", [.objectPath(characteristic)])
        return reply.first?.array?.compactMap(\.bytes) ?? []
    }

    func connectAttempts(_ device: String) async throws -> Int {
        try await control("ConnectAttempts", [.objectPath(device)]).first?.integer ?? -1
    }

    func dropLink(_ device: String) async throws {
        try await control("DropLink", [.objectPath(device)])
    }

    func removeMonitor(_ device: String) async throws {
        try await control("RemoveMonitor", [.objectPath(device)])
    }

    /// The Heart Rate Measurement characteristic's path (first service, first characteristic).
    static func heartRateMeasurement(_ device: String) -> String { device + "/service0000/char0000" }
    static func heartRateControlPoint(_ device: String) -> String { device + "/service0000/char0002" }
    /// Battery Level (third service, first characteristic: read and notify).
    static func batteryLevel(_ device: String) -> String { device + "/service0002/char0000" }
}

/// Collects a stream's elements and its end, for waiting on state.
final class StreamCollector<Element: Sendable>: Sendable {
    private final class Storage: Sendable {
        let state = Mutex<(elements: [Element], ended: Bool, error: (any Error)?)>(([], false, nil))
    }

    private let storage = Storage()
    private let task: Task<Void, Never>

    init(_ stream: AsyncThrowingStream<Element, any Error>) {
        let storage = self.storage
        task = Task {
            do {
                for try await element in stream { storage.state.withLock { $0.elements.append(element) } }
                storage.state.withLock { $0.ended = true }
            } catch {
                storage.state.withLock {
                    $0.ended = true
                    $0.error = error
                }
            }
        }
    }

    var elements: [Element] { storage.state.withLock { $0.elements } }
    var ended: Bool { storage.state.withLock { $0.ended } }
    var error: (any Error)? { storage.state.withLock { $0.error } }

    func cancel() { task.cancel() }
}

extension PrivateBlueZ {
    /// One advertisement of `address` heard by discovery (the fixture's Advertise): the device is
    /// added on the first, each later one changes its ManufacturerData and ServiceData.
    @discardableResult
    func advertise(
        _ address: String, name: String, manufacturer: [UInt16: [UInt8]] = [:], service: [UInt16: [UInt8]] = [:],
        adapter: String = "hci0"
    ) async throws -> String {
        func bytes(_ value: [UInt8]) -> DBusValue { .array(elementSignature: "y", value.map { .byte($0) }) }
        let manufacturerData = DBusValue.dictionary(
            keySignature: "q", valueSignature: "ay",
            manufacturer.sorted { $0.key < $1.key }.map { DBusDictionaryEntry(key: .uint16($0.key), value: bytes($0.value)) })
        let serviceData = DBusValue.dictionary(
            keySignature: "s", valueSignature: "ay",
            service.sorted { $0.key < $1.key }.map {
                DBusDictionaryEntry(key: .string(BluetoothUUID($0.key).uuidString), value: bytes($0.value))
            })
        let reply = try await connection.call(
            destination: "org.bluez", path: "/", interface: "org.healthgate.Test", member: "Advertise",
            arguments: [.string(adapter), .string(address), .string(name), manufacturerData, serviceData])
        return reply.first?.string ?? ""
    }

    /// Gives the adapter org.bluez.AdvertisementMonitorManager1, as bluetoothd -E does; with
    /// `refuse`, RegisterMonitor reads the application and then fails.
    func offerAdvertisementMonitor(adapter: String = "hci0", refuse: Bool = false) async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: "/", interface: "org.healthgate.Test", member: "OfferAdvertisementMonitor",
            arguments: [.string(adapter), .bool(refuse)])
    }

    /// The applications registered with the adapter's monitor manager now, and what happened
    /// (the fixture's MonitorEvents).
    func monitorEvents(adapter: String = "hci0") async throws -> (registered: Int, events: [String]) {
        let reply = try await connection.call(
            destination: "org.bluez", path: "/", interface: "org.healthgate.Test", member: "MonitorEvents",
            arguments: [.string(adapter)])
        return (reply.first?.integer ?? -1, reply.dropFirst().first?.strings ?? [])
    }

    /// bluetoothd releases every monitor on the adapter on its own (the fixture's ReleaseMonitors).
    func releaseMonitors(adapter: String = "hci0") async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: "/", interface: "org.healthgate.Test", member: "ReleaseMonitors",
            arguments: [.string(adapter)])
    }

    /// Whether the adapter discovers (Adapter1.Discovering).
    func discovering(adapter: String = "hci0") async throws -> Bool {
        let reply = try await connection.call(
            destination: "org.bluez", path: "/org/bluez/\(adapter)", interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string("org.bluez.Adapter1"), .string("Discovering")])
        return reply.first?.unwrapped.bool ?? false
    }

    /// The adapter's discovery filter as the last SetDiscoveryFilter left it.
    func discoveryFilter(adapter: String = "hci0") async throws -> [String: DBusValue] {
        let reply = try await connection.call(
            destination: "org.bluez", path: "/org/bluez/\(adapter)", interface: "org.freedesktop.DBus.Properties",
            member: "Get", arguments: [.string("org.bluez.Adapter1"), .string("DiscoveryFilter")])
        return reply.first?.unwrapped.dictionary ?? [:]
    }
}

extension PrivateBlueZ {
    /// How often `method` of Adapter1 was called on the adapter (dbusmock's call log).
    func adapterCalls(_ method: String, adapter: String = "hci0") async throws -> Int {
        let reply = try await connection.call(
            destination: "org.bluez", path: "/org/bluez/\(adapter)", interface: "org.freedesktop.DBus.Mock",
            member: "GetMethodCalls", arguments: [.string(method)])
        return reply.first?.array?.count ?? -1
    }

    /// The next StopDiscovery on the adapter answers only after `seconds` (the fixture's
    /// SlowStopDiscovery).
    func slowStopDiscovery(seconds: Double, adapter: String = "hci0") async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: "/", interface: "org.healthgate.Test", member: "SlowStopDiscovery",
            arguments: [.string(adapter), .double(seconds)])
    }

    /// The next StartDiscovery on the adapter adds a heart-rate monitor at `address` before it
    /// replies (the fixture's DeviceOnStartDiscovery).
    func deviceOnStartDiscovery(_ address: String, name: String, adapter: String = "hci0") async throws {
        _ = try await connection.call(
            destination: "org.bluez", path: "/", interface: "org.healthgate.Test", member: "DeviceOnStartDiscovery",
            arguments: [.string(adapter), .string(address), .string(name)])
    }
}
