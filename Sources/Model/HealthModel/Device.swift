import Synchronization

/// The device that produced a sample, like HealthKit's HKDevice.
///
/// Every field is optional because devices report different subsets. `localIdentifier` is the
/// gateway's stable identity for the device: a BLE address, a USB `ID_SERIAL`, or a serial number.
public struct Device: Hashable, Sendable, Codable {
    /// The nine fields, in one immutable object that copies of the value share.
    ///
    /// Why: a batch's samples mostly carry one device, and every copy of a sample (onto the bus,
    /// into a sink's queue, into a batch) would otherwise retain eight strings. Shared, a copy
    /// retains one object, and two values made from one are recognized by identity
    /// (``isIdentical(to:)``) without comparing strings. A setter copies the fields into a new
    /// object when the current one is shared (copy on write).
    @usableFromInline final class Fields: Sendable {
        @usableFromInline let name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion,
            localIdentifier, udiDeviceIdentifier, radioIdentifier: String?

        // Not inlinable, so that the parsed identities below stay internal; its parameters are
        // consumed, so the caller's strings still move in.
        @usableFromInline init(
            _ name: String?, _ manufacturer: String?, _ model: String?, _ hardwareVersion: String?,
            _ firmwareVersion: String?, _ softwareVersion: String?, _ localIdentifier: String?,
            _ udiDeviceIdentifier: String?, _ radioIdentifier: String?
        ) {
            self.name = name
            self.manufacturer = manufacturer
            self.model = model
            self.hardwareVersion = hardwareVersion
            self.firmwareVersion = firmwareVersion
            self.softwareVersion = softwareVersion
            self.localIdentifier = localIdentifier
            self.udiDeviceIdentifier = udiDeviceIdentifier
            self.radioIdentifier = radioIdentifier
        }

        /// The identities (``Device/identities``, ``Device/strapIdentity``,
        /// ``Device/pathIdentity``), parsed on first use and kept with the fields that copies of
        /// the value share. Why: the workouts, the roster and the heart-rate arbiter match every
        /// sample's device, and parsing its identities for each of them (a class of 30: every
        /// sample against 31 workouts) was two thirds of the gateway's instructions (callgrind,
        /// `healthgate demo --class 30`). The fields never change, so neither do these.
        let parsedIdentities = Mutex<ParsedIdentities?>(nil)
    }

    /// A device's identities in canonical form, parsed once per ``Fields`` object.
    struct ParsedIdentities: Sendable {
        let all: Set<DeviceIdentity>
        let strap: DeviceIdentity?
        let path: DeviceIdentity?
    }

    /// The identities of these fields, parsed the first time they are asked for.
    private var parsed: ParsedIdentities {
        if let known = fields.parsedIdentities.withLock({ $0 }) { return known }
        var all = Set([localIdentifier, radioIdentifier, name, displayName].compactMap { $0.map(DeviceIdentity.init) })
        let polar = name.flatMap(DeviceIdentity.polarDeviceID(inName:))
        if let polar { all.insert(polar) }
        let path = (radioIdentifier ?? localIdentifier ?? name).map(DeviceIdentity.init)
        let parsed = ParsedIdentities(all: all, strap: polar ?? path, path: path)
        fields.parsedIdentities.withLock { $0 = parsed }
        return parsed
    }

    @usableFromInline var fields: Fields

    // Inlinable: a caller's strings move into the value instead of being retained once more
    // (the store's readers build one per device they meet).
    @inlinable
    public init(
        name: String? = nil, manufacturer: String? = nil, model: String? = nil,
        hardwareVersion: String? = nil, firmwareVersion: String? = nil,
        softwareVersion: String? = nil, localIdentifier: String? = nil,
        udiDeviceIdentifier: String? = nil, radioIdentifier: String? = nil
    ) {
        fields = Fields(
            name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier,
            udiDeviceIdentifier, radioIdentifier)
    }

