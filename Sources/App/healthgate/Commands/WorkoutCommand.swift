import SampleBus
import FoundationEssentials
import HealthModel
import GatewayRuntime
import Workouts
import WorkoutRuntime
import WorkoutPresentation
import WorkoutExport
import LinuxSystem
import HealthStore

/// `healthgate workout …`: control the live workout of the running daemon, watch it, and read
/// finished workouts from the store.
enum WorkoutCommand {
    static let command = Command(
        name: "workout", summary: "Record live workouts from heart rate and steps.",
        usage: "workout SUBCOMMAND",
        discussion: """
            The daemon ('healthgate run') records one workout at a time from the heart-rate monitors \
            and pedometers it reads. Control it with start, pause, resume, lap, end; watch it with \
            status or live. Zones and energy come from the "profile" object of the configuration.

            With participants (a class), --participant NAME acts on one participant's workout and \
            --all on every participant's. end, pause, resume, lap and activity with --all act on \
            every workout in progress: a participant without one is listed as such ("NAME: no \
            workout in progress"; "notInProgress" with --format json) and is not a failure. They \
            exit 0 when every workout in progress took the command, 65 when one refused (each \
            "healthgate: NAME: reason" on stderr, the others still acted on) or when no workout \
            at all is in progress. start --all starts one for every participant; one already \
            running or wearing no device is an error (65), the others still start.

            Examples:
              healthgate workout start --activity running
              healthgate workout live
              healthgate workout end
              healthgate workout end --all
              healthgate workout chart ID --output run.svg
              healthgate workout export ID --format fit --output run.fit
            """,
        subcommands: [start, pause, resume, lap, activity, end, status, live, list, show, chart, export])

    static let formatOption = OptionSpec(name: "format", value: "FORMAT", help: "line (default) or json.")
    static let participantOptions = [
        OptionSpec(name: "participant", value: "NAME", help: "The workout of this participant."),
        OptionSpec(name: "all", value: nil, help: "The workouts of every participant, together."),
    ]

    static let start = Command(
        name: "start", summary: "Start a workout.",
        usage: "workout start --activity TYPE [--devices ID,…] [--participant NAME | --all] [--format line|json]",
        discussion: """
            TYPE is one of: \(WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", ")).
            --devices limits collection to these devices (BLE address, serial, or name); by default \
            every heart-rate monitor and pedometer is used. Exits 65 if a workout is already running.
            --participant NAME starts that participant's workout, collecting from the devices they \
            wear; --all starts one for every participant at once (one line each; a participant that \
            refuses is reported and makes the exit status 65).
            """,
        options: [
            OptionSpec(name: "activity", value: "TYPE", help: "The activity type (required)."),
            OptionSpec(name: "devices", value: "ID", help: "A device to collect from (repeatable, or comma-separated).", repeatable: true),
            formatOption,
        ] + participantOptions + ControlSocketPath.options
    ) { arguments, context in
        guard let name = arguments.value("activity") else {
            throw CommandError(.usage, "--activity is required (e.g. --activity running)")
        }
        let activity = try activity(name, what: "--activity")
        let devices = arguments.list("devices")
        return try await control(.start(activity: activity, devices: devices.isEmpty ? nil : devices), arguments, context)
    }

    static let pause = simple("pause", "Pause the workout (ignored when paused).", .pause)
    static let resume = simple("resume", "Resume the workout (ignored when running).", .resume)
    static let lap = simple("lap", "Mark a lap.", .lap)
    static let end = simple(
        "end", "End the workout; the daemon stores it.", .end,
        more: """
            It answers once the store holds the workout, waiting 5 s at most (with --all, 5 s for \
            every workout together). When that wait runs out first (the store's writer is slow \
            or stopped), it says so and exits 75: the workout has ended and its end is \
            journaled, so it is stored once the writer commits it (a restart stores it too; \
            'healthgate workout list' shows it then), but it was not stored yet ("stored": false \
            in JSON; with --all, each such workout). When the store cannot be read to tell \
            whether it holds the workout, it exits 65 with the store's error: the workout has \
            ended all the same.
            """)

