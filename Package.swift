// swift-tools-version:6.0
// healthgate: a Linux gateway that ingests data from health devices.
//
// Layout (dependencies point inward: plugins → core, never core → plugins):
//   Sources/   core modules, one folder per layer (docs/architecture.md): CLibraries, System,
//              Model, Runtime, Store, Bus, Devices (Bluetooth, Serial, ANT), Sinks, Workout, Testing,
//              App; each target names its folder with `path:`
//   plugins/   one folder per adapter or sink, each its own target declared with `path:`
//   Tests/     tests of the core modules and end-to-end tests of the executable
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // Every function in a section of its own in the release build, so that the link order
    // (releaseLinkFlags below) can place each one; without it the compiler puts a module's
    // specialisations and internal functions together in one `.text` per object, which moves as a
    // whole (Benchmarks/README.md, "What the memory figure depends on").
    .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release)),
]

// How the release build of the executable is linked (Benchmarks/README.md, "memory"):
// - lld, with the functions a running gateway executes placed together at the start of the text
//   (Benchmarks/link-order.txt, written by scripts/update-link-order), so the pages the
//   kernel maps around them hold code that runs rather than code that never does, and our
//   private functions, which the order file cannot name, gathered beside them
//   (Sources/App/healthgate/local-functions.ld);
// - relative relocations packed (RELR, glibc 2.36 and later), so the loader reads a few KiB of
//   them instead of megabytes;
// - no dynamic symbol table beyond what the shared libraries need: nothing looks the
//   executable's symbols up at run time.
let releaseLinkFlags = [
    "-use-ld=lld",
    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Benchmarks/link-order.txt",
    "-Xlinker", "--no-warn-symbol-ordering",
    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
    "-Xlinker", "--no-export-dynamic",
]
    // The private functions the order file cannot name, gathered beside the ordered code. Left
    // out where the linker cannot take the script: Debian 13's ld.lld (swiftlang 6.0.3) aborts on
    // it (an assertion on the script's INSERT), so scripts/build-arm64 sets
    // HEALTHGATE_WITHOUT_LINKER_SCRIPT for its builds.
    + (Context.environment["HEALTHGATE_WITHOUT_LINKER_SCRIPT"] == nil
        ? ["-Xlinker", "--script=\(Context.packageDirectory)/Sources/App/healthgate/local-functions.ld"] : [])

