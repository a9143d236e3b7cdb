public import BLEProfileKit
import BLETransport
import FoundationEssentials
import GATTDecoding
public import GatewayRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth stack with simulated Generic Health Sensors, for `healthgate demo` and tests
/// without hardware (`healthgate demo ghs oximeter`, `02:00:00:00:0A:01`…).
///
/// Each sensor takes an observation every `observationIntervalSeconds` on the injected clock,
/// numbered from 0, the first `storedObservations` of them before the transport was made:
///
/// - a pulse oximeter: a bundle, time-stamped, of SpO2 (MDC_PULS_OXIM_SAT_O2, %) and respiration
///   rate (MDC_RESP_RATE, breaths per minute), 45 bytes; no pulse rate, so that the demo's classes
///   see no heart rate from a device nobody wears;
/// - a blood pressure monitor: a compound observation (MDC_PRESS_BLD_NONINV) of systolic,
///   diastolic and mean pressure (mmHg), 45 bytes.
///
/// Every observation is cut into segments of 19 bytes behind the segmentation header (an ATT
/// MTU of 23), so each one is reassembled from three notifications. While a collector has asked
/// for live observations (GHS Control Point 0x01) they are sent on Live Health Observations;
/// the others the sensor stores, and sends on Stored Health Observations behind their record
/// number when the Record Access Control Point asks for them (all, or from a record number on;
/// also their number, deletion and abort). What a sensor sent live and what it deleted outlive
/// the connection, as a real sensor's memory does. A record number is the observation's slot of
/// the interval on the clock since 2000 (the GHS epoch), + 1: the numbers keep rising from one
/// run of the simulator to the next, as a real sensor's do from one connection to the next, so
/// a demo run again against its store is sent the observations taken since the last run, not
/// told that nothing was stored since the checkpoint the last run left.
///
/// Health Sensor Features carries, per observation type, an Observation Schedule descriptor
/// (measurement period and update interval, both `observationIntervalSeconds` at first) and a
/// Valid Range and Accuracy descriptor. A collector may write a schedule: the sensor keeps it
/// (across connections too), answers reads with it and indicates it on Observation Schedule
/// Changed; it refuses a schedule for another type, or whose period or interval is not a positive
/// number, as an ATT error Out of Range (`.failed`). The observations keep their interval: the
/// schedule is stored, not obeyed. Deterministic.
public typealias SimulatedGHSTransport = SimulatedCentralTransport<GHSSimulationConfiguration>

extension GHSSimulationConfiguration {
    /// The sensors: the oximeters, then the cuffs, their first observations `storedObservations`
    /// intervals before now on `clock`.
    public func devices(clock: any GatewayClock) -> SimulatedDevices {
        let start = clock.now().addingTimeInterval(-Double(storedObservations) * observationIntervalSeconds)
        let made =
            (0..<max(0, oximeters)).map { SimulatedGHSSensor(kind: .oximeter, index: $0, start: start, interval: observationIntervalSeconds) }
            + (0..<max(0, cuffs)).map { SimulatedGHSSensor(kind: .cuff, index: $0, start: start, interval: observationIntervalSeconds) }
        return SimulatedDevices(made, peripheral: \.peripheral) { SimulatedGHSConnection(sensor: $0, clock: clock) }
    }
}

/// One simulated sensor: its fixed facts and its memory.
final class SimulatedGHSSensor: Sendable {
    enum Kind: Sendable { case oximeter, cuff }

    let kind: Kind
    let index: Int
    let peripheral: DiscoveredPeripheral
    let start: Date
    let interval: Double
    /// The record number of observation 0 (see the type's comment): uint32 until 2136 at the
    /// shortest interval, 1 s.
    let firstRecordNumber: Int
    /// The observations sent live (never stored), and those a collector deleted.
    let memory = Mutex<(sentLive: Set<Int>, deleted: Set<Int>)>(([], []))
    /// Each observation type's schedule, as a collector last wrote it.
    let schedules: Mutex<[UInt32: GHSObservationSchedule]>

    /// Bytes of an observation per notification after the segmentation header (ATT MTU 23).
    static let segmentSize = 19

