import Foundation
import HealthModel
import SampleBus
import SerialPedometer

/// `healthgate demo`: the gateway with simulated devices that speak the real protocols.
enum DemoCommand {
    static let command = Command(
        name: "demo", summary: "Run the gateway with simulated devices that speak the real protocols.",
        usage: "demo [--duration SECONDS] [--db PATH] [--quiet]",
        discussion: """
            Starts a simulated Bluetooth heart-rate monitor that emits real Heart Rate Measurement \
            (0x2A37) payloads with RR intervals and energy expended, decoded by the same decoder real \
            devices use, and a simulated serial pedometer on a real pseudo-terminal that speaks the \
            documented pedometer protocol. Samples go into the SQLite store (default \
            $XDG_DATA_HOME/healthgate/samples.sqlite) and a live line per sample is printed.

            The daemon's control socket is up while the demo runs, so 'healthgate status' and \
            'healthgate workout …' work against it. Stop with Ctrl-C, or use --duration.
            """,
        options: [
            OptionSpec(name: "duration", value: "SECONDS", help: "Stop gracefully after this many seconds."),
            OptionSpec(name: "db", value: "PATH", help: "The SQLite store (default: the data directory's samples.sqlite)."),
            OptionSpec(name: "config", value: "FILE", help: "A configuration whose other settings (profile, socket) to use."),
            OptionSpec(name: "quiet", value: nil, help: "Do not print a line per sample."),
        ]
    ) { arguments, context in
        let duration = try arguments.double("duration")
        if let duration, duration <= 0 { throw CommandError(.usage, "--duration must be positive") }
        var configuration = try ConfigurationLocator.load(explicit: arguments.value("config"), variables: context.variables)
        let database = arguments.value("db")
            ?? context.paths.dataDirectory.appendingPathComponent("samples.sqlite").path
        var runner = GatewayRunner(context: context)
        let demo = try DemoDevices.make(context: context)
        configuration.sources = demo.sources
        configuration.sinks = [PluginConfiguration(kind: "sqlite", config: .object(["path": .string(database)]))]
        runner.background = demo.background
        if !arguments.flag("quiet") {
            runner.extraSinks = [ConfiguredSink(
                name: "console", kind: "console", queue: QueueConfiguration(capacity: 1000, policy: .dropOldest),
                sink: LiveLineSink(output: context.output))]
        }
        context.printError("healthgate demo: simulated devices → \(database)")
        return try await runner.run(configuration: configuration, duration: duration)
    }
}

/// The simulated devices of the demo: configurations for the real plugins, plus any device-side
/// simulators that must run beside the gateway.
enum DemoDevices {
    static func make(context: CommandContext) throws -> (sources: [PluginConfiguration], background: [@Sendable () async throws -> Void]) {
        // The pedometer's device side runs on the master end of a real pseudo-terminal; the
        // serial-pedometer source opens the slave end like any tty.
        let logger = Logger(label: "demo-pedometer-device", sink: StandardErrorLogSink(variables: context.variables))
        let pedometer: (configuration: JSONValue, run: @Sendable () async throws -> Void)
        do {
            pedometer = try SerialPedometerDemo.start(clock: context.clock, logger: logger)
        } catch {
            throw CommandError(.unavailable, "cannot open a pseudo-terminal for the simulated pedometer: \(error)")
        }
        let sources = [
            PluginConfiguration(kind: "ble-heart-rate", name: "demo-heart-rate", config: .object(["transport": .string("simulated")])),
            PluginConfiguration(kind: "serial-pedometer", name: "demo-pedometer", config: pedometer.configuration),
        ]
        return (sources, [pedometer.run])
    }
}
