import FoundationEssentials
import GatewayRuntime
import SampleBus
import Workouts

/// The demo's group (`healthgate demo --participants N`): N simulated heart-rate monitors, one
/// participant wearing each, a group workout started for all, and the live board.
struct DemoParticipants {
    /// How many (the simulated transport's limit is 16 monitors per source).
    let count: Int
    /// The last participant's strap goes silent after this long, if set.
    let dropAfter: Double?
    /// Further simulated monitors that nobody wears: new straps to sign in (their tiles on the
    /// board, `participant straps`). ``count`` plus these is at most 16.
    var newStraps = 0

    static let names = [
        "Ana", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gus", "Hana", "Ivo", "Jana", "Kai", "Lea", "Max", "Nia", "Ole", "Pia",
    ]
    static let range = 1...16
    /// The names of the participants wearing a simulated class's straps (the ANT+ class), after
    /// ``names`` so that no name is taken twice.
    static let wearerNames = ["Quinn", "Rosa", "Sami", "Tom", "Uma", "Vera", "Wim", "Xena", "Yara", "Zeno"]

    /// The simulated monitor `index` (0-based): its BLE address and the local identifier its
    /// samples carry (the serial number the simulator reports).
    static func address(_ index: Int) -> String { String(cFormat: "02:00:00:00:00:%02lX", index + 1) }
    static func identifier(_ index: Int) -> String { String(cFormat: "healthgate/SIM-HRM-%04ld", index + 1) }

    /// The heart-rate sources: one following every monitor, or with a dropped sensor, a second
    /// one following only the last monitor (which the runner stops after ``dropAfter``).
    var sources: [PluginConfiguration] {
        let total = count + newStraps
        let simulation: JSONValue = .object(["heartRateMonitors": .number(Double(total))])
        guard dropAfter != nil, total > 1 else {
            return [PluginConfiguration(
                kind: "ble-heart-rate", name: "demo-heart-rate",
                config: .object(["transport": .string("simulated"), "simulation": simulation]))]
        }
        return [
            PluginConfiguration(
                kind: "ble-heart-rate", name: "demo-heart-rate",
                config: .object([
                    "transport": .string("simulated"), "simulation": simulation,
                    "devices": .array((0..<total).filter { $0 != count - 1 }.map { .string(Self.address($0)) }),
                ])),
            PluginConfiguration(
                kind: "ble-heart-rate", name: Self.droppingSource,
                config: .object([
                    "transport": .string("simulated"), "simulation": simulation,
                    "devices": .array([.string(Self.address(count - 1))]),
                ])),
        ]
    }

    static let droppingSource = "demo-heart-rate-dropping"

    /// The participants: each wears one monitor, with a full profile for energy. The maximum
    /// heart rates are spread (108–170 bpm) so that the simulated 60–100 bpm fall in different
    /// zones on the board.
    var participants: [JSONValue] {
        (0..<count).map { Self.participant(Self.names[$0], wearing: Self.identifier($0), profileIndex: $0) }
    }

    /// A participant for each of `devices` (a simulated class's straps, by local identifier), named
    /// from ``wearerNames``, with the same spread of profiles as the monitors' wearers.
    static func wearers(of devices: [String]) -> [JSONValue] {
        devices.enumerated().map { index, device in
            let name = index < wearerNames.count ? wearerNames[index] : "Strap \(index + 1)"
            return participant(name, wearing: device, profileIndex: index + 3)
        }
    }

    static func participant(_ name: String, wearing device: String, profileIndex index: Int) -> JSONValue {
        let maxima: [Double] = [118, 150, 128, 170, 108, 140, 160, 124]
        let maximum = maxima[index % maxima.count]
        let weight = Double(55 + 4 * index)
        let profile: [String: JSONValue] = [
            "maximumHeartRate": .number(maximum),
            "weightKilograms": .number(weight),
            "dateOfBirth": .string(String(cFormat: "%04ld-03-01", 1970 + 2 * index)),
            "biologicalSex": .string(index % 2 == 0 ? "female" : "male"),
        ]
        return .object([
            "name": .string(name),
            "devices": .array([.string(device)]),
            "profile": .object(profile),
        ])
    }
}
