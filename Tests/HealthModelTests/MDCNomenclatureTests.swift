import HealthModel
import XCTest

final class MDCNomenclatureTests: XCTestCase {
    /// Each observation code is its partition × 65 536 + term code, as IEEE 11073-10101 builds the
    /// context-free code; the vendor samples' codes are among them.
    func testTheCodesTheSamplesSendAreMapped() {
        XCTAssertEqual(MDCNomenclature.observation(0x0002_4BB8)?.type, .oxygenSaturation, "MDC_PULS_OXIM_SAT_O2 as ST's sample sends it")
        XCTAssertEqual(MDCNomenclature.observation(0x0002_481A)?.type, .heartRate, "MDC_PULS_OXIM_PULS_RATE")
        XCTAssertEqual(MDCNomenclature.observation(0x0002_4A05)?.type, .bloodPressureSystolic)
        XCTAssertEqual(MDCNomenclature.observation(0x0002_4A06)?.type, .bloodPressureDiastolic)
        XCTAssertNil(MDCNomenclature.observation(MDCNomenclature.nonInvasiveBloodPressureMean), "the mean is kept in the correlation's metadata")
        XCTAssertNil(MDCNomenclature.observation(131_329), "an ECG lead has no sample type: a generic observation")
        XCTAssertEqual(MDCNomenclature.unit(0x0220)?.unit, .percent)
        XCTAssertEqual(MDCNomenclature.unit(0x0AA0)?.unit, .countPerMinute)
        XCTAssertEqual(MDCNomenclature.unit(0x0F20)?.ucum, "mm[Hg]")
        XCTAssertEqual(MDCNomenclature.unit(0x10B2)?.unit, .millivolt)
    }

    /// No code is declared twice, and every mapped observation's unit rows convert into its type.
    func testTheTableIsDeclaredOnceAndConverts() throws {
        XCTAssertEqual(Set(MDCNomenclature.observations.map(\.code)).count, MDCNomenclature.observations.count)
        XCTAssertEqual(Set(MDCNomenclature.units.map(\.code)).count, MDCNomenclature.units.count)
        XCTAssertEqual(Set(MDCNomenclature.observations.map(\.reference)).count, MDCNomenclature.observations.count)
        for unit in MDCNomenclature.units {
            XCTAssertEqual(try HealthUnit(unit.unit.unitString), unit.unit, "\(unit.reference)'s unit is one the grammar reads back")
        }
        XCTAssertEqual(try XCTUnwrap(MDCNomenclature.unit(4416)).unit.convert(98.6, to: .degreeCelsius), 37, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(MDCNomenclature.unit(1760)).unit.convert(100, to: .kilogram), 45.359237, accuracy: 1e-9)
        XCTAssertEqual(try XCTUnwrap(MDCNomenclature.unit(3843)).unit.convert(16, to: .millimeterOfMercury), 120.009, accuracy: 1e-3)
        XCTAssertEqual(MDCNomenclature.code(for: .heartRate)?.reference, "MDC_PULS_OXIM_PULS_RATE", "a type's first row is its code")
    }

    /// A generic observation's type names both codes; `named` finds it, so the store reads it back.
    func testAGenericObservationsTypeRoundTripsThroughItsName() throws {
        let ecg = MDCNomenclature.genericType(observation: 131_329, unit: 4274)
        XCTAssertEqual(ecg.identifier, "mdc.131329.4274")
        XCTAssertEqual(ecg.canonicalUnit, .millivolt)
        XCTAssertEqual(QuantityType.named("mdc.131329.4274"), ecg)
        let unknownUnit = MDCNomenclature.genericType(observation: 8_454_260, unit: 9)
        XCTAssertEqual(unknownUnit.canonicalUnit, .count, "a unit the gateway does not know keeps the value as sent")
        XCTAssertEqual(QuantityType.named(unknownUnit.identifier), unknownUnit)
        for bad in ["mdc.", "mdc.1", "mdc.1.", "mdc..1", "mdc.1.2.3", "mdc.01.2", "mdc.1.65536", "mdc.4294967296.1", "mdc.-1.2", "mdc.1.+2", "MDC.1.2"] {
            XCTAssertNil(QuantityType.named(bad), bad)
        }
        let data = try JSONEncoder().encode(ecg)
        XCTAssertEqual(try JSONDecoder().decode(QuantityType.self, from: data), ecg)
    }

    /// An observation's attributes are read back from their keys by type, then occurrence; a
    /// key of the prefix that names no type is not one; the value kind reads its key.
    func testAttributesAndValueKindReadTheirKeys() {
        var metadata: Metadata = [
            .mdcAttribute(68_221): .string("abc"), .mdcAttribute(68_220, occurrence: 3): .integer(7), .mdcAttribute(68_220): .integer(5),
            .mdcAttribute(68_220, occurrence: 2): .double(2.5), "healthgate.mdc.attribute.x": .integer(1),
            "healthgate.mdc.attribute.68220.0": .integer(1), "healthgate.mdc.attribute.1.2.3": .integer(1),
        ]
        XCTAssertEqual(MetadataKey.mdcAttribute(68_220).rawValue, "healthgate.mdc.attribute.68220")
        XCTAssertEqual(MetadataKey.mdcAttribute(68_220, occurrence: 2).rawValue, "healthgate.mdc.attribute.68220.2")
        XCTAssertEqual(metadata.mdcAttributes.map(\.type), [68_220, 68_220, 68_220, 68_221])
        XCTAssertEqual(metadata.mdcAttributes.map(\.value), [.integer(5), .double(2.5), .integer(7), .string("abc")])
        XCTAssertNil(metadata.mdcValueKind)
        metadata.mdcValueKind = .text
        XCTAssertEqual(metadata[.mdcValueKind], .string("text"))
        metadata[.mdcValueKind] = .string("a kind of a later version")
        XCTAssertNil(metadata.mdcValueKind)
    }
}
