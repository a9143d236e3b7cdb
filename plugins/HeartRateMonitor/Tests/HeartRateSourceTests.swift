import BLEProfileKit
import BLETesting
import BLETransport
import Foundation
import GatewayTesting
import HealthModel
import HeartRateMonitor
import SampleBus
import GatewayRuntime
import XCTest

/// The whole source against the scripted fake transport, into a CollectingSink, on a ManualClock.
final class HeartRateSourceTests: XCTestCase {
    /// flags 0x16: uint8 HR, contact supported and detected, RR intervals.
    static func beat(_ bpm: UInt8, rr: [UInt16] = [1024]) -> [UInt8] {
        [0x16, bpm] + rr.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }

    /// A source that falls behind (here: a slow Control Point write) keeps each sample's time
    /// of arrival, and what the transport dropped beyond its buffer is counted and logged with
    /// the device.
    func testFallingBehindKeepsArrivalTimesAndCountsDrops() async throws {
        let profile = FakeProfile.heartRateMonitor()
        let transport = FakeBLETransport(profiles: [profile])
        let h = try SourceHarness(transport: transport)
        let address = profile.address
        let start = h.clock.now()
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(profile.peripheral))
            try await h.waitFor("subscription") { transport.latest(address)?.isSubscribed(.heartRateMeasurement) == true }
            let link = try XCTUnwrap(transport.latest(address))
            link.holdWrites()
            // Energy expended saturated: the source writes the reset, and waits on it.
            link.send([0x0E, 70, 0xFF, 0xFF])
            try await h.waitFor("the held write") { link.heldWriteCount == 1 }
            // Meanwhile 12 notifications arrive, one a second; the buffer keeps the newest 8.
            for second in 1...12 {
                h.clock.advance(by: .seconds(1))
                link.send(Self.beat(UInt8(100 + second)))
            }
            XCTAssertEqual(link.droppedNotifications, 4)
            link.releaseWrites()
            try await h.waitFor("the kept samples") { h.quantities(.heartRate).count == 9 }
            try await h.waitFor("the drops counted") { h.current.dropped == 4 }
        }
        let samples = h.quantities(.heartRate)
        XCTAssertEqual(samples.map(\.quantity.value), [70] + (5...12).map { Double(100 + $0) })
        // Each sample keeps the second its notification arrived, not when it was mapped.
        XCTAssertEqual(samples.map { $0.startDate.timeIntervalSince(start) }, [0] + (5...12).map(Double.init))
        XCTAssertTrue(h.logs.entries.contains {
            $0.message.contains("dropped 4 notification") && $0.device?.contains("Polar H10 1234") == true
        }, "\(h.logs.entries.map(\.message))")
    }

    func testHeartRateSamplesDeviceFactsSeriesNoContactEnergyResetAndBadPayload() async throws {
        let profile = FakeProfile.heartRateMonitor()
        let transport = FakeBLETransport(profiles: [profile])
        let h = try SourceHarness(transport: transport)
        let address = profile.address
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(profile.peripheral))
            try await h.waitFor("subscription") { transport.latest(address)?.isSubscribed(.heartRateMeasurement) == true }
            let link = try XCTUnwrap(transport.latest(address))

            link.send(Self.beat(72))
            try await h.waitFor("first sample") { h.quantities(.heartRate).count == 1 }
            h.clock.advance(by: .seconds(1))
            link.send(Self.beat(75))
            try await h.waitFor("second sample") { h.quantities(.heartRate).count == 2 }
            h.clock.advance(by: .seconds(1))
            // Contact supported but not detected, 0 bpm: not a heart rate.
            link.send([0x14, 0x00, 0x00, 0x04])
            try await h.waitFor("no-contact count") { h.current.dropped == 1 }
            h.clock.advance(by: .seconds(1))
            link.send(Self.beat(80))
            try await h.waitFor("third sample") { h.quantities(.heartRate).count == 3 }
            // A cut payload: logged with the device, counted, and the source keeps going.
            link.send([0x16, 0x48, 0x54])
            try await h.waitFor("bad payload") { h.current.details["\(address).badPayloads"] == "1" }
            // Energy expended saturated: the source asks the sensor to reset it.
            link.send([0x1E, 81, 0xFF, 0xFF, 0x00, 0x04])
            try await h.waitFor("energy reset") { link.writes.count == 1 }
            link.send([0x0E, 82, 0xFF, 0xFF])
            link.send([0x06, 83])
            try await h.waitFor("sixth sample") { h.quantities(.heartRate).count == 6 }
            XCTAssertEqual(link.writes.count, 1, "one reset per saturation")
            XCTAssertEqual(link.writes.first?.0, .heartRateControlPoint)
            XCTAssertEqual(link.writes.first?.1, [0x01])

            // The link drops: the series of this connection is published.
            link.dropLink()
            try await h.waitFor("series at disconnect") { h.series.count == 1 }
        }

        XCTAssertEqual(h.quantities(.heartRate).map(\.quantity.value), [72, 75, 80, 81, 82, 83])
        let sample = try XCTUnwrap(h.quantities(.heartRate).first)
        XCTAssertEqual(sample.quantity.unit, .countPerMinute)
        XCTAssertEqual(sample.startDate, ManualClock().now())
        let device = try XCTUnwrap(sample.device)
        XCTAssertEqual(device.name, "Polar H10 1234")
        XCTAssertEqual(device.manufacturer, "Polar Electro Oy")
        XCTAssertEqual(device.model, "H10")
        XCTAssertEqual(device.firmwareVersion, "3.1.1")
        XCTAssertEqual(device.localIdentifier, "Polar Electro Oy/A1B2C3D4")
        XCTAssertEqual(device.radioIdentifier, "C0:FF:EE:00:00:01", "the address stays beside the serial number")
        XCTAssertEqual(sample.metadata.heartRateSensorLocation, .chest)
        XCTAssertEqual(sample.metadata[.batteryLevel], .integer(77))
        XCTAssertEqual(sample.metadata[.bleAddress], .string("C0:FF:EE:00:00:01"))
        XCTAssertEqual(h.current.details["C0:FF:EE:00:00:01.battery"], "77%")
        // Device Information's Serial Number String: in every sample's metadata under HealthKit's
        // key, and in status per device.
        XCTAssertEqual(sample.metadata.deviceSerialNumber, "A1B2C3D4")
        XCTAssertTrue(h.quantities.allSatisfy { $0.metadata.deviceSerialNumber == "A1B2C3D4" })
        XCTAssertEqual(h.current.details["C0:FF:EE:00:00:01.serial"], "A1B2C3D4")
        XCTAssertEqual(h.current.details["C0:FF:EE:00:00:01.droppedNoContact"], "1")
        XCTAssertEqual(h.current.dropped, 1)
        XCTAssertGreaterThanOrEqual(h.current.errors, 1)
        XCTAssertTrue(h.logs.entries.contains { $0.message.contains("bad payload 164854") && $0.device?.contains("Polar H10 1234") == true })

        let series = try XCTUnwrap(h.series.first)
        XCTAssertEqual(series.device?.localIdentifier, "Polar Electro Oy/A1B2C3D4")
        XCTAssertEqual(series.device?.radioIdentifier, "C0:FF:EE:00:00:01")
        XCTAssertEqual(series.metadata.heartRateSensorLocation, .chest)
        XCTAssertEqual(series.metadata.deviceSerialNumber, "A1B2C3D4")
        // 72 and 75 bpm: anchor + 2 beats; no contact: a gap; 80 bpm: anchor + beat; 81: one beat.
        XCTAssertEqual(series.beats.map(\.precededByGap), [true, false, false, true, false, false])
        XCTAssertEqual(series.beats.map(\.timeSinceSeriesStart), [0, 1, 2, 3, 4, 5])
        XCTAssertFalse(h.quantities.contains { $0.type == .heartRate && $0.quantity.value == 0 })
    }

    func testReconnectsWithBackoffResubscribesAndRecordsTheGap() async throws {
        let profile = FakeProfile.heartRateMonitor(controlPoint: false, batteryService: false)
        let transport = FakeBLETransport(profiles: [profile])
        let address = profile.address
        transport.script(address, [.fail(.inProgress), .fail(.connectFailed)])
        let h = try SourceHarness(transport: transport)
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(profile.peripheral))
            try await h.waitFor("first failed attempt") { transport.attempts(address) == 1 && h.clock.sleeperCount == 1 }
            h.clock.advance(by: .seconds(1))
            try await h.waitFor("second failed attempt") { transport.attempts(address) == 2 && h.clock.sleeperCount == 1 }
            h.clock.advance(by: .seconds(1))
            XCTAssertEqual(transport.attempts(address), 2, "the second backoff is 2 s")
            h.clock.advance(by: .seconds(1))
            try await h.waitFor("connected") { transport.latest(address)?.isSubscribed(.heartRateMeasurement) == true }
            XCTAssertEqual(transport.attempts(address), 3)
            let first = try XCTUnwrap(transport.latest(address))
            first.send(Self.beat(70))
            try await h.waitFor("sample 1") { h.quantities(.heartRate).count == 1 }

            // The link drops: backoff, reconnect, resubscribe.
            first.dropLink()
            try await h.waitFor("backoff after link loss") { h.clock.sleeperCount == 1 }
            h.clock.advance(by: .seconds(5))
            try await h.waitFor("resubscribed") {
                transport.connections(address).count == 2 && transport.latest(address)?.isSubscribed(.heartRateMeasurement) == true
            }
            let second = try XCTUnwrap(transport.latest(address))
            second.send(Self.beat(71))
            try await h.waitFor("sample 2") { h.quantities(.heartRate).count == 2 }

            // The device object goes away: no attempts until it is discovered again, even an hour later.
            transport.emit(.lost(address: address))
            try await h.waitFor("lost seen") { h.logs.contains("no longer discovered") }
            second.dropLink()
            try await h.waitFor("waiting for rediscovery") {
                h.current.details["\(address).state"] == "waiting for the device to advertise"
            }
            h.clock.advance(by: .seconds(3600))
            XCTAssertEqual(transport.attempts(address), 4)
            transport.emit(.found(profile.peripheral))
            try await h.waitFor("picked up again") {
                transport.connections(address).count == 3 && transport.latest(address)?.isSubscribed(.heartRateMeasurement) == true
            }
            transport.latest(address)?.send(Self.beat(72))
            try await h.waitFor("sample 3") { h.quantities(.heartRate).count == 3 }
        }
        XCTAssertEqual(h.quantities(.heartRate).map(\.quantity.value), [70, 71, 72])
        // No battery service: the stack's Battery1 value is used.
        XCTAssertEqual(h.quantities(.heartRate).first?.metadata[.batteryLevel], .integer(55))
        // One series per connection segment; each starts with a gap.
        XCTAssertEqual(h.series.count, 3)
        XCTAssertTrue(h.series.allSatisfy { $0.beats.first?.precededByGap == true })
        XCTAssertEqual(h.current.details["\(profile.address).connections"], "3")
        XCTAssertTrue(h.logs.contains("link lost"))
        XCTAssertEqual(transport.connections(address).map(\.disconnectCalls).min(), 1)
    }

    func testNoBluetoothIsLoggedOnceAndRetriedUntilItAppears() async throws {
        let profile = FakeProfile.heartRateMonitor()
        let transport = FakeBLETransport(profiles: [profile])
        let outage = BLETransportError(.unavailable, "no powered adapter")
        transport.failDiscovery([outage, outage, outage])
        let h = try SourceHarness(transport: transport)
        try await h.run { h in
            for (call, delay) in [(1, 1), (2, 2), (3, 4)] {
                // The discovery reports the outage to the supervisor's loop, which sets the status
                // apart from it: wait for that too (CI once read the status before it was set).
                try await h.waitFor("discover call \(call)") {
                    transport.discoverCalls == call && h.clock.sleeperCount == 1 && h.current.details["bluetooth"] == "unavailable"
                }
                h.clock.advance(by: .seconds(delay))
            }
            try await h.waitFor("discovery running") { transport.discoverCalls == 4 }
            transport.emit(.found(profile.peripheral))
            try await h.waitFor("connected") { transport.latest(profile.address)?.isSubscribed(.heartRateMeasurement) == true }
        }
        XCTAssertEqual(h.logs.entries.filter { $0.message.contains("no Bluetooth") }.count, 1)
        XCTAssertEqual(h.logs.entries.first { $0.message.contains("no Bluetooth") }?.level, .error)
        XCTAssertTrue(h.logs.contains("Bluetooth is available again"))
        XCTAssertEqual(h.current.errors, 3)
        XCTAssertNil(h.current.details["bluetooth"])
    }

    func testOwnFilterAndMaxDevices() async throws {
        let wanted = FakeProfile.heartRateMonitor(address: "C0:FF:EE:00:00:01", name: "Wahoo TICKR 1")
        let other = FakeProfile.heartRateMonitor(address: "C0:FF:EE:00:00:03", name: "Polar H10 9")
        let third = FakeProfile.heartRateMonitor(address: "C0:FF:EE:00:00:04", name: "Wahoo TICKR 2")
        let keyboard = DiscoveredPeripheral(address: "C0:FF:EE:00:00:05", name: "Wahoo TICKR keyboard", serviceUUIDs: [BluetoothUUID(0x1812)])
        let transport = FakeBLETransport(profiles: [wanted, other, third])
        var configuration = HeartRateSourceConfiguration(devices: .matching([.name("Wahoo TICKR*")]))
        configuration.maxDevices = 1
        let h = try SourceHarness(configuration: configuration, transport: transport)
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(keyboard))
            transport.emit(.found(other.peripheral))
            transport.emit(.found(wanted.peripheral))
            transport.emit(.found(third.peripheral))
            try await h.waitFor("connected") { transport.latest(wanted.address)?.isSubscribed(.heartRateMeasurement) == true }
            transport.latest(wanted.address)?.send(Self.beat(90))
            try await h.waitFor("sample") { h.quantities(.heartRate).count == 1 }
        }
        XCTAssertEqual(transport.attempts(other.address), 0)
        XCTAssertEqual(transport.attempts(third.address), 0, "maxDevices is 1")
        XCTAssertEqual(transport.attempts(keyboard.address), 0)
    }

    /// A device with both Heart Rate and RSC: one subscription carries both, and each
    /// notification goes to its own mapping.
    func testDeviceWithHeartRateAndRunningSpeedOnOneStream() async throws {
        var both = FakeProfile.heartRateMonitor()
        both.characteristics[.runningSpeedAndCadenceService] = [.rscMeasurement]
        let profile = both
        let transport = FakeBLETransport(profiles: [profile])
        let h = try SourceHarness(transport: transport)
        try await h.run { h in
            let link = try await transport.connect(profile, in: h, until: "subscribed") { $0.isSubscribed(.rscMeasurement) }
            XCTAssertTrue(link.isSubscribed(.heartRateMeasurement))
            link.send(Self.beat(88))
            // Flags 0x00: instantaneous speed 3 m/s (768/256), cadence 170.
            link.send([0x00, 0x00, 0x03, 170], on: .rscMeasurement)
            try await h.waitFor("both samples") { h.quantities(.heartRate).count == 1 && h.quantities(.runningSpeed).count == 1 }
        }
        XCTAssertEqual(h.quantities(.heartRate).first?.quantity.value, 88)
        XCTAssertEqual(h.quantities(.runningSpeed).first?.quantity.value, 3)
        XCTAssertTrue(h.logs.contains("subscribed to heart rate and running speed and cadence notifications"))
    }

    func testFootPodSpeedStrideDistanceAndEstimatedSteps() async throws {
        let pod = FakeProfile.footPod()
        let transport = FakeBLETransport(profiles: [pod])
        let h = try SourceHarness(transport: transport)
        try await h.run { h in
            try await h.waitFor("discovery") { transport.discoverCalls == 1 }
            transport.emit(.found(pod.peripheral))
            try await h.waitFor("subscribed") { transport.latest(pod.address)?.isSubscribed(.rscMeasurement) == true }
            let link = try XCTUnwrap(transport.latest(pod.address))
            for second in 0...10 {
                // 3 m/s, 180 steps/min, stride 1.00 m, total distance 100 m + 3 m/s.
                let distance = UInt32(1000 + 30 * second)
                link.send(
                    [0x07, 0x00, 0x03, 180, 100, 0]
                        + [UInt8(distance & 0xFF), UInt8(distance >> 8 & 0xFF), UInt8(distance >> 16 & 0xFF), UInt8(distance >> 24)],
                    on: .rscMeasurement)
                try await h.waitFor("speed \(second)") { h.quantities(.runningSpeed).count == second + 1 }
                h.clock.advance(by: .seconds(1))
            }
            try await h.waitFor("window") { h.quantities(.stepCount).count == 1 }
        }
        XCTAssertEqual(h.quantities(.runningSpeed).first?.quantity.value, 3)
        XCTAssertEqual(h.quantities(.runningStrideLength).first?.quantity.value, 1)
        let distance = try XCTUnwrap(h.quantities(.distanceWalkingRunning).first)
        XCTAssertEqual(distance.quantity.value, 30, accuracy: 1e-9)
        XCTAssertEqual(distance.endDate.timeIntervalSince(distance.startDate), 10)
        let steps = try XCTUnwrap(h.quantities(.stepCount).first)
        XCTAssertEqual(steps.quantity.value, 30)
        XCTAssertEqual(steps.metadata[.estimated], .bool(true))
        XCTAssertNil(distance.metadata[.estimated])
        XCTAssertEqual(steps.metadata[.batteryLevel], .integer(90))
        XCTAssertEqual(steps.device?.localIdentifier, pod.address)
        XCTAssertNil(steps.metadata.heartRateSensorLocation)
    }

    func testFailedOptionalReadsAreLoggedAndTheConnectionContinues() async throws {
        var profile = FakeProfile.heartRateMonitor()
        profile.values[.batteryLevel] = nil  // listed, but the read fails
        profile.values[.bodySensorLocation] = [0x09]  // reserved value: a bad payload
        profile.values[.serialNumber] = nil
        let (h, transport) = try await oneHeartRate(from: profile)
        let sample = try XCTUnwrap(h.quantities(.heartRate).first)
        XCTAssertEqual(sample.metadata[.batteryLevel], .integer(55), "falls back to the stack's battery level")
        XCTAssertNil(sample.metadata.heartRateSensorLocation)
        XCTAssertEqual(sample.device?.localIdentifier, profile.address, "no serial number: the address")
        XCTAssertNil(sample.metadata.deviceSerialNumber)
        XCTAssertNil(h.current.details["\(profile.address).serial"])
        XCTAssertEqual(transport.connections(profile.address).count, 1)
        XCTAssertTrue(h.logs.contains("reading 2a19 failed"))
        XCTAssertTrue(h.logs.contains("reserved value 9"))
        XCTAssertEqual(h.current.details["\(profile.address).badPayloads"], "1")
    }

    /// Runs the source until `profile`'s device, found and followed, has given one heart rate.
    private func oneHeartRate(from profile: FakeProfile) async throws -> (SourceHarness, FakeBLETransport) {
        let transport = FakeBLETransport(profiles: [profile])
        let h = try SourceHarness(transport: transport)
        try await h.run { h in
            try await transport.connect(profile, in: h, until: "subscribed") { $0.isSubscribed(.heartRateMeasurement) }
            transport.latest(profile.address)?.send(Self.beat(64))
            try await h.waitFor("sample") { h.quantities(.heartRate).count == 1 }
        }
        return (h, transport)
    }

    func testLocalIdentifierRule() {
        XCTAssertEqual(PeripheralSession.localIdentifier(address: "AA", manufacturer: "Polar", serialNumber: "A1B2C3D4"), "Polar/A1B2C3D4")
        XCTAssertEqual(PeripheralSession.localIdentifier(address: "AA", manufacturer: nil, serialNumber: "A1B2C3D4"), "AA")
        XCTAssertEqual(PeripheralSession.localIdentifier(address: "AA", manufacturer: "Polar", serialNumber: "0000"), "AA")
        XCTAssertEqual(PeripheralSession.localIdentifier(address: "AA", manufacturer: "Polar", serialNumber: "123"), "AA")
        XCTAssertEqual(PeripheralSession.localIdentifier(address: "AA", manufacturer: "Polar", serialNumber: "Unknown"), "AA")
    }

    /// A placeholder is no serial number: neither the local identifier nor the samples' metadata
    /// nor status shows it.
    func testAPlaceholderSerialNumberIsNotRecorded() async throws {
        let profile = FakeProfile.heartRateMonitor(serial: "0123456789")
        let (h, _) = try await oneHeartRate(from: profile)
        let sample = try XCTUnwrap(h.quantities(.heartRate).first)
        XCTAssertEqual(sample.device?.localIdentifier, profile.address)
        XCTAssertNil(sample.metadata.deviceSerialNumber)
        XCTAssertEqual(h.current.details["\(profile.address).battery"], "77%", "Device Information was read")
        XCTAssertNil(h.current.details["\(profile.address).serial"])
        XCTAssertNil(PeripheralSession.plausibleSerialNumber("0123456789"))
        XCTAssertEqual(PeripheralSession.plausibleSerialNumber("A1B2C3D4"), "A1B2C3D4")
    }
}
