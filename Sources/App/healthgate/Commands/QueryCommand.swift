import FoundationEssentials
import GatewayTime
import HealthModel
import GatewayRuntime
import HealthStore

/// `healthgate query samples|stats|changes`: reads the SQLite store, also while the gateway writes to it.
enum QueryCommand {
    static let command = Command(
        name: "query", summary: "Query the store: samples, statistics and changes.", usage: "query SUBCOMMAND",
        discussion: """
            Reads the store read-only, so it can run while the gateway is writing (WAL mode).
            The store is --db PATH, else the configuration's store.path, else \
            $XDG_DATA_HOME/healthgate/samples.sqlite ($STATE_DIRECTORY under systemd).

            Examples:
              healthgate query samples --type heartRate --last 1h
              healthgate query samples --type heartRate --since 2026-11-21 --order desc --limit 10 --format json
              healthgate query stats --type stepCount --interval day --last 7d
              healthgate query stats --type stepCount --interval day --time-zone Europe/Berlin --since 2026-10-20
              healthgate query stats --type heartRate --since 2026-11-21T08:00:00Z --until 2026-11-21T09:00:00Z
              healthgate query stats --type heartRate --local-identifier AA:BB:CC:DD:EE:FF --last 1d
              healthgate query stats --type heartRate --interval hour --by-device --last 1d
              healthgate query samples --type heartRate --metadata healthgate.userIndex=1 --last 7d
              healthgate query samples --type bodyMass --participant Ana --last 30d
              healthgate query samples --type bodyMass --unattributed
              healthgate query changes --anchor 0 --format json
              healthgate query changes --follow

            Exits 66 when the store does not exist, 64 for a bad option or an unknown type.
            """,
        subcommands: [samples, stats, changes])

    static let rangeOptions: [OptionSpec] = QueryOptions.rangeOptions + [
        OptionSpec(name: "type", value: "TYPE", help: "The quantity type, e.g. heartRate, stepCount (required)."),
        OptionSpec(name: "format", value: "FORMAT", help: "table (default), json or csv."),
        OptionSpec(name: "device-name", value: "NAME", help: "Only samples of the device with this name."),
        OptionSpec(name: "local-identifier", value: "ID", help: "Only samples of the device with this local identifier (BLE address)."),
        OptionSpec(name: "manufacturer", value: "NAME", help: "Only samples of devices of this manufacturer."),
        OptionSpec(name: "model", value: "MODEL", help: "Only samples of devices of this model."),
        OptionSpec(
            name: "metadata", value: "KEY=VALUE", help: "Only samples with this metadata entry (repeatable; all must match).",
            repeatable: true),
        OptionSpec(name: "source", value: "NAME", help: "Only samples of this configured source (provenance healthgate.source)."),
        OptionSpec(name: "gateway", value: "NAME", help: "Only samples of this gateway (provenance healthgate.gateway)."),
    ] + QueryOptions.personOptions + StoreAccess.options

    static let samples = Command(
        name: "samples", summary: "List the samples of a type whose start date is in a range.",
        usage: "query samples --type TYPE [--since DATE|--last DURATION] [--until DATE] [--limit N] "
            + "[--order asc|desc] [--format table|json|csv] [--db PATH]",
        discussion: """
            Values are shown in the type's canonical unit (heartRate in count/min, stepCount in count), \
            with the decimals the type is measured to (whole beats per minute and steps, 36.8 degC, \
            1.78 m); JSON and CSV carry every digit, and also the value and unit as recorded. JSON is healthgate's documented \
            sample representation (RFC 3339 dates with microseconds).

            The store keeps the readings of a stream (a strap's heart rate, a bike's power and \
            cadence) as quantity series, a sample of up to a minute of readings with one uuid; \
            each reading is listed here as a sample of its own, as HealthKit's \
            HKQuantitySeriesSampleQuery lists them. Its uuid is derived from the series' uuid and \
            its place in it (the same reading always gets the same one), and the SERIES column \
            (CSV "series", JSON metadata "healthgate.series") names the series; "-" (empty) for a \
            plain sample. Deleting a reading of a series deletes the whole series: \
            'healthgate delete --id SERIES'.
            """,
        options: rangeOptions + [
            OptionSpec(name: "limit", value: "N", help: "At most N samples."),
            OptionSpec(name: "order", value: "ORDER", help: "asc (oldest first, default) or desc."),
        ]
    ) { arguments, context in
        let type = try QueryOptions.quantityType(arguments)
        let format = try QueryOptions.outputFormat(arguments)
        let order = try arguments.choice("order", among: ["asc", "desc"]).flatMap(SampleOrder.init(rawValue:)) ?? .ascending
        let limit = try arguments.integer("limit")
        if let limit, limit < 0 { throw CommandError(.usage, "--limit must not be negative") }
        let (since, until) = try QueryOptions.range(arguments, context: context, untilDefaultsToNow: false)
        let filter = try QueryOptions.sampleFilter(arguments)
        let store = try await StoreAccess.open(arguments, context: context)
        let found = try await StoreAccess.call { () async throws(StoreError) in
            try await store.samples(of: type, from: since, to: until, limit: limit, order: order, filter: filter)
        }
        switch format {
        case "json":
            context.print(try CommandOutput.json(found))
        case "csv":
            context.print("uuid,type,start,end,value,unit,recorded_value,recorded_unit,device,source,series")
            for sample in found {
                context.print([
                    sample.id.uuidString, type.identifier, RFC3339.string(from: sample.startDate),
                    RFC3339.string(from: sample.endDate), String(sample.canonicalValue), type.canonicalUnit.unitString,
                    String(sample.quantity.value), sample.quantity.unit.unitString, sample.device?.displayName ?? "",
                    CommandOutput.source(of: sample.metadata) ?? "", CommandOutput.series(of: sample) ?? "",
                ].map(CommandOutput.csvField).joined(separator: ","))
            }
        default:
            guard !found.isEmpty else {
                context.print("no \(type.identifier) samples in the range")
                return .success
            }
            context.print(TextTable.render(
                header: ["START", "END", "VALUE", "UNIT", "DEVICE", "SOURCE", "UUID", "SERIES"],
                rows: found.map { sample in
                    [RFC3339.string(from: sample.startDate), RFC3339.string(from: sample.endDate),
                     type.text(for: sample.canonicalValue), type.canonicalUnit.unitString,
                     sample.device?.displayName ?? "-", CommandOutput.source(of: sample.metadata) ?? "-", sample.id.uuidString,
                     CommandOutput.series(of: sample) ?? "-"]
                }))
        }
        return .success
    }

