public import GATTDecoding

/// The class of a health observation: the first octet of an IEEE 11073-10206 (ACOM) object as
/// GHS sends it, which says what its value is.
public enum GHSObservationClass: UInt8, Hashable, Sendable, CaseIterable {
    case numeric = 0x01
    case simpleDiscrete = 0x02
    case string = 0x03
    case sampleArray = 0x04
    case compoundDiscreteEvent = 0x05
    case compoundStateEvent = 0x06
    case compound = 0x07
    case tlvEncoded = 0x08
    case bundle = 0xFF

    /// The name for JSON and logs: the case's name (`numeric`, `sampleArray`, `bundle`, …).
    public var name: String { "\(self)" }
}

/// The value of a health observation, by class.
public enum GHSObservationValue: Hashable, Sendable {
    /// A number with its unit (an MDC unit code, partition 4: 544 is %, 2720 bpm, 3872 mmHg).
    case numeric(unit: UInt16, value: MedicalFloat)
    /// One MDC code.
    case simpleDiscrete(UInt32)
    /// Text.
    case string(String)
    /// A series of samples (a waveform).
    case sampleArray(GHSSampleArray)
    /// MDC codes of the events that occurred.
    case compoundDiscreteEvent([UInt32])
    /// Bit strings of states and events.
    case compoundStateEvent(GHSStateEvent)
    /// Numbers that belong together (systolic, diastolic and mean pressure).
    case compound([GHSCompoundComponent])
    /// Type-length-value entries.
    case tlvEncoded([GHSTLV])
    /// Observations sent together; each usually takes the bundle's time stamp.
    case bundle([GHSObservation])

    /// The class this value is sent with.
    public var observationClass: GHSObservationClass {
        switch self {
        case .numeric: .numeric
        case .simpleDiscrete: .simpleDiscrete
        case .string: .string
        case .sampleArray: .sampleArray
        case .compoundDiscreteEvent: .compoundDiscreteEvent
        case .compoundStateEvent: .compoundStateEvent
        case .compound: .compound
        case .tlvEncoded: .tlvEncoded
        case .bundle: .bundle
        }
    }
}

/// The value of a sample array observation: samples of `bytesPerSample` unsigned bytes each,
/// whose real values are ``offset`` + ``scaleFactor`` × sample (the origin and factor of the
/// HL7 PHD implementation guide's SampledData).
public struct GHSSampleArray: Hashable, Sendable {
    /// The MDC unit code of the real values.
    public var unit: UInt16
    /// The factor each sample is multiplied by.
    public var scaleFactor: MedicalFloat
    /// The value added after scaling.
    public var offset: MedicalFloat
    /// The time one period covers, in seconds.
    public var samplePeriod: MedicalFloat
    /// Samples per period.
    public var samplesPerPeriod: UInt8
    /// Bytes per sample: 1, 2 or 4.
    public var bytesPerSample: UInt8
    /// The samples as sent (unsigned, little-endian).
    public var samples: [UInt32]

    /// A sample array from its parts.
    public init(
        unit: UInt16, scaleFactor: MedicalFloat, offset: MedicalFloat, samplePeriod: MedicalFloat, samplesPerPeriod: UInt8,
        bytesPerSample: UInt8, samples: [UInt32]
    ) {
        self.unit = unit
        self.scaleFactor = scaleFactor
        self.offset = offset
        self.samplePeriod = samplePeriod
        self.samplesPerPeriod = samplesPerPeriod
        self.bytesPerSample = bytesPerSample
        self.samples = samples
    }

    /// The real values, offset + scale factor × sample; nil when the scale factor or the offset
    /// is a special value (NaN, NRes, ±INFINITY, reserved).
    public var scaledSamples: [Double]? {
        guard let scale = scaleFactor.number, let origin = offset.number else { return nil }
        return samples.map { origin + scale * Double($0) }
    }
}

/// One component of a compound observation. GHS defines component value types; this decoder
/// reads numeric components (value type 1), the only kind either published implementation sends.
public struct GHSCompoundComponent: Hashable, Sendable {
    /// The component's MDC code (systolic pressure, …).
    public var type: UInt32
    /// The MDC unit code.
    public var unit: UInt16
    /// The number.
    public var value: MedicalFloat

    /// A component from its parts.
    public init(type: UInt32, unit: UInt16, value: MedicalFloat) {
        self.type = type
        self.unit = unit
        self.value = value
    }
}

/// The value of a compound state/event observation: three bit strings of the same size (1 to 4
/// bytes), kept in the order sent.
public struct GHSStateEvent: Hashable, Sendable {
    /// Which bits the sensor supports.
    public var supportedMask: [UInt8]
    /// The state/event mask: for each bit, whether it reports a state or an event.
    public var stateMask: [UInt8]
    /// The bits' values.
    public var value: [UInt8]

    /// A value from its three bit strings, each 1 to 4 bytes and of one size.
    public init(supportedMask: [UInt8], stateMask: [UInt8], value: [UInt8]) {
        self.supportedMask = supportedMask
        self.stateMask = stateMask
        self.value = value
    }
}
