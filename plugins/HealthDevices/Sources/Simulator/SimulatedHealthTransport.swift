public import BLECentral
public import Foundation
public import SampleBus
import Synchronization

/// A Bluetooth stack with simulated health devices, for `healthgate demo` and tests without
/// hardware: weight scales (`healthgate demo scale`, `02:00:00:00:03:01`…) and blood pressure
/// cuffs (`healthgate demo cuff`, `02:00:00:00:04:01`…), with Device Information, battery and a
/// Current Time characteristic whose clock runs 90 s fast, as a device clock nobody set does.
///
/// Once subscribed, each device indicates one reading every `measurementIntervalSeconds`, paced
/// by the injected clock, as REAL payload bytes stamped with its own (fast) clock: a scale a
/// Weight Measurement (0.005 kg resolution, time stamp, user 1, no height, so the body mass index
/// comes from the profile's height) followed by a Body Composition Measurement of the same
/// moment (body fat percentage, fat free mass, time stamp, user 1), a cuff a Blood Pressure
/// Measurement (IEEE-11073 SFLOAT mmHg, time stamp, pulse rate). Deterministic.
public struct SimulatedHealthTransport: BLECentralTransport {
    /// How far the simulated devices' clocks run ahead of UTC (seconds).
    public static let clockError: TimeInterval = 90

    let clock: any GatewayClock
    let settings: HealthSimulationSettings
    let devices: [SimulatedHealthDevice]

    /// Creates the simulated devices `settings` asks for, paced by `clock`.
    public init(clock: any GatewayClock, settings: HealthSimulationSettings = HealthSimulationSettings()) {
        self.clock = clock
        self.settings = settings
        devices = (0..<max(0, settings.scales)).map { SimulatedHealthDevice(kind: .scale, index: $0) }
            + (0..<max(0, settings.cuffs)).map { SimulatedHealthDevice(kind: .cuff, index: $0) }
    }

    public func discover(services: [BluetoothUUID]) -> AsyncThrowingStream<DiscoveryEvent, any Error> {
        simulatedDiscovery(of: devices.map(\.peripheral), services: services, clock: clock)
    }

    /// Connects at once. Throws `.notFound` for an address no simulated device has.
    public func connect(to address: String) async throws -> any BLEConnection {
        guard let device = devices.first(where: { $0.peripheral.address == address.uppercased() }) else {
            throw BLETransportError(.notFound, device: address, "no simulated health device has this address")
        }
        return SimulatedHealthConnection(device: device, clock: clock, period: .seconds(settings.measurementIntervalSeconds))
    }
}

/// One simulated health device's fixed facts.
struct SimulatedHealthDevice: Sendable {
    enum Kind: Sendable { case scale, cuff }
    let kind: Kind
    let index: Int
    let peripheral: DiscoveredPeripheral

    init(kind: Kind, index: Int) {
        self.kind = kind
        self.index = index
        let number = String(index + 1, radix: 16, uppercase: true)
        let suffix = number.count == 1 ? "0" + number : number
        let label = kind == .scale ? "scale" : "cuff"
        peripheral = DiscoveredPeripheral(
            address: (kind == .scale ? "02:00:00:00:03:" : "02:00:00:00:04:") + suffix,
            name: index == 0 ? "healthgate demo \(label)" : "healthgate demo \(label) \(index + 1)", rssi: -58,
            serviceUUIDs: [kind == .scale ? .weightScaleService : .bloodPressureService, .deviceInformationService])
    }

    /// What the device indicates: a scale weighs and then measures the body composition.
    var measurements: [GATTCharacteristicID] {
        let characteristics: [HealthCharacteristic] =
            kind == .scale ? [.weightMeasurement, .bodyCompositionMeasurement] : [.bloodPressureMeasurement]
        return characteristics.map { GATTCharacteristicID($0.uuid, in: $0.service) }
    }

    var gatt: SimulatedGATTDatabase {
        var services: [BluetoothUUID: [BluetoothUUID]] = [
            .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber],
            .batteryService: [.batteryLevel],
            .currentTimeService: [.currentTime],
        ]
        for measurement in measurements { services[measurement.service, default: []].append(measurement.characteristic) }
        return SimulatedGATTDatabase(
            services: services,
            readable: [
                .manufacturerName: Array("healthgate".utf8),
                .modelNumber: Array((kind == .scale ? "Simulated scale" : "Simulated cuff").utf8),
                .serialNumber: Array(String(format: kind == .scale ? "SIM-SCALE-%04d" : "SIM-CUFF-%04d", index + 1).utf8),
                .batteryLevel: [UInt8(91 - index % 60)],
            ])
    }
}

/// A connection to a simulated health device.
final class SimulatedHealthConnection: BLEConnection {
    let device: SimulatedHealthDevice
    let clock: any GatewayClock
    let period: Duration
    private let link: SimulatedLink
    private let gatt: SimulatedGATTDatabase

    init(device: SimulatedHealthDevice, clock: any GatewayClock, period: Duration) {
        self.device = device
        self.clock = clock
        self.period = period
        link = SimulatedLink(address: device.peripheral.address)
        gatt = device.gatt
    }

    var address: String { device.peripheral.address }

