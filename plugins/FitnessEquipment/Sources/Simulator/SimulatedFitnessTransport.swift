public import BLEProfileKit
import BLETransport
import FoundationEssentials
public import GatewayRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth stack with simulated bikes and rowers, for `healthgate demo` and tests without
/// hardware.
///
/// Each bike (`healthgate demo bike`, addresses `02:00:00:00:02:01`…, locally administered) has a
/// speed and cadence sensor (CSC 0x1816: cumulative wheel and crank revolutions with their event
/// times) and a power meter (Cycling Power 0x1818: instantaneous power), with Device Information
/// and battery. Once subscribed it sends REAL payload bytes, one CSC Measurement and one Cycling
/// Power Measurement per period, paced by the injected clock, so the source decodes them through
/// the same decoders and counter arithmetic as a real bike's (the counters roll over as real
/// ones do). The rider holds about 30 km/h at 88 rpm and 200 W, in slow waves. Each rower
/// (`healthgate demo rower`, `02:00:00:00:05:01`…) is a Fitness Machine (0x1826) sending Rower
/// Data: 26 strokes a minute, their count, the total distance, the pace and about 180 W.
/// Deterministic.
public typealias SimulatedFitnessTransport = SimulatedCentralTransport<FitnessSimulationConfiguration>

extension FitnessSimulationConfiguration {
    /// The bikes, then the rowers.
    public func devices(clock: any GatewayClock) -> SimulatedDevices {
        let devices = (0..<max(0, bikes)).map { SimulatedFitnessDevice(kind: .bike, index: $0) }
            + (0..<max(0, rowers)).map { SimulatedFitnessDevice(kind: .rower, index: $0) }
        let period = Duration.seconds(1 / notificationsPerSecond)
        return SimulatedDevices(devices, peripheral: \.peripheral) { SimulatedFitnessConnection(bike: $0, clock: clock, period: period) }
    }
}

/// One simulated bike's or rower's fixed facts.
struct SimulatedFitnessDevice: Sendable {
    enum Kind: Sendable { case bike, rower }
    let kind: Kind
    let index: Int
    let peripheral: DiscoveredPeripheral

    init(kind: Kind, index: Int) {
        self.kind = kind
        self.index = index
        let number = String(index + 1, radix: 16, uppercase: true)
        let suffix = number.count == 1 ? "0" + number : number
        let label = kind == .bike ? "bike" : "rower"
        peripheral = DiscoveredPeripheral(
            address: (kind == .bike ? "02:00:00:00:02:" : "02:00:00:00:05:") + suffix,
            name: index == 0 ? "healthgate demo \(label)" : "healthgate demo \(label) \(index + 1)", rssi: -55,
            serviceUUIDs: (kind == .bike ? [.cyclingSpeedAndCadenceService, .cyclingPowerService] : [.fitnessMachineService])
                + [.batteryService, .deviceInformationService])
    }

    static let csc = GATTCharacteristicID(FitnessCharacteristic.cscMeasurement.uuid, in: .cyclingSpeedAndCadenceService)
    static let power = GATTCharacteristicID(FitnessCharacteristic.cyclingPowerMeasurement.uuid, in: .cyclingPowerService)
    static let rowerData = GATTCharacteristicID(FitnessCharacteristic.rowerData.uuid, in: .fitnessMachineService)

    /// What notifies, in the order each period sends it.
    var notifying: [GATTCharacteristicID] { kind == .bike ? [Self.csc, Self.power] : [Self.rowerData] }

