import FoundationEssentials
public import HealthModel
public import GatewayRuntime

/// Who is training: the configured participants plus those assigned at run time, and which
/// device belongs to whom. A value with no I/O; ``ParticipantWorkouts`` owns the live one.
///
/// The configuration's `participants` list:
/// ```json
/// "participants": [
///   {"name": "Ana", "devices": ["02:00:00:00:00:01"], "profile": {"maximumHeartRate": 186, "weightKilograms": 61}},
///   {"name": "Ben", "devices": ["Polar H10 1A2B3C4D"], "profile": {"dateOfBirth": "1990-02-03"}}
/// ]
/// ```
/// A device belongs to at most one participant. A run-time assignment moves a device to its
/// participant (a new participant gets the configuration's `profile`).
public struct ParticipantRoster: Hashable, Sendable {
    /// The participants, in configuration order, then in order of assignment.
    public private(set) var participants: [Participant] {
        didSet { owners = Self.owners(of: participants) }
    }
    /// Each identity a participant lists (canonical form), to the index of the first participant
    /// listing it: ``owner(of:)`` looks a device up instead of parsing every participant's list
    /// (it is asked for every heart rate, by the arbiter and the sign-in).
    private var owners: [DeviceIdentity: Int]
    /// The profile of guests (devices seen without a participant) and of participants created at
    /// run time: the configuration's `profile`.
    public let defaultProfile: UserProfile

    /// The most participants a gateway follows: each has a workout controller and a tile, and a
    /// class on the gym floor is far smaller.
    public static let maximumParticipants = 200

    /// A roster of `participants`.
    public init(participants: [Participant], defaultProfile: UserProfile) {
        self.participants = participants
        self.defaultProfile = defaultProfile
        owners = Self.owners(of: participants)
    }

    /// Decodes and checks the configuration's `participants` value (nil: nobody).
    /// - Throws: ``WorkoutError`` (``WorkoutError/Code/invalidProfile``) naming the key, e.g.
    ///   `participants[1].profile.weightKilograms` or `participants[2].devices[0]`.
    public static func decode(_ value: JSONValue?, defaultProfile: UserProfile) throws(WorkoutError) -> ParticipantRoster {
        guard let value, value != .null else { return ParticipantRoster(participants: [], defaultProfile: defaultProfile) }
        func fail(_ path: String, _ reason: String) -> WorkoutError {
            WorkoutError(.invalidProfile, "\(path): \(reason)", keyPath: path)
        }
        guard case .array(let items) = value else { throw fail("participants", "expected a list of participants") }
        guard items.count <= maximumParticipants else {
            throw fail("participants", "\(items.count) participants; at most \(maximumParticipants)")
        }
        var participants: [Participant] = []
        var owners: [String: String] = [:]
        // The devices listed in `sharedDevices`, to the first participant sharing each.
        var sharers: [String: String] = [:]
        // Each shared device's user indexes, to the participant listing each.
        var userIndexes: [String: [Int: String]] = [:]
        for (index, item) in items.enumerated() {
            let path = "participants[\(index)]"
            let specification: ParticipantConfiguration
            do {
                // Strict, as every configuration object: a misspelt key is an error, not a default.
                specification = try item.decodeStrictly(ParticipantConfiguration.self)
            } catch let error as DecodingError {
                let key = ConfigurationKeyPath.joining(path, error.keyPath)
                throw fail(key, error.reason)
            } catch {
                throw fail(path, "\(error)")
            }
            let name = specification.name.trimmed()
            guard !name.isEmpty, name.count <= 64 else { throw fail("\(path).name", "must be 1 to 64 characters") }
            guard !participants.contains(where: { $0.name == name }) else {
                throw fail("\(path).name", "\"\(name)\" is already a participant")
            }
            let devices = specification.devices ?? []
            for (deviceIndex, device) in devices.enumerated() {
                guard !device.isEmpty else { throw fail("\(path).devices[\(deviceIndex)]", "must not be empty") }
                // Compared in canonical form: `aa-bb-…` and `AA:BB:…` are the same strap.
                if let owner = owners[DeviceIdentity(device).canonical] {
                    throw fail("\(path).devices[\(deviceIndex)]", "\"\(device)\" is already worn by \(owner)")
                }
                if let sharer = sharers[DeviceIdentity(device).canonical] {
                    throw fail("\(path).devices[\(deviceIndex)]", "\"\(device)\" is shared by \(sharer): a device is someone's own or shared")
                }
                owners[DeviceIdentity(device).canonical] = name
            }
            let profile: UserProfile
            do {
                profile = try UserProfile.decode(specification.profile)
            } catch {
                // UserProfile names its keys from `profile`; the participant's sit under it.
                let key = error.keyPath.map { "\(path).\($0)" } ?? "\(path).profile"
                throw WorkoutError(.invalidProfile, "\(key): \(error.reason)", keyPath: key)
            }
            var shared: [SharedDeviceUse] = []
            for (useIndex, use) in (specification.sharedDevices ?? []).enumerated() {
                let usePath = "\(path).sharedDevices[\(useIndex)]"
                if let owner = owners[DeviceIdentity(use.device).canonical] {
                    throw fail("\(usePath).device", "\"\(use.device)\" is worn by \(owner): a device is someone's own or shared")
                }
                if let earlier = shared.first(where: { DeviceIdentity($0.device) == DeviceIdentity(use.device) }) {
                    throw fail("\(usePath).device", "\"\(use.device)\" is listed already as \"\(earlier.device)\"")
                }
                if let index = use.userIndex {
                    // 255 is the profiles' "unknown user" (Weight Scale Service 3.2.1.1): never a person's.
                    guard (0...254).contains(index) else { throw fail("\(usePath).userIndex", "\(index) is not a user index (0 to 254)") }
                    if let other = userIndexes[DeviceIdentity(use.device).canonical]?[index] {
                        throw fail("\(usePath).userIndex", "\(other) has user index \(index) on \"\(use.device)\" already")
                    }
                    userIndexes[DeviceIdentity(use.device).canonical, default: [:]][index] = name
                }
                shared.append(SharedDeviceUse(device: use.device, userIndex: use.userIndex))
                if sharers[DeviceIdentity(use.device).canonical] == nil { sharers[DeviceIdentity(use.device).canonical] = name }
            }
            participants.append(Participant(
                name: name, devices: devices, profile: profile, sharedDevices: shared,
                fhirPatient: specification.identifiers?.fhirPatient, openMHealthUser: specification.identifiers?.openMHealthUser,
                mqttTopic: specification.identifiers?.mqttTopic))
        }
        // Two people on one MQTT topic would read as one person (their names differ already).
        var topics: [String: String] = [:]
        for (index, participant) in participants.enumerated() {
            let topic = participant.mqttTopic ?? participant.name
            if let other = topics[topic] {
                let key = participant.mqttTopic == nil ? "name" : "identifiers.mqttTopic"
                throw fail("participants[\(index)].\(key)", "\"\(topic)\" is \(other)'s MQTT topic already")
            }
            topics[topic] = participant.name
        }
        return ParticipantRoster(participants: participants, defaultProfile: defaultProfile)
    }

