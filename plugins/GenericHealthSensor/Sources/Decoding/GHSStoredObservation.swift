public import GATTDecoding

/// One record of Stored Health Observations (0x2BDD): after its segments are joined, a record
/// number (uint32) and then the observation (Philips' GHS simulator writes the record id
/// before the object it segments).
public struct GHSStoredObservation: Hashable, Sendable {
    /// The record number the sensor gave the observation; RACP filters by it.
    public var recordNumber: UInt32
    /// The observation.
    public var observation: GHSDecodedObservation

    /// A stored observation from its parts.
    public init(recordNumber: UInt32, observation: GHSDecodedObservation) {
        self.recordNumber = recordNumber
        self.observation = observation
    }

    /// Splits a reassembled value into its record number and the object's bytes.
    /// - Throws: `.truncated` when the value is shorter than the record number.
    public static func split(_ bytes: [UInt8]) throws(GHSDecodingError) -> (recordNumber: UInt32, object: [UInt8]) {
        var reader = GATTPayloadReader(bytes, GHSCharacteristic.storedHealthObservations)
        let recordNumber = try reader.uint32("recordNumber")
        return (recordNumber, Array(bytes[4...]))
    }

    /// Decodes a reassembled value: the record number and one observation
    /// (``GHSObservationDecoder``), error offsets counted from the value's start.
    public static func decode(_ bytes: [UInt8]) throws(GHSDecodingError) -> GHSStoredObservation {
        var reader = GATTPayloadReader(bytes, GHSCharacteristic.storedHealthObservations)
        let recordNumber = try reader.uint32("recordNumber")
        let observation = try GHSObservationDecoder.decodeObject(&reader)
        try reader.expectEnd()
        return GHSStoredObservation(recordNumber: recordNumber, observation: observation)
    }
}
