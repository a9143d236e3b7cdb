public import Workouts
public import HealthModel
public import FoundationEssentials

/// One tile of the live board: a participant (or a strap nobody wears) with their heart rate, zone,
/// time in zone, energy and a short trend. The JSON the board's page receives.
public struct BoardTile: Hashable, Sendable, Codable {
    /// Whether the tile's sensor is sending.
    public enum Sensor: String, Hashable, Sendable, Codable {
        /// No reading yet.
        case waiting
        /// Readings arrive.
        case live
        /// No reading for longer than ``LiveBoardModel/lostAfterSeconds``.
        case lost
    }

    /// A strap nobody wears: what signing it in needs.
    public struct Strap: Hashable, Sendable, Codable {
        /// Its identity in the form `participant assign` and the board's sign-in take.
        public var identity: String
        /// The radio its latest reading came by (nil: none, a serial device).
        public var radio: StrapRadio?
        /// Its name, when it has one.
        public var deviceName: String?

        /// Creates a strap's description.
        public init(identity: String, radio: StrapRadio?, deviceName: String? = nil) {
            self.identity = identity
            self.radio = radio
            self.deviceName = deviceName
        }
    }

    /// Stable across updates: `participant:NAME` or `strap:IDENTITY`.
    public var id: String
    /// The participant's name, or `New strap`.
    public var name: String
    /// A strap nobody wears (a new-strap tile: no participant, no profile, no zone).
    public var guest: Bool
    /// The new strap's identity and radio, on a new-strap tile.
    public var strap: Strap?
    /// The latest heart rate, bpm; nil while no reading arrived and while the sensor is lost (a lost
    /// strap shows no stale number).
    public var heartRate: Double?
    /// The latest heart rate in percent of the maximum, when the maximum is known (nil when lost).
    public var percentOfMaximum: Double?
    /// The 1-based zone of the latest heart rate.
    public var zone: Int?
    /// How many zones the profile has.
    public var zoneCount: Int
    /// Running seconds of the participant's workout spent in the current zone.
    public var secondsInZone: Double?
    /// The workout's active energy, kcal (absent when unavailable).
    public var energyKilocalories: Double?
    /// The participant's workout state (`notStarted` for guests).
    public var workoutState: WorkoutSessionState
    /// The workout's running seconds.
    public var elapsedSeconds: Double?
    /// The latest readings, oldest first (at most ``LiveBoardModel/trendLength``).
    public var trend: [Double]
    /// Whether the sensor sends.
    public var sensor: Sensor
    /// Seconds since the last reading arrived.
    public var secondsSinceReading: Double?

    /// Creates a tile.
    public init(
        id: String, name: String, guest: Bool, heartRate: Double? = nil, percentOfMaximum: Double? = nil,
        zone: Int? = nil, zoneCount: Int = 0, secondsInZone: Double? = nil, energyKilocalories: Double? = nil,
        workoutState: WorkoutSessionState = .notStarted, elapsedSeconds: Double? = nil, trend: [Double] = [],
        sensor: Sensor = .waiting, secondsSinceReading: Double? = nil, strap: Strap? = nil
    ) {
        self.strap = strap
        self.id = id
        self.name = name
        self.guest = guest
        self.heartRate = heartRate
        self.percentOfMaximum = percentOfMaximum
        self.zone = zone
        self.zoneCount = zoneCount
        self.secondsInZone = secondsInZone
        self.energyKilocalories = energyKilocalories
        self.workoutState = workoutState
        self.elapsedSeconds = elapsedSeconds
        self.trend = trend
        self.sensor = sensor
        self.secondsSinceReading = secondsSinceReading
    }
}

/// What the board shows at one moment: every tile, participants first (roster order), then
/// new straps (by identity).
public struct BoardSnapshot: Hashable, Sendable, Codable {
    /// When it was made.
    public var generatedAt: Date
    /// The tiles.
    public var tiles: [BoardTile]
    /// Heart-rate readings not kept because ``LiveBoardModel/maximumDevices`` devices were
    /// already followed.
    public var droppedReadings: Int

    /// Creates a snapshot.
    public init(generatedAt: Date, tiles: [BoardTile], droppedReadings: Int = 0) {
        self.generatedAt = generatedAt
        self.tiles = tiles
        self.droppedReadings = droppedReadings
    }
}

extension BoardTile {
    /// Writes the tile as its `Codable` conformance does (its keys, nil fields left out), without
    /// `JSONEncoder`: a board's events write tiles many times a second (``BoardUpdate/eventJSON()``).
    func write(to writer: inout JSONByteWriter) throws(JSONByteWriter.Refusal) {
        writer.openObject()
        writer.key(CodingKeys.id.stringValue)
        writer.string(id)
        writer.key(CodingKeys.name.stringValue)
        writer.string(name)
        writer.key(CodingKeys.guest.stringValue)
        writer.bool(guest)
        if let strap {
            writer.key(CodingKeys.strap.stringValue)
            strap.write(to: &writer)
        }
        for (key, value) in [
            (CodingKeys.heartRate, heartRate), (.percentOfMaximum, percentOfMaximum), (.secondsInZone, secondsInZone),
            (.energyKilocalories, energyKilocalories), (.elapsedSeconds, elapsedSeconds), (.secondsSinceReading, secondsSinceReading),
        ] {
            guard let value else { continue }
            writer.key(key.stringValue)
            try writer.number(value)
        }
        if let zone {
            writer.key(CodingKeys.zone.stringValue)
            writer.integer(zone)
        }
        writer.key(CodingKeys.zoneCount.stringValue)
        writer.integer(zoneCount)
        writer.key(CodingKeys.workoutState.stringValue)
        writer.string(workoutState.rawValue)
        writer.key(CodingKeys.trend.stringValue)
        writer.openArray()
        for value in trend { try writer.number(value) }
        writer.closeArray()
        writer.key(CodingKeys.sensor.stringValue)
        writer.string(sensor.rawValue)
        writer.closeObject()
    }
}

extension BoardTile.Strap {
    func write(to writer: inout JSONByteWriter) {
        writer.openObject()
        writer.key(CodingKeys.identity.stringValue)
        writer.string(identity)
        if let radio {
            writer.key(CodingKeys.radio.stringValue)
            writer.string(radio.rawValue)
        }
        if let deviceName {
            writer.key(CodingKeys.deviceName.stringValue)
            writer.string(deviceName)
        }
        writer.closeObject()
    }
}
