import BLEProfileKit
import BLETransport
import Foundation
import GatewayTesting
import HealthDevices
import XCTest

/// The simulated glucose meter's Record Access Control Point, straight through the simulated
/// transport: the records each request asks for, the Glucose Service's response codes, and the
/// records the meter takes later.
final class SimulatedGlucoseMeterTests: XCTestCase {
    func testTheControlPointAnswersWithTheRecordsAskedForAndTheServicesResponseCodes() async throws {
        let clock = ManualClock()
        let settings = HealthSimulationConfiguration(
            scales: 0, cuffs: 0, thermometers: 0, oximeters: 0, glucoseMeters: 2, measurementIntervalSeconds: 60)
        let transport = SimulatedHealthTransport(clock: clock, settings: settings)
        let meter = try await transport.connect(to: "02:00:00:00:08:02")
        let glucose = HealthCharacteristic.glucoseMeasurement
        let racp = GATTCharacteristicID(.recordAccessControlPoint, in: .glucoseService)
        var notifications = try await meter.notifications(of: [GATTCharacteristicID(glucose.uuid, in: glucose.service), racp])
            .makeAsyncIterator()

        // Each request, the sequence numbers it brings, and the response that ends it.
        let cases: [(request: [UInt8], records: [Int], response: [UInt8])] = [
            ([0x01, 0x01], [1, 2, 3], [0x06, 0x00, 0x01, 0x01]),  // all
            ([0x01, 0x03, 0x01, 0x02, 0x00], [2, 3], [0x06, 0x00, 0x01, 0x01]),  // from sequence number 2
            ([0x01, 0x03, 0x01, 0x04, 0x00], [], [0x06, 0x00, 0x01, 0x06]),  // none yet: no records found
            ([0x02, 0x01], [], [0x06, 0x00, 0x02, 0x02]),  // delete: op code not supported
            ([0x01, 0x02, 0x01, 0x03, 0x00], [], [0x06, 0x00, 0x01, 0x04]),  // at most: operator not supported
            ([0x01, 0x03, 0x02, 0x00, 0x00], [], [0x06, 0x00, 0x01, 0x09]),  // by time: operand not supported
        ]
        for (request, records, response) in cases {
            try await meter.write(request, to: .recordAccessControlPoint, in: .glucoseService)
            var sequences: [Int] = []
            for _ in records {
                let notification = try await nextNotification(&notifications)
                XCTAssertEqual(notification.characteristic, glucose.uuid)
                let record = try GlucoseMeasurementDecoder.decode(notification.value)
                XCTAssertTrue((95...130).contains(record.milligramsPerDeciliter ?? 0), "\(record)")
                XCTAssertEqual(record.type, "capillaryWholeBlood")
                XCTAssertEqual(record.sampleLocation, "finger")
                sequences.append(record.sequenceNumber)
            }
            XCTAssertEqual(sequences, records, "\(request)")
            let answer = try await nextNotification(&notifications)
            XCTAssertEqual(answer.characteristic, .recordAccessControlPoint)
            XCTAssertEqual(answer.value, response, "\(request)")
        }

        // A minute on, the meter has taken record 4 and notifies it; a request then finds it.
        clock.advance(by: .seconds(60))
        let live = try await nextNotification(&notifications)
        XCTAssertEqual(try GlucoseMeasurementDecoder.decode(live.value).sequenceNumber, 4, "the record it takes")
        try await meter.write([0x01, 0x03, 0x01, 0x04, 0x00], to: .recordAccessControlPoint, in: .glucoseService)
        let again = try await nextNotification(&notifications)
        XCTAssertEqual(try GlucoseMeasurementDecoder.decode(again.value).sequenceNumber, 4)
        let done = try await nextNotification(&notifications)
        XCTAssertEqual(done.value, [0x06, 0x00, 0x01, 0x01])
        await meter.disconnect()
    }

    /// The next notification; throws when the stream ends.
    private func nextNotification(
        _ iterator: inout AsyncThrowingStream<BLENotification, any Error>.Iterator
    ) async throws -> BLENotification {
        guard let notification = try await iterator.next() else { throw StreamEnded() }
        return notification
    }

    struct StreamEnded: Error {}
}
