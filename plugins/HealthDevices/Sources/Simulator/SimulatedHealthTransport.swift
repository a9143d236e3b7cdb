public import BLEProfileKit
import BLETransport
public import FoundationEssentials
public import GatewayRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth stack with simulated health devices, for `healthgate demo` and tests without
/// hardware: weight scales (`healthgate demo scale`, `02:00:00:00:03:01`…), blood pressure cuffs
/// (`healthgate demo cuff`, `02:00:00:00:04:01`…), thermometers (`healthgate demo thermometer`,
/// `02:00:00:00:06:01`…), pulse oximeters (`healthgate demo oximeter`, `02:00:00:00:07:01`…) and
/// glucose meters (`healthgate demo glucose meter`, `02:00:00:00:08:01`…), with Device
/// Information, battery and a Current Time characteristic whose clock runs 90 s fast, as a device
/// clock nobody set does.
///
/// Once subscribed, each device indicates one reading every `measurementIntervalSeconds`, paced
/// by the injected clock, as REAL payload bytes stamped with its own (fast) clock: a scale a
/// Weight Measurement (0.005 kg resolution, time stamp, user 1, no height, so the body mass index
/// comes from the profile's height) followed by a Body Composition Measurement of the same
/// moment (body fat percentage, fat free mass, time stamp, user 1), a cuff a Blood Pressure
/// Measurement (IEEE-11073 SFLOAT mmHg, time stamp, pulse rate, users 1 and 2 in turn: a couple
/// sharing it, each pressing their user button), a thermometer a Temperature
/// Measurement (32-bit FLOAT °C, time stamp, type "mouth"), an oximeter a PLX Spot-check
/// Measurement (SFLOAT SpO2 and pulse rate, time stamp). A glucose meter keeps its records
/// (``SimulatedGlucoseMemory``): it answers the Record Access Control Point and notifies each
/// record it takes while connected. Deterministic.
public typealias SimulatedHealthTransport = SimulatedCentralTransport<HealthSimulationConfiguration>

extension SimulatedHealthTransport {
    /// How far the simulated devices' clocks run ahead of UTC (seconds).
    public static var clockError: TimeInterval { 90 }
}

extension HealthSimulationConfiguration {
    /// The devices of each kind; the glucose meters' records are taken on `clock` from now on
    /// (``SimulatedGlucoseMemory``).
    public func devices(clock: any GatewayClock) -> SimulatedDevices {
        let counts: [(SimulatedHealthDevice.Kind, Int)] = [
            (.scale, scales), (.cuff, cuffs), (.thermometer, thermometers), (.oximeter, oximeters), (.glucoseMeter, glucoseMeters),
        ]
        let devices = counts.flatMap { kind, count in (0..<max(0, count)).map { SimulatedHealthDevice(kind: kind, index: $0) } }
        let glucose = SimulatedGlucoseMemory(origin: clock.now(), periodSeconds: measurementIntervalSeconds)
        let period = Duration.seconds(measurementIntervalSeconds)
        return SimulatedDevices(devices, peripheral: \.peripheral) {
            SimulatedHealthConnection(device: $0, clock: clock, period: period, glucose: glucose)
        }
    }
}

/// One simulated health device's fixed facts.
struct SimulatedHealthDevice: Sendable {
    enum Kind: Sendable {
        case scale, cuff, thermometer, oximeter, glucoseMeter

        /// The name's and model's word for it.
        var label: String {
            switch self {
            case .scale: "scale"
            case .cuff: "cuff"
            case .thermometer: "thermometer"
            case .oximeter: "oximeter"
            case .glucoseMeter: "glucose meter"
            }
        }

        /// The serial number's word for it.
        var serialLabel: String {
            switch self {
            case .scale: "SCALE"
            case .cuff: "CUFF"
            case .thermometer: "THERMO"
            case .oximeter: "OXI"
            case .glucoseMeter: "GLUCOSE"
            }
        }

        /// The fifth octet of its addresses (locally administered, `02:00:00:00:xx:nn`).
        var addressOctet: Int {
            switch self {
            case .scale: 3
            case .cuff: 4
            case .thermometer: 6
            case .oximeter: 7
            case .glucoseMeter: 8
            }
        }

