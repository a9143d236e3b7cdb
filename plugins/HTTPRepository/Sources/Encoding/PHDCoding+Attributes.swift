import HealthModel
import GatewayRuntime

extension PHDCoding {
    /// The components of an observation's attributes (a TLV-encoded observation's entries,
    /// ``HealthModel/Metadata/mdcAttributes``), one each in type order: `code` the attribute's
    /// MDC code, the value as PhdCompoundObservation's components take it
    /// (StructureDefinition.PhdCompoundObservation.fsh: Quantity, CodeableConcept, string or
    /// SampledData). A number is a dimensionless `valueQuantity` (UCUM `1`: an attribute
    /// carries no unit); text is a `valueString`, and so is a boolean (`true`, `false`), and an
    /// integer beyond what a JSON number holds exactly (2^53); an empty text has
    /// ``noContent``. The `fhir-r4` form sends the same.
    static func attributeComponents(_ metadata: Metadata) -> [JSONValue] {
        metadata.mdcAttributes.map { attribute in
            let value: (String, JSONValue) =
                switch attribute.value {
                case .integer(let number) where number.magnitude <= 1 << 53: ("valueQuantity", dimensionless(Double(number)))
                case .double(let number): ("valueQuantity", dimensionless(number))
                // R4's string is not empty: an empty text has no value, and says so.
                case .string(let text) where text.isEmpty: ("dataAbsentReason", noContent)
                case .integer, .string, .bool: ("valueString", .string(attribute.value.description))
                }
            return .object(["code": .object(["coding": .array([coding(attribute.type)])]), value.0: value.1])
        }
    }

    /// The `dataAbsentReason` of an observation or attribute the device sent without content
    /// (an empty string, no attributes): R4's string has at least one character.
    static let noContent: JSONValue = .object([
        "coding": .array([.object(["system": .string(PHDGuide.dataAbsentReasonSystem), "code": .string("unknown")])]),
        "text": .string("the device sent it empty"),
    ])

    /// A number without a unit: UCUM's `1`.
    private static func dimensionless(_ number: Double) -> JSONValue {
        .object(["value": .number(number), "system": .string(PHDGuide.ucumSystem), "code": .string("1"), "unit": .string("1")])
    }
}