    var services: [BluetoothUUID: [BluetoothUUID]] {
        if kind == .rower {
            return [
                .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber, .firmwareRevision],
                .batteryService: [.batteryLevel],
                .fitnessMachineService: [FitnessCharacteristic.rowerData.uuid, FitnessCharacteristic.fitnessMachineFeature.uuid],
            ]
        }
        return [
            .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber, .firmwareRevision],
            .batteryService: [.batteryLevel],
            .cyclingSpeedAndCadenceService: [FitnessCharacteristic.cscMeasurement.uuid, FitnessCharacteristic.cscFeature.uuid],
            .cyclingPowerService: [
                FitnessCharacteristic.cyclingPowerMeasurement.uuid, FitnessCharacteristic.cyclingPowerFeature.uuid,
            ],
        ]
    }

    var readable: [BluetoothUUID: [UInt8]] {
        [
            .manufacturerName: Array("healthgate".utf8),
            .modelNumber: Array((kind == .bike ? "Simulated bike" : "Simulated rower").utf8),
            .serialNumber: Array(String(cFormat: kind == .bike ? "SIM-BIKE-%04ld" : "SIM-ROWER-%04ld", index + 1).utf8),
            .firmwareRevision: Array("1.0.0".utf8),
            .batteryLevel: [UInt8(76 - index % 60)],
            // CSC Feature: wheel and crank revolution data supported.
            FitnessCharacteristic.cscFeature.uuid: [0x03, 0x00],
            // Cycling Power Feature: no optional field.
            FitnessCharacteristic.cyclingPowerFeature.uuid: [0x00, 0x00, 0x00, 0x00],
            // Fitness Machine Feature: cadence (stroke rate), total distance, pace and power
            // measurement supported; no target settings.
            FitnessCharacteristic.fitnessMachineFeature.uuid: [0x26, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
        ]
    }
}

/// A connection to a simulated bike.
final class SimulatedFitnessConnection: SimulatedConnection {
    let bike: SimulatedFitnessDevice
    let clock: any GatewayClock
    let period: Duration
    private let rider: Mutex<SimulatedRider>
    let link: SimulatedLink
    let gatt: SimulatedGATTDatabase

    init(bike: SimulatedFitnessDevice, clock: any GatewayClock, period: Duration) {
        self.bike = bike
        self.clock = clock
        self.period = period
        rider = Mutex(SimulatedRider(seed: bike.index))
        link = SimulatedLink(address: bike.peripheral.address)
        gatt = SimulatedGATTDatabase(services: bike.services, readable: bike.readable)
    }

    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        try link.check()
        throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
    }

    /// A bike's CSC Measurement and Cycling Power Measurement notify, a rower's Rower Data;
    /// asking for anything else throws `.notSupported`. Each period brings one of each
    /// subscribed, made when the consumer asks and the device's due time has come, so nothing
    /// is ever dropped.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws
        -> AsyncThrowingStream<BLENotification, any Error>
    {
        try link.check()
        let notifying = bike.notifying.filter(characteristics.contains)
        guard !characteristics.isEmpty, notifying.count == characteristics.count else {
            let other = characteristics.first { !notifying.contains($0) }
            throw BLETransportError(.notSupported, device: address, "\(other.map(String.init(describing:)) ?? "nothing") does not notify")
        }
        let clock = self.clock
        let interval = period.seconds
        let schedule = NotificationSchedule(device: bike.index, period: period, start: clock.now())
        let sent = Mutex<Int64>(0)
        return AsyncThrowingStream(unfolding: { [self] in
            let count = sent.withLock { count -> Int64 in
                defer { count += 1 }
                return count
            }
            let slot = count / Int64(notifying.count)
            let which = notifying[Int(count % Int64(notifying.count))]
            try await clock.sleep(for: schedule.wait(for: slot, now: clock.now()))
            guard link.isOpen else { return nil }
            let value = rider.withLock { rider in
                rider.advance(to: Double(slot + 1) * interval)
                switch which {
                case SimulatedFitnessDevice.csc: return rider.cscPayload()
                case SimulatedFitnessDevice.power: return rider.powerPayload()
                default: return rider.rowerPayload()
                }
            }
            return BLENotification(characteristic: which.characteristic, value: value, receivedAt: clock.now())
        })
    }

}

