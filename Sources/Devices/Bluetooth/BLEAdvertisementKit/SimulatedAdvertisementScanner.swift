public import BLETransport
public import GatewayRuntime
public import FoundationEssentials

/// Simulated advertisers (`transport: simulated`): `devices` advertisers, each sending the
/// advertisement `make(device, tick, now)` returns `advertisementsPerSecond` times a second on
/// the injected clock, as real devices would (real payload bytes, through the same decoders).
public struct SimulatedAdvertisementScanner: AdvertisementScanner {
    /// How many advertisers.
    public let devices: Int
    /// Each advertiser's advertisements per second.
    public let advertisementsPerSecond: Double
    let clock: any GatewayClock
    let make: @Sendable (_ device: Int, _ tick: Int, _ now: Date) -> Advertisement

    /// Advertisers made by `make`: `device` counts from 0, `tick` from 0 at each advertisement.
    public init(
        devices: Int, advertisementsPerSecond: Double, clock: any GatewayClock,
        make: @escaping @Sendable (_ device: Int, _ tick: Int, _ now: Date) -> Advertisement
    ) {
        self.devices = devices
        self.advertisementsPerSecond = advertisementsPerSecond
        self.clock = clock
        self.make = make
    }

    /// Always ``ScanPath/simulated``.
    public var path: ScanPath? { .simulated }

    /// Yields one advertisement per device per interval until cancelled. The stream holds at most
    /// one round per device: a consumer that falls behind loses the oldest (as a controller's
    /// report queue would), which the rate meter then shows. `matches` is not consulted: the
    /// advertisers are the profile's own.
    public func advertisements(matching matches: [AdvertisementMatch]) -> AsyncThrowingStream<Advertisement, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: Advertisement.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(max(devices, 1) * 4))
        let task = Task { [devices, advertisementsPerSecond, clock, make] in
            let interval = Duration.milliseconds(Int64(1000 / advertisementsPerSecond))
            var tick = 0
            do {
                while !Task.isCancelled {
                    for device in 0..<devices { continuation.yield(make(device, tick, clock.now())) }
                    tick += 1
                    try await clock.sleep(for: interval)
                }
            } catch {}
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