    static let activity = Command(
        name: "activity", summary: "Begin the next activity of a multisport workout.",
        usage: "workout activity TYPE [--participant NAME | --all] [--format line|json]",
        options: [formatOption] + participantOptions + ControlSocketPath.options
    ) { arguments, context in
        let name = try arguments.positional(0, "the activity TYPE")
        let type = try activity(name, what: "activity")
        return try await control(.activity(type), arguments, context)
    }

    static let status = Command(
        name: "status", summary: "Show the live workout once.",
        usage: "workout status [--participant NAME | --all] [--format text|json]",
        options: [OptionSpec(name: "format", value: "FORMAT", help: "text (default) or json.")] + participantOptions
            + ControlSocketPath.options
    ) { arguments, context in
        let format = try arguments.format(among: ["text", "json"])
        let target = try target(arguments)
        if target == .all {
            let answer = try await sendToAll(.status, arguments, context)
            if format == "json" {
                try printJSON(answer, context)
            } else {
                for snapshot in answer.workouts { context.print(line(snapshot)) }
            }
            return .success
        }
        let snapshot = try await send(.status, target: target, arguments, context)
        if format == "json" {
            try printJSON(snapshot, context)
        } else {
            for line in WorkoutFormat.liveScreen(snapshot) { context.print(line) }
        }
        return .success
    }

    static let live = Command(
        name: "live", summary: "Watch the live workout, refreshed every second.",
        usage: "workout live [--count N] [--participant NAME]",
        discussion: """
            On a terminal the view redraws in place (ANSI cursor control); otherwise (a pipe, a log, \
            ssh without a tty) it prints one line per update. Stops when the workout ends, after N \
            updates with --count, or on Ctrl-C.
            """,
        options: [
            OptionSpec(name: "count", value: "N", help: "Stop after N updates."),
            OptionSpec(name: "participant", value: "NAME", help: "Watch this participant's workout."),
        ] + ControlSocketPath.options
    ) { arguments, context in
        let limit = try arguments.integer("count")
        if let limit, limit < 1 { throw CommandError(.usage, "--count must be at least 1") }
        let target = arguments.value("participant").map(ParticipantWorkouts.Target.participant) ?? .main
        var updates = 0
        if context.stdoutIsTerminal { context.output.write("\u{1B}[H\u{1B}[2J") }
        while true {
            let snapshot = try await send(.status, target: target, arguments, context)
            if context.stdoutIsTerminal {
                // Home the cursor, rewrite each line, clear what is left of the old frame.
                let lines = WorkoutFormat.liveScreen(snapshot).map { $0 + "\u{1B}[K" }
                context.output.write("\u{1B}[H" + lines.joined(separator: "\n") + "\n\u{1B}[J")
            } else {
                context.print("\(RFC3339.string(from: context.clock.now())) \(WorkoutFormat.liveLine(snapshot))")
            }
            updates += 1
            if snapshot.state == .ended || snapshot.state == .notStarted { return .success }
            if let limit, updates >= limit { return .success }
            try await context.clock.sleep(for: .seconds(1))
        }
    }

