/// Metadata keys of readings from personal health devices (the Bluetooth health profiles and the
/// Generic Health Sensor), declared here once so that the sources that write them and the
/// receivers that send them (the FHIR Personal Health Device form) name the same key.
extension MetadataKey {
    /// The reading's time as the device's clock stated it (RFC 3339, without the gateway's
    /// correction): what the device said, which a receiver uses to recognise a reading it has.
    public static let deviceTimestamp: MetadataKey = "healthgate.deviceTimestamp"
    /// A blood pressure correlation's mean arterial pressure (mmHg).
    public static let meanArterialPressure: MetadataKey = "healthgate.meanArterialPressureMillimetersOfMercury"

    /// The IEEE 11073-10101 code of the observation the device sent (decimal), when it sent one:
    /// which of a type's codes it was (a pulse rate from an oximeter or from a cuff).
    public static let mdcObservationType: MetadataKey = "healthgate.mdc.type"
    /// The unit code (partition 4, decimal) the device sent its value in.
    public static let mdcUnit: MetadataKey = "healthgate.mdc.unit"
    /// The ACOM measurement status bits (IEEE 11073-10206), when the device sent them.
    public static let mdcMeasurementStatus: MetadataKey = "healthgate.mdc.measurementStatus"
    /// The ACOM supplemental information codes (decimal, comma-separated, in the device's order):
    /// a spot or continuous measurement, a body site.
    public static let mdcSupplementalTypes: MetadataKey = "healthgate.mdc.supplementalTypes"
    /// The measurement duration the device sent (seconds).
    public static let mdcMeasurementDuration: MetadataKey = "healthgate.mdc.measurementDurationSeconds"
    /// The patient (user) index the device sent.
    public static let mdcPatient: MetadataKey = "healthgate.mdc.patient"
    /// The observation's object id, which other observations refer to (derived-from).
    public static let mdcObjectID: MetadataKey = "healthgate.mdc.objectId"
    /// Event and state codes the device sent about this reading (compound discrete event
    /// observations derived from it, such as a cuff's "cuff loose"): MDC codes, decimal,
    /// comma-separated.
    public static let mdcEvents: MetadataKey = "healthgate.mdc.events"
    /// What a generic observation's number is when it is not a measured value
    /// (``MDCValueKind``, read with ``Metadata/mdcValueKind``). Absent for a measured value.
    public static let mdcValueKind: MetadataKey = "healthgate.mdc.valueKind"
    /// The text of a string observation (``MDCValueKind/text``), as the device sent it.
    public static let mdcText: MetadataKey = "healthgate.mdc.text"
    /// The prefix of an observation's attributes (its TLV entries): ``mdcAttribute(_:occurrence:)``.
    public static let mdcAttributePrefix = "healthgate.mdc.attribute."

    /// The key of an observation's attribute of MDC type `type` (a TLV entry, decimal):
    /// `healthgate.mdc.attribute.{type}`, and `healthgate.mdc.attribute.{type}.{occurrence}` for
    /// its second and later occurrence (2, 3 …) in the same observation.
    public static func mdcAttribute(_ type: UInt32, occurrence: Int = 1) -> MetadataKey {
        MetadataKey(mdcAttributePrefix + String(type) + (occurrence > 1 ? ".\(occurrence)" : ""))
    }
    /// The device's specializations (IEEE 11073-20601 device profiles, `code:version`,
    /// comma-separated): a Generic Health Sensor's from its Health Sensor Features, an older
    /// profile's the one its readings' profile is (``MDCDeviceSpecialization``).
    public static let mdcDeviceSpecializations: MetadataKey = "healthgate.mdc.deviceSpecializations"
}
