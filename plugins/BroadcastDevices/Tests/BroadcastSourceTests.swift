import BLEAdvertisementKit
import BLETransport
import BroadcastDevices
import Foundation
import GatewayRuntime
import GatewayTesting
import HealthModel
import SampleBus
import XCTest

/// The sources on a scripted scanner into a collecting sink: what is stored, and what is not.
final class BroadcastSourceTests: XCTestCase {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func settings(devices: [String]? = nil) throws -> BroadcastSourceSettings {
        var configuration = BroadcastSourceConfiguration()
        configuration.transport = .simulated
        configuration.devices = devices
        return try configuration.validated(in: TestEnvironment.make(name: "t", clock: ManualClock(), directory: FileManager.default.temporaryDirectory))
    }

    func polar(_ status: UInt8, _ heartRate: UInt8, at second: Double, name: String = "Polar H10 1A2B3C4D") -> Advertisement {
        Advertisement(
            address: "a0:9e:1a:12:34:56", name: name, manufacturerData: [0x006B: [status, 0x00, heartRate &+ 5, heartRate]],
            receivedAt: start.addingTimeInterval(second))
    }

    /// Four advertisements a second, a new value each second (the counter advances): one sample
    /// per value, with contact and battery in the metadata, under the device id of the name.
    func testPolarStoresNewValuesOnly() async throws {
        var script: [Advertisement] = []
        for second in 0..<5 {
            let status = UInt8(0x03 | ((second % 8) << 2)) & (second == 4 ? 0xFE : 0xFF)  // battery low at the end
            for quarter in 0..<4 { script.append(polar(status, UInt8(70 + second), at: Double(second) + Double(quarter) / 4)) }
        }
        let settings = try settings()
        let harness = try SourceHarness(name: "polar", kind: PolarBroadcastSource.kind) { environment in
            PolarBroadcastSource(settings: settings, ids: environment.ids, scanner: ScriptedAdvertisementScanner(script: script))
        }
        try await harness.run { harness in
            try await harness.waitFor("5 heart rates") { harness.quantities(.heartRate).count == 5 }
        }
        let samples = harness.quantities(.heartRate)
        XCTAssertEqual(samples.map(\.quantity.value), [70, 71, 72, 73, 74])
        XCTAssertEqual(samples.map(\.startDate), (0..<5).map { start.addingTimeInterval(Double($0)) })
        XCTAssertEqual(samples.first?.device?.localIdentifier, "1A2B3C4D")
        XCTAssertEqual(samples.first?.device?.radioIdentifier, "1A2B3C4D", "the Polar device id is the broadcast's radio")
        XCTAssertEqual(samples.first?.device?.model, "H10")
        XCTAssertEqual(samples.first?.metadata[.sensorContact], .bool(true))
        XCTAssertEqual(samples.first?.metadata[.broadcast], .bool(true), "it came by a broadcast")
        XCTAssertEqual(samples.map { $0.metadata[.lowBattery] }, [false, false, false, false, true].map(MetadataValue.bool))
        XCTAssertEqual(harness.current.details["scanPath"], "discovery")
    }

    /// Advertisements the scanner dropped before yielding them (the management socket's reader,
    /// whose scan fell behind) are shown in status and as a metric.
    func testTheScannersDropsAreShown() async throws {
        var script: [Advertisement] = []
        for second: UInt8 in 0..<3 { script.append(polar(0x03 | second << 2, 80 + second, at: Double(second))) }
        let settings = try settings()
        let scanner = ScriptedAdvertisementScanner(script: script, dropped: 17)
        let harness = try SourceHarness(name: "polar", kind: PolarBroadcastSource.kind) { environment in
            PolarBroadcastSource(settings: settings, ids: environment.ids, scanner: scanner)
        }
        try await harness.run { harness in
            try await harness.waitFor("3 heart rates") { harness.quantities(.heartRate).count == 3 }
        }
        XCTAssertEqual(harness.current.details["scanDroppedAdvertisements"], "17")
        XCTAssertEqual(harness.current.metrics[MetricSeries("scan_dropped_advertisements")], 17)
    }

    /// A strap heard once every 3 s (what a duplicate filter can leave): reported, not accepted.
    func testPolarReportsAnInsufficientRate() async throws {
        let script = (0..<4).map { polar(UInt8(0x03 | ($0 << 2)), 80, at: Double($0) * 3) }
        let settings = try settings()
        let harness = try SourceHarness(name: "polar", kind: PolarBroadcastSource.kind) { environment in
            PolarBroadcastSource(settings: settings, ids: environment.ids, scanner: ScriptedAdvertisementScanner(script: script))
        }
        try await harness.run { harness in
            try await harness.waitFor("the rate reported") { harness.current.lastError?.contains("needs 1.0/s") == true }
        }
        XCTAssertTrue(harness.current.lastError?.contains("by discovery") == true, harness.current.lastError ?? "")
    }

