import BLEProfileKit
import BLETransport
import FoundationEssentials
import HealthModel
import SampleBus
import GatewayRuntime

/// The fitness profiles of one followed device: per connection, reads Device Information and
/// the battery, subscribes to every measurement the device has (CSC, Cycling Power, the Fitness
/// Machine data and status) and publishes what ``FitnessRecordMapper`` makes of each
/// notification; ``PeripheralSession`` connects and reconnects around it.
struct FitnessSession: ConnectionFollower {
    let session: PeripheralSession
    let configuration: FitnessProfileConfiguration
    let ids: SampleIDGenerator

    func follow(
        _ connection: any BLEConnection, information: PeripheralSession.DeviceInformation, badPayloads: inout Int
    ) async throws -> Bool {
        let logger = context.logger
        let device = information.device

        var wanted: [GATTCharacteristicID] = []
        var names: [String] = []
        for (characteristic, service) in FitnessCharacteristic.measurements
        where await connection.hasCharacteristic(characteristic.uuid, in: service) {
            wanted.append(GATTCharacteristicID(characteristic.uuid, in: service))
            names.append(characteristic.displayName)
        }
        guard !wanted.isEmpty else {
            throw BLETransportError(
                .notSupported, device: session.key,
                "the device has none of CSC Measurement (0x2A5B), Cycling Power Measurement (0x2A63), "
                    + "Treadmill (0x2ACD), Indoor Bike (0x2AD2) or Rower Data (0x2AD1)")
        }
        logger.info(
            information.summary(key: session.key),
            device: device.displayName)
        let notifications = try await connection.notifications(of: wanted)
        logger.info("subscribed to \(names.joined(separator: ", "))", device: device.displayName)

        var metadata = information.metadata
        metadata[.bleAddress] = .string(session.key)
        var mapper: FitnessRecordMapper
        do {
            mapper = try FitnessRecordMapper(
                wheelCircumference: configuration.wheelCircumferenceMillimeters / 1000,
                stopTimeout: configuration.stopTimeoutSeconds, ids: ids, device: device, metadata: metadata)
        } catch {
            // The configuration's range check keeps the circumference positive and finite.
            throw BLETransportError(.failed, device: session.key, "wheel circumference: \(error)")
        }
        var dropped = connection.droppedNotifications
        return try await receive(notifications, device: device, badPayloads: &badPayloads) { notification, _, badPayloads in
            guard let characteristic = FitnessCharacteristic(uuid: notification.characteristic) else {
                logger.debug("ignored a notification of \(notification.characteristic)", device: device.displayName)
                return
            }
            if characteristic == .fitnessMachineStatus {
                logStatus(notification.value, device: device, badPayloads: &badPayloads)
                return
            }
            do {
                let samples = try mapper.map(notification.value, of: characteristic, at: notification.receivedAt)
                if !samples.isEmpty { await context.publisher.publish(samples.map(HealthRecord.quantity)) }
            } catch {
                session.reportBadPayload(notification.value, "\(error)", device: device, count: &badPayloads)
            }
            session.reportDroppedNotifications(of: connection, since: &dropped, device: device)
        } ended: { _ in
            let last = mapper.linkLost(at: context.clock.now())
            if !last.isEmpty { await context.publisher.publish(last.map(HealthRecord.quantity)) }
        }
    }

    /// Logs what the machine says of itself (started, stopped, a target changed).
    private func logStatus(_ bytes: [UInt8], device: Device, badPayloads: inout Int) {
        do {
            let status = try FitnessMachineStatusDecoder.decode(bytes)
            context.logger.info("machine status: \(status)", device: device.displayName)
        } catch {
            session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
        }
    }
}
