import BLETransport
import BlueZ
import DBus
import Foundation
import GatewayTesting
import XCTest

/// One scan per adapter over BlueZ (a private bus, dbusmock's bluez5 template and
/// Tests/Fixtures/bluez_gatt.py, whose call log counts bluetoothd's methods): the connection-based
/// sources' discovery and the advertisement sources share the gateway's one scan of the adapter
/// (`BluetoothAdapters.transport(for:)` and `scanner(for:)`), which alone starts and stops
/// discovery.
final class SharedScanOverBlueZTests: XCTestCase {
    private static let strap = "A0:9E:1A:00:00:01", meter = "C0:FF:EE:00:00:01", broadcaster = "A0:9E:1A:12:34:56"

    private func withBlueZ(_ body: (PrivateBlueZ, BluetoothAdapters) async throws -> Void) async throws {
        let bluez = try await PrivateBlueZ()
        do {
            try await bluez.addAdapter()
            try await body(bluez, bluez.adapters(logs: bluez.logSink))
        } catch {
            await bluez.stop()
            throw error
        }
        await bluez.stop()
    }

    /// The addresses a discovery consumer holds as found now (found and not lost since).
    private static func found(_ collector: StreamCollector<DiscoveryEvent>) -> Set<String> {
        var present: Set<String> = []
        for event in collector.elements {
            switch event {
            case .found(let peripheral): present.insert(peripheral.address.uppercased())
            case .lost(let address): present.remove(address.uppercased())
            }
        }
        return present
    }

    /// Two connection-based sources (heart rate, glucose) and an advertisement source (Polar's
    /// broadcast) on one adapter: one StartDiscovery, each gets its own devices, a consumer
    /// joining late first gets the devices already found, and discovery stops with the last.
    func testOneScanServesTwoConnectionSourcesAndAnAdvertisementSource() async throws {
        try await withBlueZ { bluez, adapters in
            _ = try await bluez.addMonitor(Self.strap)
            _ = try await bluez.addGlucoseMeter(Self.meter)
            let heartRate = StreamCollector(adapters.transport(for: "hci0").discover(services: [BluetoothUUID(0x180D)]))
            let glucose = StreamCollector(adapters.transport(for: "hci0").discover(services: [BluetoothUUID(0x1808)], addresses: []))
            let polar = StreamCollector(adapters.scanner(for: "hci0").advertisements(matching: [.manufacturer(0x006B)]))
            try await waitUntil(timeout: .seconds(20), "each connection-based source found its device") {
                Self.found(heartRate) == [Self.strap] && Self.found(glucose) == [Self.meter]
            }
            // The advertisement source joined last: the filter is the advertisement sources'
            // (every LE advertiser, duplicates reported), set on the running discovery.
            try await waitUntil(timeout: .seconds(20), "the scan to take on the advertisement source") {
                (try? await bluez.discoveryFilter())?["DuplicateData"]?.bool == true
            }
            try await bluez.advertise(Self.broadcaster, name: "Polar H10 1A2B3C4D", manufacturer: [0x006B: [0x03, 0x00, 90, 80]])
            try await waitUntil(timeout: .seconds(20), "the advertisement source heard the strap") {
                polar.elements.contains { $0.address == Self.broadcaster && $0.manufacturerData[0x006B] == [0x03, 0x00, 90, 80] }
            }
            let started = try await bluez.adapterCalls("StartDiscovery")
            XCTAssertEqual(started, 1, "one StartDiscovery for the three sources")
            let stoppedEarly = try await bluez.adapterCalls("StopDiscovery")
            XCTAssertEqual(stoppedEarly, 0)
            XCTAssertEqual(Self.found(heartRate), [Self.strap], "the heart-rate source gets neither the meter nor the broadcaster")
            XCTAssertEqual(Self.found(glucose), [Self.meter])

            // A consumer joining the running scan first gets what it already found: no signal
            // about the strap comes after this point.
            let late = StreamCollector(adapters.transport(for: "hci0").discover(services: [BluetoothUUID(0x180D)]))
            try await waitUntil(timeout: .seconds(20), "the late consumer got the strap already found") { Self.found(late) == [Self.strap] }
            let startedAfterLate = try await bluez.adapterCalls("StartDiscovery")
            XCTAssertEqual(startedAfterLate, 1, "the late consumer joins the running scan")

            for collector in [heartRate, glucose, late] { collector.cancel() }
            try await waitUntil(timeout: .seconds(20), "the connection-based consumers left") { !Self.adaptersScanCount(adapters, atLeast: 2) }
            let stoppedWhileOneRemains = try await bluez.adapterCalls("StopDiscovery")
            XCTAssertEqual(stoppedWhileOneRemains, 0, "the scan runs while a consumer remains")
            polar.cancel()
            try await waitUntil(timeout: .seconds(20), "the last consumer stopped discovery") {
                (try? await bluez.adapterCalls("StopDiscovery")) == 1
            }
            let discovering = try await bluez.discovering()
            XCTAssertFalse(discovering)
            let startedInAll = try await bluez.adapterCalls("StartDiscovery")
            XCTAssertEqual(startedInAll, 1)
        }
    }

    /// Whether the adapter's shared scan has at least `count` consumers.
    private static func adaptersScanCount(_ adapters: BluetoothAdapters, atLeast count: Int) -> Bool {
        ((adapters.scanner(for: "hci0") as? SharedAdvertisementScanner)?.consumerCount ?? 0) >= count
    }

