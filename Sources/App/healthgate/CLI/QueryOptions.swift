import FoundationEssentials
import HealthModel
import HealthStore
import GatewayRuntime
import GatewayTime

/// Parses the options that select stored objects and how they print: the type, the time range
/// (`--since`, `--last`, `--until`), the device and metadata filters, the statistics, the time
/// zone and `--format`.
///
/// `query samples`, `query stats` and `query changes` use them, and `delete` shares the range
/// and the change type, so both commands read a date or a duration the same way. Every failure
/// is a usage error (64) naming the option.
enum QueryOptions {
    /// The device and metadata options as a store filter.
    static func sampleFilter(_ arguments: ParsedArguments) throws(CommandError) -> SampleFilter {
        var metadata: [String: String] = [:]
        // Not `list`: a value may hold commas.
        for entry in arguments.values["metadata"] ?? [] {
            guard let equals = entry.firstIndex(of: "="), equals != entry.startIndex else {
                throw CommandError(.usage, "--metadata expects KEY=VALUE, got \"\(entry)\"")
            }
            metadata[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
        }
        // The provenance the gateway stamps on every record: shorthands for its metadata entries.
        for (option, key) in [("source", MetadataKey.sourceName), ("gateway", MetadataKey.gatewayName)] {
            guard let value = arguments.value(option) else { continue }
            if let given = metadata[key.rawValue], given != value {
                throw CommandError(.usage, "--\(option) \(value) contradicts --metadata \(key.rawValue)=\(given)")
            }
            metadata[key.rawValue] = value
        }
        return SampleFilter(
            deviceName: arguments.value("device-name"), localIdentifier: arguments.value("local-identifier"),
            manufacturer: arguments.value("manufacturer"), model: arguments.value("model"), metadata: metadata,
            person: try personSelection(arguments))
    }

    /// The options that select whose readings: `--participant NAME` and `--unattributed`.
    static let personOptions = [
        OptionSpec(name: "participant", value: "NAME", help: "Only the readings attributed to this person."),
        OptionSpec(name: "unattributed", value: nil, help: "Only the readings attributed to nobody."),
    ]

    /// `--participant NAME` or `--unattributed` (not both), nil when neither is given.
    static func personSelection(_ arguments: ParsedArguments) throws(CommandError) -> SampleFilter.PersonSelection? {
        let name = arguments.value("participant")
        if let name, name.trimmed().isEmpty { throw CommandError(.usage, "--participant expects a name") }
        switch (name, arguments.flag("unattributed")) {
        case (let name?, false): return .named(name.trimmed())
        case (nil, true): return .unattributed
        case (nil, false): return nil
        case (_?, true): throw CommandError(.usage, "--participant and --unattributed contradict each other: give one")
        }
    }

    /// `--options a,b,…` as statistics options, nil when absent. Whether they fit the type is
    /// the store's check (a usage error naming the type's options).
    static func statisticsOptions(_ arguments: ParsedArguments) throws(CommandError) -> StatisticsOptions? {
        guard let text = arguments.value("options") else { return nil }
        var options: StatisticsOptions = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmed() }) {
            let known = StatisticsOptions.names.map(\.name)
            let picked = try NameChoice.pick(name, among: known, what: "statistic")
            guard let option = StatisticsOptions.names.first(where: { $0.name == picked })?.option else {
                throw CommandError(.usage, NameChoice.unknown(name, among: known, what: "statistic"))
            }
            options.insert(option)
        }
        return options
    }

    /// `--type`, a built-in quantity type or a generic observation's (`mdc.{type}.{unit}`) (required).
    static func quantityType(_ arguments: ParsedArguments) throws(CommandError) -> QuantityType {
        let known = QuantityType.builtIn.map(\.identifier).joined(separator: ", ")
        guard let name = arguments.value("type") else {
            throw CommandError(.usage, "--type is required; known types: \(known)")
        }
        // A generic observation's type (`mdc.131329.4274`) is named exactly; a built-in one may be abbreviated.
        if let generic = MDCNomenclature.genericType(named: name) { return generic }
        let picked = try NameChoice.pick(name, among: QuantityType.builtIn.map(\.identifier), what: "type")
        guard let type = QuantityType.named(picked) else {
            throw CommandError(.usage, NameChoice.unknown(name, among: QuantityType.builtIn.map(\.identifier), what: "type"))
        }
        return type
    }

    /// `--format`: table (the default), json or csv.
    static func outputFormat(_ arguments: ParsedArguments) throws(CommandError) -> String {
        let format = try arguments.format(among: ["table", "json", "csv"])
        return format
    }

    /// `--time-zone`, else `$TZ`, else the system's time zone.
    static func timeZone(_ arguments: ParsedArguments, context: CommandContext) throws(CommandError) -> ZoneRules {
        if let name = arguments.value("time-zone") {
            guard let zone = NamedTimeZone.named(name, variables: context.variables) else {
                throw CommandError(.usage, "--time-zone expects a time zone like Europe/Berlin or UTC, got \"\(name)\"")
            }
            return zone
        }
        return NamedTimeZone.named(LocalTimeZoneName.resolve(variables: context.variables), variables: context.variables) ?? .utc
    }

    /// `--since`/`--last` and `--until`, as dates. A date without a zone is in `--time-zone`,
    /// else `$TZ`, else the system's.
    static func range(
        _ arguments: ParsedArguments, context: CommandContext, untilDefaultsToNow: Bool
    ) throws(CommandError) -> (Date?, Date?) {
        let now = context.clock.now()
        let zone = try timeZone(arguments, context: context)
        var until = try arguments.value("until").map { text throws(CommandError) in try date(text, option: "until", zone: zone) }
        if arguments.value("since") != nil, arguments.value("last") != nil {
            throw CommandError(.usage, "give --since or --last, not both")
        }
        var since = try arguments.value("since").map { text throws(CommandError) in try date(text, option: "since", zone: zone) }
        if let last = arguments.value("last") {
            since = now.addingTimeInterval(-(try duration(last, option: "last")).seconds)
            until = until ?? now
        }
        if untilDefaultsToNow { until = until ?? now }
        if let since, let until, until <= since {
            throw CommandError(.usage, "the range is empty: --until must be after the start")
        }
        return (since, until)
    }

    /// The range options `query` and `delete` share: `--since`, `--last`, `--until` and the
    /// zone of a date typed without one.
    static let rangeOptions: [OptionSpec] = [
        OptionSpec(name: "since", value: "DATE", help: "Start of the range: \(dateForms)."),
        OptionSpec(name: "last", value: "DURATION", help: "The range is the last 30s, 15m, 1h, 7d, 1w … until now."),
        OptionSpec(name: "until", value: "DATE", help: "End of the range, exclusive (default: now); a DATE as for --since."),
        OptionSpec(
            name: "time-zone", value: "TZ",
            help: "The time zone of a date without one (and of stats' calendar), e.g. Europe/Berlin (default: $TZ or the system's)."),
    ]

    /// What a DATE option's help says it accepts; `date(_:option:zone:)` is its parser.
    static let dateForms =
        "2026-11-21T08:00:00Z or 2026-11-21T08:00:00+01:00 (RFC 3339: that instant), "
        + "2026-11-21 08:00[:00] or 2026-11-21T08:00[:00] (local time), or 2026-11-21 (local midnight); "
        + "local means --time-zone, else $TZ, else the system's zone"

    /// A date as a person types it: RFC 3339; `YYYY-MM-DD HH:MM[:SS]` or `YYYY-MM-DDTHH:MM[:SS]`,
    /// with a zone (`Z`, `+01:00`) or without one, then in `zone`; or `YYYY-MM-DD`, midnight in
    /// `zone` (as a time without a zone is: `2026-11-25` is `2026-11-25 00:00`).
    static func date(_ text: String, option: String, zone: ZoneRules) throws(CommandError) -> Date {
        if let date = RFC3339.date(from: text) { return date }
        let form = /([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ]([0-9]{1,2}):([0-9]{2})(:[0-9]{2}(?:\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?/
        if let match = text.wholeMatch(of: form) {
            let (_, day, hour, minute, seconds, offset) = match.output
            let clock = hour.map { hour in "\(hour.count == 1 ? "0" : "")\(hour):\(minute ?? "00")\(seconds ?? ":00")" } ?? "00:00:00"
            let local = "\(day)T\(clock)"
            if let offset {
                if let date = RFC3339.date(from: local + offset) { return date }
            } else if let wall = RFC3339.date(from: local + "Z") {
                // The wall-clock time read as UTC, less the zone's offset; the offset is looked up
                // again at the result, so a time next to a daylight-saving change gets its own.
                let guess = wall.addingTimeInterval(-Double(zone.secondsFromGMT(for: wall)))
                return wall.addingTimeInterval(-Double(zone.secondsFromGMT(for: guess)))
            }
        }
        throw CommandError(.usage, "--\(option) expects a date such as \(dateForms); got \"\(text)\"")
    }

    /// `30s`, `15m`, `1h`, `7d`, `1w`.
    static func duration(_ text: String, option: String) throws(CommandError) -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        guard let suffix = text.last, let scale = units[suffix], let amount = Int64(text.dropLast()), amount > 0,
            amount < Int64.max / scale
        else {
            throw CommandError(.usage, "--\(option) expects a duration like 30s, 15m, 1h, 7d or 1w, got \"\(text)\"")
        }
        return .seconds(amount * scale)
    }

    /// `--type` for the change log: a quantity or correlation type, `heartbeatSeries` or `workout`
    /// (case-insensitive where that is unambiguous); nil when absent.
    static func changeType(_ arguments: ParsedArguments) throws(CommandError) -> ChangeType? {
        guard let name = arguments.value("type") else { return nil }
        if let generic = MDCNomenclature.genericType(named: name) { return .quantity(generic) }
        let known = QuantityType.builtIn.map(\.identifier) + CorrelationType.builtIn.map(\.identifier)
            + ["heartbeatSeries", "workout"]
        guard let type = ChangeType.named(try NameChoice.pick(name, among: known, what: "type")) else {
            throw CommandError(.usage, NameChoice.unknown(name, among: known, what: "type"))
        }
        return type
    }
}