    func hasCharacteristic(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async -> Bool {
        gatt.has(characteristic, in: service)
    }

    /// Current Time is the device's fast clock now; the rest are fixed values.
    func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8] {
        try link.check()
        if characteristic == .currentTime, gatt.has(characteristic, in: service) {
            // Exact Time 256: Date Time, day of week (0: unknown), fractions, adjust reason.
            return SimulatedHealthReading.dateTime(deviceClock: clock.now()) + [0, 0, 0]
        }
        return try gatt.read(characteristic, in: service, device: address)
    }

    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        try link.check()
        throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
    }

    /// The measurements indicate once a period (a scale's two one after the other); anything
    /// else does not indicate.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws
        -> AsyncThrowingStream<BLENotification, any Error>
    {
        try link.check()
        let measurements = device.measurements
        guard Set(characteristics) == Set(measurements) else {
            let other = characteristics.first { !measurements.contains($0) } ?? measurements.first { !characteristics.contains($0) }
            throw BLETransportError(
                .notSupported, device: address, "\(other.map(String.init(describing:)) ?? "nothing") does not indicate alone")
        }
        let clock = self.clock
        let schedule = NotificationSchedule(device: device.index, period: period, start: clock.now())
        let sent = Mutex<Int64>(0)
        let kind = device.kind
        let index = device.index
        return AsyncThrowingStream(unfolding: { [link] in
            let count = sent.withLock { count -> Int64 in
                defer { count += 1 }
                return count
            }
            let step = Int64(measurements.count)
            try await clock.sleep(for: schedule.wait(for: count / step, now: clock.now()))
            guard link.isOpen else { return nil }
            let now = clock.now()
            let reading = SimulatedHealthReading(index: index, count: Int(count / step))
            let measurement = measurements[Int(count % step)].characteristic
            let value: [UInt8] =
                switch (kind, count % step) {
                case (.scale, 0): reading.weightPayload(at: now)
                case (.scale, _): reading.bodyCompositionPayload(at: now)
                case (.cuff, _): reading.bloodPressurePayload(at: now)
                }
            return BLENotification(characteristic: measurement, value: value, receivedAt: now)
        })
    }

    var droppedNotifications: Int { 0 }

    func batteryPercentage() async -> Int? { gatt.readable[.batteryLevel].flatMap(\.first).map(Int.init) }

    func disconnect() async {
        link.close()
    }
}

/// One simulated reading: values that wander a little from reading to reading.
struct SimulatedHealthReading: Sendable {
    let index: Int
    let count: Int

    /// Kilograms: about 72.4, ±0.3.
    var kilograms: Double { 72.4 + Double(index) * 3.1 + 0.3 * sin(Double(count) / 3) }
    /// Body fat percentage: about 22.4, ±0.5.
    var bodyFatPercentage: Double { 22.4 + Double(index) * 1.3 + 0.5 * cos(Double(count) / 4) }
    /// Systolic, diastolic and mean arterial pressure (mmHg) and pulse (per minute).
    var pressures: (systolic: Int, diastolic: Int, mean: Int, pulse: Int) {
        let wobble = Int((4 * sin(Double(count + index * 5) / 2)).rounded())
        let systolic = 121 + wobble
        let diastolic = 79 + wobble / 2
        return (systolic, diastolic, (systolic + 2 * diastolic) / 3, 66 + wobble)
    }

    /// Weight Measurement: flags 0x06 (time stamp, user ID), weight (uint16, 0.005 kg), the
    /// device's time stamp, user 1.
    func weightPayload(at now: Date) -> [UInt8] {
        let raw = UInt16((kilograms / 0.005).rounded())
        return [0x06, UInt8(raw & 0xFF), UInt8(raw >> 8)] + Self.dateTime(deviceClock: now) + [0x01]
    }

    /// Body Composition Measurement: flags 0x0046 (time stamp, user ID, fat free mass), body fat
    /// (uint16, 0.1 %), the device's time stamp, user 1, fat free mass (uint16, 0.005 kg).
    func bodyCompositionPayload(at now: Date) -> [UInt8] {
        let fat = UInt16((bodyFatPercentage * 10).rounded())
        let fatFree = UInt16((kilograms * (1 - Double(fat) / 1000) / 0.005).rounded())
        return [0x46, 0x00, UInt8(fat & 0xFF), UInt8(fat >> 8)] + Self.dateTime(deviceClock: now)
            + [0x01, UInt8(fatFree & 0xFF), UInt8(fatFree >> 8)]
    }

    /// Blood Pressure Measurement: flags 0x06 (time stamp, pulse rate), systolic, diastolic and
    /// mean arterial pressure as SFLOAT mmHg, the device's time stamp, the pulse as SFLOAT.
    func bloodPressurePayload(at now: Date) -> [UInt8] {
        let p = pressures
        return [0x06] + Self.sfloat(p.systolic) + Self.sfloat(p.diastolic) + Self.sfloat(p.mean)
            + Self.dateTime(deviceClock: now) + Self.sfloat(p.pulse)
    }

    /// IEEE-11073 16-bit SFLOAT of a whole number below 2048: exponent 0, the number as mantissa.
    static func sfloat(_ value: Int) -> [UInt8] {
        let raw = UInt16(value) & 0x0FFF
        return [UInt8(raw & 0xFF), UInt8(raw >> 8)]
    }

    /// Date Time (0x2A08) of the device's clock, which runs ``SimulatedHealthTransport/clockError``
    /// ahead of UTC and shows UTC's wall clock.
    static func dateTime(deviceClock now: Date) -> [UInt8] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: now.addingTimeInterval(SimulatedHealthTransport.clockError))
        let year = parts.year ?? 0
        return [
            UInt8(year & 0xFF), UInt8(year >> 8), UInt8(parts.month ?? 0), UInt8(parts.day ?? 0), UInt8(parts.hour ?? 0),
            UInt8(parts.minute ?? 0), UInt8(parts.second ?? 0),
        ]
    }
}
