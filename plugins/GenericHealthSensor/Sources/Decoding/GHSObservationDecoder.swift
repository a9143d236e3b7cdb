public import GATTDecoding

/// What the length field of a health observation counts. The two published implementations
/// disagree: STMicroelectronics' STM32WBA GHS sample counts the bytes after the length field
/// (its NumericOxygenSaturation is 30 bytes with length 27), Philips' GHS simulator counts the
/// whole object, class and length included (`withLengthPrefix`). The decoder accepts both.
public enum GHSLengthConvention: String, Hashable, Sendable, CaseIterable {
    /// The bytes after the length field (STMicroelectronics).
    case afterLengthField
    /// The whole object, class and length included (Philips).
    case wholeObject

    /// The length field of an object of `extent` bytes.
    public func lengthField(forObjectOf extent: Int) -> Int {
        switch self {
        case .afterLengthField: extent - 3
        case .wholeObject: extent
        }
    }
}

/// A decoded health observation and the length convention its sensor uses.
public struct GHSDecodedObservation: Hashable, Sendable {
    /// The observation.
    public var observation: GHSObservation
    /// What its length fields count; bundle members use the same.
    public var lengthCounts: GHSLengthConvention

    /// A decoded observation from its parts.
    public init(observation: GHSObservation, lengthCounts: GHSLengthConvention) {
        self.observation = observation
        self.lengthCounts = lengthCounts
    }
}

/// Decodes one health observation (an IEEE 11073-10206 ACOM object as GHS sends it), after
/// segments are reassembled (``GHSSegmentReassembler``).
///
/// The object: class (uint8), length (uint16), flags (uint16), the header fields the flags
/// announce in bit order (``GHSObservationFlags``), then the class's value. Pure: no I/O, no
/// clock. The fields decide where the object ends; the length field must then agree with them
/// in one of the two conventions (``GHSLengthConvention``), and bundle members must use the
/// convention of the object that holds them.
public enum GHSObservationDecoder {
    /// The bytes of the smallest object: class, length and flags.
    public static let minimumObjectSize = 5

    /// Decodes `bytes`, exactly one object.
    /// - Parameter characteristic: the characteristic named in errors.
    /// - Throws: ``GHSDecodingError``: `.truncated` when the bytes end inside a field or a count
    ///   claims more items than the bytes left can hold; `.unknownClass`; `.reservedValue` for a
    ///   reserved flag bit (observation or time stamp); `.lengthMismatch` when a length field
    ///   matches neither convention (`needed`: the bytes after it), when the fields run past
    ///   the payload while the length claims less than the payload holds, or when a member's
    ///   differs from its bundle's convention (`needed`: the length it should have); `.valueOutOfRange`
    ///   for a bytes-per-sample other than 1, 2, 4 or a state/event size outside 1…4;
    ///   `.unsupportedValue` for a compound component that is not numeric or a bundle in a
    ///   bundle; `.invalidUTF8`; `.unexpectedLength` for bytes after the object.
    public static func decode(
        _ bytes: [UInt8], characteristic: GHSCharacteristic = .liveHealthObservations
    ) throws(GHSDecodingError) -> GHSDecodedObservation {
        var reader = GATTPayloadReader(bytes, characteristic)
        let decoded = try decodeObject(&reader)
        try reader.expectEnd()
        return decoded
    }

