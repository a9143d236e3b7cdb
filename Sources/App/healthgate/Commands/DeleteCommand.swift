import AsyncPrimitives
import FoundationEssentials
import GatewayRuntime
import HealthModel
import HealthStore

/// `healthgate delete`: deletes stored objects by uuid, by device and range, or by type and range.
enum DeleteCommand {
    static let command = Command(
        name: "delete", summary: "Delete stored objects by uuid, by device and time range, or by type and time range.",
        usage: "delete (--id UUID... | --device NAME | --type TYPE) [--since DATE|--last DURATION] [--until DATE] "
            + "[--format table|json] [--db PATH] [--yes]",
        discussion: """
            Deletes in one transaction, also while the gateway runs (it waits for the gateway's commit). \
            Each deleted object leaves a tombstone in the change log, so 'healthgate query changes' \
            reports the deletion to sync clients. A blood-pressure reading is deleted whole: its \
            correlation and both member samples.

            A stream's readings (a strap's heart rate, a bike's power) are stored as quantity \
            series, a sample of up to a minute of readings with one uuid, and a series is deleted \
            whole, by --id, --device or --type alike. --id takes the series' uuid, which \
            'healthgate query samples' shows in its SERIES column (JSON metadata \
            "healthgate.series"); the uuid it shows for a reading of a series is derived, not \
            stored, and is refused (exit 64) with that hint.

            --device matches a device's name or local identifier (its BLE address) and deletes its \
            samples, quantity series, correlations and heartbeat series whose start date is in the \
            range; --type deletes the objects of a quantity type (its samples and series), a \
            correlation type, heartbeatSeries or workout. Both need --since or --last (--until \
            defaults to now). A workout refers to its time and devices, not to rows: deleting \
            samples leaves the workout's statistics and curves as they are, and deleting a workout \
            leaves the samples.

            Refused, deleting nothing, when a selected sample is collected by a workout in progress: \
            end the workout first.

            On a terminal it asks before deleting; --yes does not ask. Without a terminal (a \
            script, a pipe) it deletes only with --yes.

            Examples:
              healthgate delete --id 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b
              healthgate delete --device "Polar H10" --since 2026-11-21T08:00:00Z --until 2026-11-21T09:00:00Z
              healthgate delete --type stepCount --last 1d
              healthgate delete --device "Polar H10" --since "2026-11-21 08:00" --until "2026-11-21 09:00" --yes

            Exits 66 when the store does not exist, 64 for a bad option or an unknown uuid or without \
            a terminal and --yes, 1 when the answer is not yes, 75 when a running workout holds the \
            samples.
            """,
        options: [
            OptionSpec(
                name: "id", value: "UUID", help: "Delete the object with this uuid, a quantity series by its own uuid (repeatable).",
                repeatable: true),
            OptionSpec(name: "device", value: "NAME", help: "Delete a device's objects in the range (name or local identifier)."),
            OptionSpec(name: "type", value: "TYPE", help: "Delete a type's objects in the range."),
        ] + QueryOptions.rangeOptions + [
            OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json: the deleted uuids and kinds."),
        ] + StoreAccess.options + [Confirmation.option]
    ) { arguments, context in
        try await delete(try selection(arguments, context: context), arguments, context: context)
    }

    /// Asks (``Confirmation``), deletes `selection` and prints what went, as `--format` says.
    static func delete(_ selection: DeletionSelection, _ arguments: ParsedArguments, context: CommandContext) async throws -> ExitCode {
        let format = try arguments.format(among: ["table", "json"])
        let deleted = try await StoreAccess.withStore(arguments, context: context, access: .readWrite) { store in
            try await Confirmation.require(
                "Delete \(describe(selection)) from \(store.path)?", declined: "not confirmed; nothing was deleted", arguments,
                context: context)
            return try await StoreAccess.call { () async throws(StoreError) in try await store.delete(selection) }
        }
        if format == "json" {
            let rows = deleted.map { ["uuid": $0.id.uuidString, "kind": $0.kind.rawValue] }
            context.print(try CommandOutput.json(rows))
        } else if deleted.isEmpty {
            context.print("nothing matched; nothing was deleted")
        } else {
            context.print(TextTable.render(
                header: ["KIND", "UUID"], rows: deleted.map { [$0.kind.rawValue, $0.id.uuidString] }))
            context.print("deleted \(String(count: deleted.count, "object"))")
        }
        return .success
    }

    static func selection(_ arguments: ParsedArguments, context: CommandContext) throws(CommandError) -> DeletionSelection {
        let ids = arguments.list("id")
        let given = [!ids.isEmpty, arguments.value("device") != nil, arguments.value("type") != nil].filter { $0 }.count
        guard given == 1 else { throw CommandError(.usage, "give exactly one of --id, --device or --type") }
        if !ids.isEmpty {
            if arguments.value("since") != nil || arguments.value("last") != nil || arguments.value("until") != nil {
                throw CommandError(.usage, "--id deletes by uuid; --since, --last and --until do not apply")
            }
            return .ids(try ids.map { text throws(CommandError) -> SampleID in
                guard let id = SampleID(string: text) else {
                    throw CommandError(.usage, "--id expects a uuid like 0192f3c4-5d6e-7f80-9a1b-2c3d4e5f6a7b, got \"\(text)\"")
                }
                return id
            })
        }
        let (since, until) = try QueryOptions.range(arguments, context: context, untilDefaultsToNow: true)
        guard let since, let until else {
            throw CommandError(.usage, "--device and --type need a range: --since DATE or --last DURATION")
        }
        if let device = arguments.value("device") {
            guard !device.isEmpty else { throw CommandError(.usage, "--device must not be empty") }
            return .device(device, from: since, to: until)
        }
        guard let type = try QueryOptions.changeType(arguments) else {
            throw CommandError(.usage, "--type is required")
        }
        return .type(type, from: since, to: until)
    }

    /// The selection in the words of the question ``Confirmation`` asks.
    static func describe(_ selection: DeletionSelection) -> String {
        switch selection {
        case .ids(let ids):
            ids.count == 1 ? "the object \(ids[0])" : "\(ids.count) objects by uuid"
        case .device(let device, let from, let to):
            "the objects of the device \"\(device)\" from \(RFC3339.string(from: from)) to \(RFC3339.string(from: to))"
        case .type(let type, let from, let to):
            "the \(type) objects from \(RFC3339.string(from: from)) to \(RFC3339.string(from: to))"
        case .person(let name):
            "everything of \(name) (their readings, workouts and device assignments)"
        }
    }
}
