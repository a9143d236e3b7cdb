public import FoundationEssentials
public import HealthgateAdapter
public import HealthModel
import GatewayRuntime

/// Why a reading an adapter sent is not taken: the reason the adapter is told and the log says.
public struct AdapterReadingRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

/// Makes records of an adapter's reading messages, with the checks every reading goes through
/// (docs/adapter-protocol.md, "Checks" and "Identity"): a known type, a unit that fits it, a
/// finite value within the type's plausible range, an interval that does not run backwards and
/// does not lie ahead of the gateway's clock by more than a day, metadata of scalars under keys
/// that are not the gateway's, and a device the adapter described.
///
/// A value type: the session keeps one, with the devices the adapter described so far.
public struct AdapterReadingConverter: Sendable {
    /// The prefix of every sync identifier: `adapter/<source name>/`.
    public let identityPrefix: String
    /// The devices the adapter described, by their `id`.
    public private(set) var devices: [String: Device] = [:]
    /// The serial numbers the adapter gave its devices, by `id`.
    private var serialNumbers: [String: String] = [:]
    /// The units parsed so far, by their text: an adapter sends a few, each on every reading.
    /// Bounded: beyond ``unitCacheLimit`` texts a unit is parsed each time.
    private var units: [String: HealthUnit] = [:]
    static let unitCacheLimit = 64
    private let ids: SampleIDGenerator
    /// How far ahead of the gateway's clock a reading may be dated.
    public static let futureTolerance: TimeInterval = 86_400

    /// A converter for the `exec` source named `sourceName`.
    public init(sourceName: String, ids: SampleIDGenerator) {
        identityPrefix = "adapter/\(sourceName)/"
        self.ids = ids
    }

    /// Takes a device description (a later one with the same `id` replaces it).
    public mutating func describe(_ message: DeviceMessage) {
        devices[message.id] = Device(
            name: message.name, manufacturer: message.manufacturer, model: message.model,
            hardwareVersion: message.hardwareVersion, firmwareVersion: message.firmwareVersion,
            softwareVersion: message.softwareVersion, localIdentifier: message.id)
        serialNumbers[message.id] = message.serialNumber
    }

    /// The record of `message`, checked, dated no later than a day after `now`.
    /// - Throws: ``AdapterReadingRefusal`` saying what is wrong.
    public mutating func record(_ message: AdapterOutput, now: Date) throws(AdapterReadingRefusal) -> HealthRecord {
        switch message {
        case .quantity(let quantity):
            let (start, end) = try interval(quantity.start, quantity.end, now: now)
            let (device, metadata) = try provenance(of: quantity)
            let (id, syncMetadata) = identity(of: quantity)
            return .quantity(try sample(
                id: id, type: quantity.quantityType, value: quantity.value, unit: quantity.unit, start: start, end: end,
                device: device, metadata: metadata.merging(syncMetadata)))
        case .correlation(let correlation):
            guard let type = CorrelationType.builtIn.first(where: { $0.identifier == correlation.correlationType }) else {
                throw AdapterReadingRefusal("unknown correlation type \"\(correlation.correlationType)\"")
            }
            let (start, end) = try interval(correlation.start, correlation.end, now: now)
            let (device, metadata) = try provenance(of: correlation)
            let (id, syncMetadata) = identity(of: correlation)
            var members: [QuantitySample] = []
            for member in correlation.members {
                let (memberStart, memberEnd) = try interval(member.start ?? correlation.start, member.end ?? member.start ?? correlation.end ?? correlation.start, now: now)
                let memberID = correlation.id.map { SampleID(syncIdentifier: "\(identityPrefix)\($0)/\(member.quantityType)", version: Int64(correlation.version ?? 1)) } ?? ids.next()
                members.append(try sample(
                    id: memberID, type: member.quantityType, value: member.value, unit: member.unit, start: memberStart, end: memberEnd,
                    device: device, metadata: metadata))
            }
            do {
                return .correlation(try CorrelationSample(
                    id: id, type: type, start: start, end: end, objects: members, device: device, metadata: metadata.merging(syncMetadata)))
            } catch {
                throw AdapterReadingRefusal("\(error)")
            }
        case .heartbeats(let series):
            let start = try date(series.start, key: "start", now: now)
            let beats = series.beats.map { Heartbeat(timeSinceSeriesStart: $0.offset, precededByGap: $0.gap) }
            let end = start.addingTimeInterval(beats.last?.timeSinceSeriesStart ?? 0)
            guard end.timeIntervalSince(now) <= Self.futureTolerance else { throw AdapterReadingRefusal("its last beat lies more than a day ahead of the gateway's clock") }
            let (device, metadata) = try provenance(of: series)
            let (id, syncMetadata) = identity(of: series)
            do {
                return .heartbeatSeries(try HeartbeatSeriesSample(
                    id: id, start: start, end: end, beats: beats, device: device, metadata: metadata.merging(syncMetadata)))
            } catch {
                throw AdapterReadingRefusal("\(error)")
            }
        case .hello, .device, .checkpoint, .log, .status:
            throw AdapterReadingRefusal("a \(message.typeName) message is no reading")
        }
    }

