import BuiltinPlugins
import FoundationEssentials
import GatewayRuntime
import SampleBus
import SerialDevices

/// The demo's class (`healthgate demo --class N`): N simulated heart-rate straps over the three
/// paths a gym's straps arrive by, N participants each wearing one strap (named by its radio
/// identity), a group workout for all of them, and the live board.
///
/// For 30: 20 ANT+ straps through the simulated stick, 6 Polar straps broadcasting, and 4 connected
/// straps, the last of which also broadcasts (a Polar strap heard connected and broadcasting at
/// once), so the gateway's `HeartRateArbiter` feeds its wearer from one path. Other N keep the same
/// shares (2/3 ANT+, 1/5 broadcasting, the rest connected, at least one of each). Only the straps
/// run: the demo's other simulated devices stay off.
struct DemoClass {
    /// The class sizes offered: the simulated Bluetooth monitors stop at 16 per source.
    static let range = 3...60

    let count: Int
    /// Straps connected over Bluetooth, the last of them also broadcasting.
    var connected: Int { max(1, (count * 4 + 15) / 30) }
    /// Straps that only broadcast.
    var broadcasting: Int { max(1, (count * 6 + 15) / 30) }
    /// ANT+ straps through the simulated stick.
    var ant: Int { count - connected - broadcasting }

    /// The first names of the class, one per participant; beyond them, `Member N`.
    static let names = [
        "Ana", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana", "Ivo", "Jana", "Kai", "Lea", "Max", "Nia", "Ole", "Pia",
        "Quinn", "Rosa", "Sami", "Tom", "Uma", "Vera", "Wim", "Xena", "Yara", "Zeno", "Alba", "Bruno", "Carla", "Dario",
    ]

    static func name(_ index: Int) -> String { index < names.count ? names[index] : "Member \(index + 1)" }

    /// The Polar device id of simulated broadcasting strap `index` (as the Polar broadcast
    /// simulator names device `index`: `Polar H10 0000000A`).
    static func polarID(_ index: Int) -> String { String(cFormat: "%08lX", index) }

    /// The strap both connected and broadcasting: the broadcast simulator's device after the
    /// broadcast-only ones, whose id the last connected monitor takes.
    var dualPathID: String { Self.polarID(broadcasting) }

    /// The class's sources, the device sides to run beside the gateway, and the participants.
    /// Throws when the catalog has no ANT+ class to offer or its pseudo-terminal cannot open.
    func make(
        context: CommandContext
    ) throws -> (sources: [PluginConfiguration], background: [@Sendable () async throws -> Void], participants: [JSONValue]) {
        let catalog = BuiltinCatalog.make()
        guard let (kind, demo) = catalog.serialSources.lazy.compactMap({ kind, source in source.demo.map { (kind, $0) } })
            .first(where: { $0.1.startClass != nil && $0.1.classLimit >= ant }),
            let startClass = demo.startClass
        else {
            throw CommandError(.unavailable, "this build has no simulated stick for a class of \(ant) ANT+ straps")
        }
        let logger = Logger(label: "\(demo.name)-device", sink: StandardErrorLogSink(context: context))
        let started: SerialDeviceDemoRun
        do {
            started = try startClass(ant, context.clock, logger)
        } catch {
            throw CommandError(.unavailable, "cannot open a pseudo-terminal for the simulated \(demo.device): \(error)")
        }
        let sources = [
            PluginConfiguration(kind: kind, name: demo.name, config: started.configuration),
            PluginConfiguration(
                kind: "ble-polar-broadcast", name: "class-broadcast",
                config: .object([
                    "transport": .string("simulated"),
                    "simulation": .object(["devices": .number(Double(broadcasting + 1)), "advertisementsPerSecond": .number(4)]),
                ])),
            PluginConfiguration(
                kind: "ble-heart-rate", name: "class-connected",
                config: .object([
                    "transport": .string("simulated"),
                    "simulation": .object([
                        "heartRateMonitors": .number(Double(connected)), "polarDeviceIDs": .array([.string(dualPathID)]),
                    ]),
                ])),
        ]
        // Each participant wears one strap, named by its radio identity: the ANT+ id, the
        // broadcast's Polar id, the connected monitor's address; the dual-path strap by its
        // Polar id, which both of its paths carry.
        var straps = started.wornDevices
        straps += (0..<broadcasting).map(Self.polarID)
        straps += (0..<connected - 1).map(DemoParticipants.address)
        straps.append(dualPathID)
        let participants = straps.enumerated().map { index, strap in
            DemoParticipants.participant(Self.name(index), wearing: strap, profileIndex: index)
        }
        return (sources, [started.run], participants)
    }

    /// The participant wearing the dual-path strap (the last).
    var dualPathWearer: String { Self.name(count - 1) }
}