    static let stats = Command(
        name: "stats", summary: "Statistics of a type over a range, or per minute, hour or day.",
        usage: "query stats --type TYPE [--interval month|week|day|hour|minute|DURATION] [--time-zone TZ] "
            + "[--anchor DATE] [--options LIST] [--by-device] [--all] [--since DATE|--last DURATION] [--until DATE] "
            + "[--format table|json|csv] [--db PATH]",
        discussion: """
            Cumulative types (stepCount, distanceWalkingRunning, activeEnergyBurned) report a sum; a sample \
            that crosses an interval boundary is split in proportion to time, as HealthKit splits it, so \
            the intervals add up to the range's total. The table prints values with the type's \
            decimals (whole steps, so a split count is rounded); JSON and CSV keep the exact values. Discrete types (heartRate, …) \
            report average, minimum, maximum and the most recent value. --options computes only some of \
            them (HealthKit's statistics options): average,minimum,maximum,mostRecent for discrete types, \
            sum for cumulative ones; the others print as "-" (empty in CSV, null in JSON).

            Without --interval: one statistics over the range. With --interval: one row per interval \
            that has samples; --all lists every interval, empty ones too (count 0). month, week, day, hour and minute are calendar intervals \
            in --time-zone (default: $TZ, else the system's): a day runs from local midnight to local \
            midnight, so the day of a daylight-saving change is one interval of 23 or 25 hours. They \
            are counted from --anchor (default: the start of the day, or of the month, hour or minute \
            for those intervals, that holds the start date). A DURATION (15m, 6h) is a fixed length \
            of time counted from the anchor. Without --since or --last the range starts at the \
            type's first sample.

            With --by-device, each interval has a row over all samples (device "all", the same as \
            without the option) and one row per device with samples in it; a device is its name, \
            manufacturer, model and local identifier. The average of "all" is over every sample, \
            not an average of the devices' averages, and the devices' sums add up to its sum.
            """,
        options: rangeOptions + [
            OptionSpec(name: "interval", value: "INTERVAL", help: "month, week, day, hour, minute, or a duration like 15m."),
            OptionSpec(name: "anchor", value: "DATE", help: "The start of one interval (a DATE as for --since); the others are counted from it."),
            OptionSpec(name: "options", value: "LIST", help: "Only these statistics, comma-separated: average, minimum, maximum, mostRecent, sum."),
            OptionSpec(name: "by-device", value: nil, help: "Also one row per device with samples in each interval."),
            OptionSpec(name: "all", value: nil, help: "With --interval, every interval, also those without samples (count 0)."),
        ]
    ) { arguments, context in
        let type = try QueryOptions.quantityType(arguments)
        let options = try QueryOptions.statisticsOptions(arguments)
        if options != nil, arguments.flag("by-device") {
            throw CommandError(.usage, "--options does not combine with --by-device, which reports every statistic")
        }
        let format = try QueryOptions.outputFormat(arguments)
        let interval: StatisticsInterval? = try arguments.value("interval").map {
            text throws(CommandError) -> StatisticsInterval in
            let units = CalendarInterval.Unit.allCases.map(\.rawValue)
            if let first = text.first, first.isNumber { return .fixed(try QueryOptions.duration(text, option: "interval")) }
            let unit = try NameChoice.pick(text, among: units, what: "--interval", or: "a length such as 30s, 15m, 1h, 7d or 1w")
            return .calendar(CalendarInterval(CalendarInterval.Unit(rawValue: unit) ?? .day))
        }
        let timeZone = try QueryOptions.timeZone(arguments, context: context)
        let givenAnchor = try arguments.value("anchor").map { text throws(CommandError) in
            try QueryOptions.date(text, option: "anchor", zone: timeZone)
        }
        if interval == nil, givenAnchor != nil { throw CommandError(.usage, "--anchor needs --interval") }
        var (since, until) = try QueryOptions.range(arguments, context: context, untilDefaultsToNow: true)
        let filter = try QueryOptions.sampleFilter(arguments)
        let store = try await StoreAccess.open(arguments, context: context)
        let end = until ?? context.clock.now()
        if since == nil {
            // From the first sample; a day when there is none before the end.
            let earliest = try await StoreAccess.call { () async throws(StoreError) in
                try await store.earliestSampleDate(of: type)
            }
            since = earliest.flatMap { $0 < end ? $0 : nil } ?? end.addingTimeInterval(-86400)
        }
        let start = since ?? end
        guard end > start else { throw CommandError(.usage, "the range is empty: --until must be after the start") }
        let byDevice = arguments.flag("by-device")
        var results: [QuantityStatistics]
        var separated: [StatisticsByDevice] = []
        if let interval {
            let calendar = ZonedCalendar(zone: timeZone)
            let anchor = givenAnchor ?? interval.defaultAnchor(for: start, calendar: calendar)
            if byDevice {
                separated = try await StoreAccess.call { () async throws(StoreError) in
                    switch interval {
                    case .fixed(let length):
                        try await store.statisticsCollectionByDevice(
                            of: type, from: start, to: end, anchor: anchor, interval: length, filter: filter)
                    case .calendar(let calendarInterval):
                        try await store.statisticsCollectionByDevice(
                            of: type, from: start, to: end, anchor: anchor, interval: calendarInterval,
                            timeZone: timeZone, filter: filter)
                    }
                }
                results = separated.map(\.overall)
            } else {
                results = try await StoreAccess.call { () async throws(StoreError) in
                    switch interval {
                    case .fixed(let length):
                        try await store.statisticsCollection(
                            of: type, from: start, to: end, anchor: anchor, interval: length, options: options,
                            filter: filter)
                    case .calendar(let calendarInterval):
                        try await store.statisticsCollection(
                            of: type, from: start, to: end, anchor: anchor, interval: calendarInterval,
                            timeZone: timeZone, options: options, filter: filter)
                    }
                }
            }
        } else if byDevice {
            separated = [try await StoreAccess.call { () async throws(StoreError) in
                try await store.statisticsByDevice(of: type, from: start, to: end, filter: filter)
            }]
            results = separated.map(\.overall)
        } else {
            results = [try await StoreAccess.call { () async throws(StoreError) in
                try await store.statistics(of: type, from: start, to: end, options: options, filter: filter)
            }]
        }
        if byDevice {
            if interval != nil, !arguments.flag("all") { separated = separated.filter { $0.overall.sampleCount > 0 } }
            try printByDevice(separated, type: type, format: format, single: interval == nil, context: context)
            return .success
        }
        if interval != nil, !arguments.flag("all") { results = results.filter { $0.sampleCount > 0 } }
        switch format {
        case "json":
            context.print(interval == nil ? try CommandOutput.json(results[0]) : try CommandOutput.json(results))
        case "csv":
            context.print("start,end,count,sum,average,minimum,maximum,most_recent,most_recent_date,unit")
            for row in results {
                let values: [Double?] = [row.sum, row.average, row.minimum, row.maximum, row.mostRecent]
                var fields = [RFC3339.string(from: row.startDate), RFC3339.string(from: row.endDate), String(row.sampleCount)]
                fields += values.map { value -> String in value.map { String($0) } ?? "" }
                fields.append(row.mostRecentDate.map(RFC3339.string(from:)) ?? "")
                fields.append(type.canonicalUnit.unitString)
                context.print(fields.map(CommandOutput.csvField).joined(separator: ","))
            }
        default:
            guard !results.isEmpty else {
                context.print("no \(type.identifier) samples in the range (--all lists every interval)")
                return .success
            }
            let header = ["START", "END", "COUNT"] + CommandOutput.statisticsHeader(of: type)
            context.print(TextTable.render(header: header, rows: results.map { row in
                [RFC3339.string(from: row.startDate), RFC3339.string(from: row.endDate), String(row.sampleCount)]
                    + CommandOutput.statisticsCells(row, of: type)
            }))
        }
        return .success
    }
}