    /// A device bluetoothd makes while it answers StartDiscovery (btvirt answers a scan's start
    /// with one report at once, which `healthgate scan` missed in the device lab) reaches the
    /// discovery consumer, also when an advertisement consumer joins at the same moment (one
    /// StartDiscovery for both, where two BlueZ clients left one unanswered): the scan
    /// subscribed to bluetoothd's signals before it read the object tree and started discovery.
    func testADeviceMadeAtStartDiscoveryIsNotMissed() async throws {
        try await withBlueZ { bluez, adapters in
            try await bluez.deviceOnStartDiscovery(Self.strap, name: "Polar H10 7")
            let heartRate = StreamCollector(adapters.transport(for: "hci0").discover(services: [BluetoothUUID(0x180D)]))
            let everything = StreamCollector(adapters.scanner(for: "hci0").advertisements())
            try await waitUntil(timeout: .seconds(20), "the device made at StartDiscovery was found") { Self.found(heartRate) == [Self.strap] }
            let started = try await bluez.adapterCalls("StartDiscovery")
            XCTAssertEqual(started, 1)
            heartRate.cancel()
            everything.cancel()
            try await waitUntil(timeout: .seconds(20), "discovery stopped") { (try? await bluez.adapterCalls("StopDiscovery")) == 1 }
        }
    }

    /// The adapter going away ends the scan: every consumer, of either kind, gets the error.
    func testAFailedScanReachesEveryConsumer() async throws {
        try await withBlueZ { bluez, adapters in
            _ = try await bluez.addMonitor(Self.strap)
            let heartRate = StreamCollector(adapters.transport(for: "hci0").discover(services: [BluetoothUUID(0x180D)]))
            let glucose = StreamCollector(adapters.transport(for: "hci0").discover(services: [BluetoothUUID(0x1808)]))
            let polar = StreamCollector(adapters.scanner(for: "hci0").advertisements(matching: [.manufacturer(0x006B)]))
            try await waitUntil(timeout: .seconds(20), "the scan runs for all three") {
                Self.found(heartRate) == [Self.strap] && Self.adaptersScanCount(adapters, atLeast: 3)
            }
            _ = try await bluez.connection.call(
                destination: "org.bluez", path: "/", interface: "org.bluez.Mock", member: "RemoveAdapter", arguments: [.string("hci0")])
            try await waitUntil(timeout: .seconds(20), "every consumer failed") { heartRate.ended && glucose.ended && polar.ended }
            for error in [heartRate.error, glucose.error, polar.error] {
                XCTAssertEqual((error as? BLETransportError)?.code, .unavailable, "\(String(describing: error))")
                XCTAssertTrue("\(String(describing: error))".contains("hci0 was removed"), "\(String(describing: error))")
            }
        }
    }

    /// With bluetoothd's Advertisement Monitor (-E), the advertisement sources are served by a
    /// monitor and the connection-based source by discovery beside it, filtered by its services
    /// (a monitor finds no connectable device by its service UUIDs); an advertisement source with
    /// a new match widens the running scan: a monitor of the union is registered, then the old
    /// one unregistered, and discovery is neither started again nor stopped.
    func testBesideAMonitorDiscoveryRunsForTheConnectionSourcesAndTheMonitorWidens() async throws {
        try await withBlueZ { bluez, adapters in
            try await bluez.offerAdvertisementMonitor()
            _ = try await bluez.addMonitor(Self.strap)
            let heartRate = StreamCollector(adapters.transport(for: "hci0").discover(services: [BluetoothUUID(0x180D)]))
            try await waitUntil(timeout: .seconds(20), "the heart-rate source found its device") { Self.found(heartRate) == [Self.strap] }
            let polar = StreamCollector(adapters.scanner(for: "hci0").advertisements(matching: [.manufacturer(0x006B)]))
            try await waitUntil(timeout: .seconds(20), "Polar's monitor") {
                (try? await bluez.monitorEvents())?.events.contains("registered ff:6b00") == true
            }
            let scales = StreamCollector(adapters.scanner(for: "hci0").advertisements(matching: [.serviceData(BluetoothUUID(0x181D))]))
            try await waitUntil(timeout: .seconds(20), "the wider monitor registered, the narrower one gone") {
                let monitor = try? await bluez.monitorEvents()
                return monitor?.registered == 1 && monitor?.events.contains("registered ff:6b00 16:1d18") == true
                    && monitor?.events.contains("unregistered") == true
            }
            try await bluez.advertise("C8:0F:10:00:00:01", name: "MIBFS", service: [0x181D: [0x02, 0xA4, 0x2E]])
            try await waitUntil(timeout: .seconds(20), "the scale heard through the wider monitor") {
                scales.elements.contains { $0.address == "C8:0F:10:00:00:01" }
            }
            let filter = try await bluez.discoveryFilter()
            XCTAssertEqual(filter["UUIDs"]?.strings, [BluetoothUUID(0x180D).uuidString], "discovery for the heart-rate source only")
            XCTAssertEqual(filter["DuplicateData"]?.bool, false)
            let started = try await bluez.adapterCalls("StartDiscovery")
            XCTAssertEqual(started, 1)
            let stopped = try await bluez.adapterCalls("StopDiscovery")
            XCTAssertEqual(stopped, 0)
            XCTAssertEqual(Self.found(heartRate), [Self.strap])
            heartRate.cancel()
            polar.cancel()
            scales.cancel()
            try await waitUntil(timeout: .seconds(20), "the last consumer stopped discovery and unregistered the monitor") {
                let stopped = try? await bluez.adapterCalls("StopDiscovery")
                let monitor = try? await bluez.monitorEvents()
                return stopped == 1 && monitor?.registered == 0
            }
        }
    }
}