    /// Decodes the object that starts at the reader's offset, leaving the reader after it.
    static func decodeObject(
        _ reader: inout GATTPayloadReader<GHSCharacteristic>
    ) throws(GHSDecodingError) -> GHSDecodedObservation {
        let start = reader.offset
        let available = reader.remaining
        var members: [MemberExtent] = []
        let parsed: (observation: GHSObservation, declared: Int)
        do {
            parsed = try parseObject(&reader, nested: false, members: &members)
        } catch {
            // Fields that run past the payload while the length field claims less than the
            // payload holds: the length and the fields disagree (STMicroelectronics'
            // SimpleArrayECGWaveform, whose count is one byte where GHS has four).
            if error.code == .truncated, available >= 3 {
                let declared = Int(reader.bytes[start + 1]) | Int(reader.bytes[start + 2]) << 8
                if available > declared + 3 {
                    throw GHSDecodingError(
                        .lengthMismatch, characteristic: reader.characteristic, field: "length", offset: start + 1,
                        needed: available - 3, available: available - 1, value: declared)
                }
            }
            throw error
        }
        let extent = reader.offset - start
        let convention: GHSLengthConvention
        if parsed.declared == GHSLengthConvention.afterLengthField.lengthField(forObjectOf: extent) {
            convention = .afterLengthField
        } else if parsed.declared == GHSLengthConvention.wholeObject.lengthField(forObjectOf: extent) {
            convention = .wholeObject
        } else {
            throw GHSDecodingError(
                .lengthMismatch, characteristic: reader.characteristic, field: "length", offset: start + 1,
                needed: extent - 3, available: available - 1, value: parsed.declared)
        }
        for member in members where member.declared != convention.lengthField(forObjectOf: member.extent) {
            throw GHSDecodingError(
                .lengthMismatch, characteristic: reader.characteristic, field: "members.length", offset: member.start + 1,
                needed: convention.lengthField(forObjectOf: member.extent), available: reader.bytes.count - member.start - 1,
                value: member.declared)
        }
        return GHSDecodedObservation(observation: parsed.observation, lengthCounts: convention)
    }

    /// Where a bundle member was and what its length field said, checked once the bundle's
    /// convention is known.
    struct MemberExtent {
        var start: Int
        var declared: Int
        var extent: Int
    }

    /// Reads one object's fields; the length field is returned, not checked.
    static func parseObject(
        _ reader: inout GATTPayloadReader<GHSCharacteristic>, nested: Bool, members: inout [MemberExtent]
    ) throws(GHSDecodingError) -> (observation: GHSObservation, declared: Int) {
        let start = reader.offset
        let classByte = try reader.uint8("class")
        guard let observationClass = GHSObservationClass(rawValue: classByte) else {
            throw GHSDecodingError(
                .unknownClass, characteristic: reader.characteristic, field: "class", offset: start, needed: 1,
                available: reader.remaining + 1, value: Int(classByte))
        }
        // One level of bundles bounds the recursion; neither published sensor nests them.
        guard !(nested && observationClass == .bundle) else {
            throw GHSDecodingError(
                .unsupportedValue, characteristic: reader.characteristic, field: "class", offset: start, needed: 1,
                available: reader.remaining + 1, value: Int(classByte))
        }
        let declared = Int(try reader.uint16("length"))
        let flagsOffset = reader.offset
        let flags = GHSObservationFlags(rawValue: try reader.uint16("flags"))
        guard flags.isDisjoint(with: .reserved) else {
            throw GHSDecodingError(
                .reservedValue, characteristic: reader.characteristic, field: "flags", offset: flagsOffset, needed: 2,
                available: reader.remaining + 2, value: Int(flags.rawValue))
        }
        // The header fields in flag-bit order; the value, read last, replaces the placeholder.
        var observation = GHSObservation(value: .simpleDiscrete(0))
        if flags.contains(.observationType) { observation.type = try reader.uint32("type") }
        if flags.contains(.timestamp) { observation.timestamp = try GHSTimestamp.read(&reader) }
        if flags.contains(.measurementDuration) {
            observation.measurementDuration = try reader.float("measurementDurationSeconds")
        }
        if flags.contains(.measurementStatus) {
            observation.measurementStatus = GHSMeasurementStatus(rawValue: try reader.uint16("measurementStatus"))
        }
        if flags.contains(.objectID) { observation.objectID = try reader.uint32("objectId") }
        if flags.contains(.patient) { observation.patient = try reader.uint8("patient") }
        if flags.contains(.supplementalInformation) {
            observation.supplementalInformation = try reader.uint32List("supplementalInformation")
        }
        if flags.contains(.derivedFrom) { observation.derivedFrom = try reader.uint32List("derivedFrom") }
        if flags.contains(.isMemberOf) { observation.isMemberOf = try reader.uint32List("isMemberOf") }
        if flags.contains(.tlvs) { observation.tlvs = try GHSTLV.readList(&reader, "tlvs") }
        observation.value = try value(observationClass, &reader, members: &members)
        return (observation, declared)
    }

