/// A device assigned to a participant at run time (`healthgate participant assign`), as a
/// participant store (the health store's `participant_devices`) keeps it.
public struct ParticipantAssignment: Hashable, Sendable, Codable {
    /// The device: BLE address, serial number or name.
    public var device: String
    /// The participant's name.
    public var participant: String
    /// Whether the assignment lasts only until the class it was made in ends (a sign-in without
    /// `--keep`): the class's end frees the device.
    public var untilClassEnd: Bool

    /// Creates an assignment.
    public init(device: String, participant: String, untilClassEnd: Bool = false) {
        self.device = device
        self.participant = participant
        self.untilClassEnd = untilClassEnd
    }
}
