import Foundation
import HealthModel
import XCTest

/// The unit grammar and conversions, table-driven: every row names the unit strings, so a
/// failure says which row broke.
final class HealthUnitTests: XCTestCase {
    /// Parses `text`, failing the test (not crashing) when it does not parse.
    private func unit(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> HealthUnit {
        do {
            return try HealthUnit(text)
        } catch {
            XCTFail("\"\(text)\" did not parse: \(error)", file: file, line: line)
            throw error
        }
    }

    /// Checks that `value` in the unit `from` converts to `expected` in the unit `to`; the
    /// message names the row.
    private func assertConverts(
        _ value: Double, _ from: String, _ to: String, _ expected: Double, accuracy: Double,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        XCTAssertEqual(
            try unit(from, file: file, line: line).convert(value, to: try unit(to, file: file, line: line)),
            expected, accuracy: accuracy, "\(value) \(from) -> \(to)", file: file, line: line)
    }

    // MARK: - Simple units

    func testSimpleUnitsParseWithTheirDimension() throws {
        let rows: [(String, UnitDimension)] = [
            ("g", UnitDimension(mass: 1)),
            ("m", UnitDimension(length: 1)),
            ("L", UnitDimension(length: 3)),
            ("Pa", UnitDimension(mass: 1, length: -1, time: -2)),
            ("s", UnitDimension(time: 1)),
            ("J", UnitDimension(mass: 1, length: 2, time: -2)),
            ("W", UnitDimension(mass: 1, length: 2, time: -3)),
            ("K", UnitDimension(temperature: 1)),
            ("Hz", UnitDimension(time: -1)),
            ("V", UnitDimension(mass: 1, length: 2, time: -3, current: -1)),
            ("count", UnitDimension(count: 1)),
            ("%", UnitDimension(percent: 1)),
        ]
        for (text, dimension) in rows {
            let parsed = try unit(text)
            XCTAssertEqual(parsed.dimension, dimension, text)
            XCTAssertEqual(parsed.unitString, text)
            XCTAssertEqual(parsed.description, text)
        }
    }

    /// Each simple unit's size, checked against its SI-coherent base.
    func testSimpleUnitsConvertToTheirBase() throws {
        let rows: [(value: Double, from: String, to: String, expected: Double)] = [
            (1, "g", "kg", 0.001),
            (1, "L", "m^3", 0.001),
            (1, "Pa", "kg/m.s^2", 1),
            (1, "J", "kg.m^2/s^2", 1),
            (1, "K", "K", 1),
            (50, "%", "%", 50),
            (3, "count", "count", 3),
        ]
        for row in rows {
            try assertConverts(row.value, row.from, row.to, row.expected, accuracy: 1e-12)
        }
        // Hz is s^-1 without the count dimension; count/s is a rate of counted things.
        XCTAssertEqual(try unit("Hz").dimension, try unit("s^-1").dimension)
        XCTAssertEqual(try unit("Hz").convert(2, to: try unit("s^-1")), 2)
        XCTAssertThrowsError(try unit("Hz").convert(1, to: try unit("count/s")))
    }

    // MARK: - Prefixes

    func testEverySIPrefix() throws {
        let prefixes: [(String, Double)] = [
            ("da", 1e1), ("d", 1e-1), ("h", 1e2), ("c", 1e-2), ("k", 1e3), ("m", 1e-3),
            ("mc", 1e-6), ("n", 1e-9), ("p", 1e-12), ("f", 1e-15), ("M", 1e6), ("G", 1e9),
            ("T", 1e12),
        ]
        let bases = ["g", "m", "L", "Pa", "s", "J", "W", "K", "Hz", "V"]
        for (prefix, scale) in prefixes {
            for base in bases {
                let prefixed = try unit(prefix + base)
                let plain = try unit(base)
                XCTAssertEqual(prefixed.dimension, plain.dimension, prefix + base)
                XCTAssertEqual(
                    try prefixed.convert(1, to: plain), scale, accuracy: scale * 1e-12, prefix + base)
            }
        }
    }

    func testMicroIsMcAsInHealthKit() throws {
        XCTAssertEqual(try unit("mcg").convert(1_000_000, to: try unit("g")), 1, accuracy: 1e-12)
        XCTAssertEqual(try unit("mcs").convert(1, to: .second), 1e-6, accuracy: 1e-20)
        XCTAssertThrowsError(try HealthUnit("ug"))
        XCTAssertThrowsError(try HealthUnit("µg"))
    }

    func testPrefixesOnlyApplyToSIUnits() {
        for text in ["kcount", "k%", "klb", "kmin", "kmmHg", "kdegC", "kCal", "mcal"] {
            XCTAssertThrowsError(try HealthUnit(text), text) { error in
                guard case .unknownUnit(let atom, let whole)? = error as? UnitError else {
                    return XCTFail("\(text): \(error)")
                }
                XCTAssertEqual(atom, text)
                XCTAssertEqual(whole, text)
            }
        }
    }

    // MARK: - Non-SI units

    func testNonSIUnits() throws {
        let rows: [(value: Double, from: String, to: String, expected: Double, accuracy: Double)] = [
            (1, "lb", "kg", 0.45359237, 0),
            (16, "oz", "lb", 1, 1e-12),
            (1, "st", "lb", 14, 1e-12),
            (1, "in", "m", 0.0254, 0),
            (1, "ft", "in", 12, 1e-12),
            (1, "yd", "ft", 3, 1e-12),
            (1, "mi", "m", 1609.344, 0),
            (1, "mi", "yd", 1760, 1e-9),
            (1, "min", "s", 60, 0),
            (1, "hr", "min", 60, 0),
            (1, "d", "hr", 24, 0),
            (1, "cal", "J", 4.184, 0),
            (1, "kcal", "cal", 1000, 1e-9),
            (1, "Cal", "kcal", 1, 0),
            (1, "mmHg", "Pa", 133.322387415, 1e-9),
            (1, "mmHg", "kPa", 0.133322387415, 1e-15),
        ]
        for row in rows {
            try assertConverts(row.value, row.from, row.to, row.expected, accuracy: row.accuracy)
        }
    }

    /// The mandated exact figure: 300 kJ is 71.70172084130019 kcal, bit for bit.
    func testKilojoulesToKilocaloriesIsExact() throws {
        XCTAssertEqual(try unit("kJ").convert(300, to: try unit("kcal")), 71.7017208413002)
        XCTAssertEqual(try Quantity(300, .kilojoule).doubleValue(for: .kilocalorie), 71.7017208413002)
    }

    /// A conversion keeps the digits a device sent: a glucose of 120 × 10⁻⁵ kg/L is 120 mg/dL
    /// (issue #78: 119.99999999999999 was stored and sent), a temperature of 98.6 °F is 37 °C.
    func testConversionsCarryNoBinaryNoise() throws {
        XCTAssertEqual(0.0012 * 100_000, 119.99999999999999, "the noise")
        XCTAssertEqual((0.0012 * 100_000).withoutConversionNoise, 120)
        XCTAssertEqual(try unit("kg/L").convert(0.0012, to: .milligramPerDeciliter), 120)
        XCTAssertEqual(try unit("kg/L").convert(0.00127, to: .milligramPerDeciliter), 127)
        XCTAssertEqual(try unit("degF").convert(98.6, to: .degreeCelsius), 37)
        XCTAssertEqual(try Quantity(72.4, .kilogram).doubleValue(for: try unit("g")), 72_400)
        for value in [1e-9, 0, -0.0012, 1e16, .infinity, .nan] as [Double] where !value.isNaN {
            XCTAssertEqual(value.withoutConversionNoise, value, "outside the range: as it is")
        }
        XCTAssertEqual((-119.99999999999999).withoutConversionNoise, -120)
        XCTAssertEqual(123_456.789_012_345_6.withoutConversionNoise, 123_456.789_012_346)
    }

    // MARK: - Temperature offsets

    func testTemperatureOffsets() throws {
        let rows: [(value: Double, from: String, to: String, expected: Double)] = [
            (98.6, "degF", "degC", 37),
            (37, "degC", "degF", 98.6),
            (0, "degC", "K", 273.15),
            (273.15, "K", "degC", 0),
            (32, "degF", "degC", 0),
            (212, "degF", "degC", 100),
            (-40, "degC", "degF", -40),
            (0, "K", "degF", -459.67),
            (98.6, "degF", "K", 310.15),
            (300, "K", "mK", 300_000),
        ]
        for row in rows {
            try assertConverts(row.value, row.from, row.to, row.expected, accuracy: 1e-9)
        }
    }

    func testOffsetUnitsAreRejectedInCompounds() {
        for text in ["degC/s", "degC.m", "m.degF", "K/degC", "degC^2", "degF*s", "count/degC"] {
            XCTAssertThrowsError(try HealthUnit(text), text) { error in
                XCTAssertEqual(error as? UnitError, .offsetUnitInCompound(text), text)
            }
        }
    }

    // MARK: - Compounds

    func testCompoundUnits() throws {
        let rows: [(value: Double, from: String, to: String, expected: Double)] = [
            (1, "kg/m.s^2", "Pa", 1),  // everything right of "/" is in the denominator
            (1, "kg/m*s^2", "Pa", 1),  // "*" multiplies like "."
            (1, "kg.m^-1.s^-2", "Pa", 1),  // negative powers instead of "/"
            (120, "count/min", "count/s", 2),
            (1, "count/s", "count/min", 60),
            (1, "m/s", "km/hr", 3.6),
            (1, "km/hr", "m/s", 1 / 3.6),
            (1, "mi/hr", "m/s", 0.44704),
            (1, "m^2", "cm^2", 10_000),
            (1, "mL", "cm^3", 1),
            (1, "kg.m^2/s^2", "J", 1),
            (1, "g/dL", "kg/m^3", 10),
            (1, "mmHg", "kg/m.s^2", 133.322387415),
            (1, "ms^-1", "Hz", 1000),
        ]
        for row in rows {
            try assertConverts(row.value, row.from, row.to, row.expected, accuracy: abs(row.expected) * 1e-12)
        }
        // The watt is HealthKit's "W" (HKUnit.watt()), prefixable like the other SI units.
        XCTAssertEqual(try unit("W").convert(1, to: try unit("J/s")), 1)
        XCTAssertEqual(try unit("kW").convert(0.25, to: .watt), 250, accuracy: 1e-9)
        XCTAssertEqual(try unit("kJ/hr").convert(3.6, to: .watt), 1, accuracy: 1e-12)
        XCTAssertThrowsError(try unit("W").convert(1, to: try unit("J")))
    }

    func testPascalFromItsDefinition() throws {
        let pascal = try unit("Pa")
        let compound = try unit("kg/m.s^2")
        XCTAssertEqual(compound.dimension, pascal.dimension)
        XCTAssertTrue(compound.isCompatible(with: pascal))
        XCTAssertEqual(try compound.convert(101_325, to: pascal), 101_325)
        XCTAssertEqual(try pascal.convert(1, to: compound), 1)
    }

    func testBeatsPerMinute() throws {
        let bpm = try unit("count/min")
        XCTAssertEqual(bpm, .countPerMinute)
        XCTAssertEqual(bpm.dimension, UnitDimension(time: -1, count: 1))
        XCTAssertEqual(try bpm.convert(90, to: try unit("count/s")), 1.5, accuracy: 1e-12)
        XCTAssertEqual(try unit("count/s").convert(1.5, to: .countPerMinute), 90, accuracy: 1e-12)
    }

    func testSpacesAroundSymbolsAreAllowed() throws {
        XCTAssertEqual(try unit(" count / min ").dimension, HealthUnit.countPerMinute.dimension)
        XCTAssertEqual(try unit(" count / min ").convert(60, to: .countPerMinute), 60, accuracy: 1e-12)
    }

    func testBuiltInUnitsMatchTheirParsedForm() throws {
        let builtIns: [HealthUnit] = [
            .count, .countPerMinute, .percent, .meter, .meterPerSecond, .second, .millisecond,
            .kilocalorie, .kilojoule, .kilogram, .watt, .millimeterOfMercury, .degreeCelsius,
            .milligramPerDeciliter, .millimolePerLiterOfGlucose,
        ]
        for builtIn in builtIns {
            let parsed = try unit(builtIn.unitString)
            XCTAssertEqual(parsed, builtIn)
            XCTAssertEqual(parsed.dimension, builtIn.dimension, builtIn.unitString)
            XCTAssertEqual(try parsed.convert(7, to: builtIn), 7, accuracy: 1e-12, builtIn.unitString)
            XCTAssertEqual(try builtIn.convert(7, to: parsed), 7, accuracy: 1e-12, builtIn.unitString)
        }
    }

    // MARK: - Molar units

    /// HealthKit's blood-glucose units: mg/dL, and millimoles of glucose (180.15588 g/mol) per litre.
    func testMolarUnitsConvertThroughTheirMolarMass() throws {
        let molar = try unit("mmol<180.15588000005408>/L")
        let mass = try unit("mg/dL")
        XCTAssertEqual(molar.dimension, UnitDimension(mass: 1, length: -3))
        XCTAssertEqual(molar.unitString, "mmol<180.15588000005408>/L", "the molar mass is kept as written")
        XCTAssertEqual(try molar.convert(1, to: mass), 18.015588000005408, accuracy: 1e-12)
        XCTAssertEqual(try molar.convert(5.5, to: mass), 99.08573400002974, accuracy: 1e-9)
        XCTAssertEqual(try mass.convert(100, to: molar), 5.550748607, accuracy: 1e-8)
        XCTAssertEqual(try mass.convert(try molar.convert(7.25, to: mass), to: molar), 7.25, accuracy: 1e-12)
        let rows: [(value: Double, from: String, to: String, expected: Double)] = [
            (1, "mol<180.15588000005408>", "g", 180.15588000005408),
            (2, "mmol<18.015>", "mg", 36.03),
            (1, "mcmol<1000>", "mg", 1),
            (1, "mol<2>/m^3", "g/L", 0.002),
            (1, "mmol<180.15588000005408> / L", "mmol<180.15588000005408>/L", 1),
            // Another substance's molar mass scales the same amount differently.
            (1, "mmol<90.07794000002704>/L", "mmol<180.15588000005408>/L", 0.5),
        ]
        for row in rows {
            try assertConverts(row.value, row.from, row.to, row.expected, accuracy: 1e-9)
        }
        XCTAssertFalse(molar.isCompatible(with: try unit("mg")))
        XCTAssertEqual(try unit("mmol<180.15588000005408>.L^-1").dimension, molar.dimension, "products see the molar mass whole")
        XCTAssertEqual(try HealthJSON.makeDecoder().decode([HealthUnit].self, from: try HealthJSON.makeEncoder().encode([molar])), [molar])
    }

    // MARK: - Errors

    func testIncompatibleConversionsThrow() throws {
        let rows: [(String, String)] = [
            ("count", "%"), ("%", "count"), ("m", "s"), ("s", "m"), ("count/min", "Hz"),
            ("kg", "lb.m"), ("degC", "J"), ("Pa", "J"), ("mmHg", "m"),
        ]
        for (from, to) in rows {
            let source = try unit(from)
            let target = try unit(to)
            XCTAssertFalse(source.isCompatible(with: target), "\(from) vs \(to)")
            XCTAssertThrowsError(try source.convert(1, to: target), "\(from) -> \(to)") { error in
                XCTAssertEqual(error as? UnitError, .incompatible(from: from, to: to))
            }
            XCTAssertThrowsError(try Quantity(1, source).doubleValue(for: target))
        }
    }

    func testMalformedUnitStringsThrowASpecificError() {
        let rows: [(String, UnitError)] = [
            ("", .empty("")),
            ("   ", .empty("   ")),
            ("/min", .empty("/min")),
            ("count/", .empty("count/")),
            ("m..s", .empty("m..s")),
            ("m.", .empty("m.")),
            ("count//min", .tooManyDivisions("count//min")),
            ("m/s/s", .tooManyDivisions("m/s/s")),
            ("m^", .invalidExponent("m^", in: "m^")),
            ("m^x", .invalidExponent("m^x", in: "m^x")),
            ("m^0", .invalidExponent("m^0", in: "m^0")),
            ("m^1.5", .invalidExponent("m^1.5", in: "m^1.5")),
            ("m^2^2", .invalidExponent("m^2^2", in: "m^2^2")),
            ("kg/s^-", .invalidExponent("s^-", in: "kg/s^-")),
            // Out of range: a naive parser hangs on these (a 2^63-step loop) or traps (negating Int.min).
            ("m^13", .invalidExponent("m^13", in: "m^13")),
            ("m^9223372036854775807", .invalidExponent("m^9223372036854775807", in: "m^9223372036854775807")),
            ("kg/s^-9223372036854775808", .invalidExponent("s^-9223372036854775808", in: "kg/s^-9223372036854775808")),
            ("m^99999999999999999999", .invalidExponent("m^99999999999999999999", in: "m^99999999999999999999")),
            ("bananas", .unknownUnit("bananas", in: "bananas")),
            ("kg/parsec", .unknownUnit("parsec", in: "kg/parsec")),
            ("KG", .unknownUnit("KG", in: "KG")),
            ("degc", .unknownUnit("degc", in: "degc")),
            ("xm", .unknownUnit("xm", in: "xm")),
            ("^2", .unknownUnit("", in: "^2")),
            ("degC/min", .offsetUnitInCompound("degC/min")),
            ("mol", .invalidMolarMass("mol", in: "mol")),
            ("mmol/L", .invalidMolarMass("mmol", in: "mmol/L")),
            ("mmol<>/L", .invalidMolarMass("mmol<>", in: "mmol<>/L")),
            ("mmol<0>/L", .invalidMolarMass("mmol<0>", in: "mmol<0>/L")),
            ("mmol<-180>/L", .invalidMolarMass("mmol<-180>", in: "mmol<-180>/L")),
            ("mmol<nan>/L", .invalidMolarMass("mmol<nan>", in: "mmol<nan>/L")),
            ("mmol<1e400>/L", .invalidMolarMass("mmol<1e400>", in: "mmol<1e400>/L")),
            ("mmol<1.2.3>/L", .invalidMolarMass("mmol<1.2.3>", in: "mmol<1.2.3>/L")),
            ("mmol<180", .unknownUnit("mmol<180", in: "mmol<180")),
            ("xmol<180>", .unknownUnit("xmol<180>", in: "xmol<180>")),
            ("g<180>", .unknownUnit("g<180>", in: "g<180>")),
        ]
        for (text, expected) in rows {
            XCTAssertThrowsError(try HealthUnit(text), "\"\(text)\"") { error in
                XCTAssertEqual(error as? UnitError, expected, "\"\(text)\"")
                // Every error says which string was wrong.
                XCTAssertTrue("\(error)".contains("\"\(text)\""), "\(error)")
            }
        }
    }

    func testNegativeAndPositivePowers() throws {
        XCTAssertEqual(try unit("s^-1").dimension, UnitDimension(time: -1))
        XCTAssertEqual(try unit("m^12").dimension, UnitDimension(length: 12))
        XCTAssertEqual(try unit("m^-12").dimension, UnitDimension(length: -12))
        XCTAssertEqual(try unit("m^3").dimension, UnitDimension(length: 3))
        XCTAssertEqual(try unit("cm^-2").convert(1, to: try unit("m^-2")), 10_000, accuracy: 1e-9)
        // A negative power on the right of "/" goes back to the numerator.
        XCTAssertEqual(try unit("kg/s^-2").dimension, UnitDimension(mass: 1, time: 2))
    }

    // MARK: - Coding

    func testUnitCodesAsItsString() throws {
        let data = try HealthJSON.makeEncoder().encode([try unit("kg/m.s^2")])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"["kg/m.s^2"]"#)
        XCTAssertEqual(try JSONDecoder().decode([HealthUnit].self, from: data), [try unit("kg/m.s^2")])
        XCTAssertThrowsError(try JSONDecoder().decode([HealthUnit].self, from: Data(#"["m//s"]"#.utf8))) {
            guard case .dataCorrupted(let context)? = $0 as? DecodingError else {
                return XCTFail("\($0)")
            }
            XCTAssertTrue(context.debugDescription.contains("more than one \"/\""), context.debugDescription)
        }
    }
}