    /// Reads the value of an object of `observationClass`.
    static func value(
        _ observationClass: GHSObservationClass, _ reader: inout GATTPayloadReader<GHSCharacteristic>,
        members: inout [MemberExtent]
    ) throws(GHSDecodingError) -> GHSObservationValue {
        switch observationClass {
        case .numeric:
            let unit = try reader.uint16("unit")
            return .numeric(unit: unit, value: try reader.float("value"))
        case .simpleDiscrete:
            return .simpleDiscrete(try reader.uint32("value"))
        case .string:
            let length = Int(try reader.uint16("string"))
            let textOffset = reader.offset
            let bytes = try reader.bytes(length, "string")
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw GHSDecodingError(
                    .invalidUTF8, characteristic: reader.characteristic, field: "string", offset: textOffset,
                    needed: length, available: reader.remaining + length)
            }
            return .string(text)
        case .sampleArray:
            return .sampleArray(try sampleArray(&reader))
        case .compoundDiscreteEvent:
            return .compoundDiscreteEvent(try reader.uint32List("codes"))
        case .compoundStateEvent:
            let sizeOffset = reader.offset
            let size = Int(try reader.uint8("size"))
            guard (1...4).contains(size) else {
                throw GHSDecodingError(
                    .valueOutOfRange, characteristic: reader.characteristic, field: "size", offset: sizeOffset, needed: 1,
                    available: reader.remaining + 1, value: size)
            }
            try reader.require(3 * size, "supportedMask")
            return .compoundStateEvent(
                GHSStateEvent(
                    supportedMask: try reader.bytes(size, "supportedMask"), stateMask: try reader.bytes(size, "stateMask"),
                    value: try reader.bytes(size, "value")))
        case .compound:
            let count = try reader.count("values", itemSize: 11)
            var components: [GHSCompoundComponent] = []
            components.reserveCapacity(count)
            for _ in 0..<count {
                let type = try reader.uint32("values.type")
                let valueTypeOffset = reader.offset
                let valueType = try reader.uint8("values.valueType")
                guard valueType == 1 else {
                    throw GHSDecodingError(
                        .unsupportedValue, characteristic: reader.characteristic, field: "values.valueType",
                        offset: valueTypeOffset, needed: 1, available: reader.remaining + 1, value: Int(valueType))
                }
                let unit = try reader.uint16("values.unit")
                components.append(GHSCompoundComponent(type: type, unit: unit, value: try reader.float("values.value")))
            }
            return .compound(components)
        case .tlvEncoded:
            return .tlvEncoded(try GHSTLV.readList(&reader, "entries"))
        case .bundle:
            let count = try reader.count("members", itemSize: minimumObjectSize)
            var list: [GHSObservation] = []
            list.reserveCapacity(count)
            for _ in 0..<count {
                let start = reader.offset
                let member = try parseObject(&reader, nested: true, members: &members)
                members.append(MemberExtent(start: start, declared: member.declared, extent: reader.offset - start))
                list.append(member.observation)
            }
            return .bundle(list)
        }
    }

    /// Reads a sample array's value.
    static func sampleArray(_ reader: inout GATTPayloadReader<GHSCharacteristic>) throws(GHSDecodingError) -> GHSSampleArray {
        let unit = try reader.uint16("unit")
        let scale = try reader.float("scaleFactor")
        let offset = try reader.float("offset")
        let period = try reader.float("samplePeriodSeconds")
        let perPeriod = try reader.uint8("samplesPerPeriod")
        let widthOffset = reader.offset
        let width = try reader.uint8("bytesPerSample")
        guard width == 1 || width == 2 || width == 4 else {
            throw GHSDecodingError(
                .valueOutOfRange, characteristic: reader.characteristic, field: "bytesPerSample", offset: widthOffset,
                needed: 1, available: reader.remaining + 1, value: Int(width))
        }
        let count = Int(try reader.uint32("numberOfSamples"))
        // At most 2^32 × 4 bytes: no overflow in Int, and refused before anything is allocated.
        try reader.require(count * Int(width), "samples")
        var samples: [UInt32] = []
        samples.reserveCapacity(count)
        for _ in 0..<count { samples.append(try reader.unsigned(Int(width), "samples")) }
        return GHSSampleArray(
            unit: unit, scaleFactor: scale, offset: offset, samplePeriod: period, samplesPerPeriod: perPeriod,
            bytesPerSample: width, samples: samples)
    }
}