    /// The `devices` key keeps the straps it names (by device id here).
    func testPolarDeviceSelection() async throws {
        let script = [
            polar(0x03, 60, at: 0, name: "Polar H9 0000AAAA"), polar(0x03, 90, at: 0.1, name: "Polar H10 1A2B3C4D"),
        ]
        let settings = try settings(devices: ["1a2b3c4d"])
        let harness = try SourceHarness(name: "polar", kind: PolarBroadcastSource.kind) { environment in
            PolarBroadcastSource(settings: settings, ids: environment.ids, scanner: ScriptedAdvertisementScanner(script: script + [polar(0x07, 91, at: 1)]))
        }
        try await harness.run { harness in
            try await harness.waitFor("2 heart rates") { harness.quantities(.heartRate).count == 2 }
        }
        XCTAssertEqual(harness.quantities(.heartRate).map(\.quantity.value), [90, 91])
    }

    /// The `devices` key names a strap by its address in any form ``DeviceIdentity`` reads (here
    /// lower case with `-`), as a participant's `devices` do.
    func testPolarDeviceSelectionByAddress() async throws {
        var elsewhere = polar(0x03, 60, at: 0, name: "Polar H9 0000AAAA")
        elsewhere.address = "A0:9E:1A:00:00:09"
        let script = [elsewhere, polar(0x03, 90, at: 0.1), polar(0x07, 91, at: 1)]
        let settings = try settings(devices: ["a0-9e-1a-12-34-56"])
        let harness = try SourceHarness(name: "polar", kind: PolarBroadcastSource.kind) { environment in
            PolarBroadcastSource(settings: settings, ids: environment.ids, scanner: ScriptedAdvertisementScanner(script: script))
        }
        try await harness.run { harness in
            try await harness.waitFor("2 heart rates") { harness.quantities(.heartRate).count == 2 }
        }
        XCTAssertEqual(harness.quantities(.heartRate).map(\.quantity.value), [90, 91])
        XCTAssertEqual(harness.quantities(.heartRate).first?.metadata[.advertiserAddress], .string("A0:9E:1A:12:34:56"))
    }

    /// One weighing repeated (measuring, stabilised, stepped off) in a shuffled order, then a
    /// second weighing: two body-mass samples, the impedance in the metadata.
    func testMiScaleStoresEachWeighingOnce() async throws {
        func scale(_ control: UInt8, raw: UInt16, minute: UInt8, impedance: UInt16, at second: Double) -> Advertisement {
            Advertisement(
                address: "C8:47:8C:01:02:03", name: "MIBFS",
                serviceData: [
                    BluetoothUUID(0x181B): [
                        0x02, control, 0xEA, 0x07, 3, 14, 7, minute, 5, UInt8(impedance & 0xFF), UInt8(impedance >> 8),
                        UInt8(raw & 0xFF), UInt8(raw >> 8),
                    ]
                ], receivedAt: start.addingTimeInterval(second))
        }
        var first = [scale(0x04, raw: 14000, minute: 30, impedance: 0, at: 0)]
        first += (0..<6).map { scale(0x26, raw: 14090, minute: 30, impedance: 500, at: 1 + Double($0)) }
        first += (0..<6).map { scale(0xA6, raw: 14090, minute: 30, impedance: 500, at: 7 + Double($0)) }
        var generator = SeededRandom(seed: 47)
        first.shuffle(using: &generator)
        let second = (0..<3).map { scale(0x26, raw: 14100, minute: 45, impedance: 502, at: 100 + Double($0)) }
        let settings = try settings()
        let harness = try SourceHarness(name: "scale", kind: MiScaleSource.kind) { environment in
            MiScaleSource(settings: settings, ids: environment.ids, scanner: ScriptedAdvertisementScanner(script: first + second))
        }
        try await harness.run { harness in
            try await harness.waitFor("2 weighings") { harness.quantities(.bodyMass).count == 2 }
        }
        let samples = harness.quantities(.bodyMass)
        XCTAssertEqual(samples.map(\.quantity.value), [70.45, 70.5])
        XCTAssertEqual(samples.map { $0.metadata[.impedance] }, [.integer(500), .integer(502)])
        XCTAssertEqual(samples.first?.metadata[.scaleTimestamp], .string("2026-03-14T07:30:05"))
        XCTAssertEqual(samples.first?.device?.model, "Mi Body Composition Scale 2")
    }

