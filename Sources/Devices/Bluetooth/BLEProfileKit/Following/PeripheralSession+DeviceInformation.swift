public import BLETransport
import SampleBus
import GatewayRuntime
import GATTDecoding
public import HealthModel
import FoundationEssentials

extension PeripheralSession {
    /// What every connection reads first: Device Information (0x180A) and the battery level.
    public struct DeviceInformation: Sendable, Hashable {
        /// The device as samples name it; its local identifier is ``localIdentifier(address:manufacturer:serialNumber:)``,
        /// its radio identifier the address.
        public var device: Device
        /// Percent, from Battery Level (0x2A19) or, without it, BlueZ's Battery1.
        public var battery: Int?
        /// The Serial Number String (0x2A25), when it is a plausible one
        /// (``plausibleSerialNumber(_:)``).
        public var serialNumber: String?

        /// What every sample of the connection carries in its metadata: the battery level
        /// (`healthgate.batteryLevel`) and the serial number (``MetadataKey/deviceSerialNumber``).
        public var metadata: Metadata {
            var metadata = Metadata()
            if let battery { metadata[.batteryLevel] = .integer(Int64(battery)) }
            metadata.deviceSerialNumber = serialNumber
            return metadata
        }

        /// How a connection's first log line starts: `device: <manufacturer> <model>, id <local
        /// identifier>` (`?` for what is unknown, `key` without an identifier), then `, battery
        /// <n>%` when the level is known.
        public func summary(key: String) -> String {
            "device: \(device.manufacturer ?? "?") \(device.model ?? "?"), id \(device.localIdentifier ?? key)"
                + (battery.map { ", battery \($0)%" } ?? "")
        }
    }

    /// Reads Device Information and the battery level. Absent or failing characteristics are
    /// skipped (a failure is logged); an invalid battery level is reported with its bytes and
    /// counted by the caller through `badPayload`. Sets the device's `battery` and `serial`
    /// status details.
    public func readDeviceInformation(
        _ connection: any BLEConnection, badPayload: (_ bytes: [UInt8], _ reason: String) -> Void
    ) async throws -> DeviceInformation {
        func text(_ characteristic: BluetoothUUID) async throws -> String? {
            guard let bytes = try await optionalRead(characteristic, in: .deviceInformationService, from: connection) else {
                return nil
            }
            let value = String(decoding: bytes, as: UTF8.self)
                .trimmed(where: { $0.isWhitespace || $0 == "\0" })
            return value.isEmpty ? nil : value
        }
        // The address stays the radio identity when a serial number becomes the local identifier,
        // so that a participant assigned the address follows the device.
        var device = Device(name: peripheral.name ?? key, localIdentifier: key, radioIdentifier: DeviceIdentity(key).canonical)
        device.manufacturer = try await text(.manufacturerName)
        device.model = try await text(.modelNumber)
        device.hardwareVersion = try await text(.hardwareRevision)
        device.firmwareVersion = try await text(.firmwareRevision)
        device.softwareVersion = try await text(.softwareRevision)
        let serial = Self.plausibleSerialNumber(try await text(.serialNumber))
        device.localIdentifier = Self.localIdentifier(address: key, manufacturer: device.manufacturer, serialNumber: serial)
        setDetail("serial", serial)

        var battery: Int?
        if let bytes = try await optionalRead(.batteryLevel, in: .batteryService, from: connection) {
            // Battery Level (Battery Service v1.0 §3.1): one octet, a percentage 0–100.
            if bytes.count == 1, bytes[0] <= 100 {
                battery = Int(bytes[0])
            } else {
                badPayload(bytes, "Battery Level must be one octet of 0…100")
            }
        }
        // No Battery Service, or it failed: BlueZ's Battery1 (which reads the same
        // characteristic itself, when the device exposes it).
        if battery == nil { battery = await connection.batteryPercentage() }
        if let battery {
            setDetail("battery", "\(battery)%")
            setMetric("healthgate_device_battery_ratio", Double(battery) / 100)
        }
        return DeviceInformation(device: device, battery: battery, serialNumber: serial)
    }

    /// Reads Device Information and the battery level as above, and reports an invalid battery
    /// level through ``reportBadPayload(_:_:device:count:)`` (counted in `badPayloads`, logged
    /// naming the device it read).
    public func readDeviceInformation(_ connection: any BLEConnection, badPayloads: inout Int) async throws -> DeviceInformation {
        var bad: [([UInt8], String)] = []
        let information = try await readDeviceInformation(connection) { bytes, reason in bad.append((bytes, reason)) }
        for (bytes, reason) in bad { reportBadPayload(bytes, reason, device: information.device, count: &badPayloads) }
        return information
    }

    /// The stable identity rule: the BLE address, unless Device Information gives a plausible
    /// serial number (``plausibleSerialNumber(_:)``) AND a manufacturer name, in which case
    /// `manufacturer/serial` (devices with rotating private addresses keep their serial; the
    /// manufacturer keeps serials of different vendors apart).
    public static func localIdentifier(address: String, manufacturer: String?, serialNumber: String?) -> String {
        guard let serial = plausibleSerialNumber(serialNumber), let manufacturer else { return address }
        return "\(manufacturer)/\(serial)"
    }

    /// `serialNumber` when it can be a device's serial number: at least 4 characters, at least 2
    /// distinct ones, and not a placeholder such as "unknown" or "0123456789"; else nil.
    public static func plausibleSerialNumber(_ serialNumber: String?) -> String? {
        guard let serial = serialNumber, serial.count >= 4, Set(serial).count >= 2,
            !["unknown", "n/a", "na", "none", "serial", "0123456789", "123456789", "12345678", "123456", "1234"]
                .contains(serial.lowercased())
        else { return nil }
        return serial
    }

    /// A payload that does not decode: logged with its bytes and the device, reported in the
    /// status, and counted in the device's `badPayloads` detail (`count` is the session's tally).
    public func reportBadPayload(_ bytes: [UInt8], _ reason: String, device: Device, count: inout Int) {
        count += 1
        setDetail("badPayloads", String(count))
        setMetric("healthgate_device_bad_payloads_total", Double(count))
        context.logger.warning("bad payload \(HexPayload.format(bytes)): \(reason)", device: device.displayName)
        context.status.reportError("\(device.displayName): \(reason)", at: context.clock.now())
    }

    /// Notifications the transport dropped on `connection` since `dropped` (the count last
    /// seen, updated here): counted in the status as dropped records and logged as a warning.
    public func reportDroppedNotifications(of connection: any BLEConnection, since dropped: inout Int, device: Device) {
        let droppedNow = connection.droppedNotifications
        guard droppedNow != dropped else { return }
        context.status.recordsDropped(droppedNow - dropped)
        context.logger.warning(
            "fell behind: the transport dropped \(String(count: droppedNow - dropped, "notification")) (\(droppedNow) on this connection)",
            device: device.displayName)
        dropped = droppedNow
    }
}
