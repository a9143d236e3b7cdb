import BLEAdvertisementKit
import BuiltinPlugins
import BLEProfileKit
import FoundationEssentials
import HealthModel
import GatewayRuntime
import SampleBus
import SerialDevices
import Workouts
import WorkoutRuntime

/// `healthgate demo`: the gateway with simulated devices that speak the real protocols.
enum DemoCommand {
    static let command = Command(
        name: "demo", summary: "Run the gateway with simulated devices that speak the real protocols.",
        usage: "demo [--participants N [--new-straps M] [--listen ADDRESS:PORT] [--drop-sensor-after SECONDS] | --class N [--listen ADDRESS:PORT]] [--duration SECONDS] [--db PATH] [--quiet]",
        discussion: """
            Starts a simulated Bluetooth heart-rate monitor that emits real Heart Rate Measurement \
            (0x2A37) payloads with RR intervals and energy expended, decoded by the same decoder real \
            devices use, a simulated bike whose speed and cadence sensor and power meter send real CSC \
            (0x2A5B) and Cycling Power (0x2A63) Measurements, a simulated scale, blood pressure cuff, \
            thermometer and pulse oximeter that indicate real Weight (0x2A9D), Blood Pressure (0x2A35), \
            Temperature (0x2A1C) and PLX Spot-check (0x2A5E) Measurements every 20 s with a device clock \
            90 s fast, a simulated glucose meter whose stored Glucose Measurements (0x2A18) the gateway \
            downloads through its Record Access Control Point (0x2A52), a continuous glucose monitor (0x181F), a \
            Generic Health Sensor (0x1840) pulse oximeter and blood pressure monitor whose IEEE 11073-10206 observations \
            (bundles and compounds) arrive in segments, the ones stored before the demo through the Record Access \
            Control Point and the live ones after the GHS Control Point's start, two Polar straps broadcasting heart rate in their \
            advertisements (manufacturer data 0x006B) and a Xiaomi body composition scale broadcasting \
            its weighings (service data 0x181B), a simulated serial pedometer on a real pseudo-terminal that \
            speaks the documented pedometer protocol, and an ANT+ class: six heart-rate straps heard through a \
            simulated USB ANT stick that speaks the ANT serial protocol on a pseudo-terminal, each strap worn by a \
            participant of its own (Quinn, Rosa, Sami, Tom, Uma, Vera), so the class has a workout per person \
            ('healthgate workout start --all') and a tile per person on the board. Samples go into the demo's own SQLite store, \
            $XDG_STATE_HOME/healthgate/demo.sqlite (default ~/.local/state/healthgate/), never into \
            the store of 'healthgate run' (--db chooses another file; the first line printed names \
            it). A live line per sample is printed. Read the demo's samples back with --db, e.g. \
            'healthgate query samples --type heartRate --last 5m --db ~/.local/state/healthgate/demo.sqlite'.

            The daemon's control socket is up while the demo runs, so 'healthgate status' and \
            'healthgate workout …' work against it. Stop with Ctrl-C, or use --duration.

            --participants N (1–16) simulates a class: N Bluetooth heart-rate monitors, a participant wearing \
            each (Ana, Ben, Cleo, …, with their own maximum heart rate and profile), beside the ANT+ \
            class's six, a group workout started for all of them, and the live board at http://127.0.0.1:8080/ (--listen, or the \
            configuration's "web"). --drop-sensor-after makes the last participant's strap go silent \
            after that many seconds, so the board flags a lost sensor. A graceful stop (--duration, \
            Ctrl-C, SIGTERM) ends every workout the demo started and stores it, so no workout of the \
            demo is left running. --new-straps M adds M monitors nobody wears (N + M at most 16): new \
            straps to sign in from the board or with 'healthgate participant assign' (their workouts are \
            the gateway's, not the demo's: end them with 'healthgate workout end --all').

            --class N (3–60; 30 is the case the docs describe) runs a gym's class instead of the devices \
            above: N simulated heart-rate straps over the three paths straps arrive by (for 30: 20 ANT+ \
            straps through the simulated stick, 6 Polar straps broadcasting, 4 connected straps), N \
            participants each wearing one strap by its radio identity (an ANT+ id, a Polar device id, an \
            address), a group workout for the class and the live board (--listen, as with --participants). \
            The last connected strap also broadcasts, as a Polar strap does: its wearer is fed from one \
            path at a time and each of its heart rates is stored once.
            """,
        options: [
            OptionSpec(name: "duration", value: "SECONDS", help: "Stop gracefully after this many seconds."),
            OptionSpec(name: "db", value: "PATH", help: "The demo's store (default: $XDG_STATE_HOME/healthgate/demo.sqlite; never the configuration's store)."),
            OptionSpec(name: "config", value: "FILE", help: "A configuration whose other settings (profile, socket) to use."),
            OptionSpec(name: "quiet", value: nil, help: "Do not print a line per sample."),
            OptionSpec(name: "participants", value: "N", help: "Simulate N participants (1–16) and serve the live board."),
            OptionSpec(name: "listen", value: "ADDRESS:PORT", help: "Where the board listens (default 127.0.0.1:8080)."),
            OptionSpec(name: "drop-sensor-after", value: "SECONDS", help: "The last participant's strap goes silent after this long."),
            OptionSpec(name: "new-straps", value: "M", help: "M further simulated straps nobody wears, to sign in (N + M ≤ 16)."),
            OptionSpec(name: "activity", value: "TYPE", help: "The group workout's activity (default highIntensityIntervalTraining)."),
            OptionSpec(name: "class", value: "N", help: "Simulate a class of N straps (3–60) over ANT+, broadcasts and connections, with the board."),
        ]
    ) { arguments, context in
        let duration = try arguments.double("duration")
        if let duration, duration <= 0 { throw CommandError(.usage, "--duration must be positive") }
        var configuration = try ConfigurationLocator.load(explicit: arguments.value("config"), variables: context.variables)
        // The demo's own store: the configuration's other store settings, never its file.
        let database = arguments.value("db") ?? demoDatabase(context.paths).path
        var store: [String: JSONValue] = [:]
        if case .object(let configured)? = configuration.store { store = configured }
        store["path"] = .string(database)
        configuration.store = .object(store)
        var runner = GatewayRunner(context: context)
        let classSize = try arguments.integer("class")
        // A class runs its straps only (made below); otherwise every simulated device.
        var demo: (sources: [PluginConfiguration], background: [@Sendable () async throws -> Void], wornDevices: [String]) = ([], [], [])
        if classSize == nil { demo = try DemoDevices.make(context: context) }
        // Each strap of a simulated class (the ANT+ class) is worn by a participant of its own.
        let wearers = DemoParticipants.wearers(of: demo.wornDevices)
        configuration.sources = demo.sources
        configuration.sinks = [PluginConfiguration(kind: "sqlite")]
        runner.background = demo.background
        if !wearers.isEmpty {
            var configured: [JSONValue] = []
            if case .array(let list)? = configuration.participants { configured = list }
            configuration.participants = .array(configured + wearers)
        }
        if let size = classSize {
            guard DemoClass.range.contains(size) else {
                throw CommandError(.usage, "--class must be \(DemoClass.range.lowerBound) to \(DemoClass.range.upperBound)")
            }
            guard arguments.value("participants") == nil, arguments.value("drop-sensor-after") == nil,
                arguments.value("new-straps") == nil
            else {
                throw CommandError(.usage, "--class goes without --participants, --drop-sensor-after and --new-straps")
            }
            let activity = try WorkoutCommand.activity(
                arguments.value("activity") ?? WorkoutActivityType.highIntensityIntervalTraining.rawValue, what: "--activity")
            let group = DemoClass(count: size)
            let made = try group.make(context: context)
            // Only the class's straps: the demo's other devices (and its own ANT+ class) stay off.
            configuration.sources = made.sources
            runner.background = made.background
            configuration.participants = .array(made.participants)
            if let listen = arguments.value("listen") {
                configuration.web = .object(["listen": .string(listen)])
            } else if configuration.web == nil {
                configuration.web = .object(["listen": .string("127.0.0.1:8080")])
            }
            let logger = Logger(label: "healthgate demo", sink: StandardErrorLogSink(context: context))
            let started = DemoWorkouts(logger: logger)
            runner.onStart = { workouts in
                logger.notice(
                    "a class of \(size): \(group.ant) ANT+ straps, \(group.broadcasting) broadcasting, \(group.connected) connected "
                        + "(\(group.dualPathWearer)'s strap \(group.dualPathID) also broadcasts)")
                await started.start(activity, in: workouts)
            }
            runner.onStop = { workouts in await started.end(in: workouts) }
        } else if let count = try arguments.integer("participants") {
            guard DemoParticipants.range.contains(count) else {
                throw CommandError(.usage, "--participants must be 1 to \(DemoParticipants.range.upperBound)")
            }
            let dropAfter = try arguments.double("drop-sensor-after")
            if let dropAfter, dropAfter <= 0 { throw CommandError(.usage, "--drop-sensor-after must be positive") }
            let activity = try WorkoutCommand.activity(
                arguments.value("activity") ?? WorkoutActivityType.highIntensityIntervalTraining.rawValue, what: "--activity")
            let newStraps = try arguments.integer("new-straps") ?? 0
            guard newStraps >= 0, count + newStraps <= DemoParticipants.range.upperBound else {
                throw CommandError(.usage, "--participants plus --new-straps must be at most \(DemoParticipants.range.upperBound)")
            }
            var group = DemoParticipants(count: count, dropAfter: dropAfter)
            group.newStraps = newStraps
            // The participants' straps replace the demo's heart-rate sources, the broadcasting ones too.
            let broadcasting = Set(BuiltinCatalog.make().advertisementSources.map(\.kind))
            configuration.sources = group.sources + demo.sources.filter { $0.kind != "ble-heart-rate" && !broadcasting.contains($0.kind) }
            configuration.participants = .array(group.participants + wearers)
            if let listen = arguments.value("listen") {
                configuration.web = .object(["listen": .string(listen)])
            } else if configuration.web == nil {
                configuration.web = .object(["listen": .string("127.0.0.1:8080")])
            }
            if let dropAfter { runner.silencedSources[DemoParticipants.droppingSource] = .milliseconds(Int64(dropAfter * 1000)) }
            let logger = Logger(label: "healthgate demo", sink: StandardErrorLogSink(context: context))
            let started = DemoWorkouts(logger: logger)
            runner.onStart = { workouts in await started.start(activity, in: workouts) }
            runner.onStop = { workouts in await started.end(in: workouts) }
        } else if arguments.value("listen") != nil || arguments.value("drop-sensor-after") != nil || arguments.value("new-straps") != nil {
            throw CommandError(.usage, "--listen, --drop-sensor-after and --new-straps go with --participants")
        }
        // Said once every option is taken, so that a usage error is the only line.
        context.printNote("healthgate demo: simulated devices → \(database) (the demo's own store; read it with --db \(database))")
        if !arguments.flag("quiet") {
            runner.extraSinks = [ConfiguredSink(
                name: "console", kind: "console", queue: QueueConfiguration(capacity: 1000, policy: .dropOldest),
                sink: LiveLineSink(output: context.output, columns: { context.columns }))]
        }
        return try await runner.run(configuration: configuration, duration: duration)
    }