        /// What it measures; a scale weighs and then measures the body composition.
        var characteristics: [HealthCharacteristic] {
            switch self {
            case .scale: [.weightMeasurement, .bodyCompositionMeasurement]
            case .cuff: [.bloodPressureMeasurement]
            case .thermometer: [.temperatureMeasurement]
            case .oximeter: [.plxSpotCheckMeasurement]
            case .glucoseMeter: [.glucoseMeasurement]
            }
        }
    }
    let kind: Kind
    let index: Int
    let peripheral: DiscoveredPeripheral

    init(kind: Kind, index: Int) {
        self.kind = kind
        self.index = index
        let label = kind.label
        peripheral = DiscoveredPeripheral(
            address: String(cFormat: "02:00:00:00:%02X:%02lX", kind.addressOctet, index + 1),
            name: index == 0 ? "healthgate demo \(label)" : "healthgate demo \(label) \(index + 1)", rssi: -58,
            serviceUUIDs: [kind.characteristics[0].service, .deviceInformationService])
    }

    /// What the device indicates.
    var measurements: [GATTCharacteristicID] {
        kind.characteristics.map { GATTCharacteristicID($0.uuid, in: $0.service) }
    }

    /// What the source subscribes to: the measurements, and a glucose meter's control point.
    var indicated: [GATTCharacteristicID] {
        measurements + (kind == .glucoseMeter ? [GATTCharacteristicID(.recordAccessControlPoint, in: .glucoseService)] : [])
    }

    var gatt: SimulatedGATTDatabase {
        var services: [BluetoothUUID: [BluetoothUUID]] = [
            .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber],
            .batteryService: [.batteryLevel],
            .currentTimeService: [.currentTime],
        ]
        for measurement in indicated { services[measurement.service, default: []].append(measurement.characteristic) }
        return SimulatedGATTDatabase(
            services: services,
            readable: [
                .manufacturerName: Array("healthgate".utf8),
                .modelNumber: Array("Simulated \(kind.label)".utf8),
                .serialNumber: Array(("SIM-\(kind.serialLabel)-" + String(cFormat: "%04ld", index + 1)).utf8),
                .batteryLevel: [UInt8(91 - index % 60)],
            ])
    }
}

/// A connection to a simulated health device.
final class SimulatedHealthConnection: SimulatedConnection {
    let device: SimulatedHealthDevice
    let clock: any GatewayClock
    let period: Duration
    let glucose: SimulatedGlucoseMemory
    let link: SimulatedLink
    let gatt: SimulatedGATTDatabase
    /// A glucose meter's records: control point answers, then each record when it takes it.
    private let feed: SimulatedRecordFeed

    init(device: SimulatedHealthDevice, clock: any GatewayClock, period: Duration, glucose: SimulatedGlucoseMemory) {
        self.device = device
        self.clock = clock
        self.period = period
        self.glucose = glucose
        link = SimulatedLink(address: device.peripheral.address)
        gatt = device.gatt
        let index = device.index
        feed = SimulatedRecordFeed(
            SimulatedRecordFeed.Records(
                characteristic: HealthCharacteristic.glucoseMeasurement.uuid, idle: .seconds(3600),
                takenAt: { $0 <= SimulatedGlucoseMemory.lastSequenceNumber ? glucose.takenAt($0) : nil },
                value: { glucose.record($0, meter: index) }),
            first: 1)
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

    /// A glucose meter's Record Access Control Point takes requests, answered by the
    /// notifications that follow (``SimulatedGlucoseMemory/answer(_:at:)``); nothing else is
    /// writable.
    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        try link.check()
        guard device.kind == .glucoseMeter, characteristic == .recordAccessControlPoint, service == .glucoseService else {
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
        }
        let answer = glucose.answer(value, at: clock.now())
        feed.answer(answer.sequences, response: answer.response, on: .recordAccessControlPoint)
    }

