/// A unit of measure written in HealthKit's unit-string grammar, with conversion by dimension.
///
/// Grammar (HKUnit `unitFromString:`):
/// ```
/// unit     := product ( "/" product )?          one division at most
/// product  := factor ( ("." | "*") factor )*
/// factor   := atom ( "^" integer )?             integer may be negative; |integer| <= 12
/// atom     := "count" | "%" | non-SI | prefix? SI | prefix? "mol<" molarMass ">"
/// SI       := g m L Pa s J W K Hz V
/// prefix   := da d h c k m mc n p f M G T       "mc" is micro, as in HealthKit
/// non-SI   := lb oz st in ft yd mi min hr d cal kcal Cal mmHg degC degF
/// molarMass := a positive decimal number, grams per mole
/// ```
/// Everything right of "/" is in the denominator, so `kg/m.s^2` is kg·m⁻¹·s⁻².
///
/// A mole carries its substance's molar mass, as HealthKit's `HKUnit.moleUnit(withMolarMass:)`
/// writes it (`mmol<180.15588000005408>/L` is glucose in millimoles per litre). With the molar
/// mass a mole is an amount of mass, so molar units convert to and from mass units: 1 mmol of
/// glucose is 180.15588 mg, and 1 mmol<180.15588000005408>/L is 18.015588 mg/dL. A mole without
/// a molar mass converts to nothing, so it is rejected.
///
/// A value converts as `si = value × factor + offset`. Only a lone temperature unit (degC, degF)
/// has an offset; such a unit inside a compound is rejected because the offset would be ambiguous.
/// `count` and `%` are dimensions of their own, so they never convert into each other.
///
/// A unit's fields live in one immutable object that its copies share: every sample carries two
/// units (its quantity's and its type's canonical one), and a shared object makes a copy one
/// reference instead of a string and nine numbers.
public struct HealthUnit: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline final class Fields: Sendable {
        @usableFromInline let unitString: String
        @usableFromInline let factor: Double
        @usableFromInline let offset: Double
        @usableFromInline let dimension: UnitDimension

        init(unitString: String, factor: Double, offset: Double, dimension: UnitDimension) {
            self.unitString = unitString
            self.factor = factor
            self.offset = offset
            self.dimension = dimension
        }
    }

    @usableFromInline let fields: Fields

    /// The unit string as it was written, for example `count/min`.
    @inlinable public var unitString: String { fields.unitString }
    /// Multiplier to the SI-coherent base (kg, m, s, K, A, count, %).
    var factor: Double { fields.factor }
    /// Offset added after the multiplier; non-zero only for degC and degF.
    var offset: Double { fields.offset }
    /// Exponents of the base dimensions.
    public var dimension: UnitDimension { fields.dimension }


    /// Parses a unit string.
    /// - Throws: ``UnitError`` naming the part of the string that is wrong.
    public init(_ unitString: String) throws(UnitError) {
        self = try UnitParser.parse(unitString)
    }

    init(unitString: String, factor: Double, offset: Double = 0, dimension: UnitDimension) {
        fields = Fields(unitString: unitString, factor: factor, offset: offset, dimension: dimension)
    }

    public var description: String { unitString }

    /// Whether a value in this unit can be converted into `other`.
    public func isCompatible(with other: HealthUnit) -> Bool {
        dimension == other.dimension
    }

    /// Converts `value` from this unit into `other`, to 15 significant digits
    /// (``Swift/Double/withoutConversionNoise``).
    /// - Throws: ``UnitError/incompatible(from:to:)`` when the dimensions differ.
    public func convert(_ value: Double, to other: HealthUnit) throws(UnitError) -> Double {
        guard isCompatible(with: other) else {
            throw .incompatible(from: unitString, to: other.unitString)
        }
        if self == other { return value }
        return ((value * factor + offset - other.offset) / other.factor).withoutConversionNoise
    }

    /// Units are equal when written alike (the same string: the same unit).
    public static func == (lhs: HealthUnit, rhs: HealthUnit) -> Bool {
        lhs.fields === rhs.fields || lhs.unitString == rhs.unitString
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(unitString)
    }
}

// MARK: - Units used across the gateway

