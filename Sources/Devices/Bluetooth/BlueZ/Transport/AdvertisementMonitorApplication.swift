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

    /// The monitor's properties: Type, Patterns (`a(yyay)`) and the RSSI thresholds
    /// (``RSSIThresholds``), which select every advertisement of a matching device and make
    /// bluetoothd tell DeviceFound once per device instead of once per advertisement.
    var monitorProperties: DBusValue {
        .properties(
            [
                ("Type", .string("or_patterns")),
                (
                    "Patterns",
                    .array(
                        elementSignature: "(yyay)",
                        patterns.map { .structure([.byte($0.start), .byte($0.type), .byteArray($0.content)]) })
                ),
            ] + RSSIThresholds.properties)
    }

    /// The RSSI thresholds our monitor declares (org.bluez.AdvertisementMonitor1: RSSIHighThreshold,
    /// RSSIHighTimeout, RSSILowThreshold, RSSILowTimeout, RSSISamplingPeriod).
    ///
    /// Why declare any: bluetoothd 5.66 (Debian 12) calls the monitor's DeviceFound on every
    /// advertisement it matches while the thresholds are unset (adv_monitor.c,
    /// adv_monitor_filter_rssi), a D-Bus call per advertisement; with thresholds it calls DeviceFound
    /// once, when a device is first in range, and DeviceLost when it is gone. bluetoothd dispatches
    /// the D-Bus calls made to it from a GLib idle source (gdbus/mainloop.c, message_dispatch), so a
    /// main loop kept busy by advertisements answers them late or never: in the device lab (TCG,
    /// 3 straps at 4 advertisements a second beside 2 connectable straps) SetDiscoveryFilter,
    /// Device1.Connect and Properties.Get got no answer within 25 s while bluetoothd handled each
    /// advertisement (Tests/DeviceLab/README.md, "A class"); one call less per advertisement is
    /// one cost less in that loop.
    ///
    /// The values select everything, as no thresholds did: any RSSI above -127 dBm is in range
    /// (the lowest threshold BlueZ accepts, so nothing is ever "below the low threshold"), in range
    /// after the shortest timeout (1 s), lost after 30 s without an advertisement, and a sampling
    /// period of 0 asks a controller that offloads monitors to report every advertisement. The
    /// advertisements themselves still arrive as Device1's properties, each one.
    enum RSSIThresholds {
        /// In range above this (dBm); BlueZ's lowest accepted value.
        static let high: Int16 = -127
        /// Seconds above ``high`` before DeviceFound; BlueZ's shortest.
        static let highTimeout: UInt16 = 1
        /// Out of range below this (dBm): never, as no RSSI is lower.
        static let low: Int16 = -127
        /// Seconds without an advertisement before DeviceLost.
        static let lowTimeout: UInt16 = 30
        /// Every advertisement reported (units of 100 ms; 0: all).
        static let samplingPeriod: UInt16 = 0

        /// The thresholds as the log shows them.
        static var shown: String {
            "high \(high) dBm for \(highTimeout) s, low \(low) dBm for \(lowTimeout) s, sampling period \(samplingPeriod)"
        }

        /// The properties, as AdvertisementMonitor1 names them.
        static var properties: [(String, DBusValue)] {
            [
                ("RSSIHighThreshold", .int16(high)),
                ("RSSIHighTimeout", .uint16(highTimeout)),
                ("RSSILowThreshold", .int16(low)),
                ("RSSILowTimeout", .uint16(lowTimeout)),
                ("RSSISamplingPeriod", .uint16(samplingPeriod)),
            ]
        }
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
