import ANTProtocol
import AsyncPrimitives
import FoundationEssentials
import GatewayRuntime
import HealthModel
import SampleBus
import SerialDevices

/// `healthgate scan --kind ant`: runs the source on the stick (`--path`, or every stick udev
/// tags) for the scan's duration, publishing nowhere, and lists the straps it heard with their
/// ids and what its status line says (heart rate, beats, battery, manufacturer and serial number
/// once the strap's background pages were heard); then the `sources` entry that reads the stick.
enum ANTScan {
    static let scan = SerialDeviceScan(name: "ant", summary: "ANT+ heart-rate straps heard through a USB ANT stick") { request in
        try await run(request)
    }

    static func run(_ request: SerialDeviceScanRequest) async throws -> SerialDeviceScanResult {
        var configuration = ANTHeartRateConfiguration()
        configuration.path = request.path
        let directory = FileManager.default.temporaryDirectory
        let environment = PluginEnvironment(
            name: "scan", logger: request.logger, clock: request.clock, ids: SampleIDGenerator(),
            paths: GatewayPaths(dataDirectory: directory, stateDirectory: directory, runtimeDirectory: directory),
            variables: request.variables)
        let settings = try configuration.validated(in: environment)
        let board = StatusBoard()
        let status = board.register(name: "scan", kind: ANTHeartRateSource.kind, role: .source)
        // No sink: what the straps send is heard, not stored.
        let bus = SampleBus(sinks: [])
        let context = SourceContext(
            publisher: SamplePublisher(bus: bus, status: status), logger: request.logger, clock: request.clock, status: status)
        let source = ANTHeartRateSource(settings: settings, environment: environment)
        let clock = request.clock
        let duration = request.duration
        _ = try await race(sleep: { try await clock.sleep(for: duration) }) { try await source.run(context: context) }
        let details = board.status(of: "scan")?.details ?? [:]
        let prefix = "strap "
        let rows = details.keys.filter { $0.hasPrefix(prefix) }.sorted().compactMap { key -> [String]? in
            guard let summary = details[key] else { return nil }
            let id = String(key.dropFirst(prefix.count))
            let number = ANTDeviceIdentifier(id).map { String($0.deviceNumber) } ?? "-"
            return [id, number, summary]
        }
        var config: [String: JSONValue] = [:]
        if let path = request.path { config["path"] = .string(path) }
        let entry = JSONValue.object(["kind": .string(ANTHeartRateSource.kind), "name": .string("ant-class"), "config": .object(config)])
        return SerialDeviceScanResult(header: ["ID", "DEVICE NUMBER", "HEARD"], rows: rows, sources: rows.isEmpty ? [] : [entry])
    }
}