extension HealthUnit {
    /// `count`
    public static let count = HealthUnit(unitString: "count", factor: 1, dimension: .count)
    /// `count/min`, beats or steps per minute.
    public static let countPerMinute = HealthUnit(
        unitString: "count/min", factor: 1.0 / 60, dimension: UnitDimension(time: -1, count: 1))
    /// `%`
    public static let percent = HealthUnit(unitString: "%", factor: 0.01, dimension: .percent)
    /// `m`
    public static let meter = HealthUnit(unitString: "m", factor: 1, dimension: UnitDimension(length: 1))
    /// `m/s`
    public static let meterPerSecond = HealthUnit(
        unitString: "m/s", factor: 1, dimension: UnitDimension(length: 1, time: -1))
    /// `s`
    public static let second = HealthUnit(unitString: "s", factor: 1, dimension: UnitDimension(time: 1))
    /// `ms`
    public static let millisecond = HealthUnit(
        unitString: "ms", factor: 1e-3, dimension: UnitDimension(time: 1))
    /// `kcal`
    public static let kilocalorie = HealthUnit(
        unitString: "kcal", factor: 4184, dimension: UnitDimension(mass: 1, length: 2, time: -2))
    /// `kJ`
    public static let kilojoule = HealthUnit(
        unitString: "kJ", factor: 1000, dimension: UnitDimension(mass: 1, length: 2, time: -2))
    /// `W`, the watt (J/s): cycling and rowing power.
    public static let watt = HealthUnit(unitString: "W", factor: 1, dimension: UnitDimension(mass: 1, length: 2, time: -3))
    /// `kg`
    public static let kilogram = HealthUnit(unitString: "kg", factor: 1, dimension: UnitDimension(mass: 1))
    /// `mmHg`, millimetres of mercury: blood pressure.
    public static let millimeterOfMercury = HealthUnit(
        unitString: "mmHg", factor: 133.322387415, dimension: UnitDimension(mass: 1, length: -1, time: -2))
    /// `degC`, degrees Celsius: body temperature.
    public static let degreeCelsius = HealthUnit(
        unitString: "degC", factor: 1, offset: 273.15, dimension: UnitDimension(temperature: 1))
    /// `mg/dL`, milligrams per decilitre: blood glucose (1e-6 kg / 1e-4 m³).
    public static let milligramPerDeciliter = HealthUnit(
        unitString: "mg/dL", factor: 1e-2, dimension: UnitDimension(mass: 1, length: -3))
    /// `kPa`, kilopascals: blood pressure as some cuffs send it.
    public static let kilopascal = HealthUnit(
        unitString: "kPa", factor: 1000, dimension: UnitDimension(mass: 1, length: -1, time: -2))
    /// `degF`, degrees Fahrenheit.
    public static let degreeFahrenheit = HealthUnit(
        unitString: "degF", factor: 5.0 / 9.0, offset: 273.15 - 32 * 5.0 / 9.0, dimension: UnitDimension(temperature: 1))
    /// `lb`, the avoirdupois pound.
    public static let pound = HealthUnit(unitString: "lb", factor: 0.45359237, dimension: UnitDimension(mass: 1))
    /// `cm`
    public static let centimeter = HealthUnit(unitString: "cm", factor: 0.01, dimension: UnitDimension(length: 1))
    /// `in`, the international inch.
    public static let inch = HealthUnit(unitString: "in", factor: 0.0254, dimension: UnitDimension(length: 1))
    /// `mV`, millivolts: an ECG lead's potential.
    public static let millivolt = HealthUnit(
        unitString: "mV", factor: 1e-3, dimension: UnitDimension(mass: 1, length: 2, time: -3, current: -1))
    /// `mmol<180.15588000005408>/L`, millimoles of glucose per litre: HealthKit's molar unit for
    /// blood glucose (`HKUnit.moleUnit(with: .milli, molarMass: HKUnitMolarMassBloodGlucose)`).
    public static let millimolePerLiterOfGlucose = HealthUnit(
        unitString: "mmol<180.15588000005408>/L", factor: 180.15588000005408e-3,
        dimension: UnitDimension(mass: 1, length: -3))
}

extension HealthUnit: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            self = try HealthUnit(text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(unitString)
    }
}

/// Exponents of the base dimensions of a unit.
public struct UnitDimension: Hashable, Sendable, CustomStringConvertible {
    public var mass: Int
    public var length: Int
    public var time: Int
    public var temperature: Int
    public var current: Int
    /// Counted things (beats, steps). Its own dimension, as in HealthKit.
    public var count: Int
    /// Percentages. Its own dimension, so `%` and `count` never convert into each other.
    public var percent: Int

    public init(
        mass: Int = 0, length: Int = 0, time: Int = 0, temperature: Int = 0, current: Int = 0,
        count: Int = 0, percent: Int = 0
    ) {
        self.mass = mass
        self.length = length
        self.time = time
        self.temperature = temperature
        self.current = current
        self.count = count
        self.percent = percent
    }

    static let count = UnitDimension(count: 1)
    static let percent = UnitDimension(percent: 1)