    /// The demo's store when no `--db` is given: its own file in the state directory, so that the
    /// demo never writes into the store (or restores the workouts) of `healthgate run`.
    static func demoDatabase(_ paths: GatewayPaths) -> URL {
        paths.stateDirectory.appendingPathComponent("demo.sqlite")
    }
}

/// The simulated devices of the demo: configurations for the real plugins, plus any device-side
/// simulators that must run beside the gateway.
enum DemoDevices {
    /// The sources, the device sides to run beside the gateway, and the local identifiers of the
    /// simulated devices to give to participants of their own (``SerialDeviceDemoRun/wornDevices``).
    static func make(
        context: CommandContext
    ) throws -> (sources: [PluginConfiguration], background: [@Sendable () async throws -> Void], wornDevices: [String]) {
        let catalog = BuiltinCatalog.make()
        // Every Bluetooth profile in the catalog that has a demo, then every serial member's.
        var sources = catalog.bluetoothSources.compactMap { kind, source in
            source.demo.map { PluginConfiguration(kind: kind, name: $0.name, config: $0.configuration) }
        }
        // Every advertisement source: a broadcasting strap, a scale.
        sources += catalog.advertisementSources.map { kind, source in
            PluginConfiguration(kind: kind, name: source.demo.name, config: source.demo.configuration)
        }
        var background: [@Sendable () async throws -> Void] = []
        var wornDevices: [String] = []
        for (kind, source) in catalog.serialSources {
            guard let demo = source.demo else { continue }
            // The device side runs on the master end of a real pseudo-terminal; the source opens
            // the slave end like any tty.
            let logger = Logger(label: "\(demo.name)-device", sink: StandardErrorLogSink(context: context))
            let started: SerialDeviceDemoRun
            do {
                started = try demo.start(context.clock, logger)
            } catch {
                throw CommandError(.unavailable, "cannot open a pseudo-terminal for the simulated \(demo.device): \(error)")
            }
            sources.append(PluginConfiguration(kind: kind, name: demo.name, config: started.configuration))
            background.append(started.run)
            wornDevices += started.wornDevices
        }
        return (sources, background, wornDevices)
    }
}
