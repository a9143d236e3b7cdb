import SampleBus
import BLEProfileKit
import BLETransport
import GATTDecoding
import Foundation
import GatewayTesting
import HealthModel
import HeartRateMonitor
import GatewayRuntime
import Synchronization
import XCTest

/// The simulated transport (used by `healthgate demo`) through the real source and decoders.
final class SimulatedTransportTests: XCTestCase {
    func testSimulatedMonitorAndFootPodProduceRealSamples() async throws {
        let settings = HeartRateSimulationConfiguration(heartRateMonitors: 1, footPods: 1, notificationsPerSecond: 1)
        let configuration = HeartRateSourceConfiguration(
            transport: .simulated, profile: HeartRateProfileConfiguration(runningWindowSeconds: 5, simulation: settings))
        // The configured simulated transport, on the harness's clock, as `healthgate demo` makes it.
        let h = try SourceHarness(name: "hr", kind: HeartRateSource.kind) { environment in
            try HeartRateSource(settings: configuration.validated(in: environment), environment: environment)
        }
        try await h.run { h in
            for second in 1...12 {
                // Discovery idles on the clock; each device's notification stream waits one period.
                try await h.waitFor("three sleepers before second \(second)") { h.clock.sleeperCount == 3 }
                h.clock.advance(by: .seconds(1))
            }
            try await h.waitFor("12 heart rates") { h.quantities(.heartRate).count == 12 }
            try await h.waitFor("12 speeds") { h.quantities(.runningSpeed).count == 12 }
        }
        let rates = h.quantities(.heartRate).map(\.quantity.value)
        XCTAssertTrue(rates.allSatisfy { (55...110).contains($0) }, "\(rates)")
        XCTAssertGreaterThan(Set(rates).count, 1, "the heart rate varies")
        let hr = try XCTUnwrap(h.quantities(.heartRate).first)
        XCTAssertEqual(hr.device?.name, "healthgate demo HRM")
        XCTAssertEqual(hr.device?.manufacturer, "healthgate")
        XCTAssertEqual(hr.device?.localIdentifier, "healthgate/SIM-HRM-0001")
        XCTAssertEqual(hr.metadata.heartRateSensorLocation, .chest)
        XCTAssertEqual(hr.metadata[.batteryLevel], .integer(87))
        // The Serial Number String each simulated device serves: in its samples' metadata and its
        // status detail.
        XCTAssertEqual(hr.metadata.deviceSerialNumber, "SIM-HRM-0001")
        XCTAssertEqual(h.quantities(.runningSpeed).first?.metadata.deviceSerialNumber, "SIM-POD-0001")
        XCTAssertEqual(h.series.first?.metadata.deviceSerialNumber, "SIM-HRM-0001")
        let serials = h.current.details.filter { $0.key.hasSuffix(".serial") }
        XCTAssertEqual(Set(serials.values), ["SIM-HRM-0001", "SIM-POD-0001"], "\(serials)")

        let beats = h.series.flatMap(\.beats)
        // About 78 bpm for 12 s: the RR intervals carry every beat.
        XCTAssertTrue((12...20).contains(beats.count), "\(beats.count) beats")
        XCTAssertEqual(h.series.first?.beats.first?.precededByGap, true)
        XCTAssertEqual(beats.filter(\.precededByGap).count, 1)

        let speeds = h.quantities(.runningSpeed).map(\.quantity.value)
        XCTAssertTrue(speeds.allSatisfy { (2...4).contains($0) }, "\(speeds)")
        XCTAssertEqual(h.quantities(.runningSpeed).first?.device?.name, "healthgate demo foot pod")
        let distance = h.quantities(.distanceWalkingRunning).map(\.quantity.value).reduce(0, +)
        XCTAssertEqual(distance, 11 * 2.9, accuracy: 5)
        let steps = h.quantities(.stepCount)
        XCTAssertFalse(steps.isEmpty)
        XCTAssertTrue(steps.allSatisfy { $0.metadata[.estimated] == .bool(true) })
        XCTAssertEqual(h.current.dropped, 0)
        XCTAssertEqual(h.current.errors, 0)
    }

