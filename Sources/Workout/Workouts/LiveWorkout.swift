public import FoundationEssentials
public import HealthModel

/// A workout in progress: its session (the state machine) and the samples collected into it.
///
/// A value with no I/O and no clock: the ``WorkoutController`` feeds it commands with their
/// dates and records from the bus, and makes each applied command durable in its
/// ``WorkoutStateStore``; tests drive it directly. ``replay(_:records:)`` rebuilds it from what
/// a store kept, and gives the same workout as the live one whenever the live one saw no sample
/// that the store did not commit.
public struct LiveWorkout: Sendable {
    /// The session: state, events, activities, running intervals.
    public private(set) var session: WorkoutSession
    /// The collected samples.
    public private(set) var builder = LiveWorkoutBuilder()
    /// How many commands were applied (ignored ones not counted): the index the next
    /// ``WorkoutJournalEntry`` gets in the store.
    public private(set) var journalCount = 0
    /// Whether it was rebuilt from the store after a gateway restart.
    public var restored = false
    /// The live board's running figures (``liveFigures(at:profile:)``).
    private var running = RunningFigures()
    /// How long samples are kept once collected (``keepRecentSamples(seconds:profile:)``);
    /// nil: all of them.
    public private(set) var keptSeconds: Double?
    private var keptProfile = UserProfile()
    /// The running figures of the samples dropped so far, in the order they were dropped.
    private var dropped = RunningFigures()

    /// A workout not yet started.
    public init(_ definition: WorkoutDefinition) {
        session = WorkoutSession(definition)
    }

    /// Rebuilds a workout from its journal and the committed `records` of its store: the
    /// commands are replayed, then every record that matches the workout (type, device, running
    /// intervals) is collected, then a final `end` is applied. The result is marked ``restored``.
    /// - Throws: ``WorkoutError`` when the journal does not replay (a corrupt store).
    public static func replay(_ journaled: JournaledWorkout, records: [HealthRecord]) throws(WorkoutError) -> LiveWorkout {
        var live = LiveWorkout(journaled.definition)
        let ending = journaled.hasEnded ? journaled.entries.last : nil
        for entry in journaled.entries.dropLast(ending == nil ? 0 : 1) { try live.apply(entry) }
        live.collectCommitted(records)
        if let ending { try live.apply(ending) }
        live.restored = true
        return live
    }

    /// Applies one command. A pause, stop or end also drops samples collected after its date.
    /// - Returns: what it did; ``WorkoutTransition/ignored`` changes nothing.
    /// - Throws: ``WorkoutError`` when the session's transition table refuses it.
    @discardableResult
    public mutating func apply(_ entry: WorkoutJournalEntry) throws(WorkoutError) -> WorkoutTransition {
        let transition = try session.apply(entry)
        guard transition != .ignored else { return .ignored }
        journalCount += 1
        if [.pause, .stop, .end].contains(entry.action) { builder.prune(to: session) }
        return transition
    }

    /// Keeps only the samples that end within `seconds` of the newest one (between `seconds`
    /// and twice that), for a workout whose samples the store commits: its memory then stays
    /// bounded however long it runs. The dropped samples still count in the live figures
    /// (``liveFigures(at:profile:)`` with `profile`, as the running figures of the samples
    /// dropped); what needs every sample (``snapshot(at:profile:)``, ``workout(profile:)``)
    /// needs them back from the store first (``collectCommitted(_:)``). A sample that arrives
    /// late, ending before the last one dropped, is left to the store. The samples it holds
    /// already are dropped at once down to that (a workout rebuilt from its store after a
    /// restart, an hour of samples each, would otherwise hold them until its next sample).
    public mutating func keepRecentSamples(seconds: Double, profile: UserProfile) {
        keptSeconds = max(1, seconds)
        keptProfile = profile
        dropOldSamples()
    }

    /// Whether every collected sample is at hand (none dropped by ``keepRecentSamples(seconds:profile:)``).
    public var hasEverySample: Bool { builder.isComplete }

    /// Offers records from the bus; returns how many were collected (see ``LiveWorkoutBuilder``).
    @discardableResult
    public mutating func collect(_ records: some Sequence<HealthRecord>) -> Int {
        var added = 0
        for record in records where builder.add(record, session: session) { added += 1 }
        if added > 0 { dropOldSamples() }
        return added
    }

    /// Offers records read back from the store; returns how many were new. When samples were
    /// dropped (``keepRecentSamples(seconds:profile:)``), `records` are all the store committed
    /// for the workout, and the workout has every sample again afterwards (and keeps them).
    @discardableResult
    public mutating func collectCommitted(_ records: [HealthRecord]) -> Int {
        if let complete = builder.completed(with: records, session: session) {
            let before = builder.samples.count + builder.heartbeatSeriesIDs.count
            builder = complete
            keptSeconds = nil
            running = RunningFigures()
            dropped = RunningFigures()
            return max(0, builder.samples.count + builder.heartbeatSeriesIDs.count - before)
        }
        var added = 0
        for record in records where builder.addMatching(record, session: session) { added += 1 }
        return added
    }

