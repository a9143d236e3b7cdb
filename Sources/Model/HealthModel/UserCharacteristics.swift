public import FoundationEssentials

/// Biological sex, as HealthKit's `HKBiologicalSex` (the energy equation's coefficients).
public enum BiologicalSex: String, Hashable, Sendable, Codable, CaseIterable {
    case female, male, other
}

/// What the gateway knows of the person it measures, from the configuration's `profile`: the
/// figures a reading may depend on, as HealthKit gives an app the user's characteristics (a scale
/// that sends no height computes no body mass index without one). Every field may be unknown.
public struct UserCharacteristics: Sendable, Hashable {
    /// Height in metres.
    public var heightMeters: Double?
    /// Body mass in kilograms.
    public var weightKilograms: Double?
    /// `YYYY-MM-DD`.
    public var dateOfBirth: String?
    /// Biological sex.
    public var biologicalSex: BiologicalSex?

    /// Creates a value; every field defaults to unknown.
    public init(
        heightMeters: Double? = nil, weightKilograms: Double? = nil, dateOfBirth: String? = nil,
        biologicalSex: BiologicalSex? = nil
    ) {
        self.heightMeters = heightMeters
        self.weightKilograms = weightKilograms
        self.dateOfBirth = dateOfBirth
        self.biologicalSex = biologicalSex
    }

    /// The age in whole years on `date` (UTC calendar days), if the date of birth is known and
    /// not after `date`.
    public func age(on date: Date) -> Int? {
        guard let dateOfBirth, let birth = Self.birthDate(dateOfBirth) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let today = calendar.dateComponents([.year, .month, .day], from: date)
        guard let year = today.year, let month = today.month, let day = today.day else { return nil }
        var age = year - birth.year
        if (month, day) < (birth.month, birth.day) { age -= 1 }
        return age >= 0 ? age : nil
    }

    /// A `YYYY-MM-DD` date of birth's parts (years 1900 … 2200), nil when it is not one.
    public static func birthDate(_ text: String) -> (year: Int, month: Int, day: Int)? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1900...2200).contains(year), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        return (year, month, day)
    }
}

/// A participant as plugins may know them (``PluginEnvironment``'s `participants`, from the
/// configuration's `participants` and the run-time assignments stored before the start): the
/// name, the devices they wear and their body's figures.
public struct ParticipantCharacteristics: Sendable, Hashable {
    /// The participant's name, unique among the participants.
    public var name: String
    /// The devices they wear: BLE addresses, serial numbers or device names (``Device/matches(_:selection:)``).
    public var devices: [String]
    /// Their profile's figures.
    public var characteristics: UserCharacteristics
    /// The devices they share with others (a scale): ``SharedDeviceUse/device`` of each.
    public var sharedDevices: [String]
    /// Their FHIR `Patient` reference (`Patient/<id>`), the subject of their Observations; nil:
    /// none configured.
    public var fhirPatient: String?
    /// Their user id at an Open mHealth receiver, the `user_id` of their data points' headers;
    /// nil: none configured.
    public var openMHealthUser: String?
    /// Their topic level on an MQTT broker (`{prefix}/{gateway}/people/{mqttTopic}/{type}`);
    /// nil: their name.
    public var mqttTopic: String?

    /// Creates a value.
    public init(
        name: String, devices: [String], characteristics: UserCharacteristics, sharedDevices: [String] = [], fhirPatient: String? = nil,
        openMHealthUser: String? = nil, mqttTopic: String? = nil
    ) {
        self.name = name
        self.devices = devices
        self.characteristics = characteristics
        self.sharedDevices = sharedDevices
        self.fhirPatient = fhirPatient
        self.openMHealthUser = openMHealthUser
        self.mqttTopic = mqttTopic
    }
}
