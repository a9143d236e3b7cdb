public import FoundationEssentials
public import HealthModel

/// One event of the board's stream: the whole board (``full``, what a new client gets first), or
/// the tiles that changed since the previous event, with the ids of the tiles gone and the new
/// order when it changed. The page applies events in order.
public struct BoardUpdate: Hashable, Sendable, Codable {
    /// The longest a change waits before it is sent: readings arriving within this window of the
    /// first one go out in one event. Straps notify about once a second each, so a class of 30
    /// sends a reading every ~33 ms; 100 ms groups about three readings per event (at most 10
    /// events a second per client, whatever the class size), and adds at most 100 ms to a
    /// reading's way to the screen, against the 500 ms tick it replaces. Each event makes a
    /// snapshot of the whole board, so the window sets the board's CPU: at 50 ms the class
    /// benchmark's CPU budget was not met (Benchmarks/RESULTS.md, `class`).
    public static let coalescingMilliseconds = 100
    /// How often the board is looked at with no reading arriving: a silent strap's tile turns
    /// lost, and the running timers (time in zone) tick, within this period.
    public static let refreshSeconds = 1.0

    /// Whether this is the whole board (every tile, in order) rather than a change.
    public var full: Bool
    /// When the board it comes from was made.
    public var generatedAt: Date
    /// The tiles that changed (every tile when ``full``).
    public var tiles: [BoardTile]
    /// Ids of tiles no longer on the board.
    public var removed: [String]
    /// Every tile's id in board order; present when ``full`` or when the order changed.
    public var order: [String]?
    /// As ``BoardSnapshot/droppedReadings``.
    public var droppedReadings: Int

    /// Creates an update.
    public init(
        full: Bool, generatedAt: Date, tiles: [BoardTile], removed: [String] = [], order: [String]? = nil,
        droppedReadings: Int = 0
    ) {
        self.full = full
        self.generatedAt = generatedAt
        self.tiles = tiles
        self.removed = removed
        self.order = order
        self.droppedReadings = droppedReadings
    }

    /// The whole of `snapshot`.
    public init(whole snapshot: BoardSnapshot) {
        self.init(
            full: true, generatedAt: snapshot.generatedAt, tiles: snapshot.tiles, order: snapshot.tiles.map(\.id),
            droppedReadings: snapshot.droppedReadings)
    }
}

extension BoardUpdate {
    /// The update as one event of the board's stream writes it: the JSON of its `Codable`
    /// conformance (the same keys, nil fields left out, keys in no particular order: the page
    /// parses it) on one line, written by ``JSONByteWriter``: `JSONEncoder`'s generic containers
    /// were the board's largest cost in a class, where events go out several times a second, each
    /// tile with its minute of trend (Benchmarks/RESULTS.md, `class`).
    public func eventJSON() throws(JSONByteWriter.Refusal) -> [UInt8] {
        var writer = JSONByteWriter(capacity: 256 + 640 * tiles.count)
        writer.openObject()
        writer.key(CodingKeys.full.stringValue)
        writer.bool(full)
        writer.key(CodingKeys.generatedAt.stringValue)
        try writer.date(generatedAt)
        writer.key(CodingKeys.tiles.stringValue)
        writer.openArray()
        for tile in tiles { try tile.write(to: &writer) }
        writer.closeArray()
        writer.key(CodingKeys.removed.stringValue)
        writer.openArray()
        for id in removed { writer.string(id) }
        writer.closeArray()
        if let order {
            writer.key(CodingKeys.order.stringValue)
            writer.openArray()
            for id in order { writer.string(id) }
            writer.closeArray()
        }
        writer.key(CodingKeys.droppedReadings.stringValue)
        writer.integer(droppedReadings)
        writer.closeObject()
        return writer.bytes
    }
}

/// What the board last sent, and the change from it to a new snapshot: a value with no I/O.
///
/// A tile counts as changed when what the page shows of it changes: its fields with the timers
/// (``BoardTile/secondsInZone``, ``BoardTile/elapsedSeconds``) in whole seconds and without
/// ``BoardTile/secondsSinceReading`` (which changes at every look and is not shown). So a board
/// whose straps are all silent and whose workouts are not running sends nothing.
public struct BoardDiff: Sendable {
    private var sent: [String: BoardTile] = [:]
    private var order: [String] = []
    private var droppedReadings = 0

    /// Nothing sent yet.
    public init() {}

    /// Remembers `snapshot` as sent whole, and returns it as a ``BoardUpdate``.
    public mutating func whole(_ snapshot: BoardSnapshot) -> BoardUpdate {
        remember(snapshot)
        return BoardUpdate(whole: snapshot)
    }

    /// The change from what was sent to `snapshot`, remembered as sent; nil when nothing shown
    /// changed.
    public mutating func change(to snapshot: BoardSnapshot) -> BoardUpdate? {
        let newOrder = snapshot.tiles.map(\.id)
        let changed = snapshot.tiles.filter { tile in sent[tile.id].map { Self.shown($0) != Self.shown(tile) } ?? true }
        let present = Set(newOrder)
        let removed = order.filter { !present.contains($0) }
        let orderChanged = newOrder != order
        guard !changed.isEmpty || orderChanged || snapshot.droppedReadings != droppedReadings else { return nil }
        remember(snapshot)
        return BoardUpdate(
            full: false, generatedAt: snapshot.generatedAt, tiles: changed, removed: removed,
            order: orderChanged ? newOrder : nil, droppedReadings: snapshot.droppedReadings)
    }

    private mutating func remember(_ snapshot: BoardSnapshot) {
        sent = Dictionary(snapshot.tiles.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        order = snapshot.tiles.map(\.id)
        droppedReadings = snapshot.droppedReadings
    }

    /// What the page shows of `tile`.
    static func shown(_ tile: BoardTile) -> BoardTile {
        var tile = tile
        tile.secondsSinceReading = nil
        tile.secondsInZone = tile.secondsInZone.map { $0.rounded(.down) }
        tile.elapsedSeconds = tile.elapsedSeconds.map { $0.rounded(.down) }
        tile.energyKilocalories = tile.energyKilocalories.map { $0.rounded() }
        return tile
    }
}