let package = Package(
    name: "healthgate",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "healthgate", targets: ["healthgate"]),
        .library(name: "HealthModel", targets: ["HealthModel"]),
        .library(name: "HealthStore", targets: ["HealthStore"]),
        .library(name: "GatewayRuntime", targets: ["GatewayRuntime"]),
        .library(name: "SampleBus", targets: ["SampleBus"]),
        .library(name: "AsyncPrimitives", targets: ["AsyncPrimitives"]),
        .library(name: "GATTDecoding", targets: ["GATTDecoding"]),
        .library(name: "GatewayTesting", targets: ["GatewayTesting"]),
        .library(name: "BLETesting", targets: ["BLETesting"]),
        .library(name: "WorkoutsTesting", targets: ["WorkoutsTesting"]),
        // For adapters written in Swift: the adapter protocol's messages and the adapter's end
        // of it (docs/adapter-protocol.md).
        .library(name: "HealthgateAdapter", targets: ["HealthgateAdapter"]),
    ],
    targets: [
        // MARK: C libraries (system packages, found with pkg-config)
        .systemLibrary(
            name: "CSQLite", path: "Sources/CLibraries/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CUdev", path: "Sources/CLibraries/CUdev", pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]),
        // sd-bus's headers only (libsystemd-dev); links nothing: the DBus module dlopens
        // libsystemd.so.0 when it opens a D-Bus connection. No pkgConfig, which would add
        // -lsystemd to every executable.
        .systemLibrary(name: "CSystemd", path: "Sources/CLibraries/CSystemd", providers: [.apt(["libsystemd-dev"])]),
        // glibc only (ioctl/fcntl/open wrappers); links nothing.
        .systemLibrary(name: "CLinuxSystem", path: "Sources/CLibraries/CLinuxSystem"),
        // The fatal-signal handler of the crash mark (LinuxSystem's RunMarker): C, because a
        // signal handler may only make async-signal-safe calls and reach static storage.
        .target(name: "CCrashMark", path: "Sources/CLibraries/CCrashMark"),
        // libcurl's headers only (libcurl4-openssl-dev, found in the default multiarch include
        // path); links nothing: the http-repository sink dlopens libcurl.so.4 when it starts. No
        // pkgConfig, because `pkg-config --libs libcurl` would add -lcurl to every executable.
        .systemLibrary(name: "CCurl", path: "Sources/CLibraries/CCurl"),
        // libmosquitto's headers only (libmosquitto-dev); links nothing: the mqtt sink dlopens
        // libmosquitto.so.1 when it starts, like the http-repository sink and libcurl.
        .systemLibrary(name: "CMosquitto", path: "Sources/CLibraries/CMosquitto"),
        .systemLibrary(name: "CDeflate", path: "Sources/CLibraries/CDeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(
            name: "CZlib", path: "Sources/CLibraries/CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libmicrohttpd's headers only (libmicrohttpd-dev); links nothing: the live board dlopens
        // libmicrohttpd.so.12 when it starts, so a gateway without a board never maps it nor GnuTLS.
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CLibraries/CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        // Test-only: the sizes and offsets of the C structs the code reads or writes through raw
        // memory, from this platform's headers (LinuxSystemTests' PlatformLayoutTests, run on
        // amd64 and as arm64 under qemu-user). Links nothing.
        .systemLibrary(name: "CPlatformLayout", path: "Sources/CLibraries/CPlatformLayout"),

        // MARK: Core
        .target(name: "HealthModel", path: "Sources/Model/HealthModel", swiftSettings: swiftSettings),
        // The concurrency toolkit: a queue-backed actor executor, one cancellable waiter, one race.
        .target(name: "AsyncPrimitives", path: "Sources/System/AsyncPrimitives", swiftSettings: swiftSettings),
        .target(name: "GATTDecoding", path: "Sources/Devices/Bluetooth/GATTDecoding", exclude: ["README.md"], swiftSettings: swiftSettings),
        // The store: one database, one writer, a pool of readers; the change log every follower
        // reads, source checkpoints, the workout journal. The gateway's commit point.
        .target(
            name: "HealthStore", dependencies: ["HealthModel", "SQLite", "AsyncPrimitives", "LinuxSystem"], path: "Sources/Store/HealthStore", exclude: ["README.md"],
            swiftSettings: swiftSettings),
        // What every module of the gateway runs on: logging, the clock, JSONValue, and the strict
        // configuration parser and decoder with their errors.
        .target(name: "GatewayRuntime", dependencies: ["HealthModel"], path: "Sources/Runtime/GatewayRuntime", swiftSettings: swiftSettings),
        // The gateway's time facts: tz database zones by name, the host's zone, and whether the
        // wall clock can be believed (ClockTrust) with the base its dates sit on.
        .target(
            name: "GatewayTime", dependencies: ["GatewayRuntime", "HealthModel", "LinuxSystem"], path: "Sources/Runtime/GatewayTime", exclude: ["README.md"],
            swiftSettings: swiftSettings),
        // Each Bluetooth adapter's connection scheduler, and the gateway's set of them.
        .target(name: "BLETransport", dependencies: ["AsyncPrimitives", "GatewayRuntime"], path: "Sources/Devices/Bluetooth/BLETransport", swiftSettings: swiftSettings),
        // The bus, the sinks' queues, the plugin contract and catalog, and the supervisor.
        .target(
            name: "SampleBus", dependencies: ["GatewayTime", "GatewayRuntime", "HealthModel", "HealthStore", "AsyncPrimitives", "LinuxSystem"], path: "Sources/Bus/SampleBus",
            swiftSettings: swiftSettings),
        // Stored workouts as FIT and TCX activity files.
        .target(name: "WorkoutExport", dependencies: ["HealthModel"], path: "Sources/Workout/WorkoutExport", swiftSettings: swiftSettings),
        // The gateway's numbers in Prometheus' text format (`GET /metrics`).
        .target(name: "Metrics", dependencies: ["GatewayTime", "GatewayRuntime", "HealthStore", "SampleBus"], path: "Sources/Bus/Metrics", swiftSettings: swiftSettings),
        .target(
            name: "LinuxSystem", dependencies: ["CLinuxSystem", "CCrashMark", "AsyncPrimitives"], path: "Sources/System/LinuxSystem", exclude: ["README.md"],
            swiftSettings: swiftSettings),
        .target(name: "SQLite", dependencies: ["CSQLite", "AsyncPrimitives"], path: "Sources/System/SQLite", swiftSettings: swiftSettings),
        // A D-Bus client over sd-bus (dlopened): method calls, signal matches, exported objects.
        // Generic: it knows no service; BlueZ is one of its users.
        .target(name: "DBus", dependencies: ["CSystemd", "LinuxSystem", "AsyncPrimitives"], path: "Sources/System/DBus", swiftSettings: swiftSettings),
        // The Bluetooth LE central over BlueZ: BlueZ's D-Bus API (adapters, devices, GATT objects,
        // the methods healthgate calls) and the BLECentralTransport implementation on it.
        .target(
            name: "BlueZ", dependencies: ["DBus", "BLETransport", "GatewayRuntime", "LinuxSystem", "AsyncPrimitives"], path: "Sources/Devices/Bluetooth/BlueZ", exclude: ["README.md"],
            swiftSettings: swiftSettings),
        // The profile kit every Bluetooth LE source is built on: following devices (discovery,
        // filter, reconnect), the shared configuration keys, simulation pacing, BluetoothProfile.
        // The advertisement kit: profiles of devices that only advertise, matching, rates, the listener.
        .target(
            name: "BLEAdvertisementKit", dependencies: ["BLETransport", "GatewayRuntime", "HealthModel", "SampleBus"],
            path: "Sources/Devices/Bluetooth/BLEAdvertisementKit", exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(
            name: "BLEProfileKit", dependencies: ["BLETransport", "GatewayRuntime", "GATTDecoding", "HealthModel", "HealthStore", "SampleBus", "AsyncPrimitives"], path: "Sources/Devices/Bluetooth/BLEProfileKit",
            exclude: ["README.md"], swiftSettings: swiftSettings),
        // The adapter protocol (docs/adapter-protocol.md): its messages, declared once, their
        // line codec and schema, and an adapter's end of it. The `exec` source and adapters in
        // Swift (the HealthgateAdapter product) share it.
        .target(
            name: "HealthgateAdapter", dependencies: ["GatewayRuntime", "HealthModel"], path: "Sources/Devices/Adapters/HealthgateAdapter",
            swiftSettings: swiftSettings),
        // The gateway's end of the adapter protocol: an adapter's run (started, spoken with,
        // stopped), its readings checked and made records, and the conformance check of
        // `healthgate adapter check`. The `exec` source (plugins/ExecAdapter) runs on it.
        .target(
            name: "AdapterHost", dependencies: ["GatewayRuntime", "HealthModel", "HealthStore", "HealthgateAdapter", "LinuxSystem", "SampleBus"],
            path: "Sources/Devices/Adapters/AdapterHost", swiftSettings: swiftSettings),
        .target(name: "Udev", dependencies: ["CUdev", "LinuxSystem", "AsyncPrimitives"], path: "Sources/System/Udev", swiftSettings: swiftSettings),
        // The serial (tty) device family: what every member shares: tty discovery and hot-plug
        // through udev, the opening policy, the framers, the shared configuration keys, and the
        // catalog hook through which the executable finds the members.
        .target(
            name: "SerialDevices", dependencies: ["GatewayRuntime", "HealthModel", "SampleBus", "LinuxSystem", "Udev"], path: "Sources/Devices/Serial/SerialDevices",
            exclude: ["README.md"], swiftSettings: swiftSettings),
        // The ANT serial protocol and the ANT+ heart-rate profile: frames, typed messages, data
        // pages, beat intervals, the manufacturer table. Pure: no I/O, no dependencies.
        .target(name: "ANTProtocol", path: "Sources/Devices/ANT/ANTProtocol", exclude: ["README.md"], swiftSettings: swiftSettings),
        // Workouts in three layers: the domain (values with no I/O), the presentation (the live
        // board's model and tiles, the chart, the text formats, escaping: no bus, no runtime), and
        // the runtime (the controller that is a sink and a source, its journal in the store, the
        // control commands, the live board's feed, a sink making the presentation's snapshots).
        .target(
            name: "Workouts", dependencies: ["GatewayRuntime", "HealthModel"], path: "Sources/Workout/Workouts", exclude: ["README.md"],
            swiftSettings: swiftSettings),
        .target(
            name: "WorkoutRuntime", dependencies: ["WorkoutPresentation", "GatewayRuntime", "Workouts", "HealthModel", "HealthStore", "SampleBus", "AsyncPrimitives"], path: "Sources/Workout/WorkoutRuntime",
            swiftSettings: swiftSettings),
        .target(
            name: "WorkoutPresentation", dependencies: ["GatewayRuntime", "Workouts", "HealthModel"], path: "Sources/Workout/WorkoutPresentation",
            swiftSettings: swiftSettings),
        .target(
            name: "GatewayControl", dependencies: ["GatewayRuntime", "LinuxSystem", "AsyncPrimitives"], path: "Sources/Runtime/GatewayControl",
            swiftSettings: swiftSettings),
        // The live board: libmicrohttpd serving the page, Server-Sent Events and the history.
        .target(
            name: "WebBoard", dependencies: ["LinuxSystem", "GatewayRuntime", "CMicroHTTPD", "Metrics", "Workouts", "WorkoutPresentation", "HealthModel", "SampleBus", "AsyncPrimitives"], path: "Sources/Workout/WebBoard",
            swiftSettings: swiftSettings),
        // What every remote sink (HTTP repository, MQTT broker) shares: the follower of the store's
        // change log, retry and backoff, the dlopen loader, HealthJSON and gzip encoding.
        .target(
            name: "RemoteSinkKit",
            dependencies: ["LinuxSystem", "GatewayRuntime", "HealthModel", "HealthStore", "SampleBus", "SQLite", "AsyncPrimitives", "CZlib", "CDeflate"], path: "Sources/Sinks/RemoteSinkKit",
            exclude: ["README.md"], swiftSettings: swiftSettings),
        .target(
            name: "GatewayTesting", dependencies: ["GatewayTime", "GatewayRuntime", "HealthModel", "HealthStore", "SampleBus", "SQLite", "AsyncPrimitives"], path: "Sources/Testing/GatewayTesting",
            swiftSettings: swiftSettings),
        // The workout tests' scripted sample streams and profile, shared by the tests of the
        // workout domain, runtime and presentation and of the control socket.
        .target(
            name: "WorkoutsTesting", dependencies: ["GatewayTesting", "HealthModel", "Workouts"], path: "Sources/Testing/WorkoutsTesting",
            swiftSettings: swiftSettings),
        // Store files as earlier schema versions wrote them, for the upgrade's tests and the
        // migration benchmark (no XCTest: the benchmarks' static release build links it).
        .target(
            name: "HealthStoreTesting", dependencies: ["HealthModel", "HealthStore", "SQLite"], path: "Sources/Testing/HealthStoreTesting",
            swiftSettings: swiftSettings),
        // Test-only: a VFS that holds a commit in its sync of the write-ahead log, so that a test
        // can check what must wait for durability (the store's durability rule).
        .target(
            name: "SQLiteTesting", dependencies: ["CSQLite", "AsyncPrimitives"], path: "Sources/Testing/SQLiteTesting",
            swiftSettings: swiftSettings),
        // The Bluetooth family's test doubles: a scripted stack, a link-dropping transport, GATT
        // fixture files. Only the tests of Bluetooth modules and plugins link it.
        .target(
            name: "BLETesting", dependencies: ["GatewayTesting", "BLETransport", "BLEProfileKit", "GATTDecoding", "GatewayRuntime", "SampleBus"], path: "Sources/Testing/BLETesting",
            swiftSettings: swiftSettings),

        // MARK: Plugins (each adapter and sink is its own target)
        .target(
            name: "HeartRateMonitor", dependencies: ["GatewayTime", "BLETransport", "GatewayRuntime", "HealthModel", "SampleBus", "BLEProfileKit", "GATTDecoding"],
            path: "plugins/HeartRateMonitor/Sources", swiftSettings: swiftSettings),
        .target(
            name: "SerialPedometer", dependencies: ["GatewayRuntime", "HealthModel", "HealthStore", "SampleBus", "LinuxSystem", "SerialDevices", "AsyncPrimitives"],
            path: "plugins/SerialPedometer/Sources", swiftSettings: swiftSettings),
        .target(
            name: "FitnessEquipment", dependencies: ["BLETransport", "GatewayRuntime", "GATTDecoding", "HealthModel", "SampleBus", "BLEProfileKit"],
            path: "plugins/FitnessEquipment/Sources", swiftSettings: swiftSettings),
        // The Bluetooth SIG health profiles (scales, cuffs, thermometers, oximeters, glucose meters):
        // decoders and the mapper to samples.
        .target(
            name: "HealthDevices", dependencies: ["GatewayTime", "BLETransport", "GatewayRuntime", "GATTDecoding", "HealthModel", "HealthStore", "SampleBus", "BLEProfileKit"],
            path: "plugins/HealthDevices/Sources", swiftSettings: swiftSettings),
        // The Continuous Glucose Monitoring Service (0x181F), on the profile kit.
        .target(
            name: "ContinuousGlucose", dependencies: ["GatewayTime", "BLETransport", "GatewayRuntime", "GATTDecoding", "HealthModel", "HealthStore", "SampleBus", "BLEProfileKit"],
            path: "plugins/ContinuousGlucose/Sources", swiftSettings: swiftSettings),
        // The Generic Health Sensor service (0x1840): IEEE 11073-10206 (ACOM) observations, on the profile kit.
        .target(
            name: "GenericHealthSensor", dependencies: ["BLETransport", "GatewayRuntime", "GATTDecoding", "HealthModel", "HealthStore", "SampleBus", "BLEProfileKit"],
            path: "plugins/GenericHealthSensor/Sources", swiftSettings: swiftSettings),
        // ANT+ heart-rate straps through a USB ANT stick (continuous scan), a serial family member.
        .target(
            name: "ANTHeartRate",
            dependencies: ["ANTProtocol", "AsyncPrimitives", "GatewayRuntime", "GatewayTime", "HealthModel", "HealthStore", "LinuxSystem", "SampleBus", "SerialDevices"],
            path: "plugins/ANTHeartRate/Sources", swiftSettings: swiftSettings),
        // Devices that only advertise (Polar heart-rate broadcast, Xiaomi scales): pure decoders.
        .target(
            name: "BroadcastDevices", dependencies: ["BLEAdvertisementKit", "BLETransport", "GatewayRuntime", "HealthModel", "HealthStore", "SampleBus"],
            path: "plugins/BroadcastDevices/Sources", swiftSettings: swiftSettings),
        // Any device, through an adapter program of its own speaking the adapter protocol.
        .target(
            name: "ExecAdapter", dependencies: ["AdapterHost", "GatewayRuntime", "HealthModel", "HealthgateAdapter", "LinuxSystem", "SampleBus"],
            path: "plugins/ExecAdapter/Sources", swiftSettings: swiftSettings),
        .target(
            name: "SQLiteStore", dependencies: ["GatewayRuntime", "HealthModel", "HealthStore", "SampleBus", "AsyncPrimitives"],
            path: "plugins/SQLiteStore/Sources", swiftSettings: swiftSettings),
        .target(
            name: "HTTPRepository", dependencies: ["LinuxSystem", "GatewayRuntime", "GatewayTime", "HealthModel", "HealthStore", "SampleBus", "RemoteSinkKit", "CCurl", "AsyncPrimitives"],
            path: "plugins/HTTPRepository/Sources", swiftSettings: swiftSettings),
        .target(
            name: "MQTTBroker", dependencies: ["LinuxSystem", "GatewayRuntime", "HealthModel", "HealthStore", "SampleBus", "RemoteSinkKit", "CMosquitto", "AsyncPrimitives"],
            path: "plugins/MQTTBroker/Sources", swiftSettings: swiftSettings),

        // MARK: The catalog of compiled-in plugins (the executable's and the fuzz targets')
        .target(
            name: "BuiltinPlugins",
            dependencies: [
                "BLETransport", "BLEProfileKit", "SampleBus", "HeartRateMonitor", "FitnessEquipment", "HealthDevices", "ContinuousGlucose", "GenericHealthSensor", "BroadcastDevices", "SerialPedometer", "ANTHeartRate", "ExecAdapter", "SQLiteStore",
                "HTTPRepository", "MQTTBroker",
            ],
            path: "Sources/App/BuiltinPlugins", swiftSettings: swiftSettings),

        // MARK: The executable: argument parsing, config, the catalog, wiring, signals
        .executableTarget(
            name: "healthgate",
            dependencies: [
                "AdapterHost", "HealthgateAdapter", "BLEAdvertisementKit", "GatewayTime",
                "BLETransport", "GatewayRuntime", "HealthModel", "SampleBus", "GatewayControl", "Workouts",
                "AsyncPrimitives", "LinuxSystem", "BLEProfileKit", "BlueZ", "SerialDevices", "Udev", "GATTDecoding",
                "WebBoard", "Metrics", "WorkoutExport", "HealthStore", "WorkoutRuntime", "WorkoutPresentation", "BuiltinPlugins",
            ], path: "Sources/App/healthgate",
            exclude: ["local-functions.ld"],
            swiftSettings: swiftSettings,
            linkerSettings: [.unsafeFlags(releaseLinkFlags, .when(configuration: .release))]),

        // MARK: Benchmarks (release builds only; see Benchmarks/README.md)
        .executableTarget(
            name: "healthgate-benchmarks",
            dependencies: [
                "BLETransport", "GatewayRuntime", "HealthModel", "HealthStore", "SampleBus", "SQLite",
                "CSQLite", "SQLiteStore", "BLEProfileKit", "HeartRateMonitor", "SerialPedometer",
                "HTTPRepository", "RemoteSinkKit", "Workouts", "WorkoutRuntime", "WorkoutPresentation",
                "WebBoard", "MQTTBroker", "CMosquitto", "ANTHeartRate", "ANTProtocol", "LinuxSystem", "BlueZ",
                "BroadcastDevices", "DBus", "HealthStoreTesting", "AdapterHost", "HealthgateAdapter",
            ],
            path: "Benchmarks/Sources/HealthgateBenchmarks", swiftSettings: swiftSettings,
            // The MQTT benchmark's baseline calls libmosquitto directly (the sink dlopens it).
            linkerSettings: [.linkedLibrary("mosquitto")]),
        .executableTarget(
            name: "rss-baseline", path: "Benchmarks/Sources/RSSBaseline", swiftSettings: swiftSettings),

        // MARK: Tests
        .testTarget(
            name: "BLETransportTests",
            dependencies: ["BLETransport", "BLEProfileKit", "GatewayRuntime", "GatewayTesting", "HealthModel"],
            swiftSettings: swiftSettings),
        .testTarget(name: "GatewayRuntimeTests", dependencies: ["GatewayRuntime"], swiftSettings: swiftSettings),
        .testTarget(name: "GatewayTimeTests", dependencies: ["GatewayTime", "HealthModel"], swiftSettings: swiftSettings),
        .testTarget(
            name: "MetricsTests",
            dependencies: ["Metrics", "GatewayRuntime", "GatewayTesting", "GatewayTime", "HealthModel", "HealthStore", "SampleBus"],
            swiftSettings: swiftSettings),
        .testTarget(name: "UdevTests", dependencies: ["Udev"], swiftSettings: swiftSettings),
        .testTarget(name: "ANTProtocolTests", dependencies: ["ANTProtocol"], swiftSettings: swiftSettings),
        .testTarget(
            name: "SerialDevicesTests",
            dependencies: ["SerialDevices", "GatewayRuntime", "GatewayTesting", "HealthModel", "LinuxSystem", "SampleBus", "Udev"],
            swiftSettings: swiftSettings),
        .testTarget(name: "WorkoutExportTests", dependencies: ["WorkoutExport", "HealthModel"], swiftSettings: swiftSettings),
        .testTarget(
            name: "WorkoutPresentationTests",
            dependencies: ["WorkoutPresentation", "GatewayRuntime", "GatewayTesting", "HealthModel", "SampleBus", "WorkoutRuntime", "Workouts", "WorkoutsTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "WorkoutRuntimeTests",
            dependencies: ["WorkoutRuntime", "GatewayRuntime", "GatewayTesting", "GatewayTime", "HealthModel", "HealthStore", "SampleBus", "SQLite", "SQLiteStore", "WorkoutPresentation", "Workouts", "WorkoutsTesting"],
            swiftSettings: swiftSettings),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite", "GatewayTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "GatewayControlTests",
            dependencies: ["GatewayControl", "GatewayRuntime", "GatewayTesting", "HealthModel", "WorkoutRuntime", "Workouts", "WorkoutsTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "BLEProfileKitTests",
            dependencies: ["AsyncPrimitives", "BLETransport", "BLETesting", "GatewayRuntime", "GatewayTesting", "BLEProfileKit", "SampleBus"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthModelTests", dependencies: ["HealthModel", "GatewayTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "AsyncPrimitivesTests", dependencies: ["AsyncPrimitives", "GatewayTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "SampleBusTests", dependencies: ["GatewayRuntime", "HealthModel", "HealthStore", "HealthStoreTesting", "SampleBus", "GatewayTesting", "SQLite"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "WorkoutsTests", dependencies: ["WorkoutsTesting", "GatewayRuntime", "Workouts", "WorkoutRuntime", "GatewayTesting", "HealthModel"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "WebBoardTests", dependencies: ["Workouts", "WorkoutRuntime", "WorkoutPresentation", "HealthModel", "SampleBus", "GatewayRuntime", "WebBoard", "GatewayTesting"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "EndToEndTests", dependencies: ["HealthModel", "HealthStore", "HealthStoreTesting", "GatewayTesting", "Workouts", "SQLite"], path: "Tests/EndToEndTests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HeartRateMonitorTests",
            dependencies: ["BLETesting", "BLETransport", "GatewayRuntime", "HeartRateMonitor", "BLEProfileKit", "GatewayTesting", "HealthModel", "SampleBus", "SQLiteStore", "GATTDecoding", "HealthStore"],
            path: "plugins/HeartRateMonitor/Tests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "BLEAdvertisementKitTests", dependencies: ["BLEAdvertisementKit", "BLETransport", "HealthModel"],
            path: "Tests/BLEAdvertisementKitTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "BroadcastDevicesTests", dependencies: ["BroadcastDevices", "BLEAdvertisementKit", "BLETransport", "GatewayRuntime", "GatewayTesting", "HealthModel", "SampleBus"],
            path: "plugins/BroadcastDevices/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "FitnessEquipmentTests", dependencies: ["BLETesting", "BLETransport", "GatewayRuntime", "GATTDecoding", "FitnessEquipment", "BLEProfileKit", "GatewayTesting", "HealthModel", "SampleBus"],
            path: "plugins/FitnessEquipment/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthDevicesTests", dependencies: ["BLETesting", "GatewayTime", "BLETransport", "GatewayRuntime", "GATTDecoding", "BLEProfileKit", "GatewayTesting", "HealthDevices", "HealthModel", "SQLiteStore", "SampleBus", "HealthStore"],
            path: "plugins/HealthDevices/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "ContinuousGlucoseTests", dependencies: ["BLETesting", "GatewayTime", "BLETransport", "GatewayRuntime", "GATTDecoding", "BLEProfileKit", "GatewayTesting", "ContinuousGlucose", "HealthModel", "SampleBus"],
            path: "plugins/ContinuousGlucose/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "GenericHealthSensorTests", dependencies: ["BLETesting", "BLETransport", "HealthStore", "GatewayRuntime", "GATTDecoding", "BLEProfileKit", "GatewayTesting", "GenericHealthSensor", "HealthModel", "SampleBus"],
            path: "plugins/GenericHealthSensor/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthgateAdapterTests", dependencies: ["HealthgateAdapter", "GatewayRuntime", "GatewayTesting", "HealthModel"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "AdapterHostTests",
            dependencies: ["AdapterHost", "GatewayRuntime", "GatewayTesting", "HealthModel", "HealthStore", "HealthgateAdapter", "LinuxSystem", "SQLiteStore", "SampleBus"],
            swiftSettings: swiftSettings),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "GatewayTesting"], swiftSettings: swiftSettings),
        .testTarget(
            name: "BlueZTests", dependencies: ["BLETransport", "GatewayRuntime", "BlueZ", "DBus", "BLEProfileKit", "HeartRateMonitor", "HealthDevices", "BroadcastDevices", "GatewayTesting", "SQLiteStore", "HealthModel", "SampleBus", "HealthStore", "LinuxSystem"],
            path: "Tests/BlueZTests", swiftSettings: swiftSettings),
        .testTarget(
            name: "GATTDecodingTests", dependencies: ["GATTDecoding"], path: "Tests/GATTDecodingTests",
            swiftSettings: swiftSettings),
        // The durability rule (HealthStore's StoreDurability) through every part that must wait
        // for it: a follower, a reader, the workouts' answers.
        .testTarget(
            name: "DurabilityTests",
            dependencies: [
                "AsyncPrimitives", "GatewayRuntime", "GatewayTesting", "HealthModel", "HealthStore", "RemoteSinkKit", "SampleBus",
                "SQLiteStore", "SQLiteTesting", "Workouts", "WorkoutRuntime", "WorkoutsTesting",
            ],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "HealthStoreTests", dependencies: ["HealthStore", "HealthStoreTesting", "GatewayTesting", "SQLite", "Workouts", "WorkoutRuntime", "HealthModel", "AsyncPrimitives"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "SQLiteStoreTests", dependencies: ["GatewayRuntime", "SQLiteStore", "HealthStore", "GatewayTesting", "HealthModel", "SampleBus"],
            path: "plugins/SQLiteStore/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "SerialPedometerTests",
            dependencies: ["GatewayRuntime", "SerialPedometer", "SerialDevices", "LinuxSystem", "Udev", "GatewayTesting", "SQLiteStore", "SQLite", "SampleBus", "HealthModel", "HealthStore"],
            path: "plugins/SerialPedometer/Tests",
            swiftSettings: swiftSettings),
        .testTarget(
            name: "ANTHeartRateTests",
            dependencies: ["ANTHeartRate", "ANTProtocol", "GatewayRuntime", "GatewayTesting", "HealthModel", "HealthStore", "SampleBus", "SerialDevices", "SQLiteStore"],
            path: "plugins/ANTHeartRate/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "LinuxSystemTests", dependencies: ["LinuxSystem", "GatewayTesting", "AsyncPrimitives", "CPlatformLayout"], swiftSettings: swiftSettings),
        .testTarget(
            name: "RemoteSinkKitTests",
            dependencies: ["GatewayRuntime", "LinuxSystem", "RemoteSinkKit", "GatewayTesting", "HealthModel", "HealthStore", "SampleBus", "AsyncPrimitives"],
            exclude: ["Fixtures"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HTTPRepositoryTests",
            dependencies: ["LinuxSystem", "GatewayRuntime", "GatewayTime", "HTTPRepository", "RemoteSinkKit", "GatewayTesting", "HealthModel", "SampleBus", "HealthStore", "AsyncPrimitives"],
            path: "plugins/HTTPRepository/Tests", swiftSettings: swiftSettings),
        .testTarget(
            name: "MQTTBrokerTests",
            dependencies: ["GatewayRuntime", "MQTTBroker", "RemoteSinkKit", "GatewayTesting", "HealthModel", "SampleBus", "SQLiteStore", "HealthStore"],
            path: "plugins/MQTTBroker/Tests", swiftSettings: swiftSettings),
    ]
)

// Fuzz targets (Tests/Fuzz): declared only when HEALTHGATE_FUZZ is set, because the binary has
// no main of its own (libFuzzer's, linked by -sanitize=fuzzer, runs it). scripts/fuzz sets it
// and builds in .build-fuzz with the fuzzer and address sanitizer.
if Context.environment["HEALTHGATE_FUZZ"] != nil {
    package.targets.append(.executableTarget(
        name: "healthgate-fuzz",
        dependencies: [
                       "GatewayRuntime", "HealthModel", "SampleBus", "GatewayControl", "GATTDecoding",
                       "HeartRateMonitor", "SerialDevices", "SerialPedometer", "SQLiteStore", "HealthStore", "HTTPRepository",
                       "FitnessEquipment", "HealthDevices", "Workouts", "WorkoutRuntime", "BLEProfileKit", "BuiltinPlugins",
                       "LinuxSystem",
                   ],
        path: "Tests/Fuzz/Sources", swiftSettings: swiftSettings))
}
