import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import GatewayTesting
import HealthModel
import GatewayRuntime
import SampleBus
import Workouts
import WorkoutRuntime
import WorkoutPresentation
import WorkoutsTesting
import XCTest

final class ChartAndFormatTests: XCTestCase {
    /// Collects every element with its attributes.
    final class ElementCollector: NSObject, XMLParserDelegate {
        var elements: [(name: String, attributes: [String: String])] = []
        var text = ""
        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
            qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
        ) {
            elements.append((elementName, attributeDict))
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func count(_ name: String, class className: String) -> Int {
            elements.filter { $0.name == name && ($0.attributes["class"]?.split(separator: " ").contains(Substring(className)) ?? false) }.count
        }
    }

    /// The scripted workout of ``LiveStatisticsTests`` with a lap at 30 s, plus its heart rates.
    func scriptedWorkout() async throws -> (Workout, [QuantitySample], HeartRateZones) {
        let clock = ManualClock()
        let s = Script(clock: clock)
        let controller = WorkoutController(
            profile: scriptedProfile, store: VolatileWorkoutStore(), clock: clock, ids: SampleIDGenerator(seed: 7),
            logger: Logger(label: "workouts", sink: RecordingLogSink()))
        var heartRates: [QuantitySample] = []
        func feed(_ records: [HealthRecord]) {
            controller.ingest(records)
            for case .quantity(let sample) in records where sample.type == .heartRate { heartRates.append(sample) }
        }
        try await controller.start(activity: .running)
        feed([s.heartRate(130, at: 0)])
        s.move(to: 5); feed([s.heartRate(150, at: 5)])
        s.move(to: 10); feed([s.heartRate(170, at: 10)])
        s.move(to: 12); try await controller.pause()
        s.move(to: 20); try await controller.resume()
        s.move(to: 22); feed([s.heartRate(150, at: 22)])
        s.move(to: 30); try await controller.lap()
        s.move(to: 40); feed([s.heartRate(110, at: 40)])
        s.move(to: 45); feed([s.heartRate(130, at: 45)])
        s.move(to: 50)
        try await controller.end()
        let workout = try XCTUnwrap(controller.pendingWorkouts.first)
        let zones = try XCTUnwrap(scriptedProfile.heartRateZones(on: workout.startDate))
        return (workout, heartRates, zones)
    }

    func testChartIsWellFormedAndShowsZonesPausesGapsAndLaps() async throws {
        let (workout, heartRates, zones) = try await scriptedWorkout()
        let svg = WorkoutChart.svg(workout: workout, samples: heartRates, zones: zones)
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = ElementCollector()
        parser.delegate = collector
        XCTAssertTrue(parser.parse(), "not well-formed: \(parser.parserError.map { "\($0)" } ?? "")\n\(svg)")
        XCTAssertEqual(collector.elements.first?.name, "svg")
        XCTAssertEqual(collector.elements.first?.attributes["xmlns"], "http://www.w3.org/2000/svg")

        XCTAssertEqual(collector.count("rect", class: "zone"), 5)
        XCTAssertEqual(Set(collector.elements.compactMap { $0.attributes["data-zone"] }), ["1", "2", "3", "4", "5"])
        XCTAssertEqual(collector.count("rect", class: "pause"), 1)
        XCTAssertEqual(collector.count("rect", class: "gap"), 1, "22 s → 40 s without heart rate")
        // The line breaks at the pause (between 10 s and 22 s) and at the gap (22 s → 40 s):
        // [0, 5, 10] [22] [40, 45].
        let lines = collector.elements.filter { $0.name == "polyline" && $0.attributes["class"] == "heart-rate" }
        XCTAssertEqual(lines.map { $0.attributes["points"]?.split(separator: " ").count ?? 0 }, [3, 1, 2])
        XCTAssertEqual(collector.count("line", class: "lap"), 1)
        XCTAssertTrue(collector.text.contains("L1"))
        // The header shows the totals: the time-weighted average 3280 / 24 = 136.67 → "137".
        XCTAssertTrue(collector.text.contains("avg 137 bpm"), collector.text)
        XCTAssertTrue(collector.text.contains("max 170 bpm"))
        XCTAssertTrue(collector.text.contains("gaps 1"))
        XCTAssertTrue(collector.text.contains("0:42"), "the running duration")
    }

