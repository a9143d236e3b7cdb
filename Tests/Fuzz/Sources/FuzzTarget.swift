import BLEProfileKit
import BuiltinPlugins
import GATTDecoding
import Foundation
import GatewayControl
import HTTPRepository
import HealthModel
import HeartRateMonitor
import SQLiteStore
import GatewayRuntime
import SampleBus
import SerialDevices
import SerialPedometer
import Workouts
import WorkoutRuntime

/// The fuzz targets: each takes arbitrary bytes and must return (an error is an answer) without
/// crashing, trapping or touching memory it does not own. Seed corpora live in
/// `Tests/Fuzz/<rawValue>/corpus`. Beyond "no crash", each target checks properties a correct
/// answer has; `check` traps when one fails, so libFuzzer keeps the input.
enum FuzzTarget: String, CaseIterable {
    /// Every GATT decoder (Heart Rate Measurement, RSC Measurement, Body Sensor Location, Battery
    /// Level), the hex notation the CLI accepts, and the heartbeat series built from the RR
    /// intervals decoded.
    case gatt
    /// The fitness-equipment decoders (CSC, Cycling Power, Fitness Machine), the Fitness
    /// Machine reassembler and the speed and cadence calculator.
    case fitness
    /// The health-profile decoders (weight, blood pressure, temperature, pulse oximetry, glucose)
    /// and the mapper from what they decode to records.
    case health
    /// HGP/1: the line framer and the sentence decoder, fed the input in two chunks split where
    /// the first byte says, so partial lines are exercised.
    case hgp1
    /// HealthKit's unit-string grammar.
    case unit
    /// A configuration file's bytes: the gateway's keys, then each plugin's `config` object
    /// decoded by the plugin's own Configuration type.
    case configuration
    /// A configuration built from the input: each pair of bytes sets one numeric key of some
    /// plugin (or of the gateway) to a number at the edge of the types such keys fill, and the
    /// result is built through the full catalog (sinks too, in a scratch directory). Random
    /// bytes rarely spell `1e300` in the right place; this target always does.
    case configurationNumbers = "configuration-numbers"
    /// One control-socket request line, and the typed workout command it may hold.
    case controlRequest = "control-request"
    /// Every payload decoder of every Bluetooth profile in the catalog, as `healthgate decode`
    /// runs them: the first byte picks the decoder, the rest is the payload. Each answer is an
    /// error or a JSON object.
    case profiles
    /// The control socket's line server on a real socket: a client sends the input in chunks
    /// and reads every answer, or leaves mid-way; the server must answer exactly as its contract
    /// says, and answer the next client (``LineServerTarget``).
    case lineServer = "line-server"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .gatt: Self.gatt(bytes)
        case .fitness: FitnessTarget.run(bytes)
        case .health: HealthTarget.run(bytes)
        case .hgp1: Self.hgp1(bytes)
        case .unit: Self.unit(bytes)
        case .configuration: Self.configuration(bytes)
        case .configurationNumbers: ConfigurationNumbers.run(bytes)
        case .controlRequest: Self.controlRequest(bytes)
        case .profiles: Self.profiles(bytes)
        case .lineServer: LineServerTarget.run(bytes)
        }
    }

    /// Stops the run with `message` when a property does not hold; libFuzzer saves the input.
    static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition {
            FileHandle.standardError.write(Data("property failed: \(message())\n".utf8))
            abort()
        }
    }

    private static func gatt(_ bytes: [UInt8]) {
        if let measurement = try? HeartRateMeasurementDecoder.decode(bytes) {
            check(measurement.rrIntervals.count <= bytes.count / 2, "more RR intervals than bytes allow")
            var builder = HeartbeatSeriesBuilder(maximumBeats: 16, maximumDuration: 5)
            var chunks: [HeartbeatSeriesBuilder.Chunk] = []
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            // The same payload at a few arrival times, some too early for its RR intervals, so
            // the builder's re-anchoring runs too.
            for (index, offset) in [0.0, 0.2, 0.4, 30, 30.1].enumerated() {
                let date = start.addingTimeInterval(offset)
                chunks += builder.add(rrIntervals: measurement.rrIntervals, receivedAt: date)
                if let pending = builder.pendingChunk {
                    check(pending.end <= date.addingTimeInterval(3), "a beat lies more than 3 s after its notification")
                }
                if index == 3 { builder.markGap() }
            }
            if let last = builder.finishSegment() { chunks.append(last) }
            for (earlier, later) in zip(chunks, chunks.dropFirst()) {
                check(earlier.end <= later.start, "a chunk starts before the one before it ends")
            }
            for chunk in chunks {
                check(chunk.start <= chunk.end, "a chunk ends before it starts")
                check(zip(chunk.beats, chunk.beats.dropFirst()).allSatisfy { $0.timeSinceSeriesStart <= $1.timeSinceSeriesStart },
                      "beats out of order")
                check(chunk.end <= start.addingTimeInterval(30.1 + 3), "a beat lies more than 3 s after its notification")
            }
        }
        if let measurement = try? RSCMeasurementDecoder.decode(bytes) {
            check(measurement.instantaneousSpeed >= 0, "negative speed")
            // The same measurement repeatedly, with gaps from none to a minute: windows hold
            // finite, non-negative amounts, whatever the counter and cadence say.
            var aggregator = RunningAggregator(windowSeconds: 5)
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            var windows: [RunningAggregator.Window] = []
            for offset in [0.0, 0, 1, 2.5, 9, 70] {
                if let window = aggregator.add(measurement, at: start.addingTimeInterval(offset)).window { windows.append(window) }
            }
            if let last = aggregator.finishSegment() { windows.append(last) }
            for window in windows {
                check(window.distance.isFinite && window.distance >= 0 && window.steps >= 0, "window \(window)")
                check(window.start <= window.end, "window ends before it starts")
            }
        }
        _ = try? BodySensorLocationDecoder.decode(bytes)
        if let level = try? BatteryLevelDecoder.decode(bytes) {
            check((0...100).contains(level), "battery level \(level) outside 0…100")
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if let parsed = try? HexPayload.parse(text) {
            check(parsed.count <= bytes.count / 2, "more bytes than hex digits allow")
        }
    }

    private static func hgp1(_ bytes: [UInt8]) {
        guard let first = bytes.first else { return }
        let body = bytes.dropFirst()
        let split = body.startIndex + Int(first) % (body.count + 1)
        for maximum in [16, 256] {
            guard var decoder = PedometerProtocols.decoder(named: HGPTextDecoder.name, maximumLineLength: maximum) else {
                check(false, "the hgp1 decoder is not registered")
                return
            }
            var results = decoder.feed(Array(body[..<split]))
            results += decoder.feed(Array(body[split...]))
            check(results.count <= body.count + 1, "more frames than bytes")
        }
        let decoder = HGPTextDecoder()
        _ = try? decoder.decode(frame: Array(body))
        var framer = LengthPrefixedFramer(maximumLength: Int(first))
        for result in framer.append(body) {
            if case .success(let frame) = result {
                check(!frame.isEmpty && frame.count <= framer.maximumLength, "frame of \(frame.count) bytes, limit \(framer.maximumLength)")
            }
        }
    }

    private static func unit(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let unit = try? HealthUnit(text) else { return }
        // What parses once parses again to the same dimension, and converts to itself unchanged.
        guard let again = try? HealthUnit(unit.unitString) else {
            check(false, "\(unit.unitString) does not parse a second time")
            return
        }
        check(again.dimension == unit.dimension, "\(unit.unitString) changes dimension when parsed again")
        if let value = try? unit.convert(1, to: again) {
            check(value == 1 || value.isNaN, "\(unit.unitString) converts 1 to \(value) in itself")
        }
    }

    private static func configuration(_ bytes: [UInt8]) {
        guard let configuration = try? GatewayConfiguration.parse(Data(bytes), origin: "fuzz.json") else { return }
        // Exactly what `config check` runs, and `run` before it builds anything: strict decoding
        // and each plugin's validation, for sources and sinks alike, with no I/O.
        _ = try? ConfigurationNumbers.catalog.validate(configuration) { name in
            PluginEnvironment(
                name: name, logger: Logger(label: name, sink: DiscardingLogSink(), level: .error), clock: SystemClock(),
                ids: SampleIDGenerator(seed: 1), paths: scratchPaths, variables: [:])
        }
        // The participants of group workouts, each with a profile, as `config check` checks them.
        _ = try? ParticipantRoster.decode(configuration.participants, defaultProfile: UserProfile())
    }

    /// Directories no source touches while it is built; they need not exist.
    private static let scratchPaths = GatewayPaths(
        dataDirectory: URL(fileURLWithPath: "/nonexistent/healthgate-fuzz/data"),
        stateDirectory: URL(fileURLWithPath: "/nonexistent/healthgate-fuzz/state"),
        runtimeDirectory: URL(fileURLWithPath: "/nonexistent/healthgate-fuzz/runtime"))

    private static func profiles(_ bytes: [UInt8]) {
        // Built per input, as the decode command builds them: nothing held for the process's life.
        let decoders = BuiltinCatalog.make().payloadDecoders
        guard let selector = bytes.first, !decoders.isEmpty else { return }
        let decoder = decoders[Int(selector) % decoders.count]
        guard let output = try? decoder.decode(Array(bytes.dropFirst())) else { return }
        let encoded = try? JSONEncoder().encode(output)
        check(encoded != nil, "\(decoder.name): a decoded payload does not encode")
        if let encoded {
            check(encoded.first == UInt8(ascii: "{"), "\(decoder.name): the answer is not a JSON object")
        }
    }

    private static func controlRequest(_ bytes: [UInt8]) {
        // The server's parse step: one line, JSON, a ControlRequest.
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(bytes)) else { return }
        let encoded = try? JSONEncoder().encode(request)
        check(encoded != nil, "a decoded request does not encode")
        if let encoded {
            check((try? JSONDecoder().decode(ControlRequest.self, from: encoded)) == request, "a request changes on a round trip")
        }
        // The typed workout commands the daemon and the CLI share, and the profile argument.
        if let workout = try? WorkoutControlRequest(command: request.command, arguments: request.arguments) {
            let again = try? WorkoutControlRequest(command: workout.command, arguments: workout.arguments)
            check(again == workout, "\(workout) changes when written and read back")
        }
        _ = try? UserProfile.decode(request.arguments)
    }
}

/// Drops every log entry: the targets judge results, not messages.
struct DiscardingLogSink: LogSink {
    func write(_ entry: LogEntry) {}
}
