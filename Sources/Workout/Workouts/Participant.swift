public import FoundationEssentials
public import HealthModel
/// A person training with the gateway: a name shown on the board, the profile their zones and
/// energy come from, and the devices they wear.
///
/// Participants come from the configuration's `participants` list (see
/// ``ParticipantRoster/decode(_:defaultProfile:)``) or appear when `healthgate participant assign
/// DEVICE NAME` names someone new (then with the configuration's `profile`). Each has its own
/// workouts (``WorkoutController/participant``).
public struct Participant: Hashable, Sendable, Codable {
    /// The name or nickname, unique among the participants.
    public var name: String
    /// The devices they wear: BLE addresses, serial numbers or device names, as `--devices` takes.
    public var devices: [String]
    /// Their profile (maximum heart rate or date of birth, weight, sex, zones).
    public var profile: UserProfile
    /// The devices they share with others (a family's scale, a clinic's cuff), with the user
    /// index the device gives them: their readings are attributed by the index, else by weight
    /// (``HealthModel/PersonAttribution``). A shared device is no one's for workouts.
    public var sharedDevices: [SharedDeviceUse]
    /// Their FHIR `Patient` reference (`identifiers.fhirPatient`): the subject of the
    /// Observations of their readings that an `http-repository` sink in `fhir-r4` sends.
    public var fhirPatient: String?
    /// Their user id at an Open mHealth receiver (`identifiers.openMHealthUser`): the `user_id`
    /// in the headers of their readings' data points.
    public var openMHealthUser: String?
    /// The topic level of their readings on an MQTT broker (`identifiers.mqttTopic`):
    /// `{prefix}/{gateway}/people/{mqttTopic}/{type}`; nil: their name.
    public var mqttTopic: String?

    /// Creates a participant.
    public init(
        name: String, devices: [String] = [], profile: UserProfile = UserProfile(), sharedDevices: [SharedDeviceUse] = [],
        fhirPatient: String? = nil, openMHealthUser: String? = nil, mqttTopic: String? = nil
    ) {
        self.name = name
        self.devices = devices
        self.profile = profile
        self.sharedDevices = sharedDevices
        self.fhirPatient = fhirPatient
        self.openMHealthUser = openMHealthUser
        self.mqttTopic = mqttTopic
    }
}

extension Participant {
    /// What plugins know of the participant (``HealthModel/ParticipantCharacteristics``): the
    /// one mapping, for the plugins that run and for their validation alike.
    public var pluginCharacteristics: ParticipantCharacteristics {
        ParticipantCharacteristics(
            name: name, devices: devices, characteristics: profile.characteristics, sharedDevices: sharedDevices.map(\.device),
            fhirPatient: fhirPatient, openMHealthUser: openMHealthUser, mqttTopic: mqttTopic)
    }

    enum CodingKeys: String, CodingKey { case name, devices, profile, sharedDevices, fhirPatient, openMHealthUser, mqttTopic }

    /// Decodes a participant; `sharedDevices` may be absent (participants stored before it).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            name: try container.decode(String.self, forKey: .name), devices: try container.decode([String].self, forKey: .devices),
            profile: try container.decode(UserProfile.self, forKey: .profile),
            sharedDevices: try container.decodeIfPresent([SharedDeviceUse].self, forKey: .sharedDevices) ?? [],
            fhirPatient: try container.decodeIfPresent(String.self, forKey: .fhirPatient),
            openMHealthUser: try container.decodeIfPresent(String.self, forKey: .openMHealthUser),
            mqttTopic: try container.decodeIfPresent(String.self, forKey: .mqttTopic))
    }
}

/// Where run-time device assignments survive a restart: the SQLite store keeps them in its own
/// table (schema version 5), committed before the command answers; ``VolatileWorkoutStore``
/// keeps them in memory.
///
/// Contract: as ``WorkoutStateStore``, every method blocks until its work is durable and is called
/// off Swift's cooperative thread pool, one at a time. Errors are ``WorkoutError`` with code
/// ``WorkoutError/Code/persistence``.
public protocol ParticipantAssignmentStore: Sendable {
    /// Every assignment made at run time, oldest first; a device appears at most once.
    func participantAssignments() throws(WorkoutError) -> [ParticipantAssignment]

    /// Records that `assignment.device` is worn by `assignment.participant` from `date` on,
    /// replacing an earlier assignment of the same device (whose interval ends at `date`).
    func assign(_ assignment: ParticipantAssignment, at date: Date) throws(WorkoutError)

    /// Forgets the assignments of `devices` (each as ``ParticipantAssignment/device`` was
    /// given), their intervals ending at `date`: a class's end frees the straps signed in for it.
    func unassign(_ devices: [String], at date: Date) throws(WorkoutError)

    /// What the store's latest commit attributed readings by (``HealthModel/ReadingAttribution``):
    /// a participant's live workout previews whose a reading not committed yet is with it; what
    /// is stored, and what a workout reads back when it ends, is decided where it is committed.
    /// nil: none yet (a reading counts by its device alone).
    var currentAttribution: ReadingAttribution? { get }
}