    /// Two weighings of a body composition scale (80 kg at 500 ohms, then 80.5 kg at 502), each
    /// stabilised first without its impedance, as the scale sends it.
    func bodyCompositionWeighings() -> [Advertisement] {
        let weighings: [(control: UInt8, raw: UInt16, impedance: UInt16, minute: UInt8, second: Double)] = [
            (0x24, 16000, 0, 30, 0), (0x26, 16000, 500, 30, 2), (0x24, 16100, 0, 45, 100), (0x26, 16100, 502, 45, 102),
        ]
        return weighings.map { control, raw, impedance, minute, second -> Advertisement in
            let bytes: [UInt8] = [
                0x02, control, 0xEA, 0x07, 3, 14, 7, minute, 5, UInt8(impedance & 0xFF), UInt8(impedance >> 8),
                UInt8(raw & 0xFF), UInt8(raw >> 8),
            ]
            return Advertisement(
                address: "C8:47:8C:01:02:03", name: "MIBFS",
                serviceData: [BluetoothUUID(0x181B): bytes], receivedAt: start.addingTimeInterval(second))
        }
    }

    /// The scale's wearer has sex, date of birth and height: body fat and lean body mass beside
    /// each body mass, all three under the participant's name.
    func testMiScaleBodyCompositionForTheWearer() async throws {
        let ana = ParticipantCharacteristics(
            name: "Ana", devices: ["C8:47:8C:01:02:03"],
            characteristics: UserCharacteristics(heightMeters: 1.65, dateOfBirth: "1998-05-01", biologicalSex: .female))
        let settings = try settings()
        let weighings = bodyCompositionWeighings()
        let harness = try SourceHarness(name: "scale", kind: MiScaleSource.kind) { environment in
            MiScaleSource(
                settings: settings, ids: environment.ids, scanner: ScriptedAdvertisementScanner(script: weighings), participants: [ana])
        }
        try await harness.run { harness in
            try await harness.waitFor("2 weighings") { harness.quantities(.leanBodyMass).count == 2 }
        }
        XCTAssertEqual(harness.quantities(.bodyMass).map(\.quantity.value), [80, 80.5])
        XCTAssertEqual(harness.quantities(.bodyMass).map { $0.metadata[.impedance] }, [nil, nil], "stored before the impedance came")
        let fat = harness.quantities(.bodyFatPercentage)
        let expected = try [(80.0, 500), (80.5, 502)].map { weight, impedance in
            try MiBodyComposition.estimate(weightKilograms: weight, impedance: impedance, heightMeters: 1.65, age: 28, sex: .female).get()
        }
        XCTAssertEqual(fat.map(\.quantity.value), expected.map(\.bodyFatPercentage))
        XCTAssertEqual(fat.map(\.quantity.unit), [.percent, .percent])
        XCTAssertEqual(harness.quantities(.leanBodyMass).map(\.quantity.value), expected.map(\.leanBodyMassKilograms))
        // Computed for Ana; the readings name nobody: the store attributes the weighing where it
        // commits it, and the body composition of the same instant follows it (issue 77).
        XCTAssertEqual(Set(harness.quantities.map { $0.metadata[.person] }), [nil])
        XCTAssertEqual(Set(harness.quantities.map(\.startDate)).count, 2, "each weighing's readings dated as it")
        XCTAssertEqual(harness.current.details["body composition C8:47:8C:01:02:03"], "computed")
    }

    /// Nobody's profile: body mass only, and the log says why once for both weighings.
    func testMiScaleWithoutAProfileStoresBodyMassOnly() async throws {
        let settings = try settings()
        let weighings = bodyCompositionWeighings()
        let harness = try SourceHarness(name: "scale", kind: MiScaleSource.kind) { environment in
            MiScaleSource(settings: settings, ids: environment.ids, scanner: ScriptedAdvertisementScanner(script: weighings))
        }
        try await harness.run { harness in
            try await harness.waitFor("2 weighings") { harness.quantities(.bodyMass).count == 2 }
        }
        XCTAssertEqual(harness.quantities.map(\.type), [.bodyMass, .bodyMass])
        let why = harness.logs.entries.filter { $0.message.contains("body fat not computed") }
        XCTAssertEqual(why.count, 1, "\(why)")
        XCTAssertTrue(why.first?.message.contains("lacks biologicalSex, dateOfBirth, heightMeters") ?? false, "\(why)")
        XCTAssertTrue(
            harness.current.details["body composition C8:47:8C:01:02:03"]?.hasPrefix("not computed: the configuration's profile lacks") ?? false,
            "\(harness.current.details)")
    }
}