/// The simulated rider and the bike's counters: continuous wheel and crank revolutions, from
/// which the payloads take the whole revolutions and the time of the last one, as a sensor's
/// magnet and reed switch would.
struct SimulatedRider: Sendable {
    /// The simulated wheel's circumference (m), the default a source assumes.
    static let wheelCircumference = 2.105
    let phase: Double
    var time = 0.0
    var wheel = 0.0
    var crank = 0.0
    var lastWheelEvent = 0.0
    var lastCrankEvent = 0.0

    init(seed: Int) {
        phase = Double(seed) * 41
    }

    /// Metres per second at simulated time `t`: about 30 km/h in a slow wave.
    func speed(at t: Double) -> Double { 8.3 + 1.2 * sin(2 * .pi * (t + phase) / 120) }
    /// Crank revolutions per minute.
    func cadence(at t: Double) -> Double { 88 + 6 * sin(2 * .pi * (t + phase) / 120) }
    /// Watts, following speed with a faster wobble.
    func power(at t: Double) -> Double { 200 + 45 * sin(2 * .pi * (t + phase) / 120) + 10 * sin(2 * .pi * (t + phase) / 17) }

    /// Moves the counters to simulated time `t` (seconds since subscribing).
    mutating func advance(to t: Double) {
        guard t > time else { return }
        let wheelRate = speed(at: t) / Self.wheelCircumference
        let crankRate = cadence(at: t) / 60
        let newWheel = wheel + wheelRate * (t - time)
        let newCrank = crank + crankRate * (t - time)
        if floor(newWheel) > floor(wheel) { lastWheelEvent = t - (newWheel - floor(newWheel)) / wheelRate }
        if floor(newCrank) > floor(crank) { lastCrankEvent = t - (newCrank - floor(newCrank)) / crankRate }
        wheel = newWheel
        crank = newCrank
        time = t
    }

    /// CSC Measurement: flags 0x03, wheel revolutions (uint32), last wheel event (uint16,
    /// 1/1024 s), crank revolutions (uint16), last crank event (uint16, 1/1024 s).
    func cscPayload() -> [UInt8] {
        let wheels = UInt32(truncatingIfNeeded: Int64(wheel))
        let wheelTime = UInt16(truncatingIfNeeded: Int64(lastWheelEvent * 1024))
        let cranks = UInt16(truncatingIfNeeded: Int64(crank))
        let crankTime = UInt16(truncatingIfNeeded: Int64(lastCrankEvent * 1024))
        return [0x03] + Self.bytes(wheels, 4) + Self.bytes(UInt32(wheelTime), 2) + Self.bytes(UInt32(cranks), 2)
            + Self.bytes(UInt32(crankTime), 2)
    }

    /// Cycling Power Measurement: flags 0x0000 and the instantaneous power (sint16 W); speed
    /// and cadence come from the CSC sensor, as on a bike with both.
    func powerPayload() -> [UInt8] {
        let watts = Int16(power(at: time).rounded())
        return [0x00, 0x00] + Self.bytes(UInt32(UInt16(bitPattern: watts)), 2)
    }

    /// Rower Data: flags 0x002C (stroke rate and count, total distance, pace, power): 26 strokes
    /// a minute (uint8, 0.5 /min), the stroke count, metres rowed (uint24), seconds per 500 m
    /// (uint16) at about 4.2 m/s, and about 180 W (sint16).
    func rowerPayload() -> [UInt8] {
        let speed = 4.2 + 0.3 * sin(2 * .pi * (time + phase) / 90)
        let strokes = UInt32(time * 26 / 60)
        let meters = UInt32(time * 4.2)
        let pace = UInt32((500 / speed).rounded())
        let watts = Int16((180 + 20 * sin(2 * .pi * (time + phase) / 90)).rounded())
        return [0x2C, 0x00, 52] + Self.bytes(strokes, 2) + Self.bytes(meters, 3) + Self.bytes(pace, 2)
            + Self.bytes(UInt32(UInt16(bitPattern: watts)), 2)
    }

    private static func bytes(_ value: UInt32, _ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
}
