/// The fixed values of the HL7 Personal Health Device implementation guide (PHD IG STU2,
/// `http://hl7.org/fhir/uv/phd`, rebased on IEEE 11073-10206 ACOM) that the `fhir-phd` form
/// writes: profile URLs, code systems and the codes its profiles fix. Each is cited from the
/// guide's source (github.com/HL7/phd, `input/fsh/…`), where the value is declared.
///
/// The MDC codes of observations and units are not here: they come from the one table,
/// ``HealthModel/MDCNomenclature``. The codes below are the ones a profile fixes (a device's
/// type, a version's type), not a reading's.
enum PHDGuide {
    /// The guide's canonical base (sushi-config.yaml `canonical`).
    static let canonical = "http://hl7.org/fhir/uv/phd"

    /// The profiles the form claims in `meta.profile`.
    enum Profile: String {
        /// A reading with one number (StructureDefinition.PhdNumericObservation.fsh).
        case numeric = "PhdNumericObservation"
        /// A value that is an MDC code (StructureDefinition.PhdCodedEnumerationObservation.fsh).
        case codedEnumeration = "PhdCodedEnumerationObservation"
        /// A compound of numbers: the blood pressure (StructureDefinition.PhdCompoundNumericObservation.fsh).
        case compoundNumeric = "PhdCompoundNumericObservation"
        /// A sample array (StructureDefinition.PhdRtsaObservation.fsh).
        case rtsa = "PhdRtsaObservation"
        /// A human-readable string (StructureDefinition.PhdStringObservation.fsh).
        case string = "PhdStringObservation"
        /// A compound of numbers, codes or strings without a value of its own: a TLV-encoded
        /// observation's attributes (StructureDefinition.PhdCompoundObservation.fsh).
        case compound = "PhdCompoundObservation"
        /// The device that measured (StructureDefinition.PhdDevice.fsh).
        case phdDevice = "PhdDevice"
        /// The gateway (StructureDefinition.PhgDevice.fsh).
        case phgDevice = "PhgDevice"
        /// The device's time against the gateway's (StructureDefinition.PhdCoincidentTimeStampObservation.fsh).
        case coincidentTimeStamp = "PhdCoincidentTimeStampObservation"

        /// The profile's canonical URL.
        var url: String { "\(PHDGuide.canonical)/StructureDefinition/\(rawValue)" }
    }

    // MARK: Observations

    /// `Observation.identifier[conditionalCreate].system`, fixed "(exactly)" by
    /// StructureDefinition.PhdBaseObservation.fsh.
    static let observationIdentifierSystem = "\(canonical)/StructureDefinition/PhdBaseObservation"
    /// `category[PHD-Observation]`: 1..1, system and code fixed "(exactly)" by
    /// StructureDefinition.PhdBaseObservation.fsh (CodeSystem.PhdObservationCategories.fsh).
    static let categorySystem = "\(canonical)/CodeSystem/PhdObservationCategories"
    static let categoryCode = "phd"
    /// IEEE 11073-10101 (MDC), the system of every observation, unit and device code
    /// (Nomenclaturecodes.md, "Mapping to FHIR").
    static let mdcSystem = "urn:iso:std:iso:11073:10101"
    /// UCUM: `valueQuantity.system`, fixed by StructureDefinition.PhdNumericObservation.fsh.
    static let ucumSystem = "http://unitsofmeasure.org"
    /// The extension that references the gateway (PhgDevice), 1..1 in
    /// StructureDefinition.PhdBaseObservation.fsh.
    static let gatewayDeviceExtension = "http://hl7.org/fhir/StructureDefinition/observation-gatewayDevice"
    /// The extension that references the Coincident Time Stamp Observation, 0..1 in
    /// StructureDefinition.PhdBaseObservation.fsh (StructureDefinition.CoincidentTimeStampReference.fsh).
    static let coincidentTimeStampExtension = "\(canonical)/StructureDefinition/CoincidentTimeStampReference"
    /// `component[supplementalTypesComponent].code`: MDC_ATTR_SUPPLEMENTAL_TYPES, fixed "(exactly)"
    /// by StructureDefinition.PhdBaseObservation.fsh.
    static let supplementalTypesCode: UInt32 = 68193
    static let supplementalTypesReference = "MDC_ATTR_SUPPLEMENTAL_TYPES"
    /// `interpretation.coding[MsmtStatusInterpretation].system`, fixed by
    /// StructureDefinition.PhdBaseObservation.fsh.
    static let measurementStatusSystem = "http://hl7.org/fhir/uv/pocd/CodeSystem/measurement-status"
    /// `dataAbsentReason` (required binding to R4's data-absent-reason value set).
    static let dataAbsentReasonSystem = "http://terminology.hl7.org/CodeSystem/data-absent-reason"
    /// `meta.security[PhdHtest]`: v3-ActReason#HTEST, fixed by StructureDefinition.PhdBaseObservation.fsh.
    static let testDataSecuritySystem = "http://terminology.hl7.org/CodeSystem/v3-ActReason"
    static let testDataSecurityCode = "HTEST"

