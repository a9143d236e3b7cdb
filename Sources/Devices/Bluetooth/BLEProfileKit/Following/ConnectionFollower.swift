public import BLETransport
import FoundationEssentials
import GatewayRuntime
public import HealthModel
import HealthStore
public import SampleBus

/// What a profile does with each connection to one followed device, once the kit has read the
/// device's Device Information and battery; ``PeripheralSession`` connects and reconnects around
/// it. A profile's session supplies ``session`` and ``follow(_:information:badPayloads:)``; the
/// opening every session shares (``run()``) and the loop over a connection's notifications
/// (``receive(_:device:badPayloads:_:ended:)``) are the kit's.
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

extension ConnectionFollower {
    /// The device's committed checkpoint (``SourceCheckpoint``, kept with the records it covers)
    /// under `key` in `namespace`, decoded from JSON; nil when there is none, or when it cannot be
    /// read or decoded: then a warning says so (`what`: "the glucose checkpoint", `instead`: what
    /// the profile asks for without it) and the status board shows the error.
    public func committedCheckpoint<Value: Decodable>(
        _ type: Value.Type, namespace: String, key: String, what: String, instead: String, device: Device
    ) async -> Value? {
        do {
            guard let stored = try await context.checkpoints.checkpoint(namespace: namespace, key: key) else { return nil }
            return try JSONDecoder().decode(Value.self, from: stored.payload)
        } catch {
            context.logger.warning("cannot read \(what): \(error); \(instead)", device: device.displayName)
            context.status.reportError("\(device.displayName): \(what): \(error)", at: context.clock.now())
            return nil
        }
    }
}
