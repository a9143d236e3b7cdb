public import GATTDecoding

/// One health observation of the Generic Health Sensor service: an IEEE 11073-10206 (ACOM)
/// object as GHS sends it, its optional header fields and its value.
///
/// Which header fields are present is the object's flags (``flags``, derived from the fields),
/// so an observation holds no flag that could disagree with its fields. Bundle members are
/// observations too (``GHSObservationValue/bundle(_:)``); a member without a time stamp takes
/// the bundle's, which is the reader's business, not the decoder's.
public struct GHSObservation: Hashable, Sendable {
    /// The observation type, an MDC code (partition 2: 150456 is SpO2), or nil when absent.
    public var type: UInt32?
    /// When the observation was made.
    public var timestamp: GHSTimestamp?
    /// How long the measurement took, in seconds.
    public var measurementDuration: MedicalFloat?
    /// The measurement status bits.
    public var measurementStatus: GHSMeasurementStatus?
    /// The observation's id, which other observations' ``derivedFrom`` and ``isMemberOf`` name.
    public var objectID: UInt32?
    /// The patient (a user index of the sensor).
    public var patient: UInt8?
    /// Supplemental information: MDC codes (the modality, …).
    public var supplementalInformation: [UInt32]?
    /// The ids of the observations this one is derived from.
    public var derivedFrom: [UInt32]?
    /// The ids of the groups this observation is a member of.
    public var isMemberOf: [UInt32]?
    /// Further attributes as type-length-value entries.
    public var tlvs: [GHSTLV]?
    /// The value, by class.
    public var value: GHSObservationValue

    /// An observation from its fields; those left nil are absent.
    public init(
        type: UInt32? = nil, timestamp: GHSTimestamp? = nil, measurementDuration: MedicalFloat? = nil,
        measurementStatus: GHSMeasurementStatus? = nil, objectID: UInt32? = nil, patient: UInt8? = nil,
        supplementalInformation: [UInt32]? = nil, derivedFrom: [UInt32]? = nil, isMemberOf: [UInt32]? = nil,
        tlvs: [GHSTLV]? = nil, value: GHSObservationValue
    ) {
        self.type = type
        self.timestamp = timestamp
        self.measurementDuration = measurementDuration
        self.measurementStatus = measurementStatus
        self.objectID = objectID
        self.patient = patient
        self.supplementalInformation = supplementalInformation
        self.derivedFrom = derivedFrom
        self.isMemberOf = isMemberOf
        self.tlvs = tlvs
        self.value = value
    }

    /// The class, from the value.
    public var observationClass: GHSObservationClass { value.observationClass }

    /// The flags this observation is sent with: one bit per header field present.
    public var flags: GHSObservationFlags {
        var flags: GHSObservationFlags = []
        if type != nil { flags.insert(.observationType) }
        if timestamp != nil { flags.insert(.timestamp) }
        if measurementDuration != nil { flags.insert(.measurementDuration) }
        if measurementStatus != nil { flags.insert(.measurementStatus) }
        if objectID != nil { flags.insert(.objectID) }
        if patient != nil { flags.insert(.patient) }
        if supplementalInformation != nil { flags.insert(.supplementalInformation) }
        if derivedFrom != nil { flags.insert(.derivedFrom) }
        if isMemberOf != nil { flags.insert(.isMemberOf) }
        if tlvs != nil { flags.insert(.tlvs) }
        return flags
    }
}

