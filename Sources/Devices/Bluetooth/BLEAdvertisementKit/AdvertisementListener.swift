public import BLETransport
import FoundationEssentials
public import HealthModel
public import SampleBus
import GatewayRuntime

/// The kit's loop for one profile: takes a scanner's advertisements, keeps the profile's,
/// measures each device's rate, decodes, and hands each reading to the plugin with the device's
/// identity. What differs per device family (what a reading becomes) is the handler's.
///
/// Status: `scanPath` (the path the scanner uses, updated when it changes), and per device the metric
/// `advertisements_per_second{device=…}`; a device heard below the profile's required rate is
/// reported as an error naming the path, not silently accepted. A payload that does not decode
/// is logged and counted (`undecodable_advertisements`), and the loop goes on. Advertisements the
/// scanner dropped before yielding them (its own buffer overflowed: the management socket's
/// reader) are the metric `scan_dropped_advertisements` and the detail `scanDroppedAdvertisements`,
/// once there are any.
public struct AdvertisementListener<Profile: AdvertisementProfile>: Sendable {
    let scanner: any AdvertisementScanner
    let accepts: @Sendable (DeviceIdentity, Advertisement) -> Bool

    /// A listener on `scanner` for the devices `accepts` selects (the source's `devices` key).
    public init(
        scanner: any AdvertisementScanner,
        accepts: @escaping @Sendable (DeviceIdentity, Advertisement) -> Bool = { _, _ in true }
    ) {
        self.scanner = scanner
        self.accepts = accepts
    }

    /// Runs until cancelled or the scanner fails (rethrown).
    public func run(
        context: SourceContext,
        handle: (DeviceIdentity, Profile.Reading, Advertisement) async throws -> Void
    ) async throws {
        // Scoped: the scan is over (a monitor unregistered) before the source returns.
        try await scanner.withAdvertisements(matching: Profile.matches) { advertisements in
            var meter = AdvertisementRateMeter()
            var undecodable = 0
            var judged: [DeviceIdentity: RateVerdict] = [:]
            var reportedPath: ScanPath?
            var reportedDrops = 0
            for try await advertisement in advertisements {
                let drops = await scanner.droppedAdvertisements
                if drops != reportedDrops {
                    reportedDrops = drops
                    context.status.setMetric("scan_dropped_advertisements", [:], Double(drops))
                    context.status.setDetail("scanDroppedAdvertisements", String(drops))
                }
                // Checked at every advertisement: a scanner may change its path while it scans
                // (BlueZ falls back to discovery when bluetoothd releases its monitor).
                if let path = await scanner.path, path != reportedPath {
                    reportedPath = path
                    context.status.setDetail("scanPath", path.rawValue)
                    context.logger.info("\(Profile.displayName): scanning by \(path.rawValue)")
                }
                guard Profile.matches(advertisement) else { continue }
                let identity = Profile.identity(of: advertisement)
                guard accepts(identity, advertisement) else { continue }
                meter.record(identity.canonical, at: advertisement.receivedAt)
                let rate = meter.rate(of: identity.canonical, at: advertisement.receivedAt)
                context.status.setMetric("advertisements_per_second", ["device": identity.canonical], rate)
                let verdict = RateVerdict.judge(measured: rate, required: Profile.requiredRate)
                if verdict != judged[identity], case .insufficient(let measured, let required) = verdict,
                    meter.rate(of: identity.canonical, at: advertisement.receivedAt) != nil
                {
                    let path = await scanner.path?.rawValue ?? "unknown"
                    context.status.reportError(
                        "\(advertisement.naming(identity)): heard \((measured * 100).rounded() / 100)/s by \(path), \(Profile.displayName) needs \(required)/s",
                        at: advertisement.receivedAt)
                }
                judged[identity] = verdict
                let reading: Profile.Reading?
                do {
                    reading = try Profile.decode(advertisement)
                } catch {
                    undecodable += 1
                    context.status.setMetric("undecodable_advertisements", [:], Double(undecodable))
                    context.logger.warning("\(advertisement.naming(identity)): \(error)")
                    continue
                }
                guard let reading else { continue }
                try await handle(identity, reading, advertisement)
            }
        }
        try Task.checkCancellation()
    }
}
