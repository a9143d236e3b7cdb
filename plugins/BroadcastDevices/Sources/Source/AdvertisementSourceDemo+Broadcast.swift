import BLEAdvertisementKit
import GatewayRuntime

extension AdvertisementSourceDemo {
    /// A broadcast source's entry in `healthgate demo`, named `name`: `devices` simulated
    /// advertisers, each sending `advertisementsPerSecond` (the `transport` and `simulation` keys
    /// of ``BroadcastSourceConfiguration``).
    static func broadcast(_ name: String, devices: Int, advertisementsPerSecond: Double) -> AdvertisementSourceDemo {
        AdvertisementSourceDemo(
            name: name,
            configuration: .object([
                "transport": .string(BroadcastTransportChoice.simulated.rawValue),
                "simulation": .object([
                    "devices": .number(Double(devices)), "advertisementsPerSecond": .number(advertisementsPerSecond),
                ]),
            ]))
    }
}
