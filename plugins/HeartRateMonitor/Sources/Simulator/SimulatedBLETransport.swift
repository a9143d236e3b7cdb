public import GatewayRuntime
public import BLEProfileKit
import BLETransport
import FoundationEssentials
import HealthModel
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A Bluetooth stack with simulated devices, for `healthgate demo` and tests without hardware.
///
/// It "discovers" `settings.heartRateMonitors` heart-rate monitors (`healthgate demo HRM`,
/// addresses `02:00:00:00:00:01`…, locally administered) and `settings.footPods` running foot
/// pods (`02:00:00:00:01:01`…), with Device Information, battery and body sensor location. Once
/// subscribed, each device sends REAL payload bytes at `notificationsPerSecond`, paced by the
/// injected clock: the source decodes them through the same decoders as a real device's.
/// The heart rate drifts plausibly between about 60 and 100 bpm, RR intervals follow it, energy
/// expended accumulates. Deterministic: no randomness.
public typealias SimulatedBLETransport = SimulatedCentralTransport<HeartRateSimulationConfiguration>

extension HeartRateSimulationConfiguration {
    /// The monitors (the last ones named after `polarDeviceIDs`, in order), then the foot pods.
    public func devices(clock: any GatewayClock) -> SimulatedDevices {
        let monitors = max(0, heartRateMonitors)
        let polarIDs = polarDeviceIDs ?? []
        let devices = (0..<monitors).map { index in
            // The last monitors take the Polar ids, in order.
            let polar = index - (monitors - polarIDs.count)
            return SimulatedHeartRateDevice(
                kind: .heartRateMonitor, index: index, polarDeviceID: polarIDs.indices.contains(polar) ? polarIDs[polar] : nil)
        } + (0..<max(0, footPods)).map { SimulatedHeartRateDevice(kind: .footPod, index: $0) }
        let period = Duration.seconds(1 / notificationsPerSecond)
        return SimulatedDevices(devices, peripheral: \.peripheral) { SimulatedHeartRateConnection(device: $0, clock: clock, period: period) }
    }
}

/// One simulated peripheral's fixed facts.
struct SimulatedHeartRateDevice: Sendable {
    enum Kind: Sendable { case heartRateMonitor, footPod }
    let kind: Kind
    let index: Int
    let peripheral: DiscoveredPeripheral

    /// `polarDeviceID`: the monitor is named like a Polar strap of that id (`Polar H10 <id>`).
    init(kind: Kind, index: Int, polarDeviceID: String? = nil) {
        self.kind = kind
        self.index = index
        let number = index + 1
        switch kind {
        case .heartRateMonitor:
            peripheral = DiscoveredPeripheral(
                address: Self.address(prefix: "02:00:00:00:00:", number),
                name: polarDeviceID.map { "Polar H10 \($0)" } ?? (index == 0 ? "healthgate demo HRM" : "healthgate demo HRM \(number)"),
                rssi: -50,
                serviceUUIDs: [.heartRateService, .batteryService, .deviceInformationService])
        case .footPod:
            peripheral = DiscoveredPeripheral(
                address: Self.address(prefix: "02:00:00:00:01:", number),
                name: index == 0 ? "healthgate demo foot pod" : "healthgate demo foot pod \(number)", rssi: -60,
                serviceUUIDs: [.runningSpeedAndCadenceService, .batteryService, .deviceInformationService])
        }
    }

    /// `prefix` and the number in upper-case hex, at least two digits (`%02X`: device 256 and
    /// later get three digits, which keeps every address unique).
    private static func address(prefix: String, _ number: Int) -> String {
        let hex = String(number, radix: 16, uppercase: true)
        return prefix + (hex.count == 1 ? "0" + hex : hex)
    }