/// The flags of a health observation: which optional header fields follow, in bit order. Bits
/// 10–15 are reserved; the decoder refuses an object that sets one.
public struct GHSObservationFlags: OptionSet, Hashable, Sendable {
    /// The 16 bits as sent.
    public var rawValue: UInt16
    /// The bits `rawValue` sets.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Bit 0: the observation type (uint32).
    public static let observationType = GHSObservationFlags(rawValue: 1 << 0)
    /// Bit 1: the time stamp (nine bytes).
    public static let timestamp = GHSObservationFlags(rawValue: 1 << 1)
    /// Bit 2: the measurement duration (FLOAT, seconds).
    public static let measurementDuration = GHSObservationFlags(rawValue: 1 << 2)
    /// Bit 3: the measurement status (uint16).
    public static let measurementStatus = GHSObservationFlags(rawValue: 1 << 3)
    /// Bit 4: the object id (uint32).
    public static let objectID = GHSObservationFlags(rawValue: 1 << 4)
    /// Bit 5: the patient (uint8).
    public static let patient = GHSObservationFlags(rawValue: 1 << 5)
    /// Bit 6: supplemental information (a count and MDC codes).
    public static let supplementalInformation = GHSObservationFlags(rawValue: 1 << 6)
    /// Bit 7: derived-from (a count and object ids).
    public static let derivedFrom = GHSObservationFlags(rawValue: 1 << 7)
    /// Bit 8: is-member-of (a count and object ids).
    public static let isMemberOf = GHSObservationFlags(rawValue: 1 << 8)
    /// Bit 9: TLVs (a count and entries).
    public static let tlvs = GHSObservationFlags(rawValue: 1 << 9)
    /// Bits 10–15.
    public static let reserved = GHSObservationFlags(rawValue: 0xFC00)

    /// The names of bits 0–9, in bit order, as JSON prints them.
    public static let names = [
        "observationType", "timestamp", "measurementDuration", "measurementStatus", "objectId", "patient",
        "supplementalInformation", "derivedFrom", "isMemberOf", "tlvs",
    ]

    /// The names of the bits set, in bit order.
    public var names: [String] {
        Self.names.indices.filter { rawValue & (1 << $0) != 0 }.map { Self.names[$0] }
    }
}

/// The measurement status of a health observation (uint16). Bits 8–13 are reserved and kept as
/// sent, since they change no other field.
public struct GHSMeasurementStatus: OptionSet, Hashable, Sendable {
    /// The 16 bits as sent.
    public var rawValue: UInt16
    /// The bits `rawValue` sets.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Bit 0.
    public static let invalid = GHSMeasurementStatus(rawValue: 1 << 0)
    /// Bit 1.
    public static let questionable = GHSMeasurementStatus(rawValue: 1 << 1)
    /// Bit 2.
    public static let notAvailable = GHSMeasurementStatus(rawValue: 1 << 2)
    /// Bit 3.
    public static let calibrating = GHSMeasurementStatus(rawValue: 1 << 3)
    /// Bit 4.
    public static let testData = GHSMeasurementStatus(rawValue: 1 << 4)
    /// Bit 5.
    public static let earlyEstimate = GHSMeasurementStatus(rawValue: 1 << 5)
    /// Bit 6.
    public static let manuallyEntered = GHSMeasurementStatus(rawValue: 1 << 6)
    /// Bit 7.
    public static let setting = GHSMeasurementStatus(rawValue: 1 << 7)
    /// Bit 14.
    public static let thresholdError = GHSMeasurementStatus(rawValue: 1 << 14)
    /// Bit 15.
    public static let thresholdingDisabled = GHSMeasurementStatus(rawValue: 1 << 15)

    /// The defined bits by name.
    static let named: [(GHSMeasurementStatus, String)] = [
        (.invalid, "invalid"), (.questionable, "questionable"), (.notAvailable, "notAvailable"),
        (.calibrating, "calibrating"), (.testData, "testData"), (.earlyEstimate, "earlyEstimate"),
        (.manuallyEntered, "manuallyEntered"), (.setting, "setting"), (.thresholdError, "thresholdError"),
        (.thresholdingDisabled, "thresholdingDisabled"),
    ]

    /// The names of the defined bits set, in bit order; reserved bits are left out.
    public var names: [String] { Self.named.filter { contains($0.0) }.map(\.1) }
}
