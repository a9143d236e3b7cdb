import FoundationEssentials
import HealthModel
public import LinuxSystem
public import GatewayRuntime
import AsyncPrimitives
import Synchronization
import Dispatch

/// A pedometer that speaks HGP/1 on the master side of a real pty pair, for tests and the demo.
///
/// The gateway opens ``devicePath`` (the pty slave) like any serial port. The simulator answers
/// `ID?` with its ``Script/identity``, and every ``Script/interval`` of the injected clock
/// emits one cumulative reading (`$ST,steps,distance,cadence,time*hh`). Its script includes
/// one reboot (the counter restarts from zero, announced by an unsolicited `ID` line) and line
/// noise (binary garbage, a wrong checksum carrying a huge count, an overlong line, a reading
/// split across two writes).
///
/// Every reading after the first adds exactly ``Script/stepsPerTick`` steps as the gateway counts
/// them (the post-reboot reading is counted from zero), so after the gateway has received `n`
/// readings it has counted ``expectedSteps(readings:)`` steps. Thread-safe.
public final class PedometerSimulator: Sendable {
    /// What the simulated device does.
    public struct Script: Hashable, Sendable {
        public var identity: PedometerIdentity
        /// The counter before the first tick (the device walked before the gateway saw it).
        public var startCount: UInt32
        public var stepsPerTick: UInt32
        public var interval: Duration
        /// The tick whose reading is the first after a reboot (counter back to zero); nil for none.
        public var rebootAtTick: Int?
        /// Ticks before whose reading some noise is written.
        public var noiseAtTicks: Set<Int>
        /// Meters per step, for the cumulative distance.
        public var metersPerStep: Double

        public init(
            identity: PedometerIdentity = PedometerIdentity(
                manufacturer: "healthgate", model: "StepSim", serialNumber: "SIM-0001", firmwareVersion: "1.0.0"),
            startCount: UInt32 = 1000, stepsPerTick: UInt32 = 2, interval: Duration = .seconds(1),
            rebootAtTick: Int? = 10, noiseAtTicks: Set<Int> = [3, 6, 9, 12], metersPerStep: Double = 0.75
        ) {
            self.identity = identity
            self.startCount = startCount
            self.stepsPerTick = stepsPerTick
            self.interval = interval
            self.rebootAtTick = rebootAtTick
            self.noiseAtTicks = noiseAtTicks
            self.metersPerStep = metersPerStep
        }

        /// The demo script: 2 steps per second (120 steps/min), a reboot at tick 10, noise at
        /// ticks 3, 6, 9 and 12.
        public static let demo = Script()

        /// The counter value the device reports at `tick` (1-based).
        public func count(atTick tick: Int) -> UInt32 {
            if let reboot = rebootAtTick, tick >= reboot {
                return stepsPerTick &* UInt32(tick - reboot + 1)
            }
            return startCount &+ stepsPerTick &* UInt32(tick)
        }
    }

    /// The path the gateway opens: the pty slave.
    public var devicePath: String { pty.slavePath }
    /// The script being played.
    public let script: Script
    private let pty: PseudoTerminal
    private let clock: any GatewayClock
    private let logger: Logger
    private let queue = DispatchQueue(label: "healthgate.pedometer-simulator")
    /// Runs the pty writes, which may block, off the cooperative pool.
    private let writer = QueueExecutor(label: "healthgate.pedometer-simulator.write")
    private let state = Mutex<(ticks: Int, identificationRequests: Int)>((0, 0))

    /// Opens the pty pair.
    public init(script: Script = .demo, clock: any GatewayClock, logger: Logger) throws(SystemError) {
        self.script = script
        self.clock = clock
        self.logger = logger
        pty = try PseudoTerminal()
    }

    /// Readings emitted so far.
    public var ticksEmitted: Int { state.withLock { $0.ticks } }
    /// `ID?` requests answered so far.
    public var identificationRequests: Int { state.withLock { $0.identificationRequests } }

    /// The steps a gateway counts from the first `readings` readings of `script` (the first is
    /// its baseline).
    public static func expectedSteps(readings: Int, script: Script = .demo) -> UInt64 {
        UInt64(max(0, readings - 1)) * UInt64(script.stepsPerTick)
    }

