import CMosquitto
import Foundation
import GatewayRuntime
import HealthModel
import HealthStore
import MQTTBroker
import RemoteSinkKit
import SampleBus

/// The MQTT sink following the store: a store holding 100 000 heart-rate samples (written before
/// the timed region) → ``MQTTBrokerSink`` (the follower reads the changes after its cursor,
/// commits each batch's range, encodes the messages, publishes them at QoS 1 with a `uuid` user
/// property, up to 4 batches awaiting their PUBACKs, commits its cursor after each batch) → a
/// `mosquitto` on 127.0.0.1, against a plain libmosquitto loop publishing the same messages,
/// pre-encoded, to the same broker and waiting for every PUBACK.
///
/// Timed region, measured: from starting the sink until its cursor committed in the store reaches
/// the store's latest anchor (polled every millisecond), including its connect. Baseline: the
/// publish loop and the wait for the last PUBACK only; connecting and encoding are outside. The
/// load is checked: the sink must report every sample handled.
enum MQTTBenchmark {
    static let count = 100_000

    static func run(report: inout Report) async throws {
        report.section("MQTT sink following the store (QoS 1, one message per record, batches of 100)")
        report.line("Measured: `MQTTBrokerSink` (defaults: messages `record`, batchSize 100, maxInFlight 4) following a store of "
            + "\(Harness.format(Double(count))) heart-rate samples from anchor 0 until its committed cursor reaches the latest anchor: "
            + "changes read, ranges committed, HealthJSON messages, `mosquitto_publish_v5` at QoS 1 with the `uuid` user property, "
            + "every PUBACK, cursor commits → `mosquitto` (Debian's, no persistence, no subscriber) on 127.0.0.1. Baseline: the same "
            + "broker and library (libmosquitto, its own network thread), one client publishing the same messages (same topics, "
            + "payloads and user property, pre-encoded) in one loop and waiting for the last PUBACK. Runs alternate "
            + "baseline/measured; best of 3 each by wall time; CPU is this process's (the broker's is not counted).")
        report.line("")
        let environment = try BenchmarkEnvironment(name: "mqtt")
        defer { environment.removeAll() }
        let broker = try BenchmarkMosquitto(directory: environment.directory)
        defer { broker.stop() }
        try broker.waitUntilListening()

        let followed = try await FollowedStore(count: count, environment: environment)
        // The baseline's messages, as the sink makes them (outside the timed region).
        let encoder = HealthJSON.makeEncoder()
        let gateway = "bench"
        var messages: [PlainMosquittoPublisher.Message] = []
        for case .quantity(let sample) in followed.records {
            let device = sample.device?.localIdentifier ?? "unknown"
            messages.append(PlainMosquittoPublisher.Message(
                topic: "healthgate/\(gateway)/\(device)/\(sample.type.identifier)", uuid: sample.id.uuidString,
                payload: Array(try encoder.encode(sample))))
        }
        let payloadBytes = messages.reduce(0) { $0 + $1.payload.count }

        let baseline = try PlainMosquittoPublisher(port: broker.port)
        defer { baseline.close() }
        try baseline.publishAll(Array(messages.prefix(1000)))  // warm-up
        var bestBaseline = Double.infinity
        var bestMeasured = Double.infinity
        var bestBaselineCPU = Double.infinity
        var bestMeasuredCPU = Double.infinity
        var bestDiscovery = Double.infinity
        var bestDiscoveryCPU = Double.infinity
        for repetition in 0..<3 {
            let cpu0 = Harness.cpuSeconds()
            let t0 = ContinuousClock.now
            try baseline.publishAll(messages)
            bestBaseline = min(bestBaseline, (ContinuousClock.now - t0).benchmarkSeconds)
            bestBaselineCPU = min(bestBaselineCPU, Harness.cpuSeconds() - cpu0)

            // The sink as configured by default, then with Home Assistant discovery (each
            // record's sensors compared with what the connection announced).
            for discovery in [false, true] {
                let name = discovery ? "mqtt-ha-\(repetition)" : "mqtt-\(repetition)"
                var plugin = environment.plugin(name)
                plugin.gatewayName = gateway
                plugin.store = followed.store
                let sink = try MQTTBrokerSink(
                    settings: MQTTBrokerConfiguration(host: "127.0.0.1")
                        .with {
                            $0.port = broker.port
                            $0.homeAssistantDiscovery = discovery
                        }
                        .validated(in: plugin),
                    environment: plugin)
                let cpu = Harness.cpuSeconds()
                let (seconds, status) = try await followed.follow(sink, kind: MQTTBrokerSink.kind, name: name, environment: environment)
                let used = Harness.cpuSeconds() - cpu
                guard status?.records == count else {
                    throw MQTTBenchmarkFailure(
                        description: "\(name): \(status?.records ?? 0) records acknowledged (expected \(count)); "
                            + "last error: \(status?.lastError ?? "none")")
                }
                if discovery {
                    (bestDiscovery, bestDiscoveryCPU) = (min(bestDiscovery, seconds), min(bestDiscoveryCPU, used))
                } else {
                    (bestMeasured, bestMeasuredCPU) = (min(bestMeasured, seconds), min(bestMeasuredCPU, used))
                }
            }
        }
        let baseRate = Double(count) / bestBaseline
        let rate = Double(count) / bestMeasured
        let ratio = rate / baseRate
        report.table(
            ["samples", "measured: sink (wall)", "baseline: publish loop (wall)", "ratio", "CPU per sample measured / baseline"],
            [[
                Harness.format(Double(count)), Harness.format(rate) + " samples/s", Harness.format(baseRate) + " samples/s",
                String(format: "**%.2f×**", ratio),
                String(format: "%.1f µs / %.1f µs", bestMeasuredCPU / Double(count) * 1e6, bestBaselineCPU / Double(count) * 1e6),
            ]])
        report.line("Payloads: \(Harness.format(Double(payloadBytes / count))) bytes of HealthJSON per message.")
        let discoveryRate = Double(count) / bestDiscovery
        let discoveryRatio = discoveryRate / baseRate
        report.line("")
        report.table(
            ["samples", "measured: sink with homeAssistantDiscovery (wall)", "baseline: publish loop (wall)", "ratio",
             "against the sink without it", "CPU per sample"],
            [[
                Harness.format(Double(count)), Harness.format(discoveryRate) + " samples/s", Harness.format(baseRate) + " samples/s",
                String(format: "**%.2f×**", discoveryRatio), String(format: "%.2f×", discoveryRate / rate),
                String(format: "%.1f µs", bestDiscoveryCPU / Double(count) * 1e6),
            ]])
        let problems = environment.logSink.summary
        if problems.warnings + problems.errors > 0 {
            report.line("Warnings/errors logged by the sink: \(problems.warnings)/\(problems.errors), last: \(problems.last ?? "")")
        }
        report.line(String(format: "Budget: the MQTT sink ≥ 0.8× the plain libmosquitto QoS 1 loop: %.2f×, ", ratio)
            + report.verdict(ratio >= 0.8) + ".")
        report.line(String(format: "Budget: with Home Assistant discovery ≥ 0.8× the same loop: %.2f×, ", discoveryRatio)
            + report.verdict(discoveryRatio >= 0.8) + ".")
    }
}

struct MQTTBenchmarkFailure: Error, CustomStringConvertible {
    var description: String
}

/// Debian's `mosquitto` on 127.0.0.1 on a free port, anonymous, without persistence.
final class BenchmarkMosquitto {
    let port: Int
    private let process: Process

    init(directory: URL) throws {
        port = Int(try freeLoopbackPort())
        let configuration = directory.appendingPathComponent("mosquitto.conf")
        // `user root`: started as root, mosquitto would otherwise switch to the user `mosquitto`.
        try "listener \(port) 127.0.0.1\nallow_anonymous true\nuser root\n"
            .write(to: configuration, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", configuration.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Polls until the broker accepts connections (at most 10 s).
    func waitUntilListening() throws {
        for _ in 0..<1000 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(descriptor)
            if connected == 0 { return }
            usleep(10_000)
        }
        throw MQTTBenchmarkFailure(description: "mosquitto did not listen on \(port) (is the mosquitto package installed?)")
    }

    /// SIGKILL; Foundation's Process reaps the child.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
    }
}
