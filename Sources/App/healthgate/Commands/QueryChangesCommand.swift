import GatewayRuntime
import FoundationEssentials
import HealthModel
import HealthStore

/// `healthgate query changes`: the store as a sync source, by anchor.
extension QueryCommand {
    /// How often `--follow` asks the change log for changes after its anchor: one indexed query
    /// on the read-only connection, so a quarter second costs nothing and keeps the stream
    /// within a commit window (100 ms) plus a quarter second of the gateway.
    static let followPollInterval = Duration.milliseconds(250)

    static let changes = Command(
        name: "changes", summary: "Objects stored and deleted after an anchor (sync), or a live stream of them.",
        usage: "query changes [--type TYPE] [--anchor N] [--limit N] [--follow] [--format table|json] [--db PATH]",
        discussion: """
            Every stored object (quantity sample, quantity series, correlation, heartbeat series, workout) \
            has an anchor, a number that grows with every change; a deleted object leaves a tombstone with \
            a new anchor. Start with --anchor 0 (the default): everything stored. Pass the printed anchor \
            next time to get only what changed since.

            A stream's readings (a strap's heart rate, a bike's power) are stored as quantity series \
            (kind quantitySeries): one object with one uuid for up to a minute of readings, each with \
            its own time ("quantities", seconds since the series' start). A series still being filled \
            carries "healthgate.provisional": true and is listed again, at a new anchor and a higher \
            "syncVersion", each time it grows, and once more when it is closed; a client keeps the \
            highest version of each uuid.

            --type is a quantity or correlation type (heartRate, bloodPressure), heartbeatSeries or \
            workout; a quantity type's changes include its series.
            --participant NAME keeps the objects attributed to NAME, --unattributed those attributed to \
            nobody; deletions are listed either way (a tombstone names no person), and --limit counts \
            the changes before this selection.
            With --limit, at most N changes are printed and "hasMore" says whether more follow the anchor.

            --follow prints every change as one JSON line, then keeps printing the changes the gateway \
            commits, by polling the change log every 250 ms, until interrupted:
              {"anchor":12,"change":"added","record":{"kind":"quantity","sample":{...}}}
              {"anchor":14,"change":"added","record":{"kind":"quantitySeries","sample":{...,"quantities":[...]}}}
              {"anchor":13,"change":"deleted","uuid":"...","kind":"quantity","type":"heartRate"}

            Examples:
              healthgate query changes --format json
              healthgate query changes --type heartRate --anchor 1200 --limit 500 --format json
              healthgate query changes --follow --anchor 1300

            Exits 65 when the anchor is from another store, or older than the tombstones kept \
            (tombstoneRetentionDays): read again from --anchor 0.
            """,
        options: [
            OptionSpec(name: "type", value: "TYPE", help: "Only this type: a quantity or correlation type, heartbeatSeries or workout."),
            OptionSpec(name: "anchor", value: "N", help: "Changes after this anchor (default 0: everything)."),
            OptionSpec(name: "limit", value: "N", help: "At most N changes (per poll with --follow)."),
            OptionSpec(name: "follow", value: nil, help: "Stream changes as JSON lines until interrupted."),
            OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json."),
        ] + QueryOptions.personOptions + StoreAccess.options
    ) { arguments, context in
        let type = try QueryOptions.changeType(arguments)
        let anchor = Int64(try arguments.integer("anchor") ?? 0)
        if anchor < 0 { throw CommandError(.usage, "--anchor must not be negative") }
        let limit = try arguments.integer("limit")
        if let limit, limit < 1 { throw CommandError(.usage, "--limit must be at least 1") }
        let format = try arguments.choice("format", among: ["table", "json"], default: arguments.flag("follow") ? "json" : "table") ?? "table"
        if arguments.flag("follow"), format != "json" {
            throw CommandError(.usage, "--follow prints JSON lines; --format table does not apply")
        }
        let person = try QueryOptions.personSelection(arguments)
        let store = try await StoreAccess.open(arguments, context: context)
        if arguments.flag("follow") {
            var next = anchor
            while true {
                let found = try await StoreAccess.call { () async throws(StoreError) in
                    try await store.changes(since: next, type: type, limit: limit)
                }.selecting(person)
                for line in try ChangeLine.lines(of: found) { context.print(line) }
                next = found.anchor
                if !found.hasMore { try await context.clock.sleep(for: followPollInterval) }
            }
        }
        let found = try await StoreAccess.call { () async throws(StoreError) in
            try await store.changes(since: anchor, type: type, limit: limit)
        }.selecting(person)
        if format == "json" {
            context.print(try CommandOutput.json(ChangeSet(found)))
            return .success
        }
        let rows = zip(found.addedAnchors, found.added).map { anchor, record in
            (anchor, ["\(anchor)", "added", record.kind.rawValue, ChangeLine.typeName(of: record),
                      RFC3339.string(from: ChangeLine.startDate(of: record)), record.id.uuidString])
        } + found.deleted.map { deletion in
            (deletion.anchor, ["\(deletion.anchor)", "deleted", deletion.kind.rawValue, deletion.type, "-", deletion.id.uuidString])
        }
        if rows.isEmpty {
            context.print("no changes after anchor \(anchor)")
        } else {
            context.print(TextTable.render(
                header: ["ANCHOR", "CHANGE", "KIND", "TYPE", "START", "UUID"],
                rows: rows.sorted { $0.0 < $1.0 }.map(\.1)))
        }
        context.print("anchor: \(found.anchor)\(found.hasMore ? " (more changes follow; pass --anchor \(found.anchor))" : "")")
        return .success
    }
}

extension StoreChanges {
    /// The changes with only the added objects of `person` (all when nil); deletions stay.
    func selecting(_ person: SampleFilter.PersonSelection?) -> StoreChanges {
        guard let person else { return self }
        var selected = self
        let kept = zip(addedAnchors, added).filter { _, record in
            switch person {
            case .named(let name): record.person == name
            case .unattributed: record.person == nil
            }
        }
        selected.addedAnchors = kept.map(\.0)
        selected.added = kept.map(\.1)
        return selected
    }
}