    public var name: String? {
        get { fields.name }
        set { update { $0.name = newValue } }
    }
    public var manufacturer: String? {
        get { fields.manufacturer }
        set { update { $0.manufacturer = newValue } }
    }
    public var model: String? {
        get { fields.model }
        set { update { $0.model = newValue } }
    }
    public var hardwareVersion: String? {
        get { fields.hardwareVersion }
        set { update { $0.hardwareVersion = newValue } }
    }
    public var firmwareVersion: String? {
        get { fields.firmwareVersion }
        set { update { $0.firmwareVersion = newValue } }
    }
    public var softwareVersion: String? {
        get { fields.softwareVersion }
        set { update { $0.softwareVersion = newValue } }
    }
    /// The gateway's stable identity for the device: a BLE address, a USB `ID_SERIAL`, a serial number.
    public var localIdentifier: String? {
        get { fields.localIdentifier }
        set { update { $0.localIdentifier = newValue } }
    }
    public var udiDeviceIdentifier: String? {
        get { fields.udiDeviceIdentifier }
        set { update { $0.udiDeviceIdentifier = newValue } }
    }
    /// The identity of the radio the samples came by, whatever else identifies the device: the
    /// Bluetooth address of a connected device, the Polar device id in a broadcasting strap's
    /// name, or an ANT+ device (`ant:120:NUMBER`), as ``DeviceIdentity`` writes them. A
    /// participant, a workout's `devices` and the board may name the device by it
    /// (``identities``), also when ``localIdentifier`` is a `manufacturer/serial`. nil: the
    /// device came by no radio (a serial port) or its source does not say.
    public var radioIdentifier: String? {
        get { fields.radioIdentifier }
        set { update { $0.radioIdentifier = newValue } }
    }

    /// Whether `other` is a copy of this value: the same fields object, so certainly equal.
    /// False says nothing; compare with `==`. O(1): a writer recognizes the device of the
    /// previous sample with it.
    @inlinable
    public func isIdentical(to other: Device) -> Bool { fields === other.fields }

    /// Makes new fields from the current ones with one of them changed.
    private mutating func update(_ change: (inout Device.Mutable) -> Void) {
        var values = Mutable(fields)
        change(&values)
        fields = Fields(
            values.name, values.manufacturer, values.model, values.hardwareVersion, values.firmwareVersion,
            values.softwareVersion, values.localIdentifier, values.udiDeviceIdentifier, values.radioIdentifier)
    }

    private struct Mutable {
        var name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier,
            udiDeviceIdentifier, radioIdentifier: String?

        init(_ fields: Fields) {
            (name, manufacturer, model, hardwareVersion) =
                (fields.name, fields.manufacturer, fields.model, fields.hardwareVersion)
            (firmwareVersion, softwareVersion, localIdentifier, udiDeviceIdentifier) =
                (fields.firmwareVersion, fields.softwareVersion, fields.localIdentifier, fields.udiDeviceIdentifier)
            radioIdentifier = fields.radioIdentifier
        }
    }

    public static func == (lhs: Device, rhs: Device) -> Bool {
        if lhs.isIdentical(to: rhs) { return true }
        let (a, b) = (lhs.fields, rhs.fields)
        return a.name == b.name && a.manufacturer == b.manufacturer && a.model == b.model
            && a.hardwareVersion == b.hardwareVersion && a.firmwareVersion == b.firmwareVersion
            && a.softwareVersion == b.softwareVersion && a.localIdentifier == b.localIdentifier
            && a.udiDeviceIdentifier == b.udiDeviceIdentifier && a.radioIdentifier == b.radioIdentifier
    }

    public func hash(into hasher: inout Hasher) {
        let f = fields
        hasher.combine(f.name)
        hasher.combine(f.manufacturer)
        hasher.combine(f.model)
        hasher.combine(f.hardwareVersion)
        hasher.combine(f.firmwareVersion)
        hasher.combine(f.softwareVersion)
        hasher.combine(f.localIdentifier)
        hasher.combine(f.udiDeviceIdentifier)
        hasher.combine(f.radioIdentifier)
    }

