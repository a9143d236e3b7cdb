public import BLEProfileKit
import BLETransport
import FoundationEssentials
public import GatewayRuntime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth stack with simulated continuous glucose monitors, for `healthgate demo` and tests
/// without hardware (`healthgate demo cgm`, `02:00:00:00:09:01`…).
///
/// Each sensor's session started `historyMinutes` before the transport was made and it takes a
/// record every `recordIntervalMinutes` on the injected clock (time offsets 0, interval, …), with
/// trend, quality and an E2E-CRC: real CGM Measurement bytes, one record per notification. It
/// answers the Record Access Control Point (every record, or those from a time offset on), the
/// Specific Ops Control Point (start and stop the session, set the communication interval) and
/// takes a Session Start Time, which it has none of until a collector writes one. What a sensor
/// was told outlives its connections, as a real sensor's memory does. Deterministic.
public typealias SimulatedCGMTransport = SimulatedCentralTransport<CGMSimulationConfiguration>

extension CGMSimulationConfiguration {
    /// The sensors, their sessions started `historyMinutes` before now on `clock`.
    public func devices(clock: any GatewayClock) -> SimulatedDevices {
        let start = clock.now().addingTimeInterval(-Double(historyMinutes) * 60)
        let made = (0..<max(0, sensors)).map {
            SimulatedCGMSensor(index: $0, sessionStart: start, intervalMinutes: recordIntervalMinutes)
        }
        return SimulatedDevices(made, peripheral: \.peripheral) { SimulatedCGMConnection(sensor: $0, clock: clock) }
    }
}

/// One simulated sensor: its fixed facts and what it was told.
final class SimulatedCGMSensor: Sendable {
    let index: Int
    let peripheral: DiscoveredPeripheral
    let intervalMinutes: Int
    /// When the session runs from (the simulated truth), and whether it is stopped, and the
    /// Session Start Time value a collector wrote.
    let state: Mutex<(start: Date, stopped: Bool, startTime: [UInt8]?)>

    /// Feature: CGM trend (bit 15), quality (16), E2E-CRC (12), low battery detection (9),
    /// sensor malfunction detection (6); interstitial fluid (9) from subcutaneous tissue (5).
    static let features: UInt32 = 1 << 16 | 1 << 15 | 1 << 12 | 1 << 9 | 1 << 6
    static let typeAndLocation: UInt8 = 0x59

    init(index: Int, sessionStart: Date, intervalMinutes: Int) {
        self.index = index
        self.intervalMinutes = intervalMinutes
        state = Mutex((sessionStart, false, nil))
        peripheral = DiscoveredPeripheral(
            address: String(cFormat: "02:00:00:00:09:%02lX", index + 1),
            name: index == 0 ? "healthgate demo cgm" : "healthgate demo cgm \(index + 1)", rssi: -61,
            serviceUUIDs: [.continuousGlucoseMonitoringService, .deviceInformationService])
    }

    var gatt: SimulatedGATTDatabase {
        let cgm = CGMCharacteristic.allCases.map(\.uuid)
        let feature = UInt32(Self.features)
        return SimulatedGATTDatabase(
            services: [
                .deviceInformationService: [.manufacturerName, .modelNumber, .serialNumber],
                .batteryService: [.batteryLevel],
                .continuousGlucoseMonitoringService: cgm,
            ],
            readable: [
                .manufacturerName: Array("healthgate".utf8),
                .modelNumber: Array("Simulated CGM".utf8),
                .serialNumber: Array(String(cFormat: "SIM-CGM-%04ld", index + 1).utf8),
                .batteryLevel: [UInt8(88 - index % 60)],
                CGMCharacteristic.feature.uuid: E2ECRC.appending(
                    to: [UInt8(feature & 0xFF), UInt8((feature >> 8) & 0xFF), UInt8(feature >> 16), Self.typeAndLocation]),
                // 14 days.
                CGMCharacteristic.sessionRunTime.uuid: E2ECRC.appending(to: [0x50, 0x01]),
            ])
    }

