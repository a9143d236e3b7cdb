import GATTDecoding

/// The fitness characteristics' field reader.
typealias PayloadReader = GATTPayloadReader<FitnessCharacteristic>
