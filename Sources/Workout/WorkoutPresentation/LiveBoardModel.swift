public import Workouts
public import FoundationEssentials
public import HealthModel
import GatewayRuntime

/// The live board's state: the latest heart-rate readings of every device, and the tiles made
/// from them with the roster and the workouts' figures. A value with no I/O and no clock;
/// ``LiveBoard`` feeds it and tests drive it directly.
///
/// Bounded: at most ``maximumDevices`` devices (readings of further devices are dropped and
/// counted) and ``trendLength`` readings of each.
public struct LiveBoardModel: Sendable {
    /// A sensor with no reading for longer than this is flagged lost. Straps notify about once a
    /// second; 3 s is three missed notifications, so the board flags a lost strap within 3 s plus
    /// one refresh of the page's feed (``BoardUpdate/refreshSeconds``), and stops showing its heart rate.
    public static let lostAfterSeconds = 3.0
    /// Readings kept per device for the trend line (a minute at one reading a second).
    public static let trendLength = 60
    /// Devices followed at once.
    public static let maximumDevices = 500

    private struct Readings: Sendable {
        var device: Device
        var latest: Double
        /// When it arrived, on the monotonic clock (``GatewayRuntime/GatewayClock/uptime()``):
        /// a step of the wall clock neither flags a sensor lost nor keeps a silent one live.
        var arrival: Duration
        var trend: [Double] = []
        /// The radio the latest reading came by.
        var radio: StrapRadio?
    }

    private var readings: [String: Readings] = [:]
    /// Readings dropped because ``maximumDevices`` devices were followed already.
    public private(set) var droppedReadings = 0

    /// An empty board.
    public init() {}

    /// The key a device is followed under: its local identifier, else its name.
    static func key(_ device: Device) -> String { device.localIdentifier ?? device.name ?? device.displayName }

    /// Takes the heart-rate samples among `records`, arrived at `now` on the monotonic clock.
    public mutating func ingest(_ records: some Sequence<HealthRecord>, arrivedAt now: Duration) {
        for record in records {
            guard case .quantity(let sample) = record, sample.type == .heartRate, let device = sample.device else { continue }
            let bpm = sample.quantity.value
            let key = Self.key(device)
            if readings[key] == nil {
                guard readings.count < Self.maximumDevices else {
                    droppedReadings += 1
                    continue
                }
                readings[key] = Readings(device: device, latest: bpm, arrival: now)
            }
            // Non-nil: inserted above when missing.
            readings[key]?.latest = bpm
            readings[key]?.arrival = now
            readings[key]?.radio = StrapRadio(of: sample)
            readings[key]?.trend.append(bpm)
            if let count = readings[key]?.trend.count, count > Self.trendLength {
                readings[key]?.trend.removeFirst(count - Self.trendLength)
            }
        }
    }

    /// The tiles at wall-clock date `now` (zones by age, the snapshot's date) and monotonic time
    /// `uptime` (how long each sensor has been silent): one per participant (their most recent
    /// device), then a new-strap tile per strap nobody wears (its identity in the form
    /// `participant assign` takes, its radio and its heart rate; no participant's figures), in
    /// order of identity.
    /// - Parameter newStraps: the identities of the straps to offer for signing in
    ///   (``Workouts/ClassSignIn/newStraps(at:)``: heard lately, cleared when a class ends); nil:
    ///   every strap nobody wears heard within ``Workouts/ClassSignIn/forgetAfterSeconds``.
    public func snapshot(
        at now: Date, uptime: Duration, roster: ParticipantRoster, workouts: [String: WorkoutSnapshot],
        newStraps: Set<String>? = nil
    ) -> BoardSnapshot {
        var tiles: [BoardTile] = []
        var owned: Set<String> = []
        // Each followed device to its wearer through the roster's index (the test of
        // Device.matches), in one pass: a participant's tile shows their latest device.
        var latest: [Int: Readings] = [:]
        for (key, reading) in readings {
            guard let index = roster.ownerIndex(of: reading.device) else { continue }
            owned.insert(key)
            if let other = latest[index], other.arrival >= reading.arrival { continue }
            latest[index] = reading
        }
        for (index, participant) in roster.participants.enumerated() {
            tiles.append(tile(
                id: "participant:\(participant.name)", name: participant.name, guest: false, readings: latest[index],
                profile: participant.profile, workout: workouts[participant.name], now: now, uptime: uptime))
        }
        // The straps nobody wears, one tile per strap (its paths together), the latest path's reading.
        var straps: [String: Readings] = [:]
        for (key, reading) in readings where !owned.contains(key) {
            guard let identity = reading.device.strapIdentity?.canonical else { continue }
            if let newStraps {
                guard newStraps.contains(identity) else { continue }
            } else if (uptime - reading.arrival).seconds > ClassSignIn.forgetAfterSeconds {
                continue
            }
            if let other = straps[identity], other.arrival >= reading.arrival { continue }
            straps[identity] = reading
        }
        for (identity, reading) in straps.sorted(by: { $0.key < $1.key }) {
            var strap = tile(
                id: "strap:\(identity)", name: "New strap", guest: true, readings: reading,
                profile: UserProfile(), workout: nil, now: now, uptime: uptime)
            strap.strap = BoardTile.Strap(identity: identity, radio: reading.radio, deviceName: reading.device.name)
            tiles.append(strap)
        }
        return BoardSnapshot(generatedAt: now, tiles: tiles, droppedReadings: droppedReadings)
    }

    private func tile(
        id: String, name: String, guest: Bool, readings: Readings?, profile: UserProfile, workout: WorkoutSnapshot?,
        now: Date, uptime: Duration
    ) -> BoardTile {
        let zones = profile.heartRateZones(on: now)
        var tile = BoardTile(id: id, name: name, guest: guest, zoneCount: zones?.zones.count ?? 0)
        if let workout, workout.state != .notStarted {
            tile.workoutState = workout.state
            tile.elapsedSeconds = workout.elapsedSeconds
            tile.energyKilocalories = workout.energyKilocalories
        }
        guard let readings else { return tile }
        let since = max(0, (uptime - readings.arrival).seconds)
        tile.trend = readings.trend
        tile.secondsSinceReading = since
        // A lost strap shows no number at all: a frozen heart rate reads as a live one from
        // across a room. The trend keeps the last minute that did arrive.
        guard since <= Self.lostAfterSeconds else {
            tile.sensor = .lost
            return tile
        }
        tile.sensor = .live
        tile.heartRate = readings.latest
        if let maximum = profile.maximumHeartRate(on: now) { tile.percentOfMaximum = readings.latest / maximum * 100 }
        tile.zone = zones?.zone(for: readings.latest)?.number
        if let zone = tile.zone, let workout, workout.state != .notStarted, workout.zoneSeconds.indices.contains(zone - 1) {
            tile.secondsInZone = workout.zoneSeconds[zone - 1]
        }
        return tile
    }
}
