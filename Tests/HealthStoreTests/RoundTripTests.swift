import GatewayTesting
import Foundation
import HealthModel
import HealthStore
import XCTest

final class RoundTripTests: StoreTestCase {
    func makeSeries(_ ids: SampleIDGenerator, start: Double) throws -> HeartbeatSeriesSample {
        var metadata = Metadata()
        metadata.heartRateSensorLocation = .chest
        return try HeartbeatSeriesSample(
            id: ids.next(), start: at(start), end: at(start + 3),
            beats: [
                Heartbeat(timeSinceSeriesStart: 0, precededByGap: false),
                Heartbeat(timeSinceSeriesStart: 0.8125, precededByGap: false),
                Heartbeat(timeSinceSeriesStart: 2.5, precededByGap: true),
            ], device: strap, metadata: metadata)
    }

    func testHeartbeatSeriesRoundTrip() async throws {
        let ids = makeIDs()
        let first = try makeSeries(ids, start: 0)
        let second = try makeSeries(ids, start: 60)
        let writer = try HealthStore(path: path)
        try await writer.write([.heartbeatSeries(second), .heartbeatSeries(first)])
        let awaited13 = try await writer.write([.heartbeatSeries(first)]).ignored
        XCTAssertEqual(awaited13, 1)
        XCTAssertEqual(try count("heartbeat_series"), 2)
        // The beats in one blob (HeartbeatEncoding): format 1, ticks of 1/1024 s, 3 beats, then
        // each interval's change (0, 832, 896 ticks) zigzagged, shifted, the gap in the low bit.
        XCTAssertEqual(
            try sqlite3("SELECT beat_count, lower(hex(beats)) FROM heartbeat_series WHERE start_us = 1800057600000000"),
            "3|01000300801a811c")
        let store = try HealthStore(path: path, access: .readOnly)
        let all = try await store.heartbeatSeries()
        XCTAssertEqual(all, [first, second])
        let late = try await store.heartbeatSeries(from: at(30), to: at(120))
        XCTAssertEqual(late, [second])
    }

    func testWorkoutRoundTripWithEventsActivitiesStatisticsAndTheRecordsItsTimeTypesAndDevicesSelect() async throws {
        let ids = makeIDs()
        // Heart rates of the strap, 100 s apart: two quantity series.
        let beats = [try heartRate(ids, 120, at: 100), try heartRate(ids, 140, at: 200)]
        let stepSample = try steps(ids, 500, from: 60, to: 360)
        let series = try makeSeries(ids, start: 150)
        // What the workout does not select: another strap's heart rate, a heart rate during the
        // pause and one after the end, and a type it has no statistics of.
        let otherStrap = try heartRate(ids, 130, at: 150, device: Device(name: "TICKR", localIdentifier: "C0:FF:EE:00:00:03"))
        let paused = try heartRate(ids, 125, at: 330)
        let afterwards = try heartRate(ids, 150, at: 700)
        let power = try QuantitySample(
            id: ids.next(), type: .cyclingPower, quantity: Quantity(200, .watt), start: at(120), end: at(120), device: strap)
        let notYetStored = ids.next()
        let heartStats = QuantityStatistics(
            type: .heartRate, startDate: t0, endDate: at(600), sampleCount: 2, average: 130, minimum: 120,
            maximum: 140, mostRecent: 140, mostRecentDate: at(200))
        let stepStats = QuantityStatistics(type: .stepCount, startDate: t0, endDate: at(600), sampleCount: 1, sum: 500)
        var eventMetadata = Metadata()
        eventMetadata[MetadataKey("healthgate.reason")] = .string("traffic light")
        var workoutMetadata = Metadata()
        workoutMetadata[MetadataKey("healthgate.indoor")] = .bool(false)
        // The strap by its address and the pedometer by its local identifier.
        workoutMetadata[.workoutDevices] = .string("AA:BB:CC:DD:EE:FF,usb-1")
        let workout = Workout(
            id: ids.next(), activityType: .running, startDate: t0, endDate: at(600), duration: 540,
            events: [
                WorkoutEvent(type: .pause, startDate: at(300), metadata: eventMetadata),
                WorkoutEvent(type: .resume, startDate: at(360)),
                WorkoutEvent(type: .segment, startDate: t0, endDate: at(300)),
            ],
            activities: [
                WorkoutActivity(
                    id: ids.next(), activityType: .running, startDate: t0, endDate: at(300),
                    statistics: [heartStats]),
                WorkoutActivity(id: ids.next(), activityType: .walking, startDate: at(360)),
            ],
            statistics: [heartStats, stepStats], metadata: workoutMetadata)

        let writer = try HealthStore(path: path)
        // The workout arrives before some of its samples: it finds them by reference when read.
        try await writer.write([.workout(workout), .quantity(beats[0]), .quantity(power)])
        try await writer.write([
            .quantity(otherStrap), .quantity(beats[1]), .quantity(stepSample), .heartbeatSeries(series), .quantity(paused),
            .quantity(afterwards),
        ])
        let awaited14 = try await writer.write([.workout(workout)]).ignored
        XCTAssertEqual(awaited14, 1)
        XCTAssertEqual(try count("workouts"), 1)
        XCTAssertEqual(try count("workout_events"), 3)
        XCTAssertEqual(try count("workout_activities"), 2)
        XCTAssertEqual(try count("workout_statistics"), 3)

        let store = try HealthStore(path: path, access: .readOnly)
        let listed = try await store.workouts(from: t0, to: at(3600))
        XCTAssertEqual(listed, [workout])
        let stored = try await store.workout(id: workout.id)
        XCTAssertEqual(stored?.workout, workout)
        // By start: 60, 100, 200 s; each heart rate a quantity of its series.
        XCTAssertEqual(stored?.samples, [stepSample] + (try storedQuantities([beats[0]])) + (try storedQuantities([beats[1]])))
        XCTAssertEqual(stored?.heartbeatSeries, [series])
        XCTAssertEqual(stored?.workout.statistics(for: .stepCount)?.sum, 500)
        let missing = try await store.workout(id: notYetStored)
        XCTAssertNil(missing)
    }

    func testWorkoutWithHigherSyncVersionReplacesItsChildren() async throws {
        let ids = makeIDs()
        func version(_ number: Int64, events: Int) -> Workout {
            let metadata = Metadata().synced("run-1", version: number)
            return Workout(
                id: ids.next(), activityType: .running, startDate: t0, endDate: at(60), duration: 60,
                events: (0..<events).map { WorkoutEvent(type: .lap, startDate: at(Double($0))) },
                statistics: [QuantityStatistics(type: .stepCount, startDate: t0, endDate: at(60), sampleCount: 1, sum: Double(number))],
                metadata: metadata)
        }
        let writer = try HealthStore(path: path)
        try await writer.write([.workout(version(1, events: 3))])
        let newer = version(2, events: 1)
        let awaited15 = try await writer.write([.workout(newer)]).replaced
        XCTAssertEqual(awaited15, 1)
        XCTAssertEqual(try count("workouts"), 1)
        XCTAssertEqual(try count("workout_events"), 1)
        XCTAssertEqual(try count("workout_statistics"), 1)
        let listed = try await HealthStore(path: path, access: .readOnly).workouts()
        XCTAssertEqual(listed, [newer])
    }
}
