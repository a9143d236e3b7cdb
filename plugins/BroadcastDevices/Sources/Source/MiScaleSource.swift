public import BLEAdvertisementKit
public import BLETransport
import FoundationEssentials
import GatewayRuntime
public import HealthModel
import HealthStore
public import SampleBus

/// `ble-mi-scale`: weighings from Xiaomi's scales' advertisements (Mi Smart Scale 2, Mi Body
/// Composition Scale 2), without pairing.
///
/// One `bodyMass` sample per stabilised weighing, however many advertisements repeat it and in
/// whatever order (``WeighingLedger``); the ledger is the source's checkpoint, committed with
/// the sample, so a restart stores no weighing twice. The impedance goes in the metadata. A body
/// composition scale's weighing with its impedance also gives `bodyFatPercentage` and
/// `leanBodyMass` (``MiBodyComposition``) when the person who stood on it (``ScaleUsers``) has a
/// profile with sex, date of birth and height; otherwise only `bodyMass`, and the log (once per
/// scale and reason) and status say why.
public struct MiScaleSource: AdvertisementSource, ConfigurablePlugin, PayloadDecoding {
    /// The `config` object.
    public typealias Configuration = BroadcastSourceConfiguration
    /// The configuration kind.
    public static let kind = "ble-mi-scale"
    /// One line for `healthgate plugins`.
    public static let summary = "Xiaomi Mi Scale 2 and Mi Body Composition Scale 2 (service data 0x181D, 0x181B): weighings without pairing."
    /// `healthgate --help`.
    public static let devicesRead = "Xiaomi scales"
    /// `healthgate decode mi-scale`.
    public static var payloadDecoders: [PayloadDecoder] { [BroadcastPayloadDecoders.miScale] }

    /// `healthgate demo`: simulated advertisers.
    public static var demo: AdvertisementSourceDemo {
        .broadcast("demo-mi-scale", devices: 1, advertisementsPerSecond: 2)
    }

    /// `healthgate scan`: the scale's weight, whether stabilised, and the impedance.
    public static func reading(in advertisement: Advertisement) -> String? {
        guard MiScaleProfile.matches(advertisement), let reading = try? MiScaleProfile.decode(advertisement) else { return nil }
        var text = "\(reading.weightKilograms) kg" + (reading.stabilized ? "" : " (not stabilised)")
        if let impedance = reading.impedance { text += ", \(impedance) ohms" }
        return text
    }

    let reception: BroadcastReception
    let participants: [ParticipantCharacteristics]
    let user: UserCharacteristics
    /// The store's attribution of its latest commit: whose a weighing is (``ScaleUsers``).
    let committed: @Sendable () -> ReadingAttribution?

    /// A source without the gateway's Bluetooth (simulated, or reporting BlueZ unavailable).
    public init(settings: BroadcastSourceSettings, environment: PluginEnvironment) {
        self.init(settings: settings, environment: environment, bluetooth: BluetoothAdapters(clock: environment.clock))
    }

    /// A source on the gateway's Bluetooth adapters (the executable's, shared by every source).
    public init(settings: BroadcastSourceSettings, environment: PluginEnvironment, bluetooth: BluetoothAdapters) {
        reception = BroadcastReception(settings: settings, environment: environment, bluetooth: bluetooth)
        participants = environment.participants
        user = environment.user
        let store = environment.store
        committed = { store?.currentAttribution }
    }

    /// A source listening on `scanner` (tests: a scripted scanner), for `participants` and the
    /// configured profile's `user`.
    public init(
        settings: BroadcastSourceSettings, ids: SampleIDGenerator, scanner: any AdvertisementScanner,
        participants: [ParticipantCharacteristics] = [], user: UserCharacteristics = UserCharacteristics()
    ) {
        reception = BroadcastReception(settings: settings, ids: ids, scanner: scanner)
        self.participants = participants
        self.user = user
        committed = { nil }
    }