    /// The time offsets of the records taken by `now`, oldest first (none while stopped).
    func offsets(at now: Date) -> [Int] {
        let (start, stopped) = state.withLock { ($0.start, $0.stopped) }
        guard !stopped else { return [] }
        let minutes = Int((now.timeIntervalSince(start) / 60 + 1e-9).rounded(.down))
        guard minutes >= 0 else { return [] }
        return Array(stride(from: 0, through: min(minutes, 0xFFFF), by: intervalMinutes))
    }

    /// When the record at `offset` is taken.
    func takenAt(_ offset: Int) -> Date {
        state.withLock { $0.start }.addingTimeInterval(Double(offset) * 60)
    }

    /// The record at `offset`: flags 0x03 (trend and quality), the concentration (SFLOAT mg/dL),
    /// the offset, the trend (SFLOAT, exponent -1, mg/dL/min), the quality (SFLOAT, exponent -1,
    /// %), and the E2E-CRC.
    func record(_ offset: Int) -> [UInt8] {
        let value = Self.milligramsPerDeciliter(offset, index: index)
        let previous = Self.milligramsPerDeciliter(offset - intervalMinutes, index: index)
        let trend = Int(((Double(value - previous) / Double(intervalMinutes)) * 10).rounded())
        let body: [UInt8] = [12, 0x03] + Self.sfloat(value, exponent: 0) + [UInt8(offset & 0xFF), UInt8(offset >> 8)]
            + Self.sfloat(trend, exponent: -1) + Self.sfloat(955 - (offset / intervalMinutes) % 7, exponent: -1)
        return E2ECRC.appending(to: body)
    }

    /// Blood glucose at `offset` (mg/dL): 85 to 135.
    static func milligramsPerDeciliter(_ offset: Int, index: Int) -> Int {
        110 + Int((25 * sin(Double(offset + index * 40) / 45)).rounded())
    }

    static func sfloat(_ mantissa: Int, exponent: Int) -> [UInt8] {
        let raw = UInt16(truncatingIfNeeded: exponent & 0xF) << 12 | UInt16(truncatingIfNeeded: mantissa) & 0x0FFF
        return [UInt8(raw & 0xFF), UInt8(raw >> 8)]
    }

    /// CGM Status now: the time offset, the Status octet (session stopped), no other
    /// annunciation, the E2E-CRC.
    func status(at now: Date) -> [UInt8] {
        let (start, stopped) = state.withLock { ($0.start, $0.stopped) }
        let offset = max(0, min(0xFFFF, Int(now.timeIntervalSince(start) / 60)))
        return E2ECRC.appending(to: [UInt8(offset & 0xFF), UInt8(offset >> 8), stopped ? 0x01 : 0x00, 0x00, 0x00])
    }

    /// What Session Start Time reads: what a collector wrote, or "not set" (all zeros, time zone
    /// and daylight saving offset 0).
    var sessionStartTime: [UInt8] {
        state.withLock { $0.startTime } ?? E2ECRC.appending(to: [0, 0, 0, 0, 0, 0, 0, 0, 0])
    }
}

/// A connection to a simulated sensor.
final class SimulatedCGMConnection: SimulatedConnection {
    let sensor: SimulatedCGMSensor
    let clock: any GatewayClock
    let link: SimulatedLink
    let gatt: SimulatedGATTDatabase
    /// Control point answers, then each record when the sensor takes it.
    private let feed: SimulatedRecordFeed

    init(sensor: SimulatedCGMSensor, clock: any GatewayClock) {
        self.sensor = sensor
        self.clock = clock
        link = SimulatedLink(address: sensor.peripheral.address)
        gatt = sensor.gatt
        feed = SimulatedRecordFeed(
            SimulatedRecordFeed.Records(
                characteristic: CGMCharacteristic.measurement.uuid, step: sensor.intervalMinutes,
                takenAt: { offset in
                    offset <= 0xFFFF && !sensor.state.withLock { $0.stopped } ? sensor.takenAt(offset) : nil
                },
                value: { sensor.record($0) }),
            first: 0)
    }

