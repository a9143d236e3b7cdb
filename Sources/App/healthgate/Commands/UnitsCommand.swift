import GatewayRuntime
import HealthModel

/// `healthgate units convert VALUE FROM TO` and `healthgate units list`.
enum UnitsCommand {
    static let command = Command(
        name: "units", summary: "Work with HealthKit unit strings.", usage: "units SUBCOMMAND",
        discussion: "Common names are accepted besides HealthKit's unit strings (bpm, lbs, kg, mmol/L, h, miles, …): 'units list' lists them.",
        subcommands: [convert, list, types])

    static let convert = Command(
        name: "convert", summary: "Convert a value between compatible units.",
        usage: "units convert VALUE FROM TO [--exact]",
        discussion: """
            Units use HealthKit's grammar: SI units with prefixes (kg, mL, mcg; micro is 'mc'), \
            non-SI units (lb, mi, kcal, mmHg, degF, …), '.' or '*' to multiply, one '/', and \
            integer powers with '^'. The names people type are accepted too, in any case: bpm \
            (count/min), lbs, Kg, mmol/L (blood glucose), h (hr), miles, km/h, … ('units list').

            The result is rounded to the precision its unit deserves (a body temperature to a \
            tenth of a degree, a heart rate to a beat per minute; six significant digits for a \
            unit without a listed precision); --exact prints every digit of the double.

            Examples:
              healthgate units convert 300 kJ kcal        → 71.7
              healthgate units convert 98.6 degF degC     → 37
              healthgate units convert 5.5 mmol/L mg/dL   → 99.1
              healthgate units convert 1 kg/m.s^2 Pa

            Exits 65 when a unit is invalid, the units are incompatible, or the result is out of range.
            """,
        options: [OptionSpec(name: "exact", value: nil, help: "Print the result with every digit, unrounded.")]
    ) { arguments, context in
        guard arguments.positional.count == 3 else {
            throw CommandError(.usage, "expected VALUE FROM TO, got \(String(count: arguments.positional.count, "argument"))")
        }
        guard let value = Double(arguments.positional[0]), value.isFinite else {
            throw CommandError(.dataError, "\"\(arguments.positional[0])\" is not a number")
        }
        let converted: Double
        let target: HealthUnit
        do {
            let from = try UnitAlias.unit(arguments.positional[1])
            target = try UnitAlias.unit(arguments.positional[2])
            converted = try from.convert(value, to: target)
        } catch {
            var message = "\(error)"
            if case .unknownUnit(let atom, _)? = error as? UnitError {
                // A near miss of a name `units list` shows: the one meant.
                let near = NameChoice.closest(to: atom, among: UnitAlias.all.flatMap { [$0.unit] + $0.names })
                if !near.isEmpty { message += "; did you mean \(near.joined(separator: " or "))?" }
            }
            throw CommandError(.dataError, "\(message) (see 'healthgate units list' for the names accepted)")
        }
        // A finite input can still overflow (1e308 kg in g): refuse it as the input `inf` is.
        guard converted.isFinite else {
            throw CommandError(.dataError, "the result is out of range (beyond ±1.8e308)")
        }
        context.print(arguments.flag("exact") ? String(converted) : UnitAlias.rounded(converted, in: target))
        return .success
    }

    static let list = Command(
        name: "list", summary: "List the unit names convert accepts besides HealthKit's unit strings.",
        usage: "units list",
        discussion: "Each HealthKit unit with what it measures and the names people type for it (matched ignoring case)."
    ) { _, context in
        let rows = UnitAlias.all.map { [$0.unit, $0.meaning, $0.names.joined(separator: ", ")] }
        context.print(TextTable.render(header: ["UNIT", "MEASURES", "ALSO WRITTEN"], rows: rows))
        return .success
    }

    static let types = Command(
        name: "types", summary: "List the quantity types with their units and plausible values.",
        usage: "units types",
        discussion: """
            Each quantity type a reading may have: the unit the store keeps it in (a reading may \
            come in any unit of that dimension: 'units list'), how its values combine \
            (cumulative values add up, discrete ones stand alone), whether the store keeps its \
            readings as quantity series (a stream: a strap's heart rate) or one sample each, and \
            the values a reading of it \
            can plausibly have, in that unit: an adapter's reading outside them is refused \
            (docs/adapter-protocol.md, "Checks").
            """
    ) { _, context in
        let rows = QuantityType.builtIn.map { type in
            [
                type.identifier, type.canonicalUnit.unitString, type.aggregationStyle.rawValue, type.seriesPolicy == nil ? "samples" : "series",
                type.plausibleRange.map { "\(UnitAlias.rounded($0.lowerBound, in: type.canonicalUnit)) to \(UnitAlias.rounded($0.upperBound, in: type.canonicalUnit))" } ?? "any",
            ]
        }
        context.print(TextTable.render(header: ["TYPE", "UNIT", "VALUES", "STORED AS", "PLAUSIBLE"], rows: rows))
        return .success
    }
}
