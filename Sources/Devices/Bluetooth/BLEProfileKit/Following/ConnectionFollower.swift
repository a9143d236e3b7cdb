public import BLETransport
public import SampleBus

/// What a profile does with each connection to one followed device, once the kit has read the
/// device's Device Information and battery; ``PeripheralSession`` connects and reconnects around
/// it. A profile's session supplies ``session`` and ``follow(_:information:badPayloads:)``; the
/// opening every session shares (``run()``) is the kit's.
public protocol ConnectionFollower: Sendable {
    /// The followed device's session.
    var session: PeripheralSession { get }

    /// Follows one connection until the link drops (returns whether any notification arrived)
    /// or the task is cancelled (throws `CancellationError`).
    /// - Parameters:
    ///   - information: what the connection read first.
    ///   - badPayloads: the device's count of payloads that did not decode, kept across
    ///     connections (``PeripheralSession/reportBadPayload(_:_:device:count:)``).
    func follow(
        _ connection: any BLEConnection, information: PeripheralSession.DeviceInformation, badPayloads: inout Int
    ) async throws -> Bool
}

extension ConnectionFollower {
    /// The source's context: logger, clock, status, publisher.
    public var context: SourceContext { session.context }

    /// Follows the device until the task is cancelled: on every connection reads Device
    /// Information and the battery (an invalid battery level is counted among the bad payloads),
    /// then ``follow(_:information:badPayloads:)``.
    /// - Throws: `CancellationError`, or what ``PeripheralSession/run(follow:)`` throws.
    public func run() async throws {
        var badPayloads = 0
        try await session.run { connection in
            let information = try await session.readDeviceInformation(connection, badPayloads: &badPayloads)
            return try await follow(connection, information: information, badPayloads: &badPayloads)
        }
    }
}
