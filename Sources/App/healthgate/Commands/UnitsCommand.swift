import HealthModel

/// `healthgate units convert VALUE FROM TO`.
enum UnitsCommand {
    static let command = Command(
        name: "units", summary: "Work with HealthKit unit strings.", usage: "units SUBCOMMAND",
        subcommands: [convert])

    static let convert = Command(
        name: "convert", summary: "Convert a value between compatible units.",
        usage: "units convert VALUE FROM TO",
        discussion: """
            Units use HealthKit's grammar: SI units with prefixes (kg, mL, mcg; micro is 'mc'), \
            non-SI units (lb, mi, kcal, mmHg, degF, …), '.' or '*' to multiply, one '/', and \
            integer powers with '^'.

            Examples:
              healthgate units convert 300 kJ kcal        → 71.70172084130019
              healthgate units convert 98.6 degF degC
              healthgate units convert 1 kg/m.s^2 Pa

            Exits 65 when a unit is invalid, the units are incompatible, or the result is out of range.
            """
    ) { arguments, context in
        guard arguments.positional.count == 3 else {
            throw CommandError(.usage, "expected VALUE FROM TO, got \(arguments.positional.count) argument(s)")
        }
        guard let value = Double(arguments.positional[0]), value.isFinite else {
            throw CommandError(.dataError, "\"\(arguments.positional[0])\" is not a number")
        }
        let converted: Double
        do {
            let from = try HealthUnit(arguments.positional[1])
            let to = try HealthUnit(arguments.positional[2])
            converted = try from.convert(value, to: to)
        } catch {
            throw CommandError(.dataError, "\(error)")
        }
        // A finite input can still overflow (1e308 kg in g): refuse it as the input `inf` is.
        guard converted.isFinite else {
            throw CommandError(.dataError, "the result is out of range (beyond ±1.8e308)")
        }
        context.print(String(converted))
        return .success
    }
}
