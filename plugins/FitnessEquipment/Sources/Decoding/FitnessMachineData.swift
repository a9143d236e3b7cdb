public import GATTDecoding
/// One decoded Treadmill Data, Indoor Bike Data or Rower Data value (or a part of one, see
/// ``FitnessMachineReassembler``): the flags and the raw value of every field they announce.
public struct FitnessMachineData: Hashable, Sendable {
    /// Which characteristic it came from.
    public var characteristic: FitnessCharacteristic
    /// The flags as sent (for a reassembled record: the union of its parts' field bits, with
    /// bit 0 clear when the last part arrived).
    public var flags: UInt16
    /// Raw values as sent, in the unit of the field's resolution (sign-extended when signed).
    public var raw: [FitnessMachineField: Int]

    /// Creates a value from raw fields.
    public init(characteristic: FitnessCharacteristic, flags: UInt16, raw: [FitnessMachineField: Int]) {
        self.characteristic = characteristic
        self.flags = flags
        self.raw = raw
    }

    /// Flags bit 0: more parts of this record follow in later notifications.
    public var moreData: Bool { flags & 1 != 0 }

    /// The present fields in ``FitnessMachineField`` order.
    public var presentFields: [FitnessMachineField] { raw.keys.sorted() }
}

/// Decodes the three Fitness Machine data characteristics by their ``FitnessMachineLayout``.
/// Pure: no I/O, no clock.
public enum FitnessMachineDataDecoder {
    /// Decodes one notification. Bytes after the announced fields are ignored (reserved flag
    /// bits 13–15 may announce fields of a later revision, which would follow the known ones).
    /// - Throws: ``FitnessDecodingError`` `.truncated` naming the cut field.
    public static func decode(
        _ payload: [UInt8], layout: FitnessMachineLayout
    ) throws(FitnessDecodingError) -> FitnessMachineData {
        var reader = PayloadReader(payload, layout.characteristic)
        let flags = try reader.uint16("flags")
        var raw: [FitnessMachineField: Int] = [:]
        for group in layout.groups where FitnessMachineLayout.isPresent(bit: group.bit, flags: flags) {
            for entry in group.fields {
                let name = entry.field.rawValue
                raw[entry.field] =
                    entry.format.isSigned
                    ? Int(try reader.signed(entry.format.width, name))
                    : Int(try reader.unsigned(entry.format.width, name))
            }
        }
        return FitnessMachineData(characteristic: layout.characteristic, flags: flags, raw: raw)
    }
}
