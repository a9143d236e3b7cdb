import BLETransport
import DBus
import GatewayRuntime

/// Our advertisement monitor application (BlueZ doc/org.bluez.AdvertisementMonitor.rst and
/// org.bluez.AdvertisementMonitorManager.rst): an ObjectManager at ``path`` whose one object,
/// ``monitorPath``, is an AdvertisementMonitor1 of Type `or_patterns` with the scan's patterns.
///
/// bluetoothd reads it with GetManagedObjects when it is registered (before it answers
/// RegisterMonitor), then calls the monitor's Activate once the kernel took the patterns, Release
/// when it drops the monitor (UnregisterMonitor, or the kernel refused it), and DeviceFound /
/// DeviceLost as matching devices come and go. The advertisements themselves arrive as Device1
/// PropertiesChanged, as with discovery.
struct AdvertisementMonitorApplication: Sendable {
    /// What bluetoothd told the monitor.
    enum Event: Sendable, Equatable {
        case activated
        case released
        case found(String)
        case lost(String)
    }

    /// Where every application lives; each scan adds its own number.
    static let basePath = "/org/healthgate/advertisement_monitor"

    /// The application's root, the ObjectManager handed to RegisterMonitor.
    let path: String
    /// The patterns any of which selects an advertisement.
    let patterns: [AdvertisingDataPattern]

    /// The application numbered `number` with `patterns`.
    init(number: UInt64, patterns: [AdvertisingDataPattern]) {
        path = "\(Self.basePath)\(number)"
        self.patterns = patterns
    }

    /// The one monitor object.
    var monitorPath: String { path + "/monitor0" }

    /// The monitor's properties: Type and Patterns (`a(yyay)`); no RSSI thresholds, so every
    /// advertisement of a matching device is reported.
    var monitorProperties: DBusValue {
        .properties([
            ("Type", .string("or_patterns")),
            (
                "Patterns",
                .array(
                    elementSignature: "(yyay)",
                    patterns.map { .structure([.byte($0.start), .byte($0.type), .byteArray($0.content)]) })
            ),
        ])
    }

    /// The reply to GetManagedObjects (`a{oa{sa{sv}}}`).
    var managedObjects: DBusValue {
        .dictionary(
            keySignature: "o", valueSignature: "a{sa{sv}}",
            [
                DBusDictionaryEntry(
                    key: .objectPath(monitorPath),
                    value: .dictionary(
                        keySignature: "s", valueSignature: "a{sv}",
                        [DBusDictionaryEntry(key: .string(BlueZInterface.advertisementMonitor), value: monitorProperties)]))
            ])
    }

    /// The patterns for `matches`, or nil when one of them cannot be a pattern or there are none
    /// (a monitor without patterns would hear nothing).
    static func patterns(for matches: [AdvertisementMatch]) -> [AdvertisingDataPattern]? {
        var patterns: [AdvertisingDataPattern] = []
        for match in matches {
            guard let more = match.dataPatterns else { return nil }
            for pattern in more where !patterns.contains(pattern) { patterns.append(pattern) }
        }
        return patterns.isEmpty ? nil : patterns
    }

    /// Answers the calls on the root (`root`) and on the monitor (`monitor`) until both streams
    /// end (the task is cancelled, or the bus closed), handing each monitor event to `event`.
    func serve(
        root: AsyncThrowingStream<DBusIncomingCall, any Error>,
        monitor: AsyncThrowingStream<DBusIncomingCall, any Error>,
        event: @escaping @Sendable (Event) async -> Void
    ) async {
        // An error ending either stream is the bus closing, which ends the scan's signal stream
        // too, and the scan reports it there.
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await call in root { answerRoot(call) }
                } catch {}
            }
            group.addTask {
                do {
                    for try await call in monitor {
                        if let happened = answerMonitor(call) { await event(happened) }
                    }
                } catch {}
            }
        }
    }

    func answerRoot(_ call: DBusIncomingCall) {
        if call.interface == BlueZInterface.objectManager, call.member == "GetManagedObjects" {
            call.reply([managedObjects])
        } else {
            call.fail(name: DBusError.unknownMethod, message: "\(call.interface).\(call.member) is not implemented")
        }
    }

    /// Answers a call on the monitor; returns what it told.
    func answerMonitor(_ call: DBusIncomingCall) -> Event? {
        switch (call.interface, call.member) {
        case (BlueZInterface.properties, "GetAll"):
            guard call.arguments.first?.string == BlueZInterface.advertisementMonitor else {
                call.fail(name: DBusError.invalidArgs, message: "no such interface")
                return nil
            }
            call.reply([monitorProperties])
            return nil
        case (BlueZInterface.advertisementMonitor, "Activate"):
            call.reply()
            return .activated
        case (BlueZInterface.advertisementMonitor, "Release"):
            call.reply()
            return .released
        case (BlueZInterface.advertisementMonitor, "DeviceFound"), (BlueZInterface.advertisementMonitor, "DeviceLost"):
            call.reply()
            let device = call.arguments.first?.string ?? ""
            let address = PairingAgent.address(ofDevice: device) ?? device
            return call.member == "DeviceFound" ? .found(address) : .lost(address)
        default:
            call.fail(name: DBusError.unknownMethod, message: "\(call.interface).\(call.member) is not implemented")
            return nil
        }
    }
}