    /// One entry of the `participants` list as written; ``decode(_:defaultProfile:)`` checks it
    /// and decodes its profile (kept as JSON, so that its errors name `participants[N].profile`).
    private struct ParticipantConfiguration: DeclaredConfiguration {
        var name = ""
        var devices: [String]?
        var profile: JSONValue?
        var sharedDevices: [SharedDeviceConfiguration]?
        var identifiers: IdentifiersConfiguration?

        init() {}

        static var configurationKeys: [ConfigurationKey<Self>] {
            [
                .required("name", \.name, .string(minLength: 1, maxLength: 64), "The participant's name, unique"),
                ConfigurationKey("devices", \.devices, .array(.nonEmptyText), "The devices they wear (local identifier, name or display name)"),
                ConfigurationKey("profile", \.profile, UserProfile.configurationSchema, "Their own profile"),
                ConfigurationKey(
                    "sharedDevices", \.sharedDevices, .array(SharedDeviceConfiguration.configurationSchema),
                    "The devices they share with others (a scale, a cuff), each with the user index it gives them, if any; "
                        + "a reading of a shared device is attributed by that index, else a weighing by the nearest reference weight"),
                ConfigurationKey(
                    "identifiers", \.identifiers, IdentifiersConfiguration.configurationSchema,
                    "What the receivers call this person; absent: nothing"),
            ]
        }
    }

    /// A participant's `identifiers`: what the receivers call them.
    private struct IdentifiersConfiguration: DeclaredConfiguration {
        var fhirPatient: String?
        var openMHealthUser: String?
        var mqttTopic: String?

        init() {}

        static var configurationKeys: [ConfigurationKey<Self>] {
            [
                ConfigurationKey(
                    "fhirPatient", \.fhirPatient, .string(pattern: "^Patient/.+"),
                    "Their FHIR Patient reference (Patient/<id>): the subject of their readings' Observations (http-repository, fhir-r4 and fhir-phd)"),
                ConfigurationKey(
                    "openMHealthUser", \.openMHealthUser, .string(minLength: 1, maxLength: 256),
                    "Their user id at an Open mHealth receiver: the user_id of their data points' headers (http-repository, openmhealth)"),
                ConfigurationKey(
                    "mqttTopic", \.mqttTopic, .string(pattern: "^[^/+#]{1,64}$"),
                    "Their topic level at an MQTT broker, {prefix}/{gateway}/people/<mqttTopic>/{type} (mqtt-broker); absent: their name"),
            ]
        }

