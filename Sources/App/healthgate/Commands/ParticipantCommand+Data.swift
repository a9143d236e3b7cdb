import FoundationEssentials
import GatewayControl
import GatewayRuntime
import HealthModel
import HealthStore
import BuiltinPlugins
import LinuxSystem
import SampleBus
import Workouts

/// `healthgate participant export` and `erase`: a person's data on request (GDPR articles 15,
/// 17 and 20), read from and deleted in the store directly, like `query` and `delete`.
extension ParticipantCommand {
    static let export = Command(
        name: "export", summary: "Write everything stored of a person to one file (JSON or a FHIR Bundle), readable by the user alone.",
        usage: "participant export NAME --output FILE [--format json|fhir] [--db PATH] [--config FILE]",
        discussion: """
            Writes every object attributed to NAME (readings, quantity series, correlations, heartbeat \
            series: metadata healthgate.person) and NAME's workouts (healthgate.participant), each as \
            healthgate's JSON record (its kind and sample), and the curves of each workout, as one JSON \
            object with the keys person, exportedAt, records and workoutCurves. With --format fhir it \
            writes a FHIR R4 Bundle of type collection instead: each reading as the Observation the \
            http-repository sink sends in fhir-r4, its subject NAME's identifiers.fhirPatient from \
            the configuration, else a Patient named NAME that the Bundle carries; workouts and \
            heartbeat series have no FHIR form there and are left out (the command says how many). \
            The file is written atomically with mode 0600; --output may be /dev/stdout. Reads the \
            store read-only, also while the gateway runs.

            Examples:
              healthgate participant export Ana --output ana.json
              healthgate participant export Ana --format fhir --output ana-fhir.json
            """,
        options: [
            OptionSpec(name: "output", value: "FILE", help: "The file to write (required)."),
            OptionSpec(
                name: "format", value: "FORMAT",
                help: "json (the default: every record and curve)"
                    + BuiltinCatalog.make().exportFormats.map { ", \($0.name): \($0.summary)" }.joined() + "."),
        ] + StoreAccess.options
    ) { arguments, context in
        let name = try personName(arguments)
        guard let output = arguments.value("output"), !output.isEmpty else { throw CommandError(.usage, "--output FILE is required") }
        let formats = BuiltinCatalog.make().exportFormats
        let format = try arguments.choice("format", among: ["json"] + formats.map { $0.name }) ?? "json"
        // The person as configured, read before the store: a configuration error changes nothing.
        let person = format == "json" ? nil : try configuredPerson(name, arguments, context: context)
        let export = try await StoreAccess.withStore(arguments, context: context, access: .readOnly) { store in
            try await personsData(name, in: store, at: context.clock.now())
        }
        let bytes: [UInt8]
        let written: String
        if let person, let form = formats.first(where: { $0.name == format }) {
            let file = try form.export(person: person, records: export.records, at: export.exportedAt)
            (bytes, written) = (file.bytes, file.description)
        } else {
            bytes = Array(try HealthJSON.makeEncoder(pretty: true).encode(export))
            written = String(count: export.records.count, "record") + " and " + String(count: export.workoutCurves.count, "workout curve")
        }
        let method = try HealthDataFile.write(bytes, to: output)
        let mode = method == .replacedAtomically ? " (mode 0600)" : ""
        context.errors.write("\(name): \(written) written to \(output)\(mode)\n")
        return .success
    }

    /// NAME as the configuration (`--config`, else the one `run` finds) declares them, with
    /// their identifiers; a person it does not list has none.
    /// - Throws: ``CommandError`` when the configuration or its participants cannot be read.
    static func configuredPerson(_ name: String, _ arguments: ParsedArguments, context: CommandContext) throws -> ParticipantCharacteristics {
        let configuration = try ConfigurationLocator.load(arguments, context: context)
        let unlisted = ParticipantCharacteristics(name: name, devices: [], characteristics: UserCharacteristics())
        guard configuration.participants != nil else { return unlisted }
        do {
            let roster = try ParticipantRoster.decode(configuration.participants, defaultProfile: UserProfile())
            return roster.participant(named: name)?.pluginCharacteristics ?? unlisted
        } catch {
            throw CommandError(.configuration, "the configuration's participants: \(error)")
        }
    }