    /// A checked quantity sample.
    private mutating func sample(
        id: SampleID, type name: String, value: Double, unit unitString: String, start: Date, end: Date, device: Device?, metadata: Metadata
    ) throws(AdapterReadingRefusal) -> QuantitySample {
        guard let type = QuantityType.builtIn.first(where: { $0.identifier == name }) else {
            throw AdapterReadingRefusal("unknown quantity type \"\(name)\" (healthgate units types lists them)")
        }
        let unit: HealthUnit
        if let known = units[unitString] {
            unit = known
        } else {
            do {
                unit = try HealthUnit(unitString)
            } catch {
                throw AdapterReadingRefusal("unit \"\(unitString)\": \(error)")
            }
            if units.count < Self.unitCacheLimit { units[unitString] = unit }
        }
        guard type.accepts(unit) else {
            throw AdapterReadingRefusal(
                "unit \"\(unitString)\" does not fit \(type.identifier), which is measured in \(type.canonicalUnit.unitString) or another unit of its dimension")
        }
        guard value.isFinite else { throw AdapterReadingRefusal("\(type.identifier): the value is not a finite number") }
        if let range = type.plausibleRange {
            let canonical = (try? unit.convert(value, to: type.canonicalUnit)) ?? .nan
            guard range.contains(canonical) else {
                throw AdapterReadingRefusal(
                    "\(type.identifier) \(ConfigurationDecoder.format(value)) \(unitString) is not plausible: a \(type.identifier) lies from "
                        + "\(ConfigurationDecoder.format(range.lowerBound)) to \(ConfigurationDecoder.format(range.upperBound)) \(type.canonicalUnit.unitString)")
            }
        }
        do {
            return try QuantitySample(id: id, type: type, quantity: Quantity(value, unit), start: start, end: end, device: device, metadata: metadata)
        } catch {
            throw AdapterReadingRefusal("\(error)")
        }
    }

    /// The reading's interval: `start`, and `end` (default `start`), checked.
    private func interval(_ start: String, _ end: String?, now: Date) throws(AdapterReadingRefusal) -> (Date, Date) {
        let startDate = try date(start, key: "start", now: now)
        let endDate = try end.map { text throws(AdapterReadingRefusal) in try date(text, key: "end", now: now) } ?? startDate
        guard endDate >= startDate else { throw AdapterReadingRefusal("end \(end ?? "") is before start \(start)") }
        return (startDate, endDate)
    }

    /// The date `text` writes, within what a store can hold and no more than a day ahead of `now`.
    private func date(_ text: String, key: String, now: Date) throws(AdapterReadingRefusal) -> Date {
        guard let date = RFC3339.date(from: text), RFC3339.isRepresentable(date) else {
            throw AdapterReadingRefusal("\(key): \"\(text)\" is no RFC 3339 date with a zone")
        }
        guard date.timeIntervalSince1970 >= 0 else { throw AdapterReadingRefusal("\(key): \(text) is before 1970") }
        guard date.timeIntervalSince(now) <= Self.futureTolerance else {
            throw AdapterReadingRefusal("\(key): \(text) lies more than a day ahead of the gateway's clock (\(RFC3339.string(from: now)))")
        }
        return date
    }

    /// The reading's device and metadata, checked.
    private func provenance(of reading: some AdapterReading) throws(AdapterReadingRefusal) -> (Device?, Metadata) {
        var metadata = Metadata()
        var device: Device?
        if let id = reading.device {
            guard let described = devices[id] else {
                throw AdapterReadingRefusal("device \"\(id)\" was not described: send a device message with that id first")
            }
            device = described
            if let serial = serialNumbers[id] { metadata[.deviceSerialNumber] = .string(serial) }
        }
        switch reading.metadata {
        case nil: break
        case .object(let members)?:
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                guard !key.isEmpty, !key.hasPrefix("healthgate."), key != MetadataKey.syncIdentifier.rawValue,
                    key != MetadataKey.syncVersion.rawValue
                else { throw AdapterReadingRefusal("metadata: the key \"\(key)\" is the gateway's") }
                switch value {
                case .string(let text): metadata[MetadataKey(key)] = .string(text)
                case .bool(let flag): metadata[MetadataKey(key)] = .bool(flag)
                case .number(let number) where number.isFinite:
                    metadata[MetadataKey(key)] = number == number.rounded() && abs(number) < 9e15 ? .integer(Int64(number)) : .double(number)
                default: throw AdapterReadingRefusal("metadata.\(key): a value is a string, a finite number or a boolean, not \(value.inWords)")
                }
            }
        case let other?:
            throw AdapterReadingRefusal("metadata: expected an object, not \(other.inWords)")
        }
        return (device, metadata)
    }

    /// The reading's uuid and sync metadata: derived from its `id` and `version`, or new.
    private func identity(of reading: some AdapterReading) -> (SampleID, Metadata) {
        guard let id = reading.id else { return (ids.next(), Metadata()) }
        let syncIdentifier = identityPrefix + id
        let version = Int64(reading.version ?? 1)
        var metadata = Metadata()
        metadata.syncIdentifier = syncIdentifier
        metadata.syncVersion = version
        return (SampleID(syncIdentifier: syncIdentifier, version: version), metadata)
    }
}

extension Metadata {
    /// These entries with `other`'s added (other's win).
    fileprivate func merging(_ other: Metadata) -> Metadata {
        var result = self
        for (key, value) in other { result[key] = value }
        return result
    }
}