    var isDimensionless: Bool { self == UnitDimension() }

    static func + (lhs: UnitDimension, rhs: UnitDimension) -> UnitDimension {
        UnitDimension(
            mass: lhs.mass + rhs.mass, length: lhs.length + rhs.length, time: lhs.time + rhs.time,
            temperature: lhs.temperature + rhs.temperature, current: lhs.current + rhs.current,
            count: lhs.count + rhs.count, percent: lhs.percent + rhs.percent)
    }

    static func * (lhs: UnitDimension, power: Int) -> UnitDimension {
        UnitDimension(
            mass: lhs.mass * power, length: lhs.length * power, time: lhs.time * power,
            temperature: lhs.temperature * power, current: lhs.current * power,
            count: lhs.count * power, percent: lhs.percent * power)
    }

    public var description: String {
        let parts: [(String, Int)] = [
            ("mass", mass), ("length", length), ("time", time), ("temperature", temperature),
            ("current", current), ("count", count), ("percent", percent),
        ]
        let used = parts.filter { $0.1 != 0 }.map { $0.1 == 1 ? $0.0 : "\($0.0)^\($0.1)" }
        return used.isEmpty ? "dimensionless" : used.joined(separator: "·")
    }
}

/// Why a unit string could not be parsed, or a conversion could not be made.
public enum UnitError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The string, or one side of "/", is empty.
    case empty(String)
    /// An atom that is neither a known unit nor a prefixed SI unit.
    case unknownUnit(String, in: String)
    /// A malformed `^` exponent.
    case invalidExponent(String, in: String)
    /// More than one "/".
    case tooManyDivisions(String)
    /// A mole without a molar mass (`mol`), or with one that is not a positive number.
    case invalidMolarMass(String, in: String)
    /// degC or degF used inside a compound unit, where its offset has no meaning.
    case offsetUnitInCompound(String)
    /// The two units measure different dimensions.
    case incompatible(from: String, to: String)

    public var description: String {
        switch self {
        case .empty(let unit): "empty unit in \"\(unit)\""
        case .unknownUnit(let atom, let unit): "unknown unit \"\(atom)\" in \"\(unit)\""
        case .invalidExponent(let factor, let unit): "invalid exponent in \"\(factor)\" of \"\(unit)\""
        case .tooManyDivisions(let unit): "more than one \"/\" in \"\(unit)\""
        case .invalidMolarMass(let atom, let unit):
            "\"\(atom)\" in \"\(unit)\" needs a positive molar mass in grams per mole, as in mmol<180.15588000005408>"
        case .offsetUnitInCompound(let unit):
            "degC and degF cannot be part of a compound unit (\"\(unit)\")"
        case .incompatible(let from, let to):
            "cannot convert \(from) to \(to): they measure different dimensions"
        }
    }
}

// MARK: - Parser

enum UnitParser {
    struct Atom {
        var factor: Double
        var offset: Double = 0
        var dimension: UnitDimension
        var prefixable: Bool
    }

    static let energy = UnitDimension(mass: 1, length: 2, time: -2)
    static let power = UnitDimension(mass: 1, length: 2, time: -3)

