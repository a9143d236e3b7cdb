/// The IEEE 11073-20601 device specializations (term codes of MDC_PART_INFRA, partition 8) that
/// the Bluetooth SIG's transcoding white paper gives the devices of the older health profiles.
/// A reading of such a device carries its specialization in
/// ``MetadataKey/mdcDeviceSpecializations`` (``listed``), as a Generic Health Sensor's readings
/// carry the ones its Health Sensor Features lists, so that a receiver is told what the device
/// is (the PHD form's PhdDevice `specialization`).
public enum MDCDeviceSpecialization: UInt16, Hashable, Sendable, CaseIterable {
    /// MDC_DEV_SPEC_PROFILE_PULS_OXIM: the Pulse Oximeter profile.
    case pulseOximeter = 4100
    /// MDC_DEV_SPEC_PROFILE_BP: the Blood Pressure profile.
    case bloodPressure = 4103
    /// MDC_DEV_SPEC_PROFILE_TEMP: the Health Thermometer profile.
    case thermometer = 4104
    /// MDC_DEV_SPEC_PROFILE_SCALE: the Weight Scale profile.
    case weightScale = 4111
    /// MDC_DEV_SPEC_PROFILE_GLUCOSE: the Glucose profile.
    case glucoseMeter = 4113
    /// MDC_DEV_SPEC_PROFILE_BCA: the Body Composition profile.
    case bodyComposition = 4116
    /// MDC_DEV_SPEC_PROFILE_CGM: the Continuous Glucose Monitoring profile.
    case continuousGlucose = 4121

    /// The specialization's 32-bit MDC code (partition 8 in the upper 16 bits): 528388 …
    public var code: UInt32 { 8 << 16 | UInt32(rawValue) }

    /// The specialization whose 32-bit MDC code `code` is; nil for another.
    public init?(code: UInt32) {
        guard let known = Self.allCases.first(where: { $0.code == code }) else { return nil }
        self = known
    }

    /// Its reference identifier in IEEE 11073-10101.
    public var referenceIdentifier: String {
        switch self {
        case .pulseOximeter: "MDC_DEV_SPEC_PROFILE_PULS_OXIM"
        case .bloodPressure: "MDC_DEV_SPEC_PROFILE_BP"
        case .thermometer: "MDC_DEV_SPEC_PROFILE_TEMP"
        case .weightScale: "MDC_DEV_SPEC_PROFILE_SCALE"
        case .glucoseMeter: "MDC_DEV_SPEC_PROFILE_GLUCOSE"
        case .bodyComposition: "MDC_DEV_SPEC_PROFILE_BCA"
        case .continuousGlucose: "MDC_DEV_SPEC_PROFILE_CGM"
        }
    }

    /// Its entry in ``MetadataKey/mdcDeviceSpecializations`` (`code:version`): version 1, as the
    /// PHD guide's example of a Bluetooth blood pressure cuff gives it
    /// (input/examples/phd-711000FEFF5F49B0.B0495F001071.json).
    public var listed: String { "\(rawValue):1" }
}
