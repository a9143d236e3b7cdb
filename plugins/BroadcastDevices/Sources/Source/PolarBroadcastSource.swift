public import BLEAdvertisementKit
public import BLETransport
public import FoundationEssentials
import GatewayRuntime
public import HealthModel
public import SampleBus

/// `ble-polar-broadcast`: heart rate from Polar sensors' advertisements, without a connection.
///
/// One `heartRate` sample per new value (the frame counter advanced, polar-ble-sdk's rule), with
/// sensor contact and low battery in its metadata and in status; no RR intervals (the broadcast
/// carries none). A strap is its device id (from its name), else its address; a strap not heard
/// for ``lostAfter`` starts afresh.
public struct PolarBroadcastSource: AdvertisementSource, ConfigurablePlugin, PayloadDecoding {
    /// The `config` object.
    public typealias Configuration = BroadcastSourceConfiguration
    /// The configuration kind.
    public static let kind = "ble-polar-broadcast"
    /// One line for `healthgate plugins`.
    public static let summary = "Polar heart-rate broadcast (manufacturer data 0x006B): heart rate without a connection."
    /// `healthgate --help`.
    public static let devicesRead = "Polar straps broadcasting their heart rate"
    /// `healthgate decode polar-broadcast`.
    public static var payloadDecoders: [PayloadDecoder] { [BroadcastPayloadDecoders.polarBroadcast] }
    /// A strap not heard for this long is lost: its next value is new whatever its counter.
    public static let lostAfter: TimeInterval = 5

    /// `healthgate demo`: simulated advertisers.
    public static var demo: AdvertisementSourceDemo {
        .broadcast("demo-polar-broadcast", devices: 2, advertisementsPerSecond: 4)
    }

    /// `healthgate scan`: the strap's heart rate, contact and battery.
    public static func reading(in advertisement: Advertisement) -> String? {
        guard PolarBroadcastProfile.matches(advertisement), let block = try? PolarBroadcastProfile.decode(advertisement) else {
            return nil
        }
        return "\(block.slowAverageHeartRate) bpm, contact \(block.sensorContact ? "yes" : "no"), battery \(block.batteryOk ? "ok" : "low")"
    }

    let reception: BroadcastReception

    /// A source without the gateway's Bluetooth (simulated, or reporting BlueZ unavailable).
    public init(settings: BroadcastSourceSettings, environment: PluginEnvironment) {
        self.init(settings: settings, environment: environment, bluetooth: BluetoothAdapters(clock: environment.clock))
    }

    /// A source on the gateway's Bluetooth adapters (the executable's, shared by every source).
    public init(settings: BroadcastSourceSettings, environment: PluginEnvironment, bluetooth: BluetoothAdapters) {
        reception = BroadcastReception(settings: settings, environment: environment, bluetooth: bluetooth)
    }

    /// A source listening on `scanner` (tests: a scripted scanner).
    public init(settings: BroadcastSourceSettings, ids: SampleIDGenerator, scanner: any AdvertisementScanner) {
        reception = BroadcastReception(settings: settings, ids: ids, scanner: scanner)
    }

    /// Listens until cancelled; throws when the scanner fails (the supervisor restarts it).
    public func run(context: SourceContext) async throws {
        let ids = reception.ids
        var straps: [DeviceIdentity: (tracker: PolarFrameTracker, lastSeen: Date)] = [:]
        let listener = reception.listener(
            PolarBroadcastProfile.self, clock: context.clock, simulated: PolarBroadcastProfile.simulated)
        try await listener.run(context: context) { identity, block, advertisement in
            var strap = straps[identity] ?? (PolarFrameTracker(), advertisement.receivedAt)
            if advertisement.receivedAt.timeIntervalSince(strap.lastSeen) > Self.lostAfter { strap.tracker.reset() }
            strap.lastSeen = advertisement.receivedAt
            let isNew = strap.tracker.isNew(block)
            straps[identity] = strap
            context.status.setDetail(
                "strap \(identity)",
                "\(block.slowAverageHeartRate) bpm, contact \(block.sensorContact ? "yes" : "no"), battery \(block.batteryOk ? "ok" : "low")")
            guard isNew else { return }
            var metadata = Metadata()
            metadata[.sensorContact] = .bool(block.sensorContact)
            metadata[.lowBattery] = .bool(!block.batteryOk)
            metadata[.advertiserAddress] = .string(advertisement.addressIdentity.canonical)
            metadata[.broadcast] = .bool(true)
            let device = Device(
                name: advertisement.name, manufacturer: "Polar Electro Oy",
                model: advertisement.name.flatMap(PolarBroadcastProfile.model(inName:)),
                localIdentifier: identity.canonical, radioIdentifier: identity.canonical)
            let date = advertisement.receivedAt
            do {
                let sample = try QuantitySample(
                    id: ids.next(), type: .heartRate, quantity: Quantity(Double(block.slowAverageHeartRate), .countPerMinute),
                    start: date, end: date, device: device, metadata: metadata)
                await context.publisher.publish(.quantity(sample))
            } catch {
                context.logger.error("\(advertisement.naming(identity)): heart-rate sample rejected: \(error)")
            }
        }
    }
}