    func testChartEscapesTextAndDrawsWithoutZonesOrData() throws {
        let ids = SampleIDGenerator(seed: 5)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        let workout = Workout(
            id: ids.next(), activityType: .other, startDate: t0, endDate: t0.addingTimeInterval(60), duration: 60)
        let svg = WorkoutChart.svg(workout: workout, samples: [], zones: nil)
        let parser = XMLParser(data: Data(svg.utf8))
        let collector = ElementCollector()
        parser.delegate = collector
        XCTAssertTrue(parser.parse())
        XCTAssertEqual(collector.count("rect", class: "zone"), 0)
        XCTAssertEqual(collector.count("polyline", class: "heart-rate"), 0)
        XCTAssertEqual(collector.count("rect", class: "gap"), 1, "a workout without heart rate is one gap")
    }

    func testTextFormats() async throws {
        let (workout, _, _) = try await scriptedWorkout()
        let table = WorkoutFormat.table([workout])
        let lines = table.split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].hasPrefix("ID"))
        XCTAssertTrue(lines[1].contains(workout.id.uuidString))
        XCTAssertTrue(lines[1].contains("running"))
        XCTAssertTrue(lines[1].contains("0:42"))
        let detail = WorkoutFormat.detail(workout)
        XCTAssertTrue(detail.contains("duration   0:42 (pauses excluded)"))
        XCTAssertTrue(detail.contains("avg 137 min 110 max 170 bpm"), detail)
        XCTAssertTrue(detail.contains("gaps       1 without heart rate, 0:18 in total"), detail)
        let counted = workout.statistics.reduce(0) { $0 + $1.sampleCount }
        XCTAssertGreaterThan(counted, 0)
        XCTAssertTrue(detail.contains("\n  readings   \(counted) (in its statistics)\n"), detail)
        XCTAssertTrue(detail.contains("lap"))
        let json = try WorkoutFormat.json(workout)
        let decoded = try HealthJSON.makeDecoder().decode(Workout.self, from: Data(json.utf8))
        // Equal up to JSON's number types (5.0 comes back as the integer 5): compare re-encoded.
        XCTAssertEqual(try WorkoutFormat.json(decoded), json)
        XCTAssertEqual(WorkoutFormat.detail(decoded), detail, "a workout read back renders the same")

        XCTAssertEqual(WorkoutFormat.duration(3725), "1:02:05")
        XCTAssertEqual(WorkoutFormat.duration(65.9), "1:05")
        let snapshot = WorkoutSnapshot(
            state: .running, activityType: .running, elapsedSeconds: 754,
            heartRate: .init(current: 151, average: 143.4, minimum: 90, maximum: 171), zone: 3,
            zoneSeconds: [60, 120, 300, 0, 0], steps: 1520, distanceMeters: 2345, energyKilocalories: 180.4,
            energySource: .heartRateEquation, laps: 2)
        XCTAssertEqual(
            WorkoutFormat.liveLine(snapshot),
            "running  12:34  hr 151  avg 143  max 171  zone 3  steps 1520  dist 2.35 km  energy 180 kcal")
        var gap = snapshot
        gap.inGap = true
        gap.gaps = [HeartRateGap(start: Date(), end: nil, seconds: 12)]
        XCTAssertTrue(WorkoutFormat.liveLine(gap).contains("hr gap"))
        XCTAssertTrue(WorkoutFormat.liveLine(gap).hasSuffix("gaps 1"))
        let screen = WorkoutFormat.liveScreen(snapshot)
        XCTAssertTrue(screen.contains("  heart rate  151 bpm   zone 3"))
        XCTAssertTrue(screen.contains("  zones       Z1 1:00  Z2 2:00  Z3 5:00  Z4 0:00  Z5 0:00"))
    }

    /// The board's pages and the chart share one escaping function: a participant called
    /// O'Brien is safe in a single-quoted attribute as in a double-quoted one.
    func testMarkupEscapingCoversBothQuotes() {
        XCTAssertEqual(escapeMarkup(#"O'Brien <b>&"x"</b>"#), "O&#39;Brien &lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;")
        XCTAssertEqual(escapeMarkup("Zoë 🏃"), "Zoë 🏃")
    }
}