    private enum CodingKeys: String, CodingKey {
        case name, manufacturer, model, hardwareVersion, firmwareVersion, softwareVersion, localIdentifier,
            udiDeviceIdentifier, radioIdentifier
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try c.decodeIfPresent(String.self, forKey: .name),
            manufacturer: try c.decodeIfPresent(String.self, forKey: .manufacturer),
            model: try c.decodeIfPresent(String.self, forKey: .model),
            hardwareVersion: try c.decodeIfPresent(String.self, forKey: .hardwareVersion),
            firmwareVersion: try c.decodeIfPresent(String.self, forKey: .firmwareVersion),
            softwareVersion: try c.decodeIfPresent(String.self, forKey: .softwareVersion),
            localIdentifier: try c.decodeIfPresent(String.self, forKey: .localIdentifier),
            udiDeviceIdentifier: try c.decodeIfPresent(String.self, forKey: .udiDeviceIdentifier),
            radioIdentifier: try c.decodeIfPresent(String.self, forKey: .radioIdentifier))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(name, forKey: .name)
        try c.encodeIfPresent(manufacturer, forKey: .manufacturer)
        try c.encodeIfPresent(model, forKey: .model)
        try c.encodeIfPresent(hardwareVersion, forKey: .hardwareVersion)
        try c.encodeIfPresent(firmwareVersion, forKey: .firmwareVersion)
        try c.encodeIfPresent(softwareVersion, forKey: .softwareVersion)
        try c.encodeIfPresent(localIdentifier, forKey: .localIdentifier)
        try c.encodeIfPresent(udiDeviceIdentifier, forKey: .udiDeviceIdentifier)
        try c.encodeIfPresent(radioIdentifier, forKey: .radioIdentifier)
    }

    /// A short label for logs: the name, else the local identifier, else "unknown device".
    public var displayName: String {
        switch (name, localIdentifier) {
        case (let name?, let id?) where name != id: "\(name) [\(id)]"
        case (let name?, _): name
        case (nil, let id?): id
        case (nil, nil): "unknown device"
        }
    }
}

extension Optional where Wrapped == Device {
    /// Whether `other` is a copy of this value: both nil, or both copies of one device
    /// (``Device/isIdentical(to:)``). False says nothing; compare with `==`.
    @inlinable
    public func isIdentical(to other: Device?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case (let a?, let b?): a.isIdentical(to: b)
        default: false
        }
    }
}

extension Device {
    /// Whether a record's `device` is in `selection`, a list of local identifiers, names or
    /// display names as a workout's or participant's `devices` gives them, compared in their
    /// canonical forms (``DeviceIdentity``: a Bluetooth address in any case or separator form).
    /// A nil `selection` takes every device; a record without a device matches only then.
    /// A caller that tests many devices against one selection parses it once with
    /// ``IdentitySelection``.
    public static func matches(_ device: Device?, selection: [String]?) -> Bool {
        IdentitySelection(selection).matches(device)
    }

    /// The identities a selection may name this device by: its local identifier, its radio
    /// identifier, name and display name, and the Polar device id in its name (a connected Polar
    /// strap is named like its broadcast), in canonical form.
    /// Parsed once per device value and its copies.
    public var identities: Set<DeviceIdentity> { parsed.all }

    /// The one identity of the strap behind this device, whatever path it came by: the Polar
    /// device id in its name, else its radio identifier, else its local identifier, else its
    /// name. Two paths of one Polar strap (connected and broadcasting) give the same strap
    /// identity; the paths themselves differ by ``pathIdentity``.
    public var strapIdentity: DeviceIdentity? { parsed.strap }

    /// The identity of the path the samples came by: the radio identifier, else the local
    /// identifier, else the name. Two paths of one strap differ by it.
    public var pathIdentity: DeviceIdentity? { parsed.path }
}
