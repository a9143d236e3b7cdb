import HealthModel

/// An ACOM Measurement-Status (IEEE 11073-10206; the Generic Health Sensor's Measurement
/// Status field, bit 0 its least significant bit) as the PHD guide maps it to an Observation:
/// the table "Measurement Status" of StructureDefinition-PhdBaseObservation-notes.md.
///
/// | bit | status | FHIR |
/// | --- | --- | --- |
/// | 0 | invalid | `dataAbsentReason` error, `status` entered-in-error (no value) |
/// | 1 | questionable | `interpretation` questionable |
/// | 2 | not available | `dataAbsentReason` not-performed (no value) |
/// | 3 | calibrating | `interpretation` calibration-ongoing |
/// | 4 | test data | `meta.security` v3-ActReason#HTEST |
/// | 5 | early estimate | `interpretation` early-indication, `status` preliminary |
/// | 6 | manually entered | a `note` |
/// | 7 | setting | the subject is the device, not the patient |
/// | 14 | threshold error | `interpretation` in-alarm, a `note` |
/// | 15 | thresholding disabled | `interpretation` alarm-inhibited, a `note` |
///
/// Pure: the bits in, the elements out.
struct PHDMeasurementStatus: OptionSet, Hashable {
    let rawValue: UInt16

    static let invalid = PHDMeasurementStatus(rawValue: 1 << 0)
    static let questionable = PHDMeasurementStatus(rawValue: 1 << 1)
    static let notAvailable = PHDMeasurementStatus(rawValue: 1 << 2)
    static let calibrating = PHDMeasurementStatus(rawValue: 1 << 3)
    static let testData = PHDMeasurementStatus(rawValue: 1 << 4)
    static let earlyEstimate = PHDMeasurementStatus(rawValue: 1 << 5)
    static let manuallyEntered = PHDMeasurementStatus(rawValue: 1 << 6)
    static let setting = PHDMeasurementStatus(rawValue: 1 << 7)
    static let thresholdError = PHDMeasurementStatus(rawValue: 1 << 14)
    static let thresholdingDisabled = PHDMeasurementStatus(rawValue: 1 << 15)

    /// The status a record's metadata carries (``HealthModel/MetadataKey/mdcMeasurementStatus``,
    /// an integer or its decimal text); none when it carries none.
    init(_ metadata: Metadata) {
        let bits: Int64? = switch metadata[.mdcMeasurementStatus] {
        case .integer(let value)?: value
        case .string(let text)?: Int64(text)
        case .double(let value)? where value == value.rounded(): Int64(exactly: value)
        default: nil
        }
        self.init(rawValue: UInt16(truncatingIfNeeded: bits ?? 0))
    }

    init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// `Observation.status`: entered-in-error for an invalid reading, preliminary for an early
    /// estimate, else final (PhdBaseObservation.fsh: "final unless a Measurement-Status
    /// attribute indicates that the measurement is preliminary").
    var observationStatus: String {
        if contains(.invalid) { return "entered-in-error" }
        if contains(.earlyEstimate) { return "preliminary" }
        return "final"
    }

    /// `dataAbsentReason` (data-absent-reason code), when the status says there is no valid
    /// value: then the Observation carries no value (PhdBaseObservation.fsh, `dataAbsentReason`).
    var dataAbsentReason: (code: String, display: String)? {
        if contains(.invalid) { return ("error", "Error") }
        if contains(.notAvailable) { return ("not-performed", "Not Performed") }
        return nil
    }

    /// The measurement-status interpretation codes, in bit order: each is one `interpretation`
    /// element, as its coding slice MsmtStatusInterpretation is 1..1 (PhdBaseObservation.fsh).
    var interpretations: [String] {
        [
            (PHDMeasurementStatus.questionable, "questionable"), (.calibrating, "calibration-ongoing"),
            (.earlyEstimate, "early-indication"), (.thresholdError, "in-alarm"), (.thresholdingDisabled, "alarm-inhibited"),
        ].filter { contains($0.0) }.map(\.1)
    }

    /// `note` texts: what the guide maps to a note rather than a code.
    var notes: [String] {
        [
            (PHDMeasurementStatus.manuallyEntered, "The measurement was entered manually."),
            (.thresholdError, "The measurement is outside the device's thresholds."),
            (.thresholdingDisabled, "The device did not check the measurement against its thresholds."),
        ].filter { contains($0.0) }.map(\.1)
    }

    /// Whether the reading is test data: `meta.security` HTEST.
    var isTestData: Bool { contains(.testData) }

    /// Whether the reading is a device setting: its subject is the device, not the patient.
    var isSetting: Bool { contains(.setting) }
}