    /// Units by symbol. SI units are prefixable; the rest are whole words.
    static let atoms: [String: Atom] = [
        "g": Atom(factor: 1e-3, dimension: UnitDimension(mass: 1), prefixable: true),
        "m": Atom(factor: 1, dimension: UnitDimension(length: 1), prefixable: true),
        "L": Atom(factor: 1e-3, dimension: UnitDimension(length: 3), prefixable: true),
        "Pa": Atom(factor: 1, dimension: UnitDimension(mass: 1, length: -1, time: -2), prefixable: true),
        "s": Atom(factor: 1, dimension: UnitDimension(time: 1), prefixable: true),
        "J": Atom(factor: 1, dimension: energy, prefixable: true),
        // The watt, J/s, as HealthKit writes it ("W", HKUnit.watt()).
        "W": Atom(factor: 1, dimension: power, prefixable: true),
        "K": Atom(factor: 1, dimension: UnitDimension(temperature: 1), prefixable: true),
        "Hz": Atom(factor: 1, dimension: UnitDimension(time: -1), prefixable: true),
        "V": Atom(
            factor: 1, dimension: UnitDimension(mass: 1, length: 2, time: -3, current: -1),
            prefixable: true),
        "count": Atom(factor: 1, dimension: .count, prefixable: false),
        "%": Atom(factor: 0.01, dimension: .percent, prefixable: false),
        // International avoirdupois pound and yard (1959 agreement).
        "lb": Atom(factor: 0.45359237, dimension: UnitDimension(mass: 1), prefixable: false),
        "oz": Atom(factor: 0.45359237 / 16, dimension: UnitDimension(mass: 1), prefixable: false),
        "st": Atom(factor: 0.45359237 * 14, dimension: UnitDimension(mass: 1), prefixable: false),
        "in": Atom(factor: 0.0254, dimension: UnitDimension(length: 1), prefixable: false),
        "ft": Atom(factor: 0.3048, dimension: UnitDimension(length: 1), prefixable: false),
        "yd": Atom(factor: 0.9144, dimension: UnitDimension(length: 1), prefixable: false),
        "mi": Atom(factor: 1609.344, dimension: UnitDimension(length: 1), prefixable: false),
        "min": Atom(factor: 60, dimension: UnitDimension(time: 1), prefixable: false),
        "hr": Atom(factor: 3600, dimension: UnitDimension(time: 1), prefixable: false),
        "d": Atom(factor: 86400, dimension: UnitDimension(time: 1), prefixable: false),
        // The thermochemical calorie, 4.184 J exactly; "Cal" is the food calorie (kcal).
        "cal": Atom(factor: 4.184, dimension: energy, prefixable: false),
        "kcal": Atom(factor: 4184, dimension: energy, prefixable: false),
        "Cal": Atom(factor: 4184, dimension: energy, prefixable: false),
        // 1 mmHg = 133.322387415 Pa (conventional, from 13.5951 g/cm³ and standard gravity).
        "mmHg": Atom(
            factor: 133.322387415, dimension: UnitDimension(mass: 1, length: -1, time: -2),
            prefixable: false),
        "degC": Atom(
            factor: 1, offset: 273.15, dimension: UnitDimension(temperature: 1), prefixable: false),
        "degF": Atom(
            factor: 5.0 / 9.0, offset: 273.15 - 32 * 5.0 / 9.0,
            dimension: UnitDimension(temperature: 1), prefixable: false),
    ]

    /// SI prefixes, longest first so "da" and "mc" win over "d" and "m".
    static let prefixes: [(String, Double)] = [
        ("da", 1e1), ("mc", 1e-6), ("d", 1e-1), ("h", 1e2), ("c", 1e-2), ("k", 1e3), ("m", 1e-3),
        ("n", 1e-9), ("p", 1e-12), ("f", 1e-15), ("M", 1e6), ("G", 1e9), ("T", 1e12),
    ]

    static func parse(_ string: String) throws(UnitError) -> HealthUnit {
        let trimmed = string.trimmingSpaces
        guard !trimmed.isEmpty else { throw .empty(string) }
        let sides = trimmed.splitOutsideAngleBrackets { $0 == "/" }
        guard sides.count <= 2 else { throw .tooManyDivisions(string) }

        var factor = 1.0
        var dimension = UnitDimension()
        var atomsSeen = 0
        var offsetAtom: Atom?
        for (sideIndex, side) in sides.enumerated() {
            let sign = sideIndex == 0 ? 1 : -1
            // A molar mass is a decimal number: its "." is not a product.
            let factors = side.splitOutsideAngleBrackets { $0 == "." || $0 == "*" }
            var previous: String?
            for part in factors {
                let text = String(part).trimmingSpaces
                guard !text.isEmpty else { throw .empty(string) }
                // "." both multiplies and is a decimal point, so "m^1.5" splits into "m^1" and
                // "5". No atom starts with a digit: report the fractional exponent it was.
                if let previous, previous.contains("^"), text.first?.isNumber == true {
                    throw .invalidExponent("\(previous).\(text)", in: string)
                }
                previous = text
                let (symbol, power) = try splitPower(text, in: string)
                let atom = try resolve(symbol, in: string)
                atomsSeen += 1
                if atom.offset != 0 || symbol == "degC" || symbol == "degF" { offsetAtom = atom }
                let exponent = power * sign
                factor *= pow(atom.factor, exponent)
                dimension = dimension + atom.dimension * exponent
            }
        }
        if let offsetAtom {
            guard atomsSeen == 1, sides.count == 1, dimension == offsetAtom.dimension else {
                throw .offsetUnitInCompound(string)
            }
            return HealthUnit(
                unitString: trimmed, factor: offsetAtom.factor, offset: offsetAtom.offset,
                dimension: dimension)
        }
        return HealthUnit(unitString: trimmed, factor: factor, dimension: dimension)
    }

    /// The largest exponent magnitude accepted after `^`.
    static let maximumExponent = 12

