/// The radio a heart-rate strap's reading came by, as the board and `participant straps` name
/// it to an instructor signing the strap in.
public enum StrapRadio: String, Hashable, Sendable, Codable, CaseIterable {
    /// An ANT+ device heard through a USB ANT stick (`ant:120:NUMBER`).
    case antPlus
    /// A Bluetooth advertisement: a strap broadcasting its heart rate (a Polar strap's
    /// manufacturer data), nothing connected.
    case bluetoothBroadcast
    /// A Bluetooth connection the gateway holds (GATT Heart Rate Measurement notifications).
    case bluetoothConnection

    /// How a person reads it: `ANT+`, `Bluetooth broadcast`, `Bluetooth connection`.
    public var label: String {
        switch self {
        case .antPlus: "ANT+"
        case .bluetoothBroadcast: "Bluetooth broadcast"
        case .bluetoothConnection: "Bluetooth connection"
        }
    }

    /// The radio `sample` came by: ANT+ when its device's radio identity is an ANT+ device, a
    /// broadcast when it carries ``MetadataKey/broadcast`` (every advertisement source sets it), a connection when its device has another radio identity (a Bluetooth address);
    /// nil for a device that came by no radio (a serial port, a file).
    public init?(of sample: QuantitySample) {
        // The device's path identity is its radio identifier when it has one, parsed once per
        // device (this is asked for every heart rate, by the sign-in and the board).
        guard let device = sample.device, device.radioIdentifier != nil, let path = device.pathIdentity else { return nil }
        if path.isANTDevice {
            self = .antPlus
        } else if sample.metadata[.broadcast] == .bool(true) {
            self = .bluetoothBroadcast
        } else {
            self = .bluetoothConnection
        }
    }
}