    /// With ``keptSeconds``: drops the samples older than twice that behind the newest, down to
    /// that, after the running figures took them.
    private mutating func dropOldSamples() {
        guard let keptSeconds, let newest = builder.samples.last?.endDate, let oldest = builder.samples.first?.endDate,
              newest.timeIntervalSince(oldest) > 2 * keptSeconds, let start = session.startDate
        else { return }
        let timeline = session.timeline
        let cut = builder.dropSamples(endingBefore: newest.addingTimeInterval(-keptSeconds))
        dropped.advance(over: cut, timeline: timeline, start: start, profile: keptProfile)
        // The board's figures follow from here, or from `dropped` when they were behind.
        running.follow(builder, timeline: timeline, start: start, profile: keptProfile, base: dropped)
    }

    /// The live figures at `now` (the final ones once ended).
    public func snapshot(at now: Date, profile: UserProfile) -> WorkoutSnapshot {
        let start = session.startDate ?? now
        let end = session.endDate ?? max(now, start)
        let analysis = WorkoutAnalysis.analyse(
            samples: builder.samples, types: session.types, timeline: session.timeline,
            window: (start, end), isLive: session.endDate == nil, profile: profile)
        return WorkoutSnapshot(session: session, analysis: analysis, restored: restored)
    }

    /// The figures the live board shows at `now` (state, running seconds, zone seconds, energy),
    /// from running aggregates (``RunningFigures``): its cost does not grow with the workout's
    /// length, unlike ``snapshot(at:profile:)``, which analyses every sample. The other fields of
    /// the snapshot are left at their defaults.
    public mutating func liveFigures(at now: Date, profile: UserProfile) -> WorkoutSnapshot {
        let start = session.startDate ?? now
        let end = session.endDate ?? max(now, start)
        let timeline = session.timeline
        running.follow(builder, timeline: timeline, start: start, profile: profile, base: dropped)
        let figures = running.figures(at: end, timeline: timeline)
        return WorkoutSnapshot(
            state: session.state, workoutID: session.id, activityType: session.activityType, startDate: session.startDate, endDate: session.endDate,
            elapsedSeconds: timeline.activeSeconds(from: start, to: end), zoneSeconds: figures.zoneSeconds,
            energyKilocalories: figures.energyKilocalories, restored: restored, participant: session.participant)
    }

    /// The finished workout (HKWorkout): statistics of the whole and of each activity, zone and
    /// gap metadata, and the ids of the collected samples and series. Meant for an ended session;
    /// for one still running, the window ends at its last command.
    public func workout(profile: UserProfile) -> Workout {
        var session = session
        let start = session.startDate ?? session.endDate ?? Date(timeIntervalSince1970: 0)
        let end = session.endDate ?? session.runningIntervals.last?.end ?? start
        let analyse = { (window: (Date, Date)) in
            WorkoutAnalysis.analyse(
                samples: builder.samples, types: session.types, timeline: session.timeline,
                window: window, isLive: false, profile: profile)
        }
        let total = analyse((start, end))
        session.setActivityStatistics(session.activities.map { analyse(($0.startDate, $0.endDate ?? end)).statistics })
        var metadata = Metadata()
        metadata["healthgate.gapThresholdSeconds"] = .double(profile.gapThreshold)
        metadata["healthgate.gapCount"] = .integer(Int64(total.gaps.count))
        metadata["healthgate.gapSeconds"] = .double(total.gaps.reduce(0) { $0 + $1.seconds })
        if let source = total.energySource { metadata["healthgate.energySource"] = .string(source.rawValue) }
        if let maximum = total.zones?.maximumHeartRate { metadata["healthgate.maximumHeartRate"] = .double(maximum) }
        for (zone, seconds) in zip(total.zones?.zones ?? [], total.zoneSeconds) {
            metadata[MetadataKey("healthgate.zone\(zone.number)Seconds")] = .double(seconds)
        }
        if let devices = session.devices { metadata[.workoutDevices] = .string(devices.joined(separator: ",")) }
        if restored { metadata["healthgate.restoredAfterRestart"] = .bool(true) }
        if let participant = session.participant { metadata[.participant] = .string(participant) }
        return Workout(
            id: session.id, activityType: session.activityType, startDate: start, endDate: end,
            duration: total.elapsedSeconds, events: session.events, activities: session.activities,
            statistics: total.statistics, metadata: metadata)
    }
}
