import Foundation
import FoundationXML
import GatewayTesting
import HealthModel
import GatewayRuntime
import SampleBus
import Workouts
import WorkoutRuntime
import WorkoutPresentation
import WorkoutsTesting
import XCTest

/// A cycling or rowing workout collects its machine's power, cadence, speed and distance, and
/// shows them live (current, average, maximum) and in the stored workout.
final class MachineFiguresTests: XCTestCase {
    static let bike = Device(name: "Trainer", localIdentifier: "11:22:33:44:55:66")

    func reading(_ type: QuantityType, _ value: Double, _ unit: HealthUnit, at seconds: Double, _ s: Script) -> HealthRecord {
        .quantity(try! QuantitySample(
            id: s.ids.next(), type: type, quantity: Quantity(value, unit), start: s.at(seconds), end: s.at(seconds),
            device: Self.bike))
    }

    func testACyclingWorkoutShowsPowerCadenceAndSpeedLiveAndStoresThem() async throws {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let controller = WorkoutController(
            profile: UserProfile(), store: VolatileWorkoutStore(), clock: clock, ids: SampleIDGenerator(seed: 9),
            logger: Logger(label: "workouts", sink: RecordingLogSink()))
        try await controller.start(activity: .cycling)
        var ingested: [HealthRecord] = []
        // Power 200, 260, 230 W; cadence 80, 90, 86 /min; speed 8, 9, 8.5 m/s; 120 m in 10 s.
        for (index, (watts, rpm, speed)) in [(200.0, 80.0, 8.0), (260, 90, 9), (230, 86, 8.5)].enumerated() {
            let at = Double(index) * 5
            s.move(to: at)
            let records = [
                reading(.cyclingPower, watts, .watt, at: at, s), reading(.cyclingCadence, rpm, .countPerMinute, at: at, s),
                reading(.cyclingSpeed, speed, .meterPerSecond, at: at, s),
                s.heartRate(140 + Double(index), at: at, device: Self.bike),
            ]
            ingested += records
            controller.ingest(records)
        }
        s.move(to: 10)
        controller.ingest([.quantity(try QuantitySample(
            id: s.ids.next(), type: .distanceCycling, quantity: Quantity(120, .meter), start: s.at(0), end: s.at(10),
            device: Self.bike))])

        let live = controller.status()
        XCTAssertEqual(live.power, WorkoutSnapshot.Gauge(current: 230, average: 230, maximum: 260))
        XCTAssertEqual(live.cadence, WorkoutSnapshot.Gauge(current: 86, average: 256.0 / 3, maximum: 90))
        XCTAssertEqual(live.speed?.current, 8.5)
        XCTAssertEqual(live.speed?.maximum, 9)
        XCTAssertEqual(live.distanceMeters, 120)
        let line = WorkoutFormat.liveLine(live)
        XCTAssertTrue(line.contains("power 230 W"), line)
        XCTAssertTrue(line.contains("cad 86/min"), line)
        XCTAssertTrue(line.contains("speed 30.6 km/h"), line)
        let screen = WorkoutFormat.liveScreen(live).joined(separator: "\n")
        XCTAssertTrue(screen.contains("power       230 W   avg 230   max 260"), screen)

        s.move(to: 12)
        let ended = try await controller.end()
        XCTAssertEqual(ended.power?.maximum, 260)
        let stored = try XCTUnwrap(controller.pendingWorkouts.last)
        XCTAssertEqual(stored.statistics(for: .cyclingPower)?.average, 230)
        XCTAssertEqual(stored.statistics(for: .cyclingCadence)?.maximum, 90)
        XCTAssertEqual(stored.statistics(for: .distanceCycling)?.sum, 120)

        // The chart draws power and cadence beside heart rate, each named with its range.
        let linked = ingested.compactMap { record -> QuantitySample? in
            if case .quantity(let sample) = record { sample } else { nil }
        }
        let svg = WorkoutChart.svg(workout: stored, samples: linked, zones: nil)
        XCTAssertTrue(XMLParser(data: Data(svg.utf8)).parse(), "well-formed SVG")
        XCTAssertEqual(svg.components(separatedBy: "<polyline class=\"power\"").count - 1, 1, svg)
        XCTAssertEqual(svg.components(separatedBy: "<polyline class=\"cadence\"").count - 1, 1, svg)
        XCTAssertEqual(svg.components(separatedBy: "<polyline class=\"heart-rate\"").count - 1, 1, svg)
        XCTAssertTrue(svg.contains("power 200–260 W"), svg)
        XCTAssertTrue(svg.contains("cadence 80–90 /min"), svg)
        XCTAssertTrue(svg.contains("avg power 230 W"), svg)
        // The highest power reading (260 W at 5 s) sits at the top of the plot.
        let power = try XCTUnwrap(svg.components(separatedBy: "<polyline class=\"power\" points=\"").dropFirst().first)
        let points = power.prefix { $0 != "\"" }.split(separator: " ").map { $0.split(separator: ",").map { Double($0)! } }
        XCTAssertEqual(points.count, 3)
        XCTAssertEqual(points[1][1], points.map { $0[1] }.min())
    }

    func testRunningKeepsItsTypesAndShowsNoMachineFigures() async throws {
        XCTAssertEqual(WorkoutDefinition.defaultTypes(for: .running), WorkoutDefinition.defaultTypes)
        XCTAssertTrue(WorkoutDefinition.defaultTypes(for: .rowing).contains(.rowingStrokeRate))
        let snapshot = WorkoutSnapshot(state: .running)
        XCTAssertNil(snapshot.power)
        XCTAssertFalse(WorkoutFormat.liveLine(snapshot).contains("power"))
        let json = String(decoding: try JSONEncoder().encode(snapshot), as: UTF8.self)
        XCTAssertFalse(json.contains("power"), "absent figures are omitted: \(json)")
        let s = Script(clock: ManualClock())
        let workout = Workout(id: s.ids.next(), activityType: .running, startDate: s.at(0), endDate: s.at(10), duration: 10)
        let svg = WorkoutChart.svg(workout: workout, samples: [], zones: nil)
        XCTAssertFalse(svg.contains("class=\"power"), svg)
    }
}