    init(kind: Kind, index: Int, start: Date, interval: Double) {
        self.kind = kind
        self.index = index
        self.start = start
        self.interval = interval
        firstRecordNumber = max(0, Int((start.timeIntervalSince(GHSObservationMapper.epoch2000) / interval).rounded(.down))) + 1
        schedules = Mutex(Dictionary(uniqueKeysWithValues: Self.types(of: kind).map {
            ($0.type, GHSObservationSchedule(type: $0.type, measurementPeriodSeconds: interval, updateIntervalSeconds: interval))
        }))
        let (suffix, name) = kind == .oximeter ? (0x01, "oximeter") : (0x41, "cuff")
        peripheral = DiscoveredPeripheral(
            address: String(cFormat: "02:00:00:00:0A:%02lX", suffix + index),
            name: index == 0 ? "healthgate demo ghs \(name)" : "healthgate demo ghs \(name) \(index + 1)", rssi: -58,
            serviceUUIDs: [.genericHealthSensorService, .deviceInformationService])
    }

    /// The observation types with the unit, limits and accuracy of their Valid Range and
    /// Accuracy descriptors: SpO2 70–100 % ± 2, respiration rate 4–60 /min ± 2, blood pressure
    /// 0–300 mmHg ± 3.
    static func types(of kind: Kind) -> [(type: UInt32, unit: UInt16, lower: Double, upper: Double, accuracy: Double)] {
        kind == .oximeter ? [(150_456, 544, 70, 100, 2), (151_562, 2784, 4, 60, 2)] : [(150_020, 3872, 0, 300, 3)]
    }

    /// Health Sensor Features' descriptors: per type, its schedule (writable), then its range.
    var descriptors: [SimulatedDescriptor] {
        let current = schedules.withLock { $0 }
        return Self.types(of: kind).flatMap { type -> [SimulatedDescriptor] in
            let schedule = current[type.type, default: GHSObservationSchedule(type: type.type, measurementPeriodSeconds: interval, updateIntervalSeconds: interval)]
            let range = ACOMEncoder.le(type.type) + ACOMEncoder.le(type.unit)
                + [type.lower, type.upper, type.accuracy].flatMap { MedicalFloat.value($0).floatBytes }
            return [
                SimulatedDescriptor(GHSCharacteristic.observationSchedule.uuid, schedule.encoded, writable: true),
                SimulatedDescriptor(GHSCharacteristic.validRangeAndAccuracy.uuid, range),
            ]
        }
    }

    /// The observation types and the device specialization (MDC_DEV_SPEC_PROFILE_PULS_OXIM,
    /// MDC_DEV_SPEC_PROFILE_BPM, version 1), as Health Sensor Features says them.
    var features: [UInt8] {
        let types = Self.types(of: kind).map(\.type)
        let specialization: UInt16 = kind == .oximeter ? 0x1004 : 0x1007
        return [0x01, UInt8(types.count)] + types.flatMap(ACOMEncoder.le) + [0x01] + ACOMEncoder.le(specialization) + [0x01]
    }

