import GATTDecoding

/// What `healthgate decode ghs-observation` prints for one observation: a JSON object with the
/// header fields (null when absent) and the value's keys for its class; a bundle's members
/// nest as objects of the same shape.
///
/// The mapping of observation types to sample types is not the decoder's: ``sampleType`` is
/// the hook for it. When given, every object, and every compound component, gets a `sampleType`
/// key with what it returns (null for nil); without it, the key is left out.
public struct GHSObservationReport: Encodable, Sendable {
    /// Names the sample type of an observation type (an MDC code, nil when the object has none)
    /// with its unit (an MDC unit code, nil for classes without one), nil when there is none.
    public typealias SampleTypeNamer = @Sendable (_ type: UInt32?, _ unit: UInt16?) -> String?

    /// The observation printed.
    public var decoded: GHSDecodedObservation
    /// The hook for the `sampleType` key.
    public var sampleType: SampleTypeNamer?

    /// A report of `decoded`, with `sampleType` keys when a namer is given.
    public init(_ decoded: GHSDecodedObservation, sampleType: SampleTypeNamer? = nil) {
        self.decoded = decoded
        self.sampleType = sampleType
    }

    enum Key: String, CodingKey {
        case `class`, classCode, lengthCounts, type, sampleType, flags, timestamp, measurementDurationSeconds
        case measurementStatus, objectId, patient, supplementalInformation, derivedFrom, isMemberOf, tlvs
        case unit, value, values, samples, scaleFactor, offset, samplePeriodSeconds, samplesPerPeriod, bytesPerSample
        case codes, supportedMask, stateMask, string, entries, members
        case tickCounter, utc, resolutionSeconds, secondsSince2000, timeSource, offsetMinutes, currentTimeline
        case format, formatName, bytes
    }

    /// Encodes the observation's object (see the type's summary for its keys).
    public func encode(to encoder: any Encoder) throws {
        try Object(observation: decoded.observation, lengthCounts: decoded.lengthCounts, sampleType: sampleType).encode(
            to: encoder)
    }

    /// One observation's object.
    struct Object: Encodable {
        let observation: GHSObservation
        let lengthCounts: GHSLengthConvention
        let sampleType: SampleTypeNamer?

        func encode(to encoder: any Encoder) throws {
            var object = encoder.container(keyedBy: Key.self)
            let observation = observation
            try object.encode(observation.observationClass.name, forKey: .class)
            try object.encode(observation.observationClass.rawValue, forKey: .classCode)
            try object.encode(lengthCounts.rawValue, forKey: .lengthCounts)
            try object.encodeOrNull(observation.type, forKey: .type)
            if let sampleType {
                try object.encodeOrNull(sampleType(observation.type, observation.unit), forKey: .sampleType)
            }
            try object.encode(observation.flags.names, forKey: .flags)
            if let timestamp = observation.timestamp {
                var nested = object.nestedContainer(keyedBy: Key.self, forKey: .timestamp)
                try Self.encode(timestamp, into: &nested)
            } else {
                try object.encodeNil(forKey: .timestamp)
            }
            try object.encodeOrNull(observation.measurementDuration?.finiteNumber, forKey: .measurementDurationSeconds)
            try object.encodeOrNull(observation.measurementStatus?.names, forKey: .measurementStatus)
            try object.encodeOrNull(observation.objectID, forKey: .objectId)
            try object.encodeOrNull(observation.patient, forKey: .patient)
            try object.encodeOrNull(observation.supplementalInformation, forKey: .supplementalInformation)
            try object.encodeOrNull(observation.derivedFrom, forKey: .derivedFrom)
            try object.encodeOrNull(observation.isMemberOf, forKey: .isMemberOf)
            try object.encodeOrNull(observation.tlvs?.map(TLV.init), forKey: .tlvs)
            try encodeValue(into: &object)
        }

