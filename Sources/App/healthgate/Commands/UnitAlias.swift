import HealthModel

/// A name people type for a HealthKit unit (`bpm`, `lbs`, `mmol/L`), with the unit it means
/// and the decimals a value in that unit deserves. Declared once, here where a person's input is
/// parsed: `units convert` reads them, `units list` prints them. The model keeps HealthKit's
/// grammar; nothing outside the command accepts an alias.
struct UnitAlias: Sendable {
    /// The HealthKit unit string.
    let unit: String
    /// What it measures, for `units list`.
    let meaning: String
    /// The names people type for it, matched ignoring case (the unit string itself always works,
    /// in its own case).
    let names: [String]
    /// The decimals a value in this unit deserves when printed.
    let decimals: Int

    init(_ unit: String, _ meaning: String, _ names: [String], decimals: Int) {
        self.unit = unit
        self.meaning = meaning
        self.names = names
        self.decimals = decimals
    }

    /// Every alias, in the order `units list` prints them.
    static let all: [UnitAlias] = [
        UnitAlias("count/min", "heart rate, cadence", ["bpm", "beats/min", "rpm", "spm"], decimals: 0),
        UnitAlias("count", "steps, beats", ["steps", "beats"], decimals: 0),
        UnitAlias("kg", "body mass", ["kg", "kgs", "kilo", "kilos", "kilogram", "kilograms"], decimals: 2),
        UnitAlias("g", "mass", ["gram", "grams"], decimals: 1),
        UnitAlias("lb", "body mass", ["lb", "lbs", "pound", "pounds"], decimals: 1),
        UnitAlias("st", "body mass", ["stone", "stones"], decimals: 2),
        UnitAlias("mg/dL", "blood glucose", ["mg/dl"], decimals: 0),
        UnitAlias(HealthUnit.millimolePerLiterOfGlucose.unitString, "blood glucose", ["mmol/L"], decimals: 1),
        UnitAlias("mmHg", "blood pressure", ["mmhg"], decimals: 0),
        UnitAlias("degC", "body temperature", ["C", "°C", "celsius"], decimals: 1),
        UnitAlias("degF", "body temperature", ["F", "°F", "fahrenheit"], decimals: 1),
        UnitAlias("%", "oxygen saturation, body fat", ["percent", "pct"], decimals: 1),
        UnitAlias("s", "time", ["sec", "secs", "second", "seconds"], decimals: 1),
        UnitAlias("min", "time", ["mins", "minute", "minutes"], decimals: 1),
        UnitAlias("hr", "time", ["h", "hrs", "hour", "hours"], decimals: 2),
        UnitAlias("m", "distance", ["meter", "meters", "metre", "metres"], decimals: 1),
        UnitAlias("km", "distance", ["km", "kms", "kilometer", "kilometers", "kilometre", "kilometres"], decimals: 2),
        UnitAlias("mi", "distance", ["mi", "mile", "miles"], decimals: 2),
        UnitAlias("ft", "height", ["feet", "foot"], decimals: 1),
        UnitAlias("in", "height", ["inch", "inches"], decimals: 1),
        UnitAlias("kcal", "energy", ["kcal", "calories"], decimals: 0),
        UnitAlias("kJ", "energy", ["kj"], decimals: 0),
        UnitAlias("W", "power", ["watt", "watts"], decimals: 0),
        UnitAlias("m/s", "speed", ["mps"], decimals: 2),
        UnitAlias("km/hr", "speed", ["km/h", "kph", "kmh"], decimals: 1),
        UnitAlias("mi/hr", "speed", ["mph", "mi/h"], decimals: 1),
    ]

    /// The unit `text` names: a HealthKit unit string as it is, else an alias (ignoring case),
    /// else the string with each part of a product or quotient that is an alias replaced
    /// (`km/h` → `km/hr`).
    /// - Throws: the model's ``UnitError`` for the string as typed, when nothing fits.
    static func unit(_ text: String) throws(UnitError) -> HealthUnit {
        let firstError: UnitError
        do {
            return try HealthUnit(text)
        } catch {
            firstError = error
        }
        if let alias = named(text), let unit = try? HealthUnit(alias.unit) { return unit }
        // Part by part, the separators kept: "km/h" → ["km", "/", "h"].
        var parts: [String] = []
        var current = ""
        for character in text {
            if "/.*".contains(character) {
                parts.append(current)
                parts.append(String(character))
                current = ""
            } else {
                current.append(character)
            }
        }
        parts.append(current)
        guard parts.count > 1 else { throw firstError }
        let replaced = parts.map { part -> String in
            let base = part.split(separator: "^", maxSplits: 1).first.map(String.init) ?? part
            guard (try? HealthUnit(base)) == nil, let alias = named(base) else { return part }
            return alias.unit + part.dropFirst(base.count)
        }.joined()
        guard let unit = try? HealthUnit(replaced) else { throw firstError }
        return unit
    }

    /// The alias of that name, ignoring case.
    static func named(_ name: String) -> UnitAlias? {
        let lowered = name.lowercased()
        return all.first { $0.names.contains { $0.lowercased() == lowered } }
    }

    /// `value` in `unit` without floating-point noise: to the unit's decimals (an alias's unit,
    /// else six significant digits), with three significant digits at least, so a small value
    /// keeps its digits (0.00123 kg is not 0).
    static func rounded(_ value: Double, in unit: HealthUnit) -> String {
        guard value != 0, value.isFinite else { return value == 0 ? "0" : String(value) }
        let magnitude = Int((abs(value)).log10Floor)
        let significant = all.first { $0.unit == unit.unitString }.map { max($0.decimals, 2 - magnitude) } ?? (5 - magnitude)
        let decimals = min(max(significant, 0), 15)
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let result = (value * scale).rounded() / scale
        if result == result.rounded(), abs(result) < 1e15 { return String(Int64(result)) }
        return String(result)
    }
}

extension Double {
    /// ⌊log₁₀ |self|⌋ for a finite non-zero value, without Foundation.
    fileprivate var log10Floor: Double {
        var exponent = 0.0
        var magnitude = abs(self)
        while magnitude >= 10 {
            magnitude /= 10
            exponent += 1
        }
        while magnitude < 1 {
            magnitude *= 10
            exponent -= 1
        }
        return exponent
    }
}