    var gatt: SimulatedGATTDatabase {
        let service: [GHSCharacteristic] = [
            .healthSensorFeatures, .liveHealthObservations, .storedHealthObservations, .recordAccessControlPoint, .controlPoint,
            .observationScheduleChanged, .securityLevels,
        ]
        let model = kind == .oximeter ? "Simulated GHS Oximeter" : "Simulated GHS Cuff"
        let serial = (kind == .oximeter ? "SIM-GHS-PO-" : "SIM-GHS-BP-") + String(cFormat: "%04ld", index + 1)
        let readable: [BluetoothUUID: [UInt8]] = [
            .manufacturerName: Array("healthgate".utf8),
            .modelNumber: Array(model.utf8),
            .serialNumber: Array(serial.utf8),
            .batteryLevel: [UInt8(90 - index % 50)],
            GHSCharacteristic.healthSensorFeatures.uuid: features,
            // Mode 1, level 1: no security; the gateway needs no bond.
            GHSCharacteristic.securityLevels.uuid: [0x01, 0x01],
        ]
        return SimulatedGATTDatabase(
            services: [
                .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber],
                .batteryService: [.batteryLevel],
                .genericHealthSensorService: service.map(\.uuid),
            ],
            readable: readable, descriptors: [GHSCharacteristic.healthSensorFeatures.uuid: descriptors])
    }

    /// Takes a schedule written to the schedule descriptor for `type`: refused (an ATT error Out of
    /// Range, 0xFF, CSS Part B §1.2) unless it decodes, is for `type`, and its period and interval
    /// are positive numbers.
    func takeSchedule(_ value: [UInt8], for type: UInt32, device address: String) throws -> GHSObservationSchedule {
        func refuse(_ why: String) -> BLETransportError {
            BLETransportError(.failed, device: address, "Observation Schedule of \(type) refused with ATT error 0xff (out of range): \(why)")
        }
        let schedule: GHSObservationSchedule
        do {
            schedule = try GHSObservationSchedule.decode(value)
        } catch {
            throw refuse("\(error)")
        }
        guard schedule.type == type else { throw refuse("the value is for type \(schedule.type)") }
        for (name, value) in [("measurement period", schedule.measurementPeriod), ("update interval", schedule.updateInterval)] {
            guard let seconds = value.number, seconds > 0, seconds.isFinite else { throw refuse("\(name) \(value) s") }
        }
        schedules.withLock { $0[type] = schedule }
        return schedule
    }

    /// When observation `number` is taken.
    func takenAt(_ number: Int) -> Date { start.addingTimeInterval(Double(number) * interval) }

    /// The record number of observation `number`.
    func recordNumber(_ number: Int) -> Int { firstRecordNumber + number }

    /// The observations taken by `now`: 0 ..< the returned number.
    func taken(by now: Date) -> Int {
        max(0, Int((now.timeIntervalSince(start) / interval + 1e-9).rounded(.down)) + 1)
    }

    /// The numbers of the stored observations taken by `now` (not sent live, not deleted).
    func stored(by now: Date) -> [Int] {
        let (live, deleted) = memory.withLock { ($0.sentLive, $0.deleted) }
        return (0..<taken(by: now)).filter { !live.contains($0) && !deleted.contains($0) }
    }

    /// Observation `number`'s ACOM bytes.
    func observation(_ number: Int) -> [UInt8] {
        let milliseconds = UInt64(max(0, takenAt(number).timeIntervalSince(GHSObservationMapper.epoch2000) * 1000).rounded())
        let wave = sin(Double(number + index * 7) / 5)
        switch kind {
        case .oximeter:
            let spo2 = 97 + Int((2 * wave).rounded())
            let breaths = 16 + Int((2 * wave).rounded())
            return ACOMEncoder.object(
                0xFF, ACOMEncoder.Header(milliseconds2000: milliseconds),
                value: ACOMEncoder.bundle([
                    ACOMEncoder.object(0x01, ACOMEncoder.Header(type: 150_456), value: ACOMEncoder.numeric(unit: 544, mantissa: spo2, exponent: 0)),
                    ACOMEncoder.object(0x01, ACOMEncoder.Header(type: 151_562), value: ACOMEncoder.numeric(unit: 2784, mantissa: breaths, exponent: 0)),
                ]))
        case .cuff:
            let systolic = 122 + Int((6 * wave).rounded())
            let diastolic = 79 + Int((4 * wave).rounded())
            let mean = (systolic + 2 * diastolic) / 3
            return ACOMEncoder.object(
                0x07, ACOMEncoder.Header(type: 150_020, milliseconds2000: milliseconds),
                value: ACOMEncoder.compound([
                    (150_021, 3872, systolic, 0), (150_022, 3872, diastolic, 0), (150_023, 3872, mean, 0),
                ]))
        }
    }
}

/// A connection to a simulated sensor.
final class SimulatedGHSConnection: SimulatedConnection {
    let sensor: SimulatedGHSSensor
    let clock: any GatewayClock
    let link: SimulatedLink
    /// The sensor's database as it is now (a written schedule reads back).
    var gatt: SimulatedGATTDatabase { sensor.gatt }
    /// Whether the collector asked for live observations, and the two characteristics' rolling
    /// segment counters: a new connection starts them again.
    private let state = LinkState()
    private let feed: SimulatedRecordFeed

    /// What one connection knows (shared with its feed's closures).
    final class LinkState: Sendable {
        let value = Mutex<(live: Bool, liveCounter: Int, storedCounter: Int)>((false, 0, 0))
        func withLock<T>(_ body: (inout (live: Bool, liveCounter: Int, storedCounter: Int)) -> T) -> T { value.withLock { body(&$0) } }
    }