    static let list = Command(
        name: "list", summary: "List stored workouts.", usage: "workout list [--format table|json] [--db PATH]",
        options: [OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json.")] + StoreAccess.options
    ) { arguments, context in
        let format = try arguments.format(among: ["table", "json"])
        let workouts = try await StoreAccess.workouts(arguments, context: context)
        context.print(try CommandOutput.list(workouts, format: format, empty: "no workouts stored", table: WorkoutFormat.table))
        return .success
    }

    static let show = Command(
        name: "show", summary: "Show one stored workout.", usage: "workout show ID [--format table|json [--records]] [--db PATH]",
        discussion: """
            With --records (JSON only) it prints {"workout": …, "samples": […], "heartbeatSeries": […]}: \
            the workout and the records it reads from the store by its time, types and devices, as \
            HealthKit finds a workout's samples by predicate (a quantity series' quantities each as a \
            sample, as 'query samples' lists them). Records pruned since or deleted are absent.
            """,
        options: [
            OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json."),
            OptionSpec(name: "records", value: nil, help: "With --format json, also the samples and heartbeat series the workout reads."),
        ] + StoreAccess.options
    ) { arguments, context in
        let format = try arguments.format(among: ["table", "json"])
        if arguments.flag("records") {
            guard format == "json" else { throw CommandError(.usage, "--records needs --format json") }
            let stored = try await StoreAccess.storedWorkout(id: try workoutID(arguments), arguments, context: context)
            context.print(try CommandOutput.json(WorkoutRecordsOutput(
                workout: stored.workout, samples: stored.samples, heartbeatSeries: stored.heartbeatSeries)))
            return .success
        }
        let (workout, readings) = try await StoreAccess.workout(id: try workoutID(arguments), arguments, context: context)
        guard format == "table" else {
            context.print(try WorkoutFormat.json(workout))
            return .success
        }
        context.print(WorkoutFormat.detail(workout))
        if let note = readings.curveNote(step: WorkoutCurve.step) { context.print("  charts     \(note)") }
        return .success
    }

    static let chart = Command(
        name: "chart", summary: "Write an SVG chart of a stored workout.",
        usage: "workout chart ID --output FILE.svg [--db PATH]",
        discussion: """
            Heart rate over time with the zone bands, pauses shaded, laps marked, gaps without \
            heart rate as breaks in the line, a bike's or rower's power and cadence when it has \
            them, and the totals in the header. Open it in a browser.

            It draws the workout's raw samples while the store holds them. Once store.retentionDays \
            pruned them, a type is drawn from the curve the store kept with the workout, a point \
            every \(Int(WorkoutCurve.step.seconds)) s (the mean heart rate, power or cadence over it), \
            and the command says so on standard error; the totals are the workout's own either way.

            The file is written whole (a temporary file renamed over it), readable by you \
            alone (0600). --output may also be a device or a named pipe, such as /dev/stdout: \
            the SVG is written into it, and nothing else is printed on standard output.
            """,
        options: [OptionSpec(name: "output", value: "FILE", help: "Where to write the SVG (required).")] + StoreAccess.options
    ) { arguments, context in
        guard let output = arguments.value("output") else { throw CommandError(.usage, "--output FILE.svg is required") }
        let (workout, readings) = try await StoreAccess.workout(id: try workoutID(arguments), arguments, context: context)
        // The zones come from the profile; a broken configuration is an error, not "no zones".
        let configuration = try ConfigurationLocator.load(arguments, context: context)
        let profile: UserProfile
        do {
            profile = try UserProfile.decode(configuration.profile)
        } catch {
            throw CommandError(.configuration, "\(configuration.origin): \(error)")
        }
        let svg = WorkoutChart.svg(workout: workout, samples: readings.samples, zones: profile.heartRateZones(on: workout.startDate))
        if let note = readings.curveNote(step: WorkoutCurve.step) { context.printError("healthgate: \(note)") }
        if try HealthDataFile.write(Array(svg.utf8), to: output) == .replacedAtomically {
            context.print("wrote \(output)")
        }
        return .success
    }

    static let export = Command(
        name: "export", summary: "Export a stored workout as a FIT or TCX activity file.",
        usage: "workout export ID [--format fit|tcx] [--output FILE] [--db PATH]",
        discussion: """
            FIT (the default) is what Garmin Connect, Strava, intervals.icu, TrainingPeaks and \
            GoldenCheetah import: file_id, device_info, timer events for the start, each pause and \
            resume and the end, a record per second with heart rate, cadence, distance, speed and \
            power, a lap per lap, the session's totals and the activity. TCX is Garmin's Training \
            Center XML with the same laps and trackpoints. --output defaults to \
            healthgate-ID.fit (or .tcx) in the current directory.

            The records come from the workout's raw samples while the store holds them. Once \
            store.retentionDays pruned them, a type comes from the curve the store kept with the \
            workout: a record (trackpoint) per curve point, every \(Int(WorkoutCurve.step.seconds)) s, \
            with the mean heart rate, power or cadence over it and the distance added up to its \
            end; the session's totals are the workout's own either way. The command says so on \
            standard error ("heartRate from the workout's \(Int(WorkoutCurve.step.seconds))-second curves").

            The file is written whole (a temporary file renamed over it), readable by you \
            alone (0600). --output may also be a device or a named pipe, such as /dev/stdout: \
            the activity is written into it, and nothing else is printed on standard output.
            """,
        options: [
            OptionSpec(name: "format", value: "FORMAT", help: "fit (default) or tcx."),
            OptionSpec(name: "output", value: "FILE", help: "Where to write the file."),
        ] + StoreAccess.options
    ) { arguments, context in
        let format = try arguments.format(among: ["fit", "tcx"])
        let id = try workoutID(arguments)
        let output = arguments.value("output") ?? "healthgate-\(id).\(format)"
        let (workout, readings) = try await StoreAccess.workout(id: id, arguments, context: context)
        let samples = readings.samples
        let bytes = format == "fit"
            ? FITActivity.encode(workout, samples: samples) : Array(TCXActivity.encode(workout, samples: samples).utf8)
        if let note = readings.curveNote(step: WorkoutCurve.step) { context.printError("healthgate: \(note)") }
        if try HealthDataFile.write(bytes, to: output) == .replacedAtomically {
            let counted = readings.typesFromCurves.isEmpty ? "samples" : "samples and curve points"
            context.print("wrote \(output) (\(format.uppercased()), \(bytes.count) bytes, \(samples.count) \(counted))")
        }
        return .success
    }

    // MARK: Helpers

    /// A command sending `request`; `more` adds what is particular to it to the discussion.
    static func simple(_ name: String, _ summary: String, _ request: WorkoutControlRequest, more: String = "") -> Command {
        Command(
            name: name, summary: summary, usage: "workout \(name) [--participant NAME | --all] [--format line|json]",
            discussion: (more.isEmpty ? "" : more + "\n\n") + """
                Exits 65 if no workout is in progress. --participant NAME acts on that participant's \
                workout; --all on every participant's workout in progress, a line each, and a \
                participant without one is listed ("NAME: no workout in progress"; \
                "notInProgress" in JSON), not a failure. With --all it exits 65 when a workout \
                refused (each "healthgate: NAME: reason" on stderr, the others still acted on) or \
                when no participant's workout is in progress.
                """,
            options: [formatOption] + participantOptions + ControlSocketPath.options
        ) {
            arguments, context in
            try await control(request, arguments, context)
        }
    }

    /// The activity type `name` gives (case-insensitive where that is unambiguous), or a usage
    /// error with the types it most likely meant and every type.
    static func activity(_ name: String, what: String) throws(CommandError) -> WorkoutActivityType {
        let names = WorkoutActivityType.allCases.map(\.rawValue)
        let picked = try NameChoice.pick(name, among: names, what: what)
        guard let activity = WorkoutActivityType(rawValue: picked) else {
            throw CommandError(.usage, NameChoice.unknown(name, among: names, what: what))
        }
        return activity
    }

    static func control(_ request: WorkoutControlRequest, _ arguments: ParsedArguments, _ context: CommandContext) async throws -> ExitCode {
        let format = try arguments.format(among: ["line", "json"])
        let target = try target(arguments)
        guard target == .all else {
            let snapshot = try await send(request, target: target, arguments, context)
            if format == "json" {
                try printJSON(snapshot, context)
            } else {
                context.print(line(snapshot))
            }
            return notStored([snapshot], context) ? .temporaryFailure : .success
        }
        let answer = try await sendToAll(request, arguments, context)
        if format == "json" {
            try printJSON(answer, context)
        } else {
            for snapshot in answer.workouts { context.print(line(snapshot)) }
            for name in answer.notInProgress { context.print("\(name): no workout in progress") }
        }
        for error in answer.errors { context.printError("healthgate: \(error)") }
        let waitRanOut = notStored(answer.workouts, context)
        return !answer.errors.isEmpty ? .dataError : waitRanOut ? .temporaryFailure : .success
    }

    /// Says on stderr which ended workouts the store did not hold yet when the daemon answered
    /// (``WorkoutSnapshot/stored`` false); whether there was one.
    static func notStored(_ snapshots: [WorkoutSnapshot], _ context: CommandContext) -> Bool {
        let waiting = snapshots.filter { $0.stored == false }
        for snapshot in waiting {
            let whose = snapshot.participant.map { "\($0)'s workout" } ?? "the workout"
            context.printError(
                "healthgate: \(whose) \(snapshot.workoutID.map { "\($0) " } ?? "")ended and its end is journaled, but it is "
                    + "not stored yet (the daemon waited \(snapshot.storeWaitSeconds.map { String(cFormat: "%.1f", $0) } ?? "its storeWaitSeconds") s "
                    + "for the store, storeWaitSeconds in its configuration); it is stored once the store's writer commits it "
                    + "('healthgate workout list' shows it then)")
        }
        return !waiting.isEmpty
    }

    /// The one-line status, after the participant's name when it has one.
    static func line(_ snapshot: WorkoutSnapshot) -> String {
        snapshot.participant.map { "\($0): " } .map { $0 + WorkoutFormat.liveLine(snapshot) } ?? WorkoutFormat.liveLine(snapshot)
    }

    /// `--participant NAME` or `--all`; neither is the gateway's own workout.
    static func target(_ arguments: ParsedArguments) throws -> ParticipantWorkouts.Target {
        switch (arguments.value("participant"), arguments.flag("all")) {
        case (nil, false): .main
        case (let name?, false): .participant(name)
        case (nil, true): .all
        case (_?, true): throw CommandError(.usage, "give --participant NAME or --all, not both")
        }
    }

    static func sendToAll(
        _ request: WorkoutControlRequest, _ options: ParsedArguments, _ context: CommandContext
    ) async throws -> ParticipantWorkouts.GroupAnswer {
        let result = try await ControlSocketPath.send(
            request.command, arguments: merged(request.arguments, .all), options: options, context: context)
        do {
            return try result.decode(ParticipantWorkouts.GroupAnswer.self)
        } catch {
            throw CommandError(.dataError, "the daemon's answer is not understood: \(error)")
        }
    }

    static func merged(_ arguments: JSONValue, _ target: ParticipantWorkouts.Target) -> JSONValue {
        guard case .object(var object) = arguments else { return arguments }
        object.merge(target.arguments) { _, new in new }
        return .object(object)
    }

    /// Sends one request to the daemon's control socket (`--socket`, else the configured
    /// `controlSocket`, else the runtime directory's; `options` are the command's) and reads its
    /// snapshot.
    /// - Throws: ``CommandError`` with `.unavailable` (69) when no daemon answers, `.dataError`
    ///   (65) when the daemon refuses the command (its message is the daemon's error) or answers
    ///   something that is not a snapshot.
    static func send(
        _ request: WorkoutControlRequest, target: ParticipantWorkouts.Target = .main, _ options: ParsedArguments,
        _ context: CommandContext
    ) async throws -> WorkoutSnapshot {
        try decodeSnapshot(
            try await ControlSocketPath.send(
                request.command, arguments: merged(request.arguments, target), options: options, context: context))
    }

    static func decodeSnapshot(_ value: JSONValue) throws -> WorkoutSnapshot {
        do {
            return try value.decode(WorkoutSnapshot.self)
        } catch {
            throw CommandError(.dataError, "the daemon's workout status is not understood: \(error)")
        }
    }

    static func workoutID(_ arguments: ParsedArguments) throws -> SampleID {
        let text = try arguments.positional(0, "the workout ID")
        guard let id = SampleID(string: text) else { throw CommandError(.usage, "\"\(text)\" is not a workout ID (a UUID)") }
        return id
    }

    static func printJSON(_ value: some Encodable, _ context: CommandContext) throws {
        context.print(String(decoding: try HealthJSON.makeEncoder(pretty: true).encode(value), as: UTF8.self))
    }
}

/// `workout show ID --format json --records`: the workout and the records it reads.
struct WorkoutRecordsOutput: Encodable {
    var workout: Workout
    var samples: [QuantitySample]
    var heartbeatSeries: [HeartbeatSeriesSample]
}