    // MARK: Devices

    /// `Device.identifier.type` codes (CodeSystem.ContinuaDeviceIdentifiers.fsh).
    static let deviceIdentifierTypeSystem = "http://terminology.hl7.org/CodeSystem/ContinuaDeviceIdentifiers"
    /// `identifier[btmacAddressIdentifier]`: type BTMAC, system fixed "(exactly)"
    /// (StructureDefinition.PhdDevice.fsh).
    static let bluetoothAddressType = "BTMAC"
    static let bluetoothAddressSystem = "http://hl7.org/fhir/sid/eui-48/bluetooth"
    /// `identifier[systemIdIdentifier]`: type SYSID, the EUI-64 system id, system fixed "(exactly)"
    /// (StructureDefinition.PhgDevice.fsh, StructureDefinition.PhdDevice.fsh).
    static let systemIdType = "SYSID"
    static let systemIdSystem = "urn:oid:1.2.840.10004.1.1.1.0.0.1.0.0.1.2680"
    /// `identifier[macAddressIdentifier]`: type ETHMAC, the MAC as an EUI-48, system fixed
    /// "(exactly)" (StructureDefinition.PhgDevice.fsh).
    static let ethernetAddressType = "ETHMAC"
    static let ethernetAddressSystem = "http://hl7.org/fhir/sid/eui-48/ethernet"
    /// `property[timeSyncProperty].type`: MDC_TIME_SYNC_PROTOCOL (StructureDefinition.PhgDevice.fsh).
    static let timeSyncProperty = (code: UInt32(68_220), reference: "MDC_TIME_SYNC_PROTOCOL")
    /// `Device.type.coding[PhdCode]`: MDC_MOC_VMS_MDS_SIMP, fixed by StructureDefinition.PhdDevice.fsh.
    static let phdDeviceType = (code: UInt32(65573), reference: "MDC_MOC_VMS_MDS_SIMP")
    /// `Device.type.coding[MDCType]`: MDC_MOC_VMS_MDS_AHD, fixed "(exactly)" by StructureDefinition.PhgDevice.fsh.
    static let phgDeviceType = (code: UInt32(531_981), reference: "MDC_MOC_VMS_MDS_AHD")
    /// MDC_DEV_SPEC_PROFILE_GENERIC (ValueSet.DeviceTypes11073MDC.fsh): a device that follows
    /// IEEE 11073-10206 without a specific specialization, and a gateway that takes any
    /// (StructureDefinition-PhgDevice-notes.md, "Specializations").
    static let genericSpecialization = (code: UInt32(528_457), reference: "MDC_DEV_SPEC_PROFILE_GENERIC")
    /// A specialization's partition: a 16-bit term code is in MDC_PART_INFRA (8), and the FHIR
    /// code is the 32-bit one (Nomenclaturecodes.md: "the encoder must convert the 16-bit value").
    static let specializationPartition: UInt32 = 8
    /// `Device.version[MDCType].type` (required binding, ValueSet.MDCDeviceVersionTypes.fsh;
    /// the references as input/examples/phd-74E8FFFEFF051C00.001C05FFE874.json names them).
    enum VersionType: CaseIterable {
        case hardware, software, firmware

        var code: String {
            switch self {
            case .hardware: "531974"
            case .software: "531975"
            case .firmware: "531976"
            }
        }

        var reference: String {
            switch self {
            case .hardware: "MDC_ID_PROD_SPEC_HW"
            case .software: "MDC_ID_PROD_SPEC_SW"
            case .firmware: "MDC_ID_PROD_SPEC_FW"
            }
        }
    }

    /// The data-absent-reason extension (R4 extension registry): a primitive the profile
    /// requires (PhdDevice `manufacturer 1..`) that the gateway does not know carries it instead
    /// of a value.
    static let dataAbsentReasonExtension = "http://hl7.org/fhir/StructureDefinition/data-absent-reason"
}