    init(sensor: SimulatedGHSSensor, clock: any GatewayClock) {
        self.sensor = sensor
        self.clock = clock
        link = SimulatedLink(address: sensor.peripheral.address)
        let state = state
        feed = SimulatedRecordFeed(
            SimulatedRecordFeed.Records(
                idle: .seconds(1),
                takenAt: { number in state.withLock { $0.live } ? sensor.takenAt(number) : nil },
                notifications: { number, asked in
                    var bytes = sensor.observation(number)
                    if asked { bytes = ACOMEncoder.le(UInt32(sensor.recordNumber(number))) + bytes } else { sensor.memory.withLock { _ = $0.sentLive.insert(number) } }
                    let characteristic = asked ? GHSCharacteristic.storedHealthObservations : .liveHealthObservations
                    let segments = state.withLock { state in
                        let made = ACOMEncoder.segments(bytes, size: SimulatedGHSSensor.segmentSize, counter: asked ? state.storedCounter : state.liveCounter)
                        if asked { state.storedCounter = made.next } else { state.liveCounter = made.next }
                        return made.segments
                    }
                    return segments.map { (characteristic.uuid, $0) }
                }),
            first: 0)
    }

    func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8] {
        try link.check()
        return try gatt.read(characteristic, in: service, device: address)
    }

    /// The GHS Control Point (start, stop) and the Record Access Control Point take writes.
    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        try link.check()
        guard service == .genericHealthSensorService else {
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
        }
        switch characteristic {
        case GHSCharacteristic.controlPoint.uuid:
            switch value {
            case [0x01]:
                let next = sensor.taken(by: clock.now())
                state.withLock { $0.live = true }
                feed.live(from: next, restart: true)
                feed.queue([0x80], on: GHSCharacteristic.controlPoint.uuid)
            case [0x02]:
                state.withLock { $0.live = false }
                feed.queue([0x80], on: GHSCharacteristic.controlPoint.uuid)
            default:
                throw BLETransportError(.notSupported, device: address, "GHS Control Point: op code not supported")
            }
        case GHSCharacteristic.recordAccessControlPoint.uuid:
            let answer = recordAccess(value)
            feed.answer(answer.numbers, response: answer.response, on: GHSCharacteristic.recordAccessControlPoint.uuid)
        default:
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
        }
    }

    /// Health Sensor Features' schedule descriptors take writes (``SimulatedGHSSensor/takeSchedule(_:for:device:)``);
    /// a schedule taken is indicated on Observation Schedule Changed.
    func writeDescriptor(
        _ value: [UInt8], to descriptor: BluetoothUUID, at index: Int, of characteristic: BluetoothUUID, in service: BluetoothUUID
    ) async throws {
        try link.check()
        let current = try gatt.writableDescriptor(descriptor, at: index, of: characteristic, in: service, device: address)
        let type = try GHSObservationSchedule.decode(current.value).type
        let schedule = try sensor.takeSchedule(value, for: type, device: address)
        feed.queue(schedule.encoded, on: GHSCharacteristic.observationScheduleChanged.uuid)
    }

    /// Report (0x01), delete (0x02), abort (0x03), number (0x04): all records (operator 0x01)
    /// or from a record number on (operator 0x03, filter type 0x01, uint32).
    private func recordAccess(_ request: [UInt8]) -> (numbers: [Int], response: [UInt8]) {
        let opCode = request.first ?? 0
        func respond(_ code: UInt8) -> [UInt8] { [0x06, 0x00, opCode, code] }
        if opCode == 0x03 { return ([], respond(0x01)) }
        guard [0x01, 0x02, 0x04].contains(opCode) else { return ([], respond(0x02)) }
        // The records' numbers an operator selects: all (0x01), at most (0x02) or at least (0x03)
        // a record number (filter type 0x01, uint32).
        var stored = sensor.stored(by: clock.now())
        switch request.dropFirst().first {
        case 0x01 where request.count == 2: break
        case 0x02 where request.count == 7 && request[2] == 0x01, 0x03 where request.count == 7 && request[2] == 0x01:
            let bound = Int(UInt32(request[3]) | UInt32(request[4]) << 8 | UInt32(request[5]) << 16 | UInt32(request[6]) << 24)
            stored = stored.filter { request[1] == 0x02 ? sensor.recordNumber($0) <= bound : sensor.recordNumber($0) >= bound }
        case 0x01, 0x02, 0x03: return ([], respond(0x09))
        default: return ([], respond(0x04))
        }
        switch opCode {
        case 0x04: return ([], [0x05, 0x00] + ACOMEncoder.le(UInt32(stored.count)))
        case 0x02:
            sensor.memory.withLock { $0.deleted.formUnion(stored) }
            return ([], respond(stored.isEmpty ? 0x06 : 0x01))
        default: return (stored, respond(stored.isEmpty ? 0x06 : 0x01))
        }
    }

    /// What a control point queued, then each live observation while live is on.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws -> AsyncThrowingStream<BLENotification, any Error> {
        try link.check()
        return feed.notifications(link: link, clock: clock)
    }
}