    /// Listens until cancelled; throws when the scanner fails (the supervisor restarts it).
    public func run(context: SourceContext) async throws {
        let ids = reception.ids
        var ledgers: [DeviceIdentity: WeighingLedger] = [:]
        var users = ScaleUsers(participants: participants, user: user, committed: committed)
        // Each scale's reasons already logged: a household weighing daily is told once.
        var omissionsLogged: Set<String> = []
        // Each scale's latest weighing and when it was stored: the body composition its impedance
        // gives later is the same weighing's, dated as it, so that the store gives it the
        // weighing's person (same scale, same time).
        var weighedAt: [DeviceIdentity: (weighing: WeighingLedger.Weighing, date: Date)] = [:]
        let listener = reception.listener(MiScaleProfile.self, clock: context.clock, simulated: MiScaleProfile.simulated)
        try await listener.run(context: context) { identity, reading, advertisement in
            var ledger: WeighingLedger
            if let known = ledgers[identity] {
                ledger = known
            } else {
                ledger = try await Self.ledger(of: identity, from: advertisement, in: context)
            }
            // A body composition scale sends the stabilised weight first and the impedance in
            // later repeats of the same weighing: the weight is stored with the first, the body
            // composition with the first that carries the impedance.
            let newWeighing = ledger.admit(reading)
            let newImpedance = ledger.admitImpedance(reading)
            ledgers[identity] = ledger
            guard newWeighing || newImpedance else { return }
            var metadata = Metadata()
            metadata[.advertiserAddress] = .string(advertisement.addressIdentity.canonical)
            metadata[.broadcast] = .bool(true)
            metadata[.scaleUnit] = .string(reading.unit.rawValue)
            if let impedance = reading.impedance { metadata[.impedance] = .integer(Int64(impedance)) }
            if let timestamp = reading.clock.iso8601 { metadata[.scaleTimestamp] = .string(timestamp) }
            let model = reading.service == .bodyComposition ? "Mi Body Composition Scale 2" : "Mi Smart Scale 2"
            let device = Device(name: advertisement.name, manufacturer: "Xiaomi", model: model, localIdentifier: identity.canonical,
                radioIdentifier: advertisement.addressIdentity.canonical)
            let weighing = WeighingLedger.Weighing(reading)
            if newWeighing { weighedAt[identity] = (weighing, advertisement.receivedAt) }
            let date = weighedAt[identity].flatMap { $0.weighing == weighing ? $0.date : nil } ?? advertisement.receivedAt
            let checkpoint = SourceCheckpoint(
                namespace: Self.kind, key: identity.canonical, payload: try JSONEncoder().encode(ledger))
            // The profile the body composition is computed for; the readings name nobody: the
            // store attributes the weighing as it commits it, and its other readings follow it.
            let person = users.person(on: device, weighing: reading.weightKilograms, at: date)
            // Without an impedance yet, a body composition scale's may still come; a weight
            // scale's never will (reported once below).
            let composition =
                newImpedance || (newWeighing && reading.service == .weightScale)
                ? person.flatMap { ScaleUsers.composition(of: reading, for: $0, on: date) } : nil
            do {
                var samples: [QuantitySample] = []
                if newWeighing {
                    samples.append(
                        try QuantitySample(
                            id: ids.next(), type: .bodyMass, quantity: Quantity(reading.weightKilograms, .kilogram),
                            start: date, end: date, device: device, metadata: metadata))
                }
                switch composition {
                case nil: break
                case .success(let estimate):
                    samples.append(
                        try QuantitySample(
                            id: ids.next(), type: .bodyFatPercentage, quantity: Quantity(estimate.bodyFatPercentage, .percent),
                            start: date, end: date, device: device, metadata: metadata))
                    samples.append(
                        try QuantitySample(
                            id: ids.next(), type: .leanBodyMass, quantity: Quantity(estimate.leanBodyMassKilograms, .kilogram),
                            start: date, end: date, device: device, metadata: metadata))
                    context.status.setDetail("body composition \(identity)", "computed")
                case .failure(let omission):
                    context.status.setDetail("body composition \(identity)", "not computed: \(omission)")
                    if omissionsLogged.insert("\(identity) \(omission)").inserted {
                        context.logger.notice("\(advertisement.naming(identity)): body fat not computed, only body mass stored: \(omission)")
                    }
                }
                await context.publisher.publish(samples.map(HealthRecord.quantity), checkpoint: checkpoint)
                context.status.setDetail("scale \(identity)", "\(reading.weightKilograms) kg at \(reading.clock.iso8601 ?? "unset clock")")
            } catch {
                context.logger.error("\(advertisement.naming(identity)): weighing rejected: \(error)")
            }
        }
    }

    /// The ledger committed for `identity` (heard in `advertisement`), or an empty one.
    static func ledger(
        of identity: DeviceIdentity, from advertisement: Advertisement, in context: SourceContext
    ) async throws -> WeighingLedger {
        guard let checkpoint = try await context.checkpoints.checkpoint(namespace: kind, key: identity.canonical) else {
            return WeighingLedger()
        }
        do {
            return try JSONDecoder().decode(WeighingLedger.self, from: checkpoint.payload)
        } catch {
            context.logger.warning("\(advertisement.naming(identity)): checkpoint unreadable, starting afresh: \(error)")
            return WeighingLedger()
        }
    }
}