    private static func splitPower(_ text: String, in unit: String) throws(UnitError) -> (String, Int) {
        guard let caret = text.firstIndex(of: "^") else { return (text, 1) }
        let symbol = String(text[..<caret])
        let digits = text[text.index(after: caret)...]
        // Bounded: `pow` below loops |n| times and dimensions multiply by n, so an unbounded
        // exponent from untrusted input ("m^9223372036854775807") hung the parser, and Int.min
        // overflowed when negated for the denominator. Health units never need more than a few.
        guard let power = Int(digits), power != 0, (-maximumExponent...maximumExponent).contains(power)
        else { throw .invalidExponent(text, in: unit) }
        return (symbol, power)
    }

    private static func resolve(_ symbol: String, in unit: String) throws(UnitError) -> Atom {
        if let atom = atoms[symbol] { return atom }
        if symbol.hasSuffix("mol") || symbol.contains("mol<") { return try resolveMole(symbol, in: unit) }
        for (prefix, scale) in prefixes where symbol.hasPrefix(prefix) {
            let rest = String(symbol.dropFirst(prefix.count))
            if let atom = atoms[rest], atom.prefixable {
                return Atom(factor: atom.factor * scale, dimension: atom.dimension, prefixable: false)
            }
        }
        throw .unknownUnit(symbol, in: unit)
    }

    /// `prefix? "mol<" molarMass ">"`: an amount of a substance of that molar mass, in kg.
    private static func resolveMole(_ symbol: String, in unit: String) throws(UnitError) -> Atom {
        guard let open = symbol.firstIndex(of: "<"), symbol.last == ">" else {
            // "mol" alone, or "mmol" without its molar mass.
            if symbol == "mol" || prefixes.contains(where: { symbol == $0.0 + "mol" }) {
                throw .invalidMolarMass(symbol, in: unit)
            }
            throw .unknownUnit(symbol, in: unit)
        }
        let head = String(symbol[..<open])
        let massText = symbol[symbol.index(after: open)..<symbol.index(before: symbol.endIndex)]
        let scale: Double
        if head == "mol" {
            scale = 1
        } else if let prefix = prefixes.first(where: { head == $0.0 + "mol" }) {
            scale = prefix.1
        } else {
            throw .unknownUnit(symbol, in: unit)
        }
        // Digits and one decimal point only: no signs, exponents, "inf" or "nan".
        guard !massText.isEmpty, massText.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let molarMass = Double(massText), molarMass.isFinite, molarMass > 0
        else { throw .invalidMolarMass(symbol, in: unit) }
        // grams per mole → kilograms per mole, times the prefix.
        return Atom(factor: molarMass * 1e-3 * scale, dimension: UnitDimension(mass: 1), prefixable: false)
    }

    /// `x^n` for an integer n, exact for the small powers units use.
    private static func pow(_ x: Double, _ n: Int) -> Double {
        var result = 1.0
        for _ in 0..<abs(n) { result *= x }
        return n < 0 ? 1 / result : result
    }
}

extension StringProtocol {
    /// Splits at the characters `isSeparator` picks, except inside `<…>` (a molar mass). Empty
    /// pieces are kept, so that the parser reports them.
    func splitOutsideAngleBrackets(_ isSeparator: (Character) -> Bool) -> [String] {
        var pieces: [String] = []
        var current = ""
        var depth = 0
        for character in self {
            if character == "<" { depth += 1 } else if character == ">" { depth = Swift.max(0, depth - 1) }
            if depth == 0, isSeparator(character) {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        return pieces
    }

    var trimmingSpaces: String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}

extension Double {
    /// The value rounded to 15 significant digits: a conversion's binary noise removed, the
    /// digits a device sent kept (its FLOAT has at most 8). 120 × 10⁻⁵ kg/L is 120 mg/dL, not
    /// the 119.99999999999999 of `0.0012 * 100_000`; 98.6 °F is 37 °C.
    ///
    /// Exact: the digits are an integer below 2⁵³ divided by a power of ten a Double holds, so
    /// the result is the Double nearest the 15-digit decimal. Values outside 10⁻⁸…10¹⁵, zero and
    /// non-finite ones are returned as they are.
    public var withoutConversionNoise: Double {
        let magnitude = Swift.abs(self)
        guard isFinite, magnitude >= 1e-8, magnitude < 1e15 else { return self }
        let power = 14 - Int(magnitude.log10Floor)
        var scale = 1.0
        for _ in 0..<power { scale *= 10 }
        return (self * scale).rounded() / scale
    }

    /// ⌊log₁₀ self⌋ of a positive finite value.
    private var log10Floor: Double {
        var exponent = 0.0
        var value = self
        while value >= 10 { value /= 10; exponent += 1 }
        while value < 1 { value *= 10; exponent -= 1 }
        return exponent
    }
}