        /// The keys of the value's class.
        func encodeValue(into object: inout KeyedEncodingContainer<Key>) throws {
            switch observation.value {
            case .numeric(let unit, let value):
                try object.encode(unit, forKey: .unit)
                try object.encodeOrNull(value.finiteNumber, forKey: .value)
            case .simpleDiscrete(let code):
                try object.encode(code, forKey: .value)
            case .string(let text):
                try object.encode(text, forKey: .string)
            case .sampleArray(let array):
                try object.encode(array.unit, forKey: .unit)
                try object.encodeOrNull(array.scaledSamples, forKey: .samples)
                try object.encodeOrNull(array.scaleFactor.finiteNumber, forKey: .scaleFactor)
                try object.encodeOrNull(array.offset.finiteNumber, forKey: .offset)
                try object.encodeOrNull(array.samplePeriod.finiteNumber, forKey: .samplePeriodSeconds)
                try object.encode(array.samplesPerPeriod, forKey: .samplesPerPeriod)
                try object.encode(array.bytesPerSample, forKey: .bytesPerSample)
            case .compoundDiscreteEvent(let codes):
                try object.encode(codes, forKey: .codes)
            case .compoundStateEvent(let bits):
                try object.encode(HexPayload.format(bits.supportedMask), forKey: .supportedMask)
                try object.encode(HexPayload.format(bits.stateMask), forKey: .stateMask)
                try object.encode(HexPayload.format(bits.value), forKey: .value)
            case .compound(let components):
                var list = object.nestedUnkeyedContainer(forKey: .values)
                for component in components {
                    var item = list.nestedContainer(keyedBy: Key.self)
                    try item.encode(component.type, forKey: .type)
                    if let sampleType { try item.encodeOrNull(sampleType(component.type, component.unit), forKey: .sampleType) }
                    try item.encode(component.unit, forKey: .unit)
                    try item.encodeOrNull(component.value.finiteNumber, forKey: .value)
                }
            case .tlvEncoded(let entries):
                try object.encode(entries.map(TLV.init), forKey: .entries)
            case .bundle(let members):
                try object.encode(
                    members.map { Object(observation: $0, lengthCounts: lengthCounts, sampleType: sampleType) }, forKey: .members)
            }
        }

        static func encode(_ timestamp: GHSTimestamp, into object: inout KeyedEncodingContainer<Key>) throws {
            try object.encode(timestamp.isTickCounter, forKey: .tickCounter)
            try object.encode(timestamp.isUTC, forKey: .utc)
            try object.encode(timestamp.resolution.seconds, forKey: .resolutionSeconds)
            try object.encode(timestamp.value, forKey: .value)
            try object.encodeOrNull(timestamp.secondsSince2000, forKey: .secondsSince2000)
            try object.encode(timestamp.timeSource.name, forKey: .timeSource)
            try object.encodeOrNull(timestamp.offsetMinutes, forKey: .offsetMinutes)
            try object.encode(timestamp.isCurrentTimeline, forKey: .currentTimeline)
        }
    }

    /// A TLV entry's object: type, format (and its name), the bytes as hex, and the value
    /// where the format says how to read it.
    struct TLV: Encodable {
        let entry: GHSTLV

        init(_ entry: GHSTLV) { self.entry = entry }

        func encode(to encoder: any Encoder) throws {
            var object = encoder.container(keyedBy: Key.self)
            try object.encode(entry.type, forKey: .type)
            try object.encode(entry.format, forKey: .format)
            try object.encodeOrNull(entry.knownFormat?.name, forKey: .formatName)
            try object.encode(HexPayload.format(entry.bytes), forKey: .bytes)
            switch entry.value {
            case .boolean(let flag): try object.encode(flag, forKey: .value)
            case .unsigned(let number): try object.encode(number, forKey: .value)
            case .signed(let number): try object.encode(number, forKey: .value)
            case .number(let number): try object.encodeOrNull(number.isFinite ? number : nil, forKey: .value)
            case .medical(let number): try object.encodeOrNull(number.finiteNumber, forKey: .value)
            case .text(let text): try object.encode(text, forKey: .value)
            case nil: try object.encodeNil(forKey: .value)
            }
        }
    }
}

extension GHSObservation {
    /// The unit of the value: as sent for a numeric or sample array, MDC_DIM_DIMLESS (512) for
    /// a value that is codes, bits, text or attributes; nil for a compound or bundle, whose
    /// parts have their own.
    var unit: UInt16? {
        switch value {
        case .numeric(let unit, _): unit
        case .sampleArray(let array): array.unit
        case .simpleDiscrete, .compoundDiscreteEvent, .compoundStateEvent, .string, .tlvEncoded: 512
        case .compound, .bundle: nil
        }
    }
}

extension MedicalFloat {
    /// The number, nil for a special value; JSON has no NaN or infinity.
    var finiteNumber: Double? { number.flatMap { $0.isFinite ? $0 : nil } }
}

extension KeyedEncodingContainer {
    /// Encodes nil as null rather than leaving the key out.
    mutating func encodeOrNull<Value: Encodable>(_ value: Value?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