    /// The measurements indicate once a period (a scale's two one after the other); a glucose
    /// meter answers its control point and notifies each record it takes; anything else does not
    /// indicate.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws
        -> AsyncThrowingStream<BLENotification, any Error>
    {
        try link.check()
        let indicated = device.indicated
        guard Set(characteristics) == Set(indicated) else {
            let other = characteristics.first { !indicated.contains($0) } ?? indicated.first { !characteristics.contains($0) }
            throw BLETransportError(
                .notSupported, device: address, "\(other.map(String.init(describing:)) ?? "nothing") does not indicate alone")
        }
        if device.kind == .glucoseMeter { return glucoseNotifications() }
        let measurements = device.measurements
        let clock = self.clock
        let schedule = NotificationSchedule(device: device.index, period: period, start: clock.now())
        let sent = Mutex<Int64>(0)
        let kind = device.kind
        let index = device.index
        let glucose = self.glucose
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
                case (.thermometer, _): reading.temperaturePayload(at: now)
                case (.oximeter, _): reading.spotCheckPayload(at: now)
                case (.glucoseMeter, _): glucose.record(Int(count), meter: index)
                }
            return BLENotification(characteristic: measurement, value: value, receivedAt: now)
        })
    }

    /// A glucose meter's notifications: first what a control point request queued (records, then
    /// the response), else each record when the meter takes it. Records stored before the
    /// subscription come only when asked for.
    private func glucoseNotifications() -> AsyncThrowingStream<BLENotification, any Error> {
        feed.live(from: glucose.lastSequence(at: clock.now()) + 1)
        return feed.notifications(link: link, clock: clock)
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

    /// Body temperature (°C): about 36.8, ±0.2.
    var celsius: Double { 36.8 + Double(index % 4) * 0.1 + 0.2 * sin(Double(count) / 3) }
    /// SpO2 (%) and pulse (per minute): about 97 and 64.
    var oximetry: (saturation: Int, pulse: Int) {
        let wobble = sin(Double(count + index * 3) / 2)
        return (97 + Int((1.4 * wobble).rounded()), 64 + Int((3 * wobble).rounded()))
    }
    /// Blood glucose (mg/dL) of record `count` (its sequence number): 95 to 129.
    var milligramsPerDeciliter: Int { 112 + Int((17 * sin(Double(count + index * 3) / 2)).rounded()) }

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

    /// Blood Pressure Measurement: flags 0x0E (time stamp, pulse rate, user ID), systolic,
    /// diastolic and mean arterial pressure as SFLOAT mmHg, the device's time stamp, the pulse as
    /// SFLOAT, the user: 1 for the even readings, 2 for the odd ones (Blood Pressure Service
    /// 3.1.1.5: the user index of the measurement).
    func bloodPressurePayload(at now: Date) -> [UInt8] {
        let p = pressures
        // Appended one by one: Swift 6.0.3 cannot type-check the sum in reasonable time.
        var payload: [UInt8] = [0x0E]
        payload += Self.sfloat(p.systolic)
        payload += Self.sfloat(p.diastolic)
        payload += Self.sfloat(p.mean)
        payload += Self.dateTime(deviceClock: now)
        payload += Self.sfloat(p.pulse)
        payload.append(UInt8(1 + count % 2))
        return payload
    }

    /// Temperature Measurement: flags 0x06 (Celsius, time stamp, temperature type), the
    /// temperature as a 32-bit FLOAT with exponent -2, the device's time stamp, type 6 (mouth).
    func temperaturePayload(at now: Date) -> [UInt8] {
        let mantissa = UInt32((celsius * 100).rounded()) & 0x00FF_FFFF
        return [0x06, UInt8(mantissa & 0xFF), UInt8((mantissa >> 8) & 0xFF), UInt8(mantissa >> 16), 0xFE]
            + Self.dateTime(deviceClock: now) + [0x06]
    }

    /// PLX Spot-check Measurement: flags 0x01 (time stamp), SpO2 and pulse rate as SFLOAT, the
    /// device's time stamp.
    func spotCheckPayload(at now: Date) -> [UInt8] {
        let o = oximetry
        return [0x01] + Self.sfloat(o.saturation) + Self.sfloat(o.pulse) + Self.dateTime(deviceClock: now)
    }

    /// Glucose Measurement record `count`: flags 0x02 (concentration in kg/L, type and sample
    /// location), the sequence number, the base time (the device's clock when it was taken), the
    /// concentration as SFLOAT with exponent -5 (1 mg/dL is 10⁻⁵ kg/L), capillary whole blood
    /// from a finger (0x11).
    func glucosePayload(takenAt: Date) -> [UInt8] {
        let mantissa = UInt16(milligramsPerDeciliter) & 0x0FFF
        return [0x02, UInt8(count & 0xFF), UInt8((count >> 8) & 0xFF)] + Self.dateTime(deviceClock: takenAt)
            + [UInt8(mantissa & 0xFF), 0xB0 | UInt8(mantissa >> 8), 0x11]
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
