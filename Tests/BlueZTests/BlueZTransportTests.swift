import BLETransport
@testable import BLEProfileKit
@testable import BlueZ
import DBus
import GatewayTesting
import HeartRateMonitor
import GatewayRuntime
import XCTest

/// The BlueZ transport against a real private dbus-daemon with python3-dbusmock standing in for
/// bluetoothd (Tests/Fixtures/bluez_gatt.py).
final class BlueZTransportTests: XCTestCase {
    private var bluez: PrivateBlueZ?

    override func tearDown() async throws {
        await bluez?.stop()
        bluez = nil
    }

    private func start(withBluetoothd: Bool = true) async throws -> PrivateBlueZ {
        let bluez = try await PrivateBlueZ(withBluetoothd: withBluetoothd)
        self.bluez = bluez
        return bluez
    }

    private func transportError(_ body: () async throws -> Void) async -> BLETransportError? {
        do {
            try await body()
            return nil
        } catch let error as BLETransportError {
            return error
        } catch {
            XCTFail("expected BLETransportError, got \(error)")
            return nil
        }
    }

    /// A scan's end (its task cancelled, often as the gateway stops) waits for bluetoothd's
    /// StopDiscovery at most ``BlueZTransport/teardownCallTimeout``: a bluetoothd that answers
    /// later still carries the call out, and the gateway's stop is not held past its deadline.
    func testAScansEndDoesNotWaitOnASlowStopDiscovery() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let transport = bluez.transport()
        let scan = transport.startScan(
            for: ScanInterest(discovery: DiscoveryInterest(services: [BluetoothUUID(0x180D)], addresses: [])), bufferingNewest: 16
        ) { (_: ScanEvent, _: AsyncThrowingStream<Int, any Error>.Continuation) in }
        try await waitUntil(timeout: .seconds(20), "discovery started") { (try? await bluez.discovering()) == true }
        try await bluez.slowStopDiscovery(seconds: 8)
        let cancelled = ContinuousClock.now
        scan.task.cancel()
        await scan.task.value
        let took = ContinuousClock.now - cancelled
        XCTAssertLessThan(took, .seconds(6), "the scan's end waited \(took) for StopDiscovery")
        XCTAssertGreaterThanOrEqual(took, BlueZTransport.teardownCallTimeout, "the call was sent and awaited for its time")
        try await waitUntil(timeout: .seconds(20), "bluetoothd carried the call out") { (try? await bluez.discovering()) == false }
    }

    // MARK: D-Bus layer

    func testManagedObjectsAndTypedErrors() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let client = BlueZClient(connection: bluez.connection)
        let tree = try await client.managedObjects()
        XCTAssertEqual(tree.adapterPaths, ["/org/bluez/hci0"])
        XCTAssertEqual(tree.objects["/org/bluez/hci0"]?[BlueZInterface.adapter]?["Powered"]?.bool, true)
        do {
            try await client.connect(device: "/org/bluez/hci0/dev_00_00_00_00_00_00")
            XCTFail("connecting an unknown object succeeded")
        } catch let error as DBusError {
            // dbus-python answers a call to a path it does not export with UnknownObject or
            // UnknownMethod, depending on its version; either way the name reaches us intact.
            XCTAssertTrue(error.name.hasPrefix("org.freedesktop.DBus.Error.Unknown"), "\(error)")
            XCTAssertEqual(error.context, "org.bluez.Device1.Connect on /org/bluez/hci0/dev_00_00_00_00_00_00")
        } catch {
            XCTFail("\(error)")
        }
    }

    func testEverySubscriberDecodesEverySignal() async throws {
        let bluez = try await start()
        let client = BlueZClient(connection: bluez.connection)
        let first = StreamCollector(try await client.signals())
        let second = StreamCollector(try await client.signals())
        try await bluez.addAdapter()
        _ = try await bluez.addMonitor("AA:BB:CC:DD:EE:0C")
        for collector in [first, second] {
            try await waitUntil("both additions") { collector.elements.compactMap(\.interfacesAdded).count >= 2 }
            let added = collector.elements.compactMap(\.interfacesAdded)
            XCTAssertEqual(added.map(\.path), ["/org/bluez/hci0", "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_0C"])
            XCTAssertEqual(added[1].interfaces[BlueZInterface.device]?["RSSI"]?.integer, -58)
        }
        XCTAssertEqual(bluez.connection.droppedSignals, 0)
    }

    // MARK: Availability

    func testNoBluetoothdIsUnavailable() async throws {
        let bluez = try await start(withBluetoothd: false)
        let transport = bluez.transport()
        let connectError = await transportError { _ = try await transport.connect(to: "AA:BB:CC:DD:EE:01") }
        XCTAssertEqual(connectError?.code, .unavailable, "\(String(describing: connectError))")
        let discovery = StreamCollector(transport.discover(services: [.heartRateService]))
        try await waitUntil("discovery to end") { discovery.ended }
        XCTAssertEqual((discovery.error as? BLETransportError)?.code, .unavailable, "\(String(describing: discovery.error))")
        // Both say what is missing and what to do about it.
        XCTAssertEqual(connectError?.message, BluetoothAbsence.noBluetoothd.message)
        XCTAssertEqual((discovery.error as? BLETransportError)?.message, BluetoothAbsence.noBluetoothd.message)
    }

    func testNoAdapterIsUnavailable() async throws {
        let bluez = try await start()
        let discovery = StreamCollector(bluez.transport(adapter: nil).discover(services: [.heartRateService]))
        try await waitUntil("discovery to end") { discovery.ended }
        let error = discovery.error as? BLETransportError
        XCTAssertEqual(error?.code, .unavailable)
        XCTAssertEqual(error?.message, BluetoothAbsence.noAdapter(nil).message)
        XCTAssertTrue(error?.message.contains("bluetoothctl list") == true, "\(String(describing: error))")
    }

    func testUnreachableBusIsUnavailable() async throws {
        let directory = try TestEnvironment.temporaryDirectory("healthgate-nobus")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Making the transport opens nothing, so a configuration can be checked without Bluetooth.
        let transport = BlueZTransport(
            busAddress: "unix:path=\(directory.path)/missing", adapter: nil, clock: SystemClock(),
            logger: Logger(label: "t", sink: RecordingLogSink()))
        let error = await transportError { _ = try await transport.connect(to: "AA:BB:CC:DD:EE:01") }
        XCTAssertEqual(error?.code, .unavailable)
        XCTAssertEqual(error?.message, BluetoothAbsence.noSystemBus(address: "unix:path=\(directory.path)/missing").message)
        XCTAssertTrue(error?.message.contains("apt install dbus; systemctl start dbus") == true, "\(String(describing: error))")
    }

    func testBusComingUpLaterIsPickedUp() async throws {
        let bluez = try await start(withBluetoothd: false)
        let transport = BlueZTransport(
            busAddress: bluez.address, adapter: "hci0", clock: SystemClock(), logger: Logger(label: "t", sink: RecordingLogSink()))
        let early = await transportError { _ = try await transport.connect(to: "AA:BB:CC:DD:EE:0B") }
        XCTAssertEqual(early?.code, .unavailable)
        // bluetoothd starts after the gateway: the same transport now works.
        try await bluez.startBluetoothd()
        try await bluez.addAdapter()
        _ = try await bluez.addMonitor("AA:BB:CC:DD:EE:0B")
        let connection = try await transport.connect(to: "AA:BB:CC:DD:EE:0B")
        let battery = await connection.batteryPercentage()
        XCTAssertEqual(battery, 87)
    }

    // MARK: Discovery

    /// A device named by address is reported whatever it advertises (a bonded device may
    /// advertise without its services), and then the adapter's filter names no services.
    func testDiscoveryReportsADeviceNamedByAddressWhateverItAdvertises() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        try await bluez.addOtherDevice("11:22:33:44:55:66", name: "Meter without services")
        try await bluez.addOtherDevice("11:22:33:44:55:77", name: "Headphones")
        let discovery = StreamCollector(
            bluez.transport().discover(services: [.heartRateService], addresses: ["11:22:33:44:55:66"]))
        try await waitUntil("the device named by address is found") { discovery.elements.count == 1 }
        guard case .found(let peripheral) = discovery.elements[0] else { return XCTFail("\(discovery.elements)") }
        XCTAssertEqual(peripheral.address, "11:22:33:44:55:66")
        let filter = try await BlueZClient(connection: bluez.connection)
            .property("DiscoveryFilter", of: BlueZInterface.adapter, at: "/org/bluez/hci0").dictionary
        XCTAssertEqual(filter?["UUIDs"]?.strings ?? [], [], "no service filter: the kernel would drop the device's advertisements")
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(discovery.elements.count, 1, "the headphones are neither named nor advertise the service")
        discovery.cancel()
    }

    func testDiscoveryFiltersByServiceAndReportsRemovalAndReturn() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let discovery = StreamCollector(bluez.transport().discover(services: [.heartRateService, .runningSpeedAndCadenceService]))
        try await waitUntil("discovery started") {
            let value = try await BlueZClient(connection: bluez.connection)
                .property("Discovering", of: BlueZInterface.adapter, at: "/org/bluez/hci0")
            return value.bool == true
        }
        let filter = try await BlueZClient(connection: bluez.connection)
            .property("DiscoveryFilter", of: BlueZInterface.adapter, at: "/org/bluez/hci0").dictionary
        XCTAssertEqual(filter?["Transport"]?.string, "le")
        XCTAssertEqual(filter?["UUIDs"]?.strings, [BluetoothUUID.heartRateService.uuidString, BluetoothUUID.runningSpeedAndCadenceService.uuidString])
        XCTAssertEqual(filter?["DuplicateData"]?.bool, false)

        try await bluez.addOtherDevice("11:22:33:44:55:66", name: "Headphones")
        let monitor = try await bluez.addMonitor("AA:BB:CC:DD:EE:01")
        try await waitUntil("the monitor is found") { discovery.elements.count == 1 }
        guard case .found(let peripheral) = discovery.elements[0] else { return XCTFail("\(discovery.elements)") }
        XCTAssertEqual(peripheral.address, "AA:BB:CC:DD:EE:01")
        XCTAssertEqual(peripheral.name, "Polar H10 TEST")
        XCTAssertEqual(peripheral.rssi, -58)
        XCTAssertTrue(peripheral.serviceUUIDs.contains(.heartRateService))

        try await bluez.removeMonitor(monitor)
        try await waitUntil("the monitor is lost") { discovery.elements.count == 2 }
        XCTAssertEqual(discovery.elements[1], .lost(address: "AA:BB:CC:DD:EE:01"))

        _ = try await bluez.addMonitor("AA:BB:CC:DD:EE:01")
        try await waitUntil("the monitor is found again") { discovery.elements.count == 3 }
        guard case .found(let again) = discovery.elements[2] else { return XCTFail("\(discovery.elements)") }
        XCTAssertEqual(again.address, "AA:BB:CC:DD:EE:01")
        // The headphones never showed up: they advertise none of our services.
        XCTAssertFalse(discovery.elements.contains { if case .found(let p) = $0 { p.name == "Headphones" } else { false } })

        discovery.cancel()
        try await waitUntil("discovery stopped") {
            let value = try await BlueZClient(connection: bluez.connection)
                .property("Discovering", of: BlueZInterface.adapter, at: "/org/bluez/hci0")
            return value.bool == false
        }
    }

    // MARK: Connecting

    func testInProgressThenSuccessfulConnect() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:02")
        try await bluez.failNextConnect(device, error: "org.bluez.Error.InProgress")
        let transport = bluez.transport()
        let error = await transportError { _ = try await transport.connect(to: "AA:BB:CC:DD:EE:02") }
        XCTAssertEqual(error?.code, .inProgress)
        XCTAssertEqual(error?.device, "AA:BB:CC:DD:EE:02")

        let connection = try await transport.connect(to: "AA:BB:CC:DD:EE:02")
        let attempts = try await bluez.connectAttempts(device)
        XCTAssertEqual(attempts, 2)
        let hasMeasurement = await connection.hasCharacteristic(.heartRateMeasurement, in: .heartRateService)
        XCTAssertTrue(hasMeasurement)
        await connection.disconnect()
    }

    func testConnectFailuresAreMapped() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:03")
        try await bluez.failNextConnect(device, error: "org.bluez.Error.Failed")
        let transport = bluez.transport()
        let failed = await transportError { _ = try await transport.connect(to: "AA:BB:CC:DD:EE:03") }
        XCTAssertEqual(failed?.code, .connectFailed)
        let unknown = await transportError { _ = try await transport.connect(to: "AA:BB:CC:DD:EE:99") }
        XCTAssertEqual(unknown?.code, .notFound)
    }

    func testAlreadyConnectedCountsAsConnected() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        _ = try await bluez.addMonitor("AA:BB:CC:DD:EE:04")
        let transport = bluez.transport()
        _ = try await transport.connect(to: "AA:BB:CC:DD:EE:04")
        // The device is still connected in BlueZ: Connect replies AlreadyConnected.
        let second = try await transport.connect(to: "AA:BB:CC:DD:EE:04")
        let level = await second.batteryPercentage()
        XCTAssertEqual(level, 87)
    }

    func testServicesResolvedIsVerifiedAgainstExportedObjects() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:05")
        try await bluez.resolveBeforeObjects(device)
        let connection = try await bluez.transport().connect(to: "AA:BB:CC:DD:EE:05")
        // connect() returned only once the characteristics were exported, although the fixture
        // announced ServicesResolved before exporting them.
        let hasAll = await connection.hasCharacteristic(.heartRateMeasurement, in: .heartRateService)
        let hasBattery = await connection.hasCharacteristic(.batteryLevel, in: .batteryService)
        XCTAssertTrue(hasAll)
        XCTAssertTrue(hasBattery)
    }

    func testResolutionNoSignalAnnouncedIsFoundByReadingAfresh() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:0C")
        try await bluez.connectSilently(device)
        let started = ContinuousClock.now
        let connection = try await bluez.transport().connect(to: "AA:BB:CC:DD:EE:0C")
        // Found by the re-read every 3 s, well before the 10-second resolve timeout.
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(8))
        let battery = await connection.batteryPercentage()
        XCTAssertEqual(battery, 87)
        XCTAssertTrue(bluez.logSink.contains("services resolved in BlueZ's objects, no signal announced it"))
    }

    // MARK: GATT

    func testReadWriteAndBattery() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:06")
        let connection = try await bluez.transport().connect(to: "AA:BB:CC:DD:EE:06")
        let location = try await connection.read(.bodySensorLocation, in: .heartRateService)
        XCTAssertEqual(location, [0x01])
        let manufacturer = try await connection.read(.manufacturerName, in: .deviceInformationService)
        XCTAssertEqual(String(decoding: manufacturer, as: UTF8.self), "Healthgate Labs")
        try await connection.write([0x01], to: .heartRateControlPoint, in: .heartRateService)
        let written = try await bluez.written(PrivateBlueZ.heartRateControlPoint(device))
        XCTAssertEqual(written, [[0x01]])
        let battery = await connection.batteryPercentage()
        XCTAssertEqual(battery, 87)
        let missing = await transportError { _ = try await connection.read(.rscFeature, in: .runningSpeedAndCadenceService) }
        XCTAssertEqual(missing?.code, .notSupported)
    }

    /// Two descriptors with one UUID on one characteristic (a Generic Health Sensor's Observation
    /// Schedules) come back in handle order, apart from the other UUID's; the second is written by
    /// its index and reads back changed; a refusal (an ATT error) is an error naming the device
    /// that is not a dropped link, and the link stays up.
    func testDescriptorsOfOneUUIDAreReadInHandleOrderAndOneIsWritten() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addHealthSensor("AA:BB:CC:DD:EE:16")
        let connection = try await bluez.transport().connect(to: "AA:BB:CC:DD:EE:16")
        let service = BluetoothUUID(0x1840), features = BluetoothUUID(0x2BF3)
        let schedule = BluetoothUUID(0x2910), range = BluetoothUUID(0x2911)
        let schedules = try await connection.readDescriptors(schedule, of: features, in: service)
        XCTAssertEqual(schedules, [[0xB8, 0x4B, 0x02, 0x00, 1, 0, 0, 0, 1, 0, 0, 0], [0x1A, 0x48, 0x02, 0x00, 5, 0, 0, 0, 5, 0, 0, 0]])
        let ranges = try await connection.readDescriptors(range, of: features, in: service)
        XCTAssertEqual(ranges.map { Array($0.prefix(6)) }, [[0xB8, 0x4B, 0x02, 0x00, 0x20, 0x02], [0x1A, 0x48, 0x02, 0x00, 0xA0, 0x0A]])
        let none = try await connection.readDescriptors(BluetoothUUID(0x2902), of: features, in: service)
        XCTAssertEqual(none, [])

        let slower: [UInt8] = [0x1A, 0x48, 0x02, 0x00, 10, 0, 0, 0, 30, 0, 0, 0]
        try await connection.writeDescriptor(slower, to: schedule, at: 1, of: features, in: service)
        let written = try await bluez.written(PrivateBlueZ.healthSensorDescriptor(device, 2))
        XCTAssertEqual(written, [slower])
        let untouched = try await bluez.written(PrivateBlueZ.healthSensorDescriptor(device, 0))
        XCTAssertEqual(untouched, [])
        let reread = try await connection.readDescriptors(schedule, of: features, in: service)
        XCTAssertEqual(reread.last, slower)

        let refused = await transportError {
            try await connection.writeDescriptor([0xB8, 0x4B, 0x02, 0x00, 0, 0, 0, 0, 1, 0, 0, 0], to: schedule, at: 0, of: features, in: service)
        }
        XCTAssertEqual(refused?.code, .failed)
        XCTAssertEqual(refused?.device, "AA:BB:CC:DD:EE:16")
        XCTAssertTrue(refused?.message.contains("ATT error: 0xff") == true, "\(String(describing: refused))")
        let readOnly = await transportError { try await connection.writeDescriptor([0], to: range, at: 0, of: features, in: service) }
        XCTAssertEqual(readOnly?.code, .failed, "NotPermitted is a refusal, not a dropped link")
        let missing = await transportError { try await connection.writeDescriptor(slower, to: schedule, at: 2, of: features, in: service) }
        XCTAssertEqual(missing?.code, .notSupported)
        let noCharacteristic = await transportError { _ = try await connection.readDescriptors(schedule, of: BluetoothUUID(0x2BF1), in: service) }
        XCTAssertEqual(noCharacteristic?.code, .notSupported)
        let after = try await connection.readDescriptors(schedule, of: features, in: service)
        XCTAssertEqual(after.count, 2, "the link is still up")
    }

    func testNotificationsThroughAcquiredSocket() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:07", acquire: true)
        let connection = try await bluez.transport().connect(to: "AA:BB:CC:DD:EE:07")
        let characteristic = PrivateBlueZ.heartRateMeasurement(device)
        let values = StreamCollector(try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService))
        let state = try await bluez.notifyState(characteristic)
        XCTAssertTrue(state.acquired)
        XCTAssertFalse(state.notifying, "StartNotify must not be used when AcquireNotify works")
        let frames: [[UInt8]] = [[0x00, 72], [0x10, 75, 0x00, 0x04], [0x00, 80]]
        for frame in frames { try await bluez.notify(characteristic, frame) }
        try await waitUntil("three notifications") { values.elements.count == 3 }
        XCTAssertEqual(values.elements.map(\.value), frames)

        // The link drops: the stream ends with .disconnected, like every later call.
        try await bluez.dropLink(device)
        try await waitUntil("the stream to end") { values.ended }
        XCTAssertEqual((values.error as? BLETransportError)?.code, .disconnected)
        // The socket's end of file can beat Connected=false on the bus; wait for the connection.
        try await waitUntil("the connection to report the drop") {
            do {
                _ = try await connection.read(.bodySensorLocation, in: .heartRateService)
                return false
            } catch let error as BLETransportError {
                return error.code == .disconnected
            }
        }
    }

    func testNotificationsThroughPropertiesChanged() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:08", acquire: false)
        let connection = try await bluez.transport().connect(to: "AA:BB:CC:DD:EE:08")
        let characteristic = PrivateBlueZ.heartRateMeasurement(device)
        let values = StreamCollector(try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService))
        let state = try await bluez.notifyState(characteristic)
        XCTAssertEqual(state.notifying, true)
        XCTAssertEqual(state.acquired, false)
        try await bluez.notify(characteristic, [0x00, 61])
        try await bluez.notify(characteristic, [0x00, 62])
        try await waitUntil("two notifications") { values.elements.count == 2 }
        XCTAssertEqual(values.elements.map(\.value), [[0x00, 61], [0x00, 62]])

        // Stopping the stream sends StopNotify.
        values.cancel()
        try await waitUntil("StopNotify") { try await bluez.notifyState(characteristic).notifying == false }
    }

    /// bluetoothd before 5.84 leaves a failed AcquireNotify behind for good (``BlueZVersion``), so
    /// on such a bluetoothd, or one whose version is unknown, notifications go through
    /// StartNotify even where AcquireNotify is offered.
    func testBluetoothdBefore584OrUnknownGetsStartNotify() async throws {
        let bluez = try await start()
        for (index, modalias) in ["usb:v1D6Bp0246d0542", "usb:v1D6Bp0245d050A", ""].enumerated() {
            let adapter = "hci\(index)"
            try await bluez.addAdapter(adapter, version: modalias)
            let address = "AA:BB:CC:DD:EE:1\(index)"
            let device = try await bluez.addMonitor(address, acquire: true, adapter: adapter)
            let connection = try await bluez.transport(adapter: adapter).connect(to: address)
            let characteristic = PrivateBlueZ.heartRateMeasurement(device)
            let values = StreamCollector(try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService))
            let state = try await bluez.notifyState(characteristic)
            XCTAssertTrue(state.notifying, "\(modalias): StartNotify")
            XCTAssertFalse(state.acquired, "\(modalias): AcquireNotify must not be used")
            try await bluez.notify(characteristic, [0x00, 66])
            try await waitUntil("the notification (\(modalias))") { values.elements.count == 1 }
            XCTAssertEqual(values.elements.map(\.value), [[0x00, 66]])
            values.cancel()
        }
        XCTAssertTrue(bluez.logSink.contains("leaves a failed AcquireNotify behind (fixed in 5.84)"))
        XCTAssertTrue(bluez.logSink.contains("bluetoothd's version is unknown"))
    }

    func testBlueZVersionFromTheAdapterModalias() {
        XCTAssertEqual(BlueZVersion.parse("usb:v1D6Bp0246d0542").map { [$0.major, $0.minor] }, [5, 66])
        XCTAssertEqual(BlueZVersion.parse("usb:v1d6bp0246d0554").map { [$0.major, $0.minor] }, [5, 84])
        XCTAssertNil(BlueZVersion.parse("usb:v1D6Bp0245d050A"), "another product id says nothing of the version")
        XCTAssertNil(BlueZVersion.parse("bluetooth:v1D6Bp0246d0542"))
        XCTAssertNil(BlueZVersion.parse("usb:v1D6Bp0246d05"))
        XCTAssertFalse(BlueZVersion(modalias: "usb:v1D6Bp0246d0553").acquireNotifyIsSafe, "5.83")
        XCTAssertTrue(BlueZVersion(modalias: "usb:v1D6Bp0246d0554").acquireNotifyIsSafe, "5.84")
        XCTAssertTrue(BlueZVersion(modalias: "usb:v1D6Bp0246d0600").acquireNotifyIsSafe, "6.0")
        XCTAssertFalse(BlueZVersion(modalias: nil).acquireNotifyIsSafe)
    }

    /// Two characteristics on one stream: each notification is tagged with its characteristic,
    /// stamped on arrival with the transport's clock, and delivered in the order of arrival.
    func testOneStreamForTwoCharacteristicsStampedOnArrival() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:0C", acquire: true)
        let clock = ManualClock()
        let connection = try await bluez.transport(clock: clock).connect(to: "AA:BB:CC:DD:EE:0C")
        let heartRate = PrivateBlueZ.heartRateMeasurement(device)
        let battery = PrivateBlueZ.batteryLevel(device)
        let both = StreamCollector(try await connection.notifications(of: [
            GATTCharacteristicID(.batteryLevel, in: .batteryService),
            GATTCharacteristicID(.heartRateMeasurement, in: .heartRateService),
        ]))
        let heartRateAcquired = try await bluez.notifyState(heartRate).acquired
        let batteryAcquired = try await bluez.notifyState(battery).acquired
        XCTAssertTrue(heartRateAcquired && batteryAcquired, "both through AcquireNotify")
        let start = clock.now()
        try await bluez.notify(battery, [0x55])
        try await waitUntil("the battery notification") { both.elements.count == 1 }
        clock.advance(by: .seconds(5))
        try await bluez.notify(heartRate, [0x00, 71])
        try await waitUntil("both notifications") { both.elements.count == 2 }
        XCTAssertEqual(both.elements.map(\.characteristic), [.batteryLevel, .heartRateMeasurement])
        XCTAssertEqual(both.elements.map(\.value), [[0x55], [0x00, 71]])
        XCTAssertEqual(both.elements.map { $0.receivedAt.timeIntervalSince(start) }, [0, 5])
        XCTAssertEqual(connection.droppedNotifications, 0)
        await connection.disconnect()
        try await waitUntil("the stream to end") { both.ended }
    }

    /// A consumer that falls behind loses the oldest notifications beyond the transport's
    /// buffer (256), and the connection counts them.
    func testFallingBehindDropsTheOldestAndCountsThem() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:0D", acquire: true)
        let connection = try await bluez.transport().connect(to: "AA:BB:CC:DD:EE:0D")
        let heartRate = PrivateBlueZ.heartRateMeasurement(device)
        // Not iterated yet: everything stays in the transport's buffer.
        let stream = try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService)
        let sent = 260
        for beat in 0..<sent {
            try await bluez.notify(heartRate, [0x00, UInt8(beat % 200)])
        }
        try await waitUntil("the drops to be counted") { connection.droppedNotifications == sent - 256 }
        var received: [[UInt8]] = []
        for try await notification in stream {
            received.append(notification.value)
            if received.count == 256 { break }
        }
        XCTAssertEqual(received.first, [0x00, UInt8((sent - 256) % 200)], "the oldest were dropped")
        XCTAssertEqual(received.last, [0x00, UInt8((sent - 1) % 200)])
        XCTAssertEqual(connection.droppedNotifications, sent - 256)
    }

    // MARK: A monitor that goes away and comes back

    func testMonitorRemovedAndReAddedResumesNotifications() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let transport = bluez.transport()
        var device = try await bluez.addMonitor("AA:BB:CC:DD:EE:09")
        let first = try await transport.connect(to: "AA:BB:CC:DD:EE:09")
        let before = StreamCollector(try await first.notifications(of: .heartRateMeasurement, in: .heartRateService))
        try await bluez.notify(PrivateBlueZ.heartRateMeasurement(device), [0x00, 90])
        try await waitUntil("a sample before") { before.elements.count == 1 }

        try await bluez.removeMonitor(device)
        try await waitUntil("the first connection's stream to end") { before.ended }
        XCTAssertEqual((before.error as? BLETransportError)?.code, .disconnected)
        let gone = await transportError { _ = try await transport.connect(to: "AA:BB:CC:DD:EE:09") }
        XCTAssertEqual(gone?.code, .notFound)

        device = try await bluez.addMonitor("AA:BB:CC:DD:EE:09")
        let second = try await transport.connect(to: "AA:BB:CC:DD:EE:09")
        let after = StreamCollector(try await second.notifications(of: .heartRateMeasurement, in: .heartRateService))
        // The socket is acquired again on the new connection.
        let state = try await bluez.notifyState(PrivateBlueZ.heartRateMeasurement(device))
        XCTAssertTrue(state.acquired)
        try await bluez.notify(PrivateBlueZ.heartRateMeasurement(device), [0x00, 95])
        try await waitUntil("a sample after") { after.elements.count == 1 }
        XCTAssertEqual(after.elements.map(\.value), [[0x00, 95]])
        await second.disconnect()
        try await waitUntil("the stream ends on disconnect") { after.ended }
    }

    /// bluetoothd enables the notifications of a cached subscription again by itself on
    /// reconnection, so a device's first value can arrive before the connection subscribes: it
    /// is delivered first, through StartNotify and through AcquireNotify alike, and a reconnect
    /// loses none.
    func testValuesNotifiedBeforeTheSubscriptionAreDeliveredFirst() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let transport = bluez.transport()
        for (index, acquire) in [false, true].enumerated() {
            let address = "AA:BB:CC:DD:EE:2\(index)"
            let device = try await bluez.addMonitor(address, acquire: acquire)
            let characteristic = PrivateBlueZ.heartRateMeasurement(device)
            var sent: [[UInt8]] = []
            var received: [[UInt8]] = []
            for round in 0..<5 {
                let first: [UInt8] = [0x00, UInt8(60 + 2 * round)]
                try await bluez.notifyOnConnect(device, uuid: 0x2A37, first)
                let connection = try await transport.connect(to: address)
                let values = StreamCollector(try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService))
                let second: [UInt8] = [0x00, UInt8(61 + 2 * round)]
                try await bluez.notify(characteristic, second)
                sent += [first, second]
                try await waitUntil("round \(round) (acquire \(acquire))") { values.elements.count == 2 }
                received += values.elements.map(\.value)
                try await bluez.dropLink(device)
                try await waitUntil("end of round \(round)") { values.ended }
            }
            XCTAssertEqual(received, sent, "acquire \(acquire)")
        }
    }

    /// A subscription that fails after values were already received on the connection (the
    /// device lab: the link dropped while StartNotify was under way, and bluetoothd answered
    /// InProgress) still hands those values over: the stream yields them, then ends with the
    /// error. Before, `notifications(of:)` threw and the values went with the stream.
    func testValuesReceivedBeforeAFailedSubscriptionAreNotLost() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let transport = bluez.transport()
        let address = "AA:BB:CC:DD:EE:2A"
        let device = try await bluez.addMonitor(address, acquire: false)
        try await bluez.notifyOnConnect(device, uuid: 0x2A37, [0x00, 71])
        try await bluez.failNextStartNotify(device, error: "org.bluez.Error.InProgress")
        let connection = try await transport.connect(to: address)
        let values = StreamCollector(try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService))
        try await waitUntil("the stream ends") { values.ended }
        XCTAssertEqual(values.elements.map(\.value), [[0x00, 71]])
        let error = try XCTUnwrap(values.error as? BLETransportError)
        XCTAssertTrue("\(error)".contains("InProgress"), "\(error)")
        await connection.disconnect()
    }

    func testReconnectAfterLinkDropAcquiresAgain() async throws {
        let bluez = try await start()
        try await bluez.addAdapter()
        let transport = bluez.transport()
        let device = try await bluez.addMonitor("AA:BB:CC:DD:EE:0A")
        let characteristic = PrivateBlueZ.heartRateMeasurement(device)
        for round in 0..<2 {
            let connection = try await transport.connect(to: "AA:BB:CC:DD:EE:0A")
            let values = StreamCollector(try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService))
            try await bluez.notify(characteristic, [0x00, UInt8(100 + round)])
            try await waitUntil("sample in round \(round)") { values.elements.count == 1 }
            XCTAssertEqual(values.elements.map(\.value), [[0x00, UInt8(100 + round)]])
            try await bluez.dropLink(device)
            try await waitUntil("end of round \(round)") { values.ended }
        }
    }
}
