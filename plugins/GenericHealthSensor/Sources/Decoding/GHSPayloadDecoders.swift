public import SampleBus

/// `healthgate decode` for the Generic Health Sensor service: the profile's `payloadDecoders`.
public enum GHSPayloadDecoders {
    /// `ghs-observation` (one whole object, without segmentation header), `ghs-features` and
    /// `ghs-schedule`, each with an example from STMicroelectronics' STM32WBA GHS sample
    /// (`ghs_app.c`).
    public static var all: [PayloadDecoder] {
        [
            PayloadDecoder(
                "ghs-observation",
                """
                A Generic Health Sensor observation (an IEEE 11073-10206 object of Live or Stored Health Observations, \
                0x2B8B/0x2BDD), reassembled, without segmentation header or record number.
                """,
                example: "healthgate decode ghs-observation 011B006300B84B020022729D2B290000060001013C4C0200200262000000",
                keys: """
                    class (numeric, simpleDiscrete, string, sampleArray, compoundDiscreteEvent, compoundStateEvent, \
                    compound, tlvEncoded or bundle) and classCode; lengthCounts (afterLengthField or wholeObject: what \
                    the sensor's length fields count); type (MDC code, decimal); flags (the header fields present, by \
                    name); timestamp (tickCounter, utc, resolutionSeconds, value, secondsSince2000 (null for a tick \
                    counter), timeSource, offsetMinutes (null when not used), currentTimeline); \
                    measurementDurationSeconds; measurementStatus (the bits set, by name); objectId; patient; \
                    supplementalInformation (MDC codes); derivedFrom and isMemberOf (object ids); tlvs (type, format, \
                    formatName, bytes as hex, value); each null when absent. Then by class: numeric: unit (MDC unit \
                    code) and value (null for NaN, NRes, ±INFINITY or reserved); simpleDiscrete: value (an MDC code); \
                    string: string; sampleArray: unit, samples (offset + scaleFactor × sample), scaleFactor, offset, \
                    samplePeriodSeconds, samplesPerPeriod, bytesPerSample; compoundDiscreteEvent: codes (MDC codes); \
                    compoundStateEvent: supportedMask, stateMask and value (hex, in the order sent); compound: values \
                    (type, unit, value); tlvEncoded: entries (as tlvs); bundle: members (objects of this shape)
                    """
            ) { bytes throws(GHSDecodingError) in
                GHSObservationReport(try GHSObservationDecoder.decode(bytes), sampleType: GHSObservationMapper.sampleTypeName)
            },
            PayloadDecoder(
                "ghs-features",
                """
                Health Sensor Features (0x2BF3): the observation types a Generic Health Sensor supports, and its device \
                specializations.
                """,
                example: "healthgate decode ghs-features 0102B84B02001A48020001071001",
                keys: """
                    supportedObservationTypes (MDC codes, decimal); deviceSpecializations (termCode, mdcCode (partition \
                    8), version; null when the sensor sends none)
                    """
            ) { bytes throws(GHSDecodingError) in GHSFeaturesReport(features: try GHSHealthSensorFeatures.decode(bytes)) },
            PayloadDecoder(
                "ghs-schedule",
                """
                Observation Schedule descriptor (0x2910) or Observation Schedule Changed (0x2BF1): how often a Generic \
                Health Sensor measures and sends one observation type.
                """,
                example: "healthgate decode ghs-schedule B84B02000A0000FF0A0000FF",
                keys: """
                    type (MDC code, decimal); measurementPeriodSeconds and updateIntervalSeconds (null for NaN, NRes, \
                    ±INFINITY or reserved)
                    """
            ) { bytes throws(GHSDecodingError) in GHSScheduleReport(schedule: try GHSObservationSchedule.decode(bytes)) },
        ]
    }
}

/// What `healthgate decode ghs-features` prints.
struct GHSFeaturesReport: Encodable, Sendable {
    let features: GHSHealthSensorFeatures

    enum Key: String, CodingKey { case supportedObservationTypes, deviceSpecializations, termCode, mdcCode, version }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: Key.self)
        try object.encode(features.supportedObservationTypes, forKey: .supportedObservationTypes)
        guard let specializations = features.deviceSpecializations else {
            return try object.encodeNil(forKey: .deviceSpecializations)
        }
        var list = object.nestedUnkeyedContainer(forKey: .deviceSpecializations)
        for specialization in specializations {
            var item = list.nestedContainer(keyedBy: Key.self)
            try item.encode(specialization.termCode, forKey: .termCode)
            try item.encode(specialization.mdcCode, forKey: .mdcCode)
            try item.encode(specialization.version, forKey: .version)
        }
    }
}

/// What `healthgate decode ghs-schedule` prints.
struct GHSScheduleReport: Encodable, Sendable {
    let schedule: GHSObservationSchedule

    enum Key: String, CodingKey { case type, measurementPeriodSeconds, updateIntervalSeconds }

    func encode(to encoder: any Encoder) throws {
        var object = encoder.container(keyedBy: Key.self)
        try object.encode(schedule.type, forKey: .type)
        try object.encodeOrNull(schedule.measurementPeriod.finiteNumber, forKey: .measurementPeriodSeconds)
        try object.encodeOrNull(schedule.updateInterval.finiteNumber, forKey: .updateIntervalSeconds)
    }
}
