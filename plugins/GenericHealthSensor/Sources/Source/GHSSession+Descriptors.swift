import BLEProfileKit
import BLETransport
import GATTDecoding
import GatewayRuntime
import HealthModel
import SampleBus

/// The per-type descriptors of Health Sensor Features: each Observation Schedule
/// (0x2910) and Valid Range and Accuracy (0x2911) read into `status` and the log, and the
/// configured `schedules` written.
extension GHSSession {
    /// What the descriptors of one connection said: the place of each type's schedule descriptor
    /// among the schedule descriptors (what a write names it by).
    struct Descriptors: Sendable {
        var scheduleIndex: [UInt32: Int] = [:]
    }

    /// Reads the Observation Schedule and Valid Range and Accuracy descriptors of Health Sensor
    /// Features (none when the sensor lacks the characteristic), shows each in `status`
    /// (`schedule.<type>`, `validRange.<type>`) and logs it; one that does not decode is a bad
    /// payload. A failed read is logged and reported, and the connection goes on.
    /// - Throws: only when the link drops or the task is cancelled.
    func readFeatureDescriptors(_ connection: any BLEConnection, device: Device, badPayloads: inout Int) async throws -> Descriptors {
        let features = GHSCharacteristic.healthSensorFeatures
        var found = Descriptors()
        guard await connection.hasCharacteristic(features.uuid, in: .genericHealthSensorService) else { return found }
        let logger = context.logger
        for (index, bytes) in try await optionalDescriptors(.observationSchedule, of: connection, device: device).enumerated() {
            do {
                let schedule = try GHSObservationSchedule.decode(bytes)
                found.scheduleIndex[schedule.type] = found.scheduleIndex[schedule.type] ?? index
                session.setDetail("schedule.\(schedule.type)", Self.summary(schedule))
                logger.info("observation schedule of \(Self.describe(schedule.type)): \(Self.summary(schedule))", device: device.displayName)
            } catch {
                session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
            }
        }
        for bytes in try await optionalDescriptors(.validRangeAndAccuracy, of: connection, device: device) {
            do {
                let range = try GHSValidRangeAndAccuracy.decode(bytes)
                session.setDetail("validRange.\(range.type)", Self.summary(range))
                logger.info("valid range of \(Self.describe(range.type)): \(Self.summary(range))", device: device.displayName)
            } catch {
                session.reportBadPayload(bytes, "\(error)", device: device, count: &badPayloads)
            }
        }
        return found
    }

    /// The values of the descriptors `descriptor` of Health Sensor Features; empty when the read
    /// fails (logged and reported).
    /// - Throws: only when the link drops or the task is cancelled.
    private func optionalDescriptors(_ descriptor: GHSCharacteristic, of connection: any BLEConnection, device: Device) async throws -> [[UInt8]] {
        do {
            return try await connection.readDescriptors(
                descriptor.uuid, of: GHSCharacteristic.healthSensorFeatures.uuid, in: .genericHealthSensorService)
        } catch let error as BLETransportError where error.code == .disconnected || error.code == .unavailable {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            context.logger.warning("reading the \(descriptor.displayName)s failed: \(error)", device: device.displayName)
            context.status.reportError("\(session.key): reading the \(descriptor.displayName)s failed: \(error)", at: context.clock.now())
            return []
        }
    }

    /// Writes each configured schedule whose type the sensor has a schedule descriptor for, and
    /// logs the outcome. A configured type the sensor does not list (in Health Sensor Features
    /// when it was read, or among its schedule descriptors) is a warning naming it. A refusal (an
    /// ATT error: out of range, not permitted) is a warning and `scheduleRefused.<type>` in
    /// `status`; the sensor keeps its own schedule and the connection goes on.
    /// - Throws: only when the link drops or the task is cancelled.
    func writeSchedules(
        _ connection: any BLEConnection, descriptors: Descriptors, listedTypes: [UInt32]?, device: Device
    ) async throws {
        let logger = context.logger
        let name = device.displayName
        for configured in configuration.schedules {
            let schedule = configured.schedule
            let type = Self.describe(schedule.type)
            guard let index = descriptors.scheduleIndex[schedule.type] else {
                if let listedTypes, !listedTypes.contains(schedule.type) {
                    logger.warning("the sensor does not list observation type \(type): its configured schedule is not written", device: name)
                } else {
                    logger.warning("the sensor has no Observation Schedule descriptor for \(type): its configured schedule is not written", device: name)
                }
                continue
            }
            do {
                try await connection.writeDescriptor(
                    schedule.encoded, to: GHSCharacteristic.observationSchedule.uuid, at: index,
                    of: GHSCharacteristic.healthSensorFeatures.uuid, in: .genericHealthSensorService)
            } catch let error as BLETransportError where error.code == .disconnected || error.code == .unavailable {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                logger.warning("the sensor refused the observation schedule of \(type) (\(Self.summary(schedule))): \(error)", device: name)
                session.setDetail("scheduleRefused.\(schedule.type)", "\(Self.summary(schedule)): \(error)")
                continue
            }
            session.setDetail("schedule.\(schedule.type)", Self.summary(schedule))
            session.setDetail("scheduleRefused.\(schedule.type)", nil)
            logger.info("wrote the observation schedule of \(type): \(Self.summary(schedule))", device: name)
        }
    }

    /// `measurement period 1 s, update interval 1 s`.
    static func summary(_ schedule: GHSObservationSchedule) -> String {
        "measurement period \(text(schedule.measurementPeriod)) s, update interval \(text(schedule.updateInterval)) s"
    }

    /// `0–100 % ± 1`: the limits and the accuracy in the unit's UCUM code (`MDC unit <code>` for
    /// a unit the gateway does not know).
    static func summary(_ range: GHSValidRangeAndAccuracy) -> String {
        let unit = MDCNomenclature.unit(range.unit)?.ucum ?? "MDC unit \(range.unit)"
        return "\(text(range.lowerLimit))–\(text(range.upperLimit)) \(unit) ± \(text(range.accuracy))"
    }

    /// A FLOAT as `status` shows it: a whole number without a fraction, else to the seven
    /// significant digits a FLOAT's mantissa holds; a special value by its name (NaN, NRes…).
    static func text(_ value: MedicalFloat) -> String {
        guard let number = value.number else { return value.description }
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return String(cFormat: "%.7g", number)
    }
}