    /// Devices started together still notify spread over the period, each on its own fixed
    /// schedule, with wake-ups on the 10 ms grid.
    func testDevicesAreSpreadOverThePeriodOnFixedSchedules() async throws {
        let clock = ManualClock()
        let transport = SimulatedBLETransport(clock: clock, settings: HeartRateSimulationConfiguration(heartRateMonitors: 3))
        let start = clock.now()
        let arrivals = Arrivals()
        var readers: [Task<Void, any Error>] = []
        for peripheral in transport.peripherals {
            let connection = try await transport.connect(to: peripheral.address)
            let stream = try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService)
            let device = readers.count
            readers.append(Task {
                var received = 0
                for try await notification in stream {
                    XCTAssertEqual(notification.characteristic, .heartRateMeasurement)
                    XCTAssertNoThrow(try HeartRateMeasurementDecoder.decode(notification.value))
                    // Stamped when made: the due time on the clock.
                    XCTAssertEqual(notification.receivedAt, clock.now())
                    arrivals.mutex.withLock { $0[device, default: []].append(notification.receivedAt.timeIntervalSince(start)) }
                    received += 1
                    if received == 2 { return }
                }
            })
        }
        // 2.5 s in steps of 10 ms, waiting each time until every device sleeps again.
        for step in 1...250 {
            try await waitUntil("all devices waiting at step \(step)") {
                clock.sleeperCount == 3 - arrivals.mutex.withLock { $0.values.filter { $0.count == 2 }.count }
            }
            clock.advance(by: .milliseconds(10))
        }
        for reader in readers { try await reader.value }
        let times = arrivals.mutex.withLock { $0 }
        func rounded(_ values: [Double]?) -> [Double] { (values ?? []).map { ($0 * 100).rounded() / 100 } }
        // Device 0 waits one whole period; device n starts at 1 − frac(n × 0.618…) of it,
        // rounded up to the grid: 0.382 → 0.39 s, 0.764 → 0.77 s. Then exactly one period apart.
        XCTAssertEqual(rounded(times[0]), [1.0, 2.0])
        XCTAssertEqual(rounded(times[1]), [0.39, 1.39])
        XCTAssertEqual(rounded(times[2]), [0.77, 1.77])
    }
}

/// The simulated heart-rate monitor's payloads decode at every rate the configuration accepts
/// (up to 100/s), including rates above the heart rate, where most notifications carry no beat.
final class SimulatedPayloadRateTests: XCTestCase {
    func testEveryPayloadDecodesAtEveryRate() async throws {
        for rate in [0.5, 1, 1.3, 2, 5, 10, 50, 100] {
            let clock = SteppingClock()
            let transport = SimulatedBLETransport(clock: clock, settings: HeartRateSimulationConfiguration(notificationsPerSecond: rate))
            let connection = try await transport.connect(to: try XCTUnwrap(transport.peripherals.first).address)
            let stream = try await connection.notifications(of: .heartRateMeasurement, in: .heartRateService)
            var intervals = 0.0
            var count = 0
            // 120 simulated seconds at each rate.
            let notifications = Int(120 * rate)
            for try await notification in stream {
                let measurement: HeartRateMeasurement
                do {
                    measurement = try HeartRateMeasurementDecoder.decode(notification.value)
                } catch {
                    return XCTFail("\(rate)/s, notification \(count): \(HexPayload.format(notification.value)): \(error)")
                }
                XCTAssertEqual(measurement.sensorContact, .detected)
                XCTAssertNotNil(measurement.energyExpended)
                intervals += measurement.rrIntervals.map { Double($0) / 1024 }.reduce(0, +)
                count += 1
                if count == notifications { break }
            }
            await connection.disconnect()
            XCTAssertEqual(count, notifications, "\(rate)/s")
            // The RR intervals account for the time that passed, at any rate (within a beat or two).
            XCTAssertEqual(intervals, 120, accuracy: 2.5, "\(rate)/s")
        }
    }
}

/// A clock whose sleeps return at once, having moved the time on: a device's notifications
/// arrive as fast as the test reads them, each stamped with its due time.
private final class SteppingClock: GatewayClock {
    private let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    func now() -> Date { time.withLock { $0 } }
    func uptime() -> Duration { .seconds(time.withLock { $0 }.timeIntervalSince1970) }
    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        time.withLock { $0 = $0.addingTimeInterval(duration.seconds) }
    }
}

/// Seconds since the start at which each device's payloads arrived.
private final class Arrivals: Sendable {
    let mutex = Mutex<[Int: [Double]]>([:])
}