        func checkDecoded() throws(PluginConfigurationError) {
            if let fhirPatient, !(fhirPatient.hasPrefix("Patient/") && fhirPatient.count > 8) {
                throw PluginConfigurationError(keyPath: "fhirPatient", reason: "expected \"Patient/<id>\", got \"\(fhirPatient)\"")
            }
            // One topic level: a slash would add a level, + and # are MQTT's wildcards.
            if let mqttTopic, mqttTopic.isEmpty || mqttTopic.count > 64 || mqttTopic.contains(where: { "/+#".contains($0) }) {
                throw PluginConfigurationError(
                    keyPath: "mqttTopic", reason: "expected one topic level of 1 to 64 characters without /, + or #, got \"\(mqttTopic)\"")
            }
        }
    }

    /// One entry of a participant's `sharedDevices`.
    private struct SharedDeviceConfiguration: DeclaredConfiguration {
        var device = ""
        var userIndex: Int?

        init() {}

        static var configurationKeys: [ConfigurationKey<Self>] {
            [
                .required("device", \.device, .nonEmptyText, "The device (local identifier, name or display name)"),
                ConfigurationKey(
                    "userIndex", \.userIndex, .whole(0...254, unit: "user index"),
                    "The user index the device sends in this person's measurements; absent: it sends none"),
            ]
        }
    }

    /// The participant called `name`.
    public func participant(named name: String) -> Participant? {
        participants.first { $0.name == name }
    }

    /// The participant wearing `device` (matched by local identifier, name or display name, as a
    /// workout's `--devices`), nil for a guest.
    public func owner(of device: Device?) -> Participant? {
        ownerIndex(of: device).map { participants[$0] }
    }

    /// The index in ``participants`` of the participant wearing `device` (``owner(of:)``).
    public func ownerIndex(of device: Device?) -> Int? {
        guard let device else { return nil }
        // The same test as Device.matches: the first participant listing any of its identities.
        return device.identities.compactMap { owners[$0] }.min()
    }

    /// The index of the first participant listing each identity.
    private static func owners(of participants: [Participant]) -> [DeviceIdentity: Int] {
        var owners: [DeviceIdentity: Int] = [:]
        for (index, participant) in participants.enumerated() {
            for device in participant.devices where owners[DeviceIdentity(device)] == nil { owners[DeviceIdentity(device)] = index }
        }
        return owners
    }

    /// Adds `participant`.
    /// - Throws: ``WorkoutError/Code/invalidArgument`` when the name is taken or the roster is
    ///   at ``maximumParticipants``.
    public mutating func add(_ participant: Participant) throws(WorkoutError) {
        guard self.participant(named: participant.name) == nil else {
            throw WorkoutError(.invalidArgument, "\(participant.name) is already a participant")
        }
        guard participants.count < Self.maximumParticipants else {
            throw WorkoutError(.invalidArgument, "there are already \(Self.maximumParticipants) participants")
        }
        participants.append(participant)
    }

    /// Moves `assignment.device` to its participant, creating the participant (with
    /// ``defaultProfile``) if the name is new. `aliases`: the strap's other identities, as a
    /// device heard by the gateway gives them (``HealthModel/Device/identities``: its serial, its
    /// address, its Polar id); any of them another participant lists leaves that participant too,
    /// so that a strap assigned by its address is no longer worn by whoever listed its serial.
    /// - Throws: ``WorkoutError/Code/invalidArgument`` for an empty name or device, a name
    ///   longer than 64 characters, or a roster already at ``maximumParticipants``.
    public mutating func apply(_ assignment: ParticipantAssignment, aliases: Set<DeviceIdentity> = []) throws(WorkoutError) {
        let name = assignment.participant.trimmed()
        guard !name.isEmpty, name.count <= 64 else {
            throw WorkoutError(.invalidArgument, "participant: the name must be 1 to 64 characters")
        }
        guard !assignment.device.isEmpty else { throw WorkoutError(.invalidArgument, "device: must not be empty") }
        if participant(named: name) == nil {
            guard participants.count < Self.maximumParticipants else {
                throw WorkoutError(.invalidArgument, "there are already \(Self.maximumParticipants) participants")
            }
            participants.append(Participant(name: name, profile: defaultProfile))
        }
        for index in participants.indices {
            // Whatever form it was written in before (DeviceIdentity), the strap leaves its wearer.
            participants[index].devices.removeAll {
                let identity = DeviceIdentity($0)
                return identity == DeviceIdentity(assignment.device) || aliases.contains(identity)
            }
            if participants[index].name == name { participants[index].devices.append(assignment.device) }
        }
    }
}

extension ParticipantRoster {
    /// The `participants` list's schema.
    public static var configurationSchema: ConfigurationSchema {
        .array(ParticipantConfiguration.configurationSchema, maxItems: maximumParticipants)
    }
}