    /// Plays the script: `ticks` readings (forever when nil), answering `ID?` meanwhile. Returns
    /// after the last tick; throws `CancellationError` when cancelled. Hangs up the pty on exit
    /// only if `hangUpAtEnd`.
    public func run(ticks: Int? = nil, hangUpAtEnd: Bool = false) async throws {
        try await pty.withMasterReader(queue: queue, hangUpAtEnd: hangUpAtEnd) { reader in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await self.answerRequests(reader) }
                group.addTask {
                    var tick = 0
                    while ticks.map({ tick < $0 }) ?? true {
                        try await self.clock.sleep(for: self.script.interval)
                        tick += 1
                        await self.emit(tick: tick)
                    }
                }
                // The ticker finishing (or throwing) ends the run; the answerer only ends with the pty.
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Closes the master: the gateway's reader sees the device hang up.
    public func hangUp() { pty.hangUp() }

    private func answerRequests(_ reader: ByteStreamReader) async {
        var line: [UInt8] = []
        for await event in reader.events {
            guard case .bytes(let bytes) = event else { break }
            for byte in bytes {
                if byte == UInt8(ascii: "\n") {
                    if String(decoding: line, as: UTF8.self).trimmed() == "ID?" {
                        state.withLock { $0.identificationRequests += 1 }
                        await write(HGPTextDecoder.sentence(identitySentence))
                    }
                    line.removeAll()
                } else if line.count < 64 {
                    line.append(byte)
                }
            }
        }
    }

    private var identitySentence: String {
        let id = script.identity
        return "ID,\(id.manufacturer ?? ""),\(id.model ?? ""),\(id.serialNumber ?? ""),\(id.firmwareVersion ?? "")"
    }

    private func emit(tick: Int) async {
        let count = script.count(atTick: tick)
        let distance = Double(count) * script.metersPerStep
        let cadence = script.interval.seconds > 0 ? Double(script.stepsPerTick) * 60 / script.interval.seconds : 0
        let time = Int64(clock.now().timeIntervalSince1970)
        let reading = HGPTextDecoder.sentence("ST,\(count),\(distance),\(cadence),\(time)")
        if tick == script.rebootAtTick {
            logger.info("simulated reboot: counter restarts from 0", device: script.identity.serialNumber)
            await write(HGPTextDecoder.sentence(identitySentence))
        }
        if script.noiseAtTicks.contains(tick) {
            switch script.noiseAtTicks.sorted().firstIndex(of: tick).map({ $0 % 4 }) ?? 0 {
            case 0:
                await write([0x00, 0xFF, 0x13, 0x7A, 0x7A, 0x0A])
            case 1:
                // A corrupted reading: the checksum does not match, so the huge count is rejected.
                await write("$ST,4000000000,1,1,1*00\r\n")
            case 2:
                await write(String(repeating: "x", count: 300) + "\r\n")
            default:
                let bytes = Array(reading.utf8)
                await write(Array(bytes[..<(bytes.count / 2)]))
                await write(Array(bytes[(bytes.count / 2)...]))
                state.withLock { $0.ticks = tick }
                return
            }
        }
        await write(reading)
        state.withLock { $0.ticks = tick }
    }

    private func write(_ text: String) async { await write(Array(text.utf8)) }

    /// Writes on the simulator's queue: the pty write may wait for room (poll), which must not
    /// happen on the cooperative pool.
    private func write(_ bytes: [UInt8]) async {
        await writer.run { [pty, logger, devicePath] in
            do {
                try pty.write(bytes)
            } catch {
                logger.warning("simulator write to \(devicePath) failed: \(error)")
            }
        }
    }
}

/// The demo's serial pedometer: a ``PedometerSimulator`` on a fresh pty and the source
/// configuration that reads it.
public enum SerialPedometerDemo {
    /// Opens a simulator with ``PedometerSimulator/Script/demo``.
    ///
    /// - Returns: `configuration`, the `config` object of a `serial-pedometer` source pointing at
    ///   the pty slave; and `run`, which plays the script until cancelled and then hangs up.
    ///   With the demo script the gateway counts 2 × (readings − 1) steps: 2 steps per second
    ///   after the first reading (for example 58 steps for 30 readings), including across the
    ///   simulated reboot. Each call gets a fresh serial number (`SIM-xxxxxxxx`), so a counter
    ///   stored by an earlier demo in the same state directory never applies.
    public static func start(
        clock: any GatewayClock, logger: Logger
    ) throws -> (configuration: JSONValue, run: @Sendable () async throws -> Void) {
        var script = PedometerSimulator.Script.demo
        let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 16, uppercase: true)
        script.identity.serialNumber = "SIM-" + String(repeating: "0", count: 8 - suffix.count) + suffix
        let simulator = try PedometerSimulator(script: script, clock: clock, logger: logger)
        let configuration = JSONValue.object([
            "path": .string(simulator.devicePath),
            "deviceName": .string("Demo pedometer"),
            "baudRate": .number(115_200),
        ])
        return (configuration, { try await simulator.run(ticks: nil, hangUpAtEnd: true) })
    }
}
