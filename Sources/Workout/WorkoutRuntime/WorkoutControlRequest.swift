public import Workouts
public import HealthModel
public import GatewayRuntime

/// A workout command on the control socket, shared by the daemon (``WorkoutController/controlHandlers()``)
/// and the `healthgate workout …` command line, so that the command names and their arguments
/// are written once.
///
/// On the wire it is the control socket's request object: `{"command": "workout.start",
/// "arguments": {"activity": "running", "devices": ["AA:BB:…"]}}`; ``command`` and
/// ``arguments`` give the two parts and ``init(command:arguments:)`` reads them back. Every
/// command answers a ``WorkoutSnapshot``.
public enum WorkoutControlRequest: Hashable, Sendable, Codable {
    /// `workout.start`: `activity` (required), `devices` (array of strings, or one
    /// comma-separated string), `types` (quantity type names).
    case start(activity: WorkoutActivityType, devices: [String]? = nil, types: [QuantityType]? = nil)
    /// `workout.pause`.
    case pause
    /// `workout.resume`.
    case resume
    /// `workout.lap`.
    case lap
    /// `workout.marker`: an optional `note`.
    case marker(note: String? = nil)
    /// `workout.activity`: `activity`, the next activity of a multisport workout.
    case activity(WorkoutActivityType)
    /// `workout.end`.
    case end
    /// `workout.status`.
    case status

    /// Every command name, as the daemon registers them.
    public static let commands = [
        "workout.start", "workout.pause", "workout.resume", "workout.lap", "workout.marker", "workout.activity",
        "workout.end", "workout.status",
    ]

    /// The command name (`workout.start`, …).
    public var command: String {
        switch self {
        case .start: "workout.start"
        case .pause: "workout.pause"
        case .resume: "workout.resume"
        case .lap: "workout.lap"
        case .marker: "workout.marker"
        case .activity: "workout.activity"
        case .end: "workout.end"
        case .status: "workout.status"
        }
    }

    /// Whether the command acts on a workout in progress (pause, resume, lap, marker, activity,
    /// end): for every participant (`all`) it acts on each workout in progress, and a participant
    /// without one is not a failure (``ParticipantWorkouts/GroupAnswer/notInProgress``).
    public var actsOnAWorkoutInProgress: Bool {
        switch self {
        case .pause, .resume, .lap, .marker, .activity, .end: true
        case .start, .status: false
        }
    }

    /// The arguments object (empty for commands without arguments).
    public var arguments: JSONValue {
        var object: [String: JSONValue] = [:]
        switch self {
        case .start(let activity, let devices, let types):
            object["activity"] = .string(activity.rawValue)
            if let devices, !devices.isEmpty { object["devices"] = .array(devices.map(JSONValue.string)) }
            if let types { object["types"] = .array(types.map { .string($0.identifier) }) }
        case .marker(let note?):
            object["note"] = .string(note)
        case .activity(let activity):
            object["activity"] = .string(activity.rawValue)
        case .pause, .resume, .lap, .marker, .end, .status:
            break
        }
        return .object(object)
    }

    /// Reads a request from its command name and arguments.
    /// - Throws: ``WorkoutError/Code/invalidArgument`` naming the argument that is missing or
    ///   wrong, or the unknown command.
    public init(command: String, arguments: JSONValue?) throws(WorkoutError) {
        let arguments = arguments ?? .object([:])
        switch command {
        case "workout.start":
            var types: [QuantityType]?
            if let names = try Self.strings(arguments["types"], key: "types") {
                types = try names.map { name throws(WorkoutError) -> QuantityType in
                    guard let type = QuantityType.named(name) else {
                        throw WorkoutError(.invalidArgument, "types: unknown quantity type \"\(name)\"")
                    }
                    return type
                }
            }
            self = .start(
                activity: try Self.activity(arguments), devices: try Self.strings(arguments["devices"], key: "devices"),
                types: types)
        case "workout.pause": self = .pause
        case "workout.resume": self = .resume
        case "workout.lap": self = .lap
        case "workout.marker": self = .marker(note: arguments["note"]?.stringValue)
        case "workout.activity": self = .activity(try Self.activity(arguments))
        case "workout.end": self = .end
        case "workout.status": self = .status
        default:
            throw WorkoutError(
                .invalidArgument, "unknown workout command \"\(command)\"; known: \(Self.commands.joined(separator: ", "))")
        }
    }

    private enum CodingKeys: String, CodingKey { case command, arguments }

    /// Decodes `{"command": …, "arguments": …}`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        try self.init(
            command: try container.decode(String.self, forKey: .command),
            arguments: try container.decodeIfPresent(JSONValue.self, forKey: .arguments))
    }

    /// Encodes `{"command": …, "arguments": …}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(command, forKey: .command)
        try container.encode(arguments, forKey: .arguments)
    }

    /// The known activity names, for messages.
    public static var activityNames: String {
        WorkoutActivityType.allCases.map(\.rawValue).joined(separator: ", ")
    }

    private static func activity(_ arguments: JSONValue) throws(WorkoutError) -> WorkoutActivityType {
        guard let name = arguments["activity"]?.stringValue else {
            throw WorkoutError(.invalidArgument, "activity: required, one of \(activityNames)")
        }
        guard let type = WorkoutActivityType(rawValue: name) else {
            throw WorkoutError(.invalidArgument, "activity: unknown \"\(name)\"; known: \(activityNames)")
        }
        return type
    }

    private static func strings(_ value: JSONValue?, key: String) throws(WorkoutError) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .string(let text)?: return text.split(separator: ",").map(String.init)
        case .array(let items)?:
            return try items.map { item throws(WorkoutError) -> String in
                guard let text = item.stringValue else { throw WorkoutError(.invalidArgument, "\(key): expected strings") }
                return text
            }
        default: throw WorkoutError(.invalidArgument, "\(key): expected an array of strings")
        }
    }
}
