import BuiltinPlugins
import Foundation
import HTTPRepository
import HealthModel
import HealthStore
import HeartRateMonitor
import SQLiteStore
import GatewayRuntime
import SampleBus
import SerialPedometer

/// The `configuration-numbers` target: a valid configuration with every plugin, whose numeric
/// keys the input sets to edge values, built through the full catalog.
enum ConfigurationNumbers {
    /// Numeric keys by section (`""` is the top level, `queue` the SQLite sink's queue), as the plugins'
    /// sample-config.json files spell them.
    static let keys: [(section: String, path: String)] = [
        ("", "shutdownTimeoutSeconds"), ("", "storeWaitSeconds"),
        ("queue", "capacity"),
        ("ble-heart-rate", "heartbeatSeriesMaxBeats"), ("ble-heart-rate", "heartbeatSeriesSeconds"),
        ("ble-heart-rate", "maxDevices"), ("ble-heart-rate", "reconnect.initialDelaySeconds"),
        ("ble-heart-rate", "reconnect.maxDelaySeconds"), ("ble-heart-rate", "reconnect.multiplier"),
        ("ble-heart-rate", "runningWindowSeconds"), ("ble-heart-rate", "simulation.footPods"),
        ("ble-heart-rate", "simulation.heartRateMonitors"), ("ble-heart-rate", "simulation.notificationsPerSecond"),
        ("serial-pedometer", "baudRate"), ("serial-pedometer", "dataBits"), ("serial-pedometer", "gapThresholdSeconds"),
        ("serial-pedometer", "identificationTimeoutSeconds"), ("serial-pedometer", "maxLineLength"),
        ("serial-pedometer", "reconnectIntervalSeconds"), ("serial-pedometer", "stopBits"),
        ("serial-pedometer", "wrapTolerance"),
        ("sqlite", "batchSize"), ("sqlite", "batchWindowSeconds"),
        ("http-repository", "batchIntervalSeconds"), ("http-repository", "batchSize"),
        ("http-repository", "follow.maxAgeSeconds"), ("http-repository", "follow.maxBytes"),
        ("http-repository", "maxInFlight"),
        ("http-repository", "retry.initialDelaySeconds"), ("http-repository", "retry.jitter"),
        ("http-repository", "retry.maxDelaySeconds"), ("http-repository", "timeoutSeconds"),
    ]

    /// Numbers at the edges: beyond Int64 and UInt64, beyond Double's range of whole numbers,
    /// tiny, negative, fractional, and ordinary ones.
    static let values = [
        "1e300", "-1e300", "1e18", "9223372036854775807", "-9223372036854775808", "18446744073709551616",
        "9.3e18", "1e-300", "0", "-1", "0.5", "1.5", "2147483648", "4294967296", "65536", "1", "2", "60", "1000",
    ]

    static func run(_ bytes: [UInt8]) {
        var settings: [String: [(path: [String], value: String)]] = [:]
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let key = keys[Int(bytes[index]) % keys.count]
            settings[key.section, default: []].append(
                (key.path.split(separator: ".").map(String.init), values[Int(bytes[index + 1]) % values.count]))
            index += 2
        }
        let text = configurationText(settings)
        guard let configuration = try? GatewayConfiguration.parse(Data(text.utf8), origin: "fuzz.json") else { return }
        _ = try? catalog.instantiate(configuration) { name in
            PluginEnvironment(
                name: name, logger: Logger(label: name, sink: DiscardingLogSink(), level: .error), clock: SystemClock(),
                ids: SampleIDGenerator(seed: 1), paths: scratch.paths, variables: [:], store: scratch.store)
        }
    }

    /// The configuration text: each plugin's object with the chosen keys set (a later setting
    /// of the same key wins; JSON with a key twice is itself a case the parser must handle).
    static func configurationText(_ settings: [String: [(path: [String], value: String)]]) -> String {
        func object(_ entries: [(path: [String], value: String)], base: [String: String] = [:]) -> String {
            var leaves = base
            var nested: [String: [(path: [String], value: String)]] = [:]
            for entry in entries {
                if entry.path.count == 1 {
                    leaves[entry.path[0]] = entry.value
                } else {
                    nested[entry.path[0], default: []].append((Array(entry.path.dropFirst()), entry.value))
                }
            }
            var members = leaves.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }
            members += nested.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \(object($0.value))" }
            return "{" + members.joined(separator: ", ") + "}"
        }
        let queue = settings["queue"].map { ", \"queue\": " + object($0) } ?? ""
        let sources = [
            "{\"kind\": \"ble-heart-rate\", \"config\": " + object(settings["ble-heart-rate"] ?? [], base: ["transport": "\"simulated\""]) + "}",
            "{\"kind\": \"serial-pedometer\", \"config\": " + object(settings["serial-pedometer"] ?? [], base: ["path": "\"/dev/null\""]) + "}",
        ]
        let sinks = [
            "{\"kind\": \"sqlite\"\(queue), \"config\": " + object(settings["sqlite"] ?? []) + "}",
            "{\"kind\": \"http-repository\", \"config\": "
                + object(settings["http-repository"] ?? [], base: ["url": "\"http://127.0.0.1:9/v1\""]) + "}",
        ]
        let top = (settings[""] ?? []).map { "\"\($0.path[0])\": \($0.value), " }.joined()
        return "{\(top)\"sources\": [\(sources.joined(separator: ", "))], \"sinks\": [\(sinks.joined(separator: ", "))]}"
    }

    /// Every plugin: the executable's own catalog.
    static let catalog = BuiltinCatalog.make()

    /// A private directory for the files sinks create while they are built, made once per run.
    static let scratch = Scratch()

    struct Scratch: Sendable {
        let directory: URL
        /// The store sinks commit into, opened once per run.
        let store: HealthStore
        var paths: GatewayPaths { GatewayPaths(dataDirectory: directory, stateDirectory: directory, runtimeDirectory: directory) }

        init() {
            let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
            directory = URL(fileURLWithPath: base).appendingPathComponent("healthgate-fuzz-\(getpid())")
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                FileHandle.standardError.write(Data("cannot create \(directory.path): \(error)\n".utf8))
                exit(70)
            }
            do {
                store = try HealthStore(path: directory.appendingPathComponent("samples.sqlite").path)
            } catch {
                FileHandle.standardError.write(Data("cannot open the store in \(directory.path): \(error)\n".utf8))
                exit(70)
            }
        }
    }
}
