public import GATTDecoding

/// A fitness characteristic value that does not decode.
public typealias FitnessDecodingError = CharacteristicDecodingError<FitnessCharacteristic>
