import FoundationEssentials
public import HealthModel

/// A stored workout as a FIT activity file, the format training services import (Garmin
/// Connect, Strava, intervals.icu, TrainingPeaks, GoldenCheetah): `file_id`, `device_info`,
/// timer `event`s (start, a stop at each pause, a start at each resume, the final stop), a
/// `record` per second that has a reading (heart rate, cadence, cumulative distance, speed,
/// power), a `lap` per lap, one `session` with the workout's totals and the `activity`. The
/// distance is one kind, the activity's own (``Workout/distance``); laps and the session carry
/// average and maximum power and cadence.
///
/// Field numbers, types and scales are those of the FIT profile (Profile.xlsx): for example a
/// record's distance is metres × 100 in a uint32, its speed m/s × 1000 in a uint16; dates are
/// seconds since 1989-12-31T00:00:00Z.
public enum FITActivity {
    /// Seconds between 1970-01-01 and FIT's epoch, 1989-12-31T00:00:00Z.
    public static let epochOffset: Double = 631_065_600

    // Global message numbers.
    static let fileID: UInt16 = 0, session: UInt16 = 18, lap: UInt16 = 19, record: UInt16 = 20, event: UInt16 = 21
    static let deviceInfo: UInt16 = 23, activity: UInt16 = 34

    /// The FIT file of `workout` with its readings: its raw `samples`, or a type's curve points as
    /// samples once retention pruned them (a record per point then).
    public static func encode(_ workout: Workout, samples: [QuantitySample], softwareVersion: Double = 1) -> [UInt8] {
        var fit = FITWriter()
        let start = time(workout.startDate)
        let end = time(workout.endDate)
        fit.message(fileID, [
            .init(0, .enumeration, 4),  // type: activity
            .init(1, .uint16, 255),  // manufacturer: development
            .init(2, .uint16, 1),  // product
            .init(3, .uint32z, UInt64(truncatingIfNeeded: workout.id.high & 0xFFFF_FFFF)),  // serial number
            .init(4, .uint32, start),  // time created
        ])
        fit.message(deviceInfo, [
            .init(253, .uint32, start), .init(0, .uint8, 0), .init(2, .uint16, 255), .init(4, .uint16, 1),
            .init(5, .uint16, UInt64((softwareVersion * 100).rounded())),
        ])
        let timeline = ExportTimeline(workout)
        for (date, running) in timeline.timerChanges {
            // event: timer (0); event type: start (0) or stop all (4)
            fit.message(event, [.init(253, .uint32, time(date)), .init(0, .enumeration, 0), .init(1, .enumeration, running ? 0 : 4)])
        }
        for point in ExportPoint.points(of: samples, distance: timeline.distanceType(samples: samples)) {
            fit.message(record, [
                .init(253, .uint32, time(point.date)),
                .init(3, .uint8, point.heartRate.map { UInt64(max(0, $0.rounded())) }),
                .init(4, .uint8, point.cadence.map { UInt64(max(0, $0.rounded())) }),
                .init(5, .uint32, point.distance.map { UInt64(max(0, ($0 * 100).rounded())) }),
                .init(6, .uint16, point.speed.map { UInt64(max(0, ($0 * 1000).rounded())) }),
                .init(7, .uint16, point.power.map { UInt64(max(0, $0.rounded())) }),
            ])
        }
        let sport = Self.sport(of: workout.activityType)
        let laps = timeline.laps(samples: samples)
        for (index, lap) in laps.enumerated() {
            fit.message(Self.lap, [
                .init(253, .uint32, time(lap.end)), .init(254, .uint16, UInt64(index)),
                .init(0, .enumeration, 9), .init(1, .enumeration, 1),  // event: lap, type: stop
                .init(2, .uint32, time(lap.start)),
                .init(7, .uint32, milliseconds(lap.end.timeIntervalSince(lap.start))),
                .init(8, .uint32, milliseconds(lap.timerSeconds)),
                .init(9, .uint32, lap.distance.map { UInt64(($0 * 100).rounded()) }),
                .init(11, .uint16, lap.energy.map { UInt64($0.rounded()) }),
                .init(15, .uint8, lap.averageHeartRate.map { UInt64($0.rounded()) }),
                .init(16, .uint8, lap.maximumHeartRate.map { UInt64($0.rounded()) }),
                .init(17, .uint8, lap.averageCadence.map { UInt64(min(254, max(0, $0.rounded()))) }),
                .init(18, .uint8, lap.maximumCadence.map { UInt64(min(254, max(0, $0.rounded()))) }),
                .init(19, .uint16, lap.averagePower.map { UInt64(max(0, $0.rounded())) }),
                .init(20, .uint16, lap.maximumPower.map { UInt64(max(0, $0.rounded())) }),
                .init(24, .enumeration, 0),  // lap trigger: manual
                .init(25, .enumeration, UInt64(sport)),
            ])
        }
        let heartRate = workout.statistics(for: .heartRate)
        let power = workout.power
        let cadence = workout.cadence
        fit.message(session, [
            .init(253, .uint32, end), .init(254, .uint16, 0),
            .init(0, .enumeration, 8), .init(1, .enumeration, 1),  // event: session, type: stop
            .init(2, .uint32, start),
            .init(5, .enumeration, UInt64(sport)), .init(6, .enumeration, 0),
            .init(7, .uint32, milliseconds(workout.endDate.timeIntervalSince(workout.startDate))),
            .init(8, .uint32, milliseconds(workout.duration)),
            .init(9, .uint32, ExportTimeline.distance(of: workout).map { UInt64(($0 * 100).rounded()) }),
            .init(11, .uint16, workout.statistics(for: .activeEnergyBurned)?.sum.map { UInt64($0.rounded()) }),
            .init(16, .uint8, heartRate?.average.map { UInt64($0.rounded()) }),
            .init(17, .uint8, heartRate?.maximum.map { UInt64($0.rounded()) }),
            .init(18, .uint8, cadence?.average.map { UInt64(min(254, max(0, $0.rounded()))) }),
            .init(19, .uint8, cadence?.maximum.map { UInt64(min(254, max(0, $0.rounded()))) }),
            .init(20, .uint16, power?.average.map { UInt64($0.rounded()) }),
            .init(21, .uint16, power?.maximum.map { UInt64($0.rounded()) }),
            .init(25, .uint16, 0), .init(26, .uint16, UInt64(laps.count)),
        ])
        fit.message(activity, [
            .init(253, .uint32, end), .init(0, .uint32, milliseconds(workout.duration)), .init(1, .uint16, 1),
            .init(2, .enumeration, 0), .init(3, .enumeration, 26), .init(4, .enumeration, 1),  // manual; activity; stop
        ])
        return fit.file()
    }

    /// FIT's time: whole seconds since its epoch.
    static func time(_ date: Date) -> UInt64 {
        UInt64(max(0, (date.timeIntervalSince1970 - epochOffset).rounded(.down)))
    }

    static func milliseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, (seconds * 1000).rounded())) }

    /// FIT's sport: running 1, cycling 2, fitness equipment 4, swimming 5, training 10,
    /// walking 11, rowing 15, hiking 17, generic 0.
    static func sport(of activity: WorkoutActivityType) -> Int {
        switch activity {
        case .running: 1
        case .cycling: 2
        case .elliptical, .stairClimbing: 4
        case .swimming: 5
        case .functionalStrengthTraining, .highIntensityIntervalTraining, .yoga: 10
        case .walking: 11
        case .rowing: 15
        case .hiking: 17
        case .transition, .other: 0
        }
    }
}
