/// A device assigned to a participant at run time (`healthgate participant assign`), as a
/// participant store (the health store's `participant_devices`) keeps it.
public struct ParticipantAssignment: Hashable, Sendable, Codable {
    /// The device: BLE address, serial number or name.
    public var device: String
    /// The participant's name.
    public var participant: String

    /// Creates an assignment.
    public init(device: String, participant: String) {
        self.device = device
        self.participant = participant
    }
}