    /// Readable characteristic values.
    var readable: [BluetoothUUID: [UInt8]] {
        var values: [BluetoothUUID: [UInt8]] = [
            .manufacturerName: Array("healthgate".utf8),
            .modelNumber: Array((kind == .heartRateMonitor ? "Simulated HRM" : "Simulated foot pod").utf8),
            .serialNumber: Array(String(cFormat: kind == .heartRateMonitor ? "SIM-HRM-%04ld" : "SIM-POD-%04ld", index + 1).utf8),
            .hardwareRevision: Array("1".utf8),
            .firmwareRevision: Array("1.0.0".utf8),
            .softwareRevision: Array("healthgate-sim 1".utf8),
            // Stays in 8…87 % for any number of devices (the transport itself has no device limit).
            .batteryLevel: [UInt8(87 - index % 80)],
        ]
        if kind == .heartRateMonitor { values[.bodySensorLocation] = [UInt8(HeartRateSensorLocation.chest.rawValue)] }
        return values
    }

    var services: [BluetoothUUID: [BluetoothUUID]] {
        var services: [BluetoothUUID: [BluetoothUUID]] = [
            .deviceInformationService: [
                .manufacturerName, .modelNumber, .serialNumber, .hardwareRevision, .firmwareRevision, .softwareRevision,
            ],
            .batteryService: [.batteryLevel],
        ]
        switch kind {
        case .heartRateMonitor:
            services[.heartRateService] = [.heartRateMeasurement, .bodySensorLocation, .heartRateControlPoint]
        case .footPod:
            services[.runningSpeedAndCadenceService] = [.rscMeasurement, .rscFeature]
        }
        return services
    }
}

/// A connection to a simulated device.
final class SimulatedHeartRateConnection: SimulatedConnection {
    let device: SimulatedHeartRateDevice
    let clock: any GatewayClock
    let period: Duration
    private let generator: Mutex<PayloadGenerator>
    let link: SimulatedLink
    let gatt: SimulatedGATTDatabase

    init(device: SimulatedHeartRateDevice, clock: any GatewayClock, period: Duration) {
        self.device = device
        self.clock = clock
        self.period = period
        generator = Mutex(PayloadGenerator(interval: period.seconds, seed: device.index))
        link = SimulatedLink(address: device.peripheral.address)
        gatt = SimulatedGATTDatabase(services: device.services, readable: device.readable)
    }

    func write(_ value: [UInt8], to characteristic: BluetoothUUID, in service: BluetoothUUID) async throws {
        try link.check()
        guard characteristic == .heartRateControlPoint, device.kind == .heartRateMonitor else {
            throw BLETransportError(.notSupported, device: address, "\(characteristic) is not writable")
        }
        // Control Point 0x01 resets Energy Expended; anything else is "Op Code not supported".
        guard value == [0x01] else {
            throw BLETransportError(.failed, device: address, "control point op code not supported")
        }
        generator.withLock { $0.energyJoules = 0 }
    }

    /// Each simulated device has one notifying characteristic (Heart Rate Measurement or RSC
    /// Measurement); asking for any other throws `.notSupported`. Nothing is buffered: the stream
    /// makes each payload when the consumer asks for it and the device's due time has come, so
    /// no notification is ever dropped.
    func notifications(of characteristics: [GATTCharacteristicID]) async throws
        -> AsyncThrowingStream<BLENotification, any Error>
    {
        try link.check()
        let notifying = GATTCharacteristicID(
            device.kind == .heartRateMonitor ? .heartRateMeasurement : .rscMeasurement,
            in: device.kind == .heartRateMonitor ? .heartRateService : .runningSpeedAndCadenceService)
        guard !characteristics.isEmpty, characteristics.allSatisfy({ $0 == notifying }) else {
            let other = characteristics.first { $0 != notifying }
            throw BLETransportError(.notSupported, device: address, "\(other.map(String.init(describing:)) ?? "nothing") does not notify")
        }
        let heartRate = device.kind == .heartRateMonitor
        let clock = self.clock
        let schedule = NotificationSchedule(device: device.index, period: period, start: clock.now())
        let sent = Mutex<Int64>(0)
        // Unfolding: each `next()` waits for the device's next due time on the injected clock
        // and makes one payload, stamped when it is made.
        return AsyncThrowingStream(unfolding: { [self] in
            let count = sent.withLock { count -> Int64 in
                defer { count += 1 }
                return count
            }
            try await clock.sleep(for: schedule.wait(for: count, now: clock.now()))
            guard link.isOpen else { return nil }
            let value = generator.withLock { heartRate ? $0.nextHeartRatePayload() : $0.nextRunningPayload() }
            return BLENotification(characteristic: notifying.characteristic, value: value, receivedAt: clock.now())
        })
    }

}

