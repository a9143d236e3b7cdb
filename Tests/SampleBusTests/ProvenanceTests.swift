import Foundation
import GatewayTesting
import HealthModel
import GatewayRuntime
import SampleBus
import XCTest

/// A gateway given provenance marks every source's records with it and the source's name,
/// without overwriting what a source set itself.
final class ProvenanceTests: XCTestCase {
    private let ids = SampleIDGenerator(seed: 41, milliseconds: { 1_800_000_000_000 })

    func testEveryRecordCarriesTheGatewayItsSourceAndTheTimeZone() async throws {
        var own = stepRecords(0..<1, ids: ids)[0]
        if case .quantity(var sample) = own {
            sample.metadata[.timeZone] = .string("America/New_York")  // recorded elsewhere, and says so
            own = .quantity(sample)
        }
        let first = OneShotSource(records: stepRecords(1..<3, ids: ids) + [own])
        let second = OneShotSource(records: stepRecords(3..<4, ids: ids))
        let sink = CollectingSink()
        var provenance = Metadata()
        provenance[.gatewayName] = .string("gym-1")
        provenance[.gatewayVersion] = .string("0.1.0")
        provenance[.timeZone] = .string("Europe/Berlin")
        let gateway = Gateway(
            sources: [
                ConfiguredSource(name: "chest-straps", kind: "test-source", source: first),
                ConfiguredSource(name: "pedometers", kind: "test-source", source: second),
            ],
            sinks: [ConfiguredSink(name: "sink", kind: "test-sink", queue: QueueConfiguration(), sink: sink)],
            clock: ManualClock(), logger: Logger(label: "gateway", sink: RecordingLogSink()),
            provenance: provenance)
        let (shutdown, run) = GatewayRun.start(gateway)
        try await waitUntil("every record in the sink") { sink.records.count == 4 }
        _ = shutdown.requestStop()
        try await run.waitForReturn()

        var bySource: [String: [Metadata]] = [:]
        for record in sink.records {
            guard case .quantity(let sample) = record else { return XCTFail("\(record)") }
            XCTAssertEqual(sample.metadata[.gatewayName], .string("gym-1"))
            XCTAssertEqual(sample.metadata[.gatewayVersion], .string("0.1.0"))
            bySource[sample.metadata[.sourceName]?.description ?? "none", default: []].append(sample.metadata)
        }
        XCTAssertEqual(bySource["chest-straps"]?.count, 3)
        XCTAssertEqual(bySource["pedometers"]?.count, 1)
        XCTAssertEqual(
            bySource["chest-straps"]?.map { $0[.timeZone] }.sorted { "\($0!)" < "\($1!)" },
            [.string("America/New_York"), .string("Europe/Berlin"), .string("Europe/Berlin")],
            "the source's own time zone stays")
    }

    func testWithoutProvenanceRecordsGoAsTheSourceMadeThem() async throws {
        let records = stepRecords(0..<2, ids: ids)
        let sink = CollectingSink()
        let gateway = makeGateway(
            sources: [("source", OneShotSource(records: records))], sinks: [("sink", QueueConfiguration(), sink)],
            clock: ManualClock())
        let (shutdown, run) = GatewayRun.start(gateway)
        try await waitUntil("every record in the sink") { sink.records.count == 2 }
        _ = shutdown.requestStop()
        try await run.waitForReturn()
        XCTAssertEqual(sink.records, records)
    }

    /// A correlation's members are stamped too: the store keeps them as samples of their own.
    func testACorrelationAndItsMembersAreStamped() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let systolic = try QuantitySample(
            id: ids.next(), type: .bloodPressureSystolic, quantity: Quantity(120, .millimeterOfMercury), start: start, end: start)
        let diastolic = try QuantitySample(
            id: ids.next(), type: .bloodPressureDiastolic, quantity: Quantity(80, .millimeterOfMercury), start: start, end: start)
        let pressure = try CorrelationSample(
            id: ids.next(), type: .bloodPressure, start: start, end: start, objects: [systolic, diastolic])
        var stamp = Metadata()
        stamp[.sourceName] = .string("cuff")
        guard case .correlation(let stamped) = HealthRecord.correlation(pressure).stamped(stamp) else {
            return XCTFail("not a correlation")
        }
        XCTAssertEqual(stamped.id, pressure.id)
        XCTAssertEqual(stamped.metadata[.sourceName], .string("cuff"))
        XCTAssertEqual(stamped.objects.map { $0.metadata[.sourceName] }, [.string("cuff"), .string("cuff")])
        XCTAssertEqual(stamped.objects.map(\.id), pressure.objects.map(\.id))
    }
}
