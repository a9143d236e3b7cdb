import Foundation
import GatewayTesting
import HealthModel
import HealthStore
import WorkoutRuntime
import Workouts
import XCTest

/// A workout's committed records read by device (issue #48): the store selects the workout's
/// devices in SQL, and what it returns is exactly what the in-memory rule
/// (``IdentitySelection``) keeps of every record, whichever identity form names a strap.
final class WorkoutDeviceReadTests: StoreTestCase {
    /// A Polar strap broadcasting (its device id in its name), then the same strap connected
    /// with another firmware (a second row in `devices`, the same identities).
    let polar = Device(name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", localIdentifier: "A0:9E:1A:00:00:01")
    let polarConnected = Device(
        name: "Polar H10 1A2B3C4D", manufacturer: "Polar Electro Oy", firmwareVersion: "5.0",
        localIdentifier: "A0:9E:1A:00:00:01", radioIdentifier: "A0:9E:1A:00:00:01")
    /// An ANT+ strap whose local identifier is a serial number.
    let ant = Device(name: "HRM-Dual", manufacturer: "Garmin", localIdentifier: "garmin/3310", radioIdentifier: "ant:120:123456")
    /// A third strap the workouts below do not name.
    let other = Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03")

    /// Interleaved heart rates of the straps (and one without a device) over 10 minutes, a step
    /// count, and a heartbeat series per strap; returns what was written.
    func writeClass() async throws -> [HealthRecord] {
        let ids = makeIDs()
        var records: [HealthRecord] = []
        for second in 0..<600 {
            let device = [polar, ant, polarConnected, other][second % 4]
            records.append(.quantity(try heartRate(ids, Double(60 + second % 90), at: Double(second), device: device)))
            if second % 97 == 0 { records.append(.quantity(try heartRate(ids, 80, at: Double(second), device: nil))) }
        }
        records.append(.quantity(try steps(ids, 500, from: 10, to: 300)))
        for (index, device) in [polar, ant, other].enumerated() {
            records.append(.heartbeatSeries(try HeartbeatSeriesSample(
                id: ids.next(), start: at(Double(60 * index)), end: at(Double(60 * index + 50)),
                beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: false),
                        Heartbeat(timeSinceSeriesStart: 50, precededByGap: false)],
                device: device)))
        }
        try await HealthStore(path: path).write(records)
        return records
    }

    /// A record by what it measured: a heart rate read back is a quantity of a series, with an
    /// id of its own, so a reading is its type, device, start and value (no two readings of a
    /// device share a start here), a heartbeat series its uuid.
    struct Measured: Hashable {
        var type: String
        var device: Device?
        var start: Date
        var value: Double
        var id: SampleID?

        init(_ record: HealthRecord) {
            switch record {
            case .quantity(let sample):
                self.init(type: sample.type.identifier, device: sample.device, start: sample.startDate, value: sample.quantity.value)
            case .heartbeatSeries(let series):
                self.init(type: "heartbeatSeries", device: series.device, start: series.startDate, value: 0, id: series.id)
            default:
                self.init(type: record.typeIdentifier, device: record.device, start: .distantPast, value: 0, id: record.id)
            }
        }

        init(type: String, device: Device?, start: Date, value: Double, id: SampleID? = nil) {
            self.type = type
            self.device = device
            self.start = start
            self.value = value
            self.id = id
        }
    }

    /// What `records` the workout's rule keeps measured: types, end from `start`, then devices.
    func expected(
        _ records: [HealthRecord], types: [QuantityType], from start: Double, devices: [String]?, excluding others: [String] = []
    ) -> Set<Measured> {
        let selection = IdentitySelection(devices)
        let excluded = IdentitySelection(others)
        return Set(records.filter { record in
            switch record {
            case .quantity(let sample): guard types.contains(sample.type), sample.endDate >= at(start) else { return false }
            case .heartbeatSeries(let series): guard types.contains(.heartRate), series.endDate >= at(start) else { return false }
            default: return false
            }
            return selection.matches(record.device) && !(record.device.map(excluded.matches) ?? false)
        }.map(Measured.init))
    }

    func testTheReadReturnsExactlyTheRecordsOfTheWorkoutsDevicesWhateverFormNamesThem() async throws {
        let written = try await writeClass()
        let journal = StoredWorkoutJournal(store: try HealthStore(path: path, access: .readOnly), clock: ManualClock())
        let types: [QuantityType] = [.heartRate, .stepCount]
        // The Polar strap by its device id in lower case, the ANT+ strap by its number with
        // leading zeros and another case, the Polar strap by its address with dashes.
        let selections: [[String]] = [["1a2b3c4d"], ["ANT:120:0123456"], ["a0-9e-1a-00-00-01", "ant:120:123456"], ["nobody"]]
        for devices in selections {
            let read = try journal.committedRecords(of: types, endingFrom: at(120), devices: devices, excluding: [])
            let ids = read.map(\.id)
            XCTAssertEqual(ids.count, Set(ids).count, "\(devices): no record twice")
            XCTAssertEqual(Set(read.map(Measured.init)).count, read.count, "\(devices): no reading twice")
            XCTAssertEqual(Set(read.map(Measured.init)), expected(written, types: types, from: 120, devices: devices), "\(devices)")
            XCTAssertTrue(read.allSatisfy { IdentitySelection(devices).matches($0.device) }, "\(devices)")
        }
        // By construction: the Polar strap's two rows give half the heart rates after 120 s, and
        // its series (60…110 s ends before 120 s, the ANT+ one 60…110 too): none of them.
        let polarOnly = try journal.committedRecords(of: types, endingFrom: at(120), devices: ["1A2B3C4D"], excluding: [])
        XCTAssertEqual(polarOnly.count, 240)
        XCTAssertEqual(Set(polarOnly.compactMap(\.device)), [polar, polarConnected])
        let fromStart = try journal.committedRecords(of: [.heartRate], endingFrom: at(0), devices: ["ant:120:123456"], excluding: [])
        XCTAssertEqual(fromStart.count, 151, "150 heart rates and the strap's series")
    }

    func testEveryDeviceTakesRecordsWithoutOneAndTheDevicesLeftOutAreLeft() async throws {
        let written = try await writeClass()
        let journal = StoredWorkoutJournal(store: try HealthStore(path: path, access: .readOnly), clock: ManualClock())
        let types: [QuantityType] = [.heartRate, .stepCount]
        let every = try journal.committedRecords(of: types, endingFrom: at(0), devices: nil, excluding: [])
        XCTAssertEqual(Set(every.map(Measured.init)), Set(written.map(Measured.init)))
        XCTAssertEqual(every.count, written.count)
        // The gateway's own workout beside a class: every device but the participants'.
        let others = ["1a2b3c4d", "ANT:120:123456"]
        let left = try journal.committedRecords(of: types, endingFrom: at(0), devices: nil, excluding: others)
        XCTAssertEqual(Set(left.map(Measured.init)), expected(written, types: types, from: 0, devices: nil, excluding: others))
        XCTAssertEqual(left.filter { $0.device == nil }.count, 7, "the heart rates without a device stay")
        XCTAssertEqual(Set(left.compactMap(\.device)), [other, Device(name: "pedometer", localIdentifier: "usb-1")])
    }

    /// Issue 65: a participant's workout reads by attribution: Ana's readings from any strap
    /// (her own, then a second one handed to her), her strap's readings attributed to nobody,
    /// and never Ben's, even from her strap after it was handed to him. The SQL read gives
    /// exactly what the builder's rule (``LiveWorkoutBuilder/belongs(_:to:selection:)``) keeps.
    func testAParticipantsWorkoutReadsByAttribution() async throws {
        let ids = makeIDs()
        func person(_ name: String?) -> Metadata { name.map { [.person: .string($0)] } ?? [:] }
        var records: [HealthRecord] = []
        for second in 0..<300 {
            // Her strap: nobody's for the first 20 s (a sign-in's first beats), hers, then Ben's
            // from 200 s; the TICKR hers from 100 s; the ANT+ strap nobody's.
            let polarOwner: String? = second < 20 ? nil : second < 200 ? "Ana" : "Ben"
            records.append(.quantity(try heartRate(ids, Double(60 + second % 50), at: Double(second), device: polar, metadata: person(polarOwner))))
            if second >= 100, second.isMultiple(of: 2) {
                records.append(.quantity(try heartRate(ids, 90, at: Double(second), device: other, metadata: person("Ana"))))
            }
            if second.isMultiple(of: 3) { records.append(.quantity(try heartRate(ids, 70, at: Double(second), device: ant))) }
        }
        for (start, owner) in [(0.0, nil), (210, "Ben" as String?)] {
            records.append(.heartbeatSeries(try HeartbeatSeriesSample(
                id: ids.next(), start: at(start), end: at(start + 30),
                beats: [Heartbeat(timeSinceSeriesStart: 0, precededByGap: false), Heartbeat(timeSinceSeriesStart: 30, precededByGap: false)],
                device: polar, metadata: person(owner))))
        }
        try await HealthStore(path: path).write(records)
        let journal = StoredWorkoutJournal(store: try HealthStore(path: path, access: .readOnly), clock: ManualClock())

        let session = WorkoutSession(
            id: ids.next(), activityType: .cycling, firstActivityID: ids.next(), devices: ["1A2B3C4D"], types: [.heartRate], participant: "Ana")
        let read = try journal.committedRecords(of: [.heartRate], endingFrom: at(0), devices: ["1A2B3C4D"], excluding: [], person: "Ana")
        let rule = records.filter { LiveWorkoutBuilder.belongs($0, to: session, selection: IdentitySelection(["1A2B3C4D"])) }
        XCTAssertEqual(Set(read.map(Measured.init)), Set(rule.map(Measured.init)))
        XCTAssertEqual(read.filter { $0.device == polar && $0.kind == .quantity }.count, 200, "her strap's first 200 s, not Ben's 100")
        XCTAssertEqual(read.filter { $0.device == other }.count, 100, "the TICKR handed to her")
        XCTAssertEqual(read.filter { $0.device == ant }.count, 0)
        XCTAssertEqual(read.filter { $0.kind == .heartbeatSeries }.count, 1, "her strap's series attributed to nobody, not Ben's")
        XCTAssertTrue(read.allSatisfy { $0.person == nil || $0.person == "Ana" })
        // The gateway's own workout reads by device, whoever's the readings are.
        let byDevice = try journal.committedRecords(of: [.heartRate], endingFrom: at(0), devices: ["1A2B3C4D"], excluding: [])
        XCTAssertEqual(byDevice.filter { $0.kind == .quantity }.count, 300)
    }
}