/// Makes the payload bytes of a simulated device, one notification at a time.
struct PayloadGenerator: Sendable {
    let interval: Double
    let phase: Double
    var time = 0.0
    var lastBeat = 0.0
    var energyJoules = 0.0
    var distanceMetres = 0.0

    init(interval: Double, seed: Int) {
        self.interval = interval
        phase = Double(seed) * 37
    }

    /// Beats per minute at simulated time `t`: a slow wave (5 min) plus a faster one (23 s).
    func heartRate(at t: Double) -> Double {
        let u = t + phase
        return 78 + 14 * sin(2 * .pi * u / 300) + 4 * sin(2 * .pi * u / 23)
    }

    /// Heart Rate Measurement: flags 0x1E (uint8 HR, contact supported and detected, energy
    /// expended, RR intervals), HR, energy (kJ), then the RR intervals of the beats since the
    /// last notification, at most 8 so the payload fits the default 20-byte ATT payload. When no
    /// beat completed since the last notification (any rate above the heart rate), the RR flag
    /// is clear (0x0E): the flag promises at least one interval (HRS v1.0 §3.1.1.5).
    mutating func nextHeartRatePayload() -> [UInt8] {
        time += interval
        var intervals: [UInt16] = []
        while intervals.count < 8 {
            let rr = 60 / heartRate(at: lastBeat)
            guard lastBeat + rr <= time else { break }
            lastBeat += rr
            intervals.append(UInt16((rr * 1024).rounded()))
        }
        if intervals.count == 8 { lastBeat = max(lastBeat, time - 60 / heartRate(at: time)) }
        let bpm = UInt8(heartRate(at: time).rounded())
        // Roughly 6 W at rest rising with heart rate; the sensor's own estimate is as coarse.
        energyJoules += (6 + 0.6 * max(0, Double(bpm) - 60)) * interval
        let kilojoules = UInt16(min(65535, energyJoules / 1000))
        var payload: [UInt8] = [intervals.isEmpty ? 0x0E : 0x1E, bpm, UInt8(kilojoules & 0xFF), UInt8(kilojoules >> 8)]
        for rr in intervals { payload += [UInt8(rr & 0xFF), UInt8(rr >> 8)] }
        return payload
    }

    /// RSC Measurement: flags 0x07 (stride, total distance, running), speed around 2.9 m/s,
    /// cadence around 166 steps/min, stride length = speed / step rate.
    mutating func nextRunningPayload() -> [UInt8] {
        time += interval
        let u = time + phase
        let speed = 2.9 + 0.4 * sin(2 * .pi * u / 90)
        let cadence = 166 + 6 * sin(2 * .pi * u / 90)
        distanceMetres += speed * interval
        let speedRaw = UInt16((speed * 256).rounded())
        let strideRaw = UInt16((speed / (cadence / 60) * 100).rounded())
        let distanceRaw = UInt32(truncatingIfNeeded: Int64(distanceMetres * 10))
        return [
            0x07, UInt8(speedRaw & 0xFF), UInt8(speedRaw >> 8), UInt8(cadence.rounded()),
            UInt8(strideRaw & 0xFF), UInt8(strideRaw >> 8),
            UInt8(distanceRaw & 0xFF), UInt8((distanceRaw >> 8) & 0xFF), UInt8((distanceRaw >> 16) & 0xFF),
            UInt8(distanceRaw >> 24),
        ]
    }
}