    static let erase = Command(
        name: "erase", summary: "Delete everything stored of a person, and their device assignments, in one transaction.",
        usage: "participant erase NAME [--yes] [--format table|json] [--db PATH]",
        discussion: """
            Deletes every object attributed to NAME (healthgate.person), NAME's workouts \
            (healthgate.participant) with their curves, and NAME's device assignments and their \
            intervals, in one transaction, also while the gateway runs (it waits for the gateway's \
            commit). Each deleted object leaves a tombstone in the change log, so every remote sink \
            that follows the store sends it as a deletion. The erase is recorded in the same \
            transaction: from then on no reading of NAME dated before the erase is stored, whenever \
            it arrives (readings still in flight, the next versions of a heartbeat series open at \
            the erase, a device's stored records fetched later), so no receiver gets any of it after \
            the deletions. Readings dated after the erase from a device in NAME's configured \
            devices are NAME's again: remove NAME from the configuration (and restart) to stop \
            that. A running gateway is then told to read its assignments again \
            (participant.reload on its control socket), so it forgets NAME's at once; when none \
            runs there is nothing to tell.

            Refused, deleting nothing, when a workout in progress collects one of the objects: end \
            the workout first. On a terminal it asks first; without one it erases only with --yes.

            Example:
              healthgate participant erase Ana --yes
            """,
        options: [OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json: the deleted uuids and kinds.")]
            + StoreAccess.options + [ControlSocketPath.options[0], Confirmation.option]
    ) { arguments, context in
        let status = try await DeleteCommand.delete(.person(try personName(arguments)), arguments, context: context)
        // The store no longer has the person's assignments; a running gateway still holds them.
        do {
            let path = try ControlSocketPath.resolve(arguments, context: context)
            let response = try await ControlClient(path: path).send(ControlRequest(command: "participant.reload", arguments: .object([:])))
            if !response.ok { throw CommandError(.dataError, response.error ?? "refused") }
            context.errors.write("the running gateway read its assignments again\n")
        } catch let error as ControlSocketError where error.meansNoDaemon {
            // No gateway runs: nothing holds the assignments.
        } catch {
            context.errors.write(
                "warning: the running gateway did not read its assignments again (\(error)); restart it to forget those erased\n")
        }
        return status
    }

    static let attribute = Command(
        name: "attribute", summary: "Give stored readings to a person, as new versions every remote sink sends.",
        usage: "participant attribute NAME (--id UUID... | --device NAME (--since DATE|--last DURATION) [--until DATE]) [--yes] [--db PATH]",
        discussion: """
            Gives readings the gateway stored unattributed, or attributed to the wrong person, to \
            NAME: each becomes a new version of itself with metadata healthgate.person NAME, in one \
            transaction, also while the gateway runs. A sample or a blood-pressure reading becomes a \
            new object (its sync identifier kept, or healthgate-attribution:<uuid>, the next sync \
            version, a uuid derived from both) and the old one is deleted, as a new sync version \
            replaces an old one; a closed quantity series and a finished heartbeat series keep their \
            uuid at their next version. Every \
            remote sink sends the change: FHIR under NAME's Patient, MQTT on NAME's topic.

            --id takes the uuids 'query samples --unattributed' shows (a quantity series by its own \
            uuid, its SERIES column); --device a device's readings whose start is in the range. \
            Refused, changing nothing: a workout (its participant's), a quantity series still being \
            filled or a heartbeat series still being recorded (wait for it to close, within a minute). \
            On a terminal it asks \
            first; without one it acts only with --yes.

            Examples:
              healthgate query samples --type bodyMass --unattributed --last 1d
              healthgate participant attribute Ana --id 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b --yes
              healthgate participant attribute Ben --device "C8:47:8C:01:02:03" --since 2026-11-28T07:00:00Z --until 2026-11-28T07:10:00Z
            """,
        options: [
            OptionSpec(name: "id", value: "UUID", help: "An object to attribute, a quantity series by its own uuid (repeatable).", repeatable: true),
            OptionSpec(name: "device", value: "NAME", help: "Attribute a device's readings in the range (name or local identifier)."),
        ] + QueryOptions.rangeOptions + [
            OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json: each object's uuid before and after."),
        ] + StoreAccess.options + [Confirmation.option]
    ) { arguments, context in
        let name = try personName(arguments)
        if arguments.value("type") != nil { throw CommandError(.usage, "attribute takes --id or --device, not --type") }
        let selection = try DeleteCommand.selection(arguments, context: context)
        let format = try arguments.format(among: ["table", "json"])
        let changed = try await StoreAccess.withStore(arguments, context: context, access: .readWrite) { store in
            try await Confirmation.require(
                "Give \(DeleteCommand.describe(selection)) in \(store.path) to \(name)?", declined: "not confirmed; nothing was attributed",
                arguments, context: context)
            return try await StoreAccess.call { () async throws(StoreError) in try await store.attribute(selection, to: name) }
        }
        if format == "json" {
            let rows = changed.map { ["kind": $0.kind.rawValue, "before": $0.before.uuidString, "after": $0.after.uuidString] }
            context.print(try CommandOutput.json(rows))
        } else {
            context.print(TextTable.render(
                header: ["KIND", "UUID", "NEW VERSION"], rows: changed.map { [$0.kind.rawValue, $0.before.uuidString, $0.after.uuidString] }))
            context.print("attributed \(String(count: changed.count, "object")) to \(name)")
        }
        return .success
    }

    /// The NAME argument, trimmed.
    static func personName(_ arguments: ParsedArguments) throws(CommandError) -> String {
        let name = try arguments.positional(0, "the person's NAME").trimmed()
        guard !name.isEmpty else { throw CommandError(.usage, "the person's NAME must not be empty") }
        return name
    }

    /// What `export` writes.
    struct PersonsData: Encodable {
        var person: String
        var exportedAt: Date
        var records: [HealthRecord]
        var workoutCurves: [Curve]

        /// One curve of one workout, its points in the type's canonical unit.
        struct Curve: Encodable {
            var workout: SampleID
            var type: String
            var unit: String
            var points: [Point]
        }

        struct Point: Encodable {
            var start: Date
            var end: Date
            var value: Double
        }
    }

    /// Every object of `name` in `store`, read through the change log from anchor 0 (each
    /// object's newest version once), and the curves of their workouts.
    static func personsData(_ name: String, in store: HealthStore, at date: Date) async throws -> PersonsData {
        var records: [HealthRecord] = []
        var anchor: Int64 = 0
        while true {
            let page = try await StoreAccess.call { () async throws(StoreError) in
                try await store.changes(since: anchor, limit: 5_000, includingCorrelationMembers: false)
            }
            records += page.added.filter { $0.person == name }
            anchor = page.anchor
            if !page.hasMore { break }
        }
        var curves: [PersonsData.Curve] = []
        for case .workout(let workout) in records {
            guard let stored = try await StoreAccess.call({ () async throws(StoreError) in try await store.workout(id: workout.id) })
            else { continue }
            curves += stored.curves.map { curve in
                PersonsData.Curve(
                    workout: workout.id, type: curve.type.identifier, unit: curve.type.canonicalUnit.unitString,
                    points: curve.points.map { PersonsData.Point(start: $0.startDate, end: $0.endDate, value: $0.value) })
            }
        }
        return PersonsData(person: name, exportedAt: date, records: records, workoutCurves: curves)
    }
}