    func read(_ characteristic: BluetoothUUID, in service: BluetoothUUID) async throws -> [UInt8] {
        try link.check()
        switch CGMCharacteristic(uuid: characteristic) {
        case .status: return sensor.status(at: clock.now())
        case .sessionStartTime: return sensor.sessionStartTime
        default: return try gatt.read(characteristic, in: service, device: address)
        }
    }

    /// The two control points and Session Start Time take writes, each with its E2E-CRC (the
    /// sensor supports E2E-CRC); a write with a wrong or missing CRC is refused.
    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        try link.check()
        guard let target = CGMCharacteristic(uuid: characteristic), service == .continuousGlucoseMonitoringService else {
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
        }
        switch target {
        case .recordAccessControlPoint:
            let answer = recordAccess(value)
            feed.answer(answer.offsets, response: answer.response, on: CGMCharacteristic.recordAccessControlPoint.uuid)
        case .specificOpsControlPoint:
            try checkCRC(value)
            let opCode = value[0]
            let code: UInt8
            switch opCode {
            case 0x1A:
                let now = clock.now()
                sensor.state.withLock { $0 = (now, false, nil) }
                feed.live(from: 0, restart: true)
                code = 1
            case 0x1B:
                sensor.state.withLock { $0.stopped = true }
                code = 1
            case 0x01: code = value.count == 4 && value[1] > 0 ? 1 : 3
            default: code = 2
            }
            feed.queue(E2ECRC.appending(to: [0x1C, opCode, code]), on: CGMCharacteristic.specificOpsControlPoint.uuid)
        case .sessionStartTime:
            try checkCRC(value)
            guard value.count == 11 else { throw BLETransportError(.notSupported, device: address, "Session Start Time is 11 octets with its CRC") }
            sensor.state.withLock { $0.startTime = value }
        default:
            throw BLETransportError(.notSupported, device: address, "\(target.displayName) is not writable")
        }
    }

    private func checkCRC(_ value: [UInt8]) throws {
        guard value.count >= 3, E2EVerdict(sent: UInt16(value[value.count - 2]) | UInt16(value[value.count - 1]) << 8, over: value.dropLast(2)) == .valid
        else { throw BLETransportError(.notSupported, device: address, "write without a valid E2E-CRC refused") }
    }

    /// "Report stored records": all (operator 0x01) or from a time offset on (operator 0x03,
    /// filter type 0x01), answered with success or "no records found"; anything else with "op
    /// code not supported", "operator not supported" or "operand not supported".
    private func recordAccess(_ request: [UInt8]) -> (offsets: [Int], response: [UInt8]) {
        let opCode = request.first ?? 0
        guard opCode == 0x01 else { return ([], [0x06, 0x00, opCode, 0x02]) }
        let first: Int
        switch request.dropFirst().first {
        case 0x01 where request.count == 2: first = 0
        case 0x03 where request.count == 5 && request[2] == 0x01: first = Int(UInt16(request[3]) | UInt16(request[4]) << 8)
        case 0x01, 0x03: return ([], [0x06, 0x00, opCode, 0x09])
        default: return ([], [0x06, 0x00, opCode, 0x04])
        }
        let offsets = sensor.offsets(at: clock.now()).filter { $0 >= first }
        return (offsets, [0x06, 0x00, opCode, offsets.isEmpty ? 0x06 : 0x01])
    }

    /// First what a control point request queued, else each record when the sensor takes it.
    /// Records taken before the subscription come only when asked for.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws -> AsyncThrowingStream<BLENotification, any Error> {
        try link.check()
        feed.live(from: (sensor.offsets(at: clock.now()).last.map { $0 + sensor.intervalMinutes }) ?? 0)
        return feed.notifications(link: link, clock: clock)
    }

}
