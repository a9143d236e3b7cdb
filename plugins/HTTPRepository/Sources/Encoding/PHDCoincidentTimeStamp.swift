import FoundationEssentials
import HealthModel
import GatewayRuntime

/// The guide's Coincident Time Stamp Observation (StructureDefinition.PhdCoincidentTimeStampObservation.fsh)
/// of a reading whose time the gateway changed: "Used to record the correction the PHG applied to
/// the PHD measurement timestamps (if any) and to be able to recover the original timestamps
/// reported by the PHD". A PHD Observation "may reference a Coincident Timestamp Observation if
/// the measurement reported from the PHD contains a timestamp and is from the current timeline of
/// the PHD and needed correction" (its intro), through the CoincidentTimeStampReference extension
/// (StructureDefinition.PhdBaseObservation.fsh, `extension[CoincidentTimeStamp]`; its
/// `derivedFrom` takes only PHD Observations).
///
/// The time was changed when the reading has the device's own time stamp
/// (``HealthModel/MetadataKey/deviceTimestamp``), is not dated by the device's clock
/// (``HealthModel/MetadataKey/deviceClock``: a time stamp the gateway used as it was, "the PHG
/// determined that the PHD timestamp is reliable and can be used as is", ProfileConsumers.md),
/// and its time differs from the stamp by a millisecond or more: a device clock's offset the
/// gateway added (a Bluetooth profile's `healthgate.deviceClockOffsetSeconds`), a clock step
/// that moved it, a live reading placed at its reception. A stamp without a zone is read as the
/// gateway reads it, as if it were UTC, so the correction includes the zone's offset.
///
/// The pair is the reading's own: `effectiveDateTime` its time on the gateway's clock, the
/// device's time then in `valueDateTime` (the stamp as the device stated it; RFC 3339's `-00:00`,
/// "local time, offset unknown", for one without a zone, as FHIR requires an offset) or, for a
/// tick counter, `valueQuantity` in microseconds ("The relative time is expressed in
/// microseconds"). The gateway keeps no other time of the device's clock. One is created per
/// device and correction (its time base): healthgate's identifier names both, and the entry is
/// created unless the server holds one with it, so a batch sent again, or the next reading on the
/// same time base, creates none (the guide creates one "for every connection", which a resent
/// batch would repeat). Pure.
struct PHDCoincidentTimeStamp: Hashable {
    /// The clock type (`code.coding[MDCType]`, required binding ValueSet.MDCClockTypes.fsh).
    enum Clock: Hashable {
        /// A wall clock without an offset: MDC_ATTR_TIME_ABS (67975).
        case absolute
        /// A wall clock with its offset (UTC, or local time and its offset): 68226, the value
        /// set's code; the notes' table says Mdc#68225 (the README says which is sent, and why).
        case baseOffset
        /// A tick counter: MDC_ATTR_TIME_REL (67983).
        case relative

        var code: (code: UInt32, reference: String?, text: String) {
            switch self {
            case .absolute: (67_975, "MDC_ATTR_TIME_ABS", "Absolute time")
            case .baseOffset: (68_226, nil, "Base offset time")
            case .relative: (67_983, "MDC_ATTR_TIME_REL", "Relative time")
            }
        }
    }

    let clock: Clock
    /// The reading's time on the gateway's clock.
    let gatewayTime: Date
    /// The device's time then: `valueDateTime`, or `valueQuantity` in microseconds.
    let deviceTime: JSONValue
    /// The gateway's time less the device's, in milliseconds: what names the time base.
    let correctionMilliseconds: Int64

    /// The coincident time stamp of a reading at `start` with `metadata`; nil when its time is
    /// the device's own (no time stamp, dated by the device's clock, or no correction).
    init?(start: Date, metadata: Metadata) {
        guard !metadata.isDeviceClock, case .string(let stamp)? = metadata[.deviceTimestamp] else { return nil }
        let device: Double
        if stamp.hasPrefix("ticks:") {
            let parts = stamp.dropFirst("ticks:".count).split(separator: "@")
            guard parts.count == 2, let ticks = UInt64(parts[0]), let resolution = Double(parts[1]), resolution > 0 else { return nil }
            let microseconds = (Double(ticks) * resolution * 1_000_000).rounded()
            (clock, device, deviceTime) = (.relative, microseconds / 1_000_000, .object([
                "value": .number(microseconds), "system": .string(PHDGuide.ucumSystem), "code": .string("us"), "unit": .string("us"),
            ]))
        } else {
            guard let wall = PHDObservationIdentifier.wallClock(stamp) else { return nil }
            var seconds = Double(wall.seconds) + (Double("0." + wall.fraction) ?? 0)
            switch wall.designator {
            case "", "-00:00":
                clock = .absolute
                deviceTime = .string(wall.designator.isEmpty ? stamp + "-00:00" : stamp)
            default:
                // `Z` or ±hh:mm: the instant is the local reading less its offset.
                clock = .baseOffset
                deviceTime = .string(stamp)
                if wall.designator != "Z" {
                    let sign: Double = wall.designator.first == "-" ? -1 : 1
                    let fields = wall.designator.dropFirst().split(separator: ":").compactMap { Double($0) }
                    guard fields.count == 2 else { return nil }
                    seconds -= sign * (fields[0] * 3600 + fields[1] * 60)
                }
            }
            device = seconds + PHDCoincidentTimeStamp.epoch2000
        }
        correctionMilliseconds = Int64(((start.timeIntervalSince1970 - device) * 1000).rounded())
        guard correctionMilliseconds != 0 else { return nil }
        gatewayTime = start
    }

    /// 2000-01-01T00:00:00Z in seconds since 1970: the epoch of ``PHDObservationIdentifier/wallClock(_:)``.
    static let epoch2000: Double = 946_684_800

    /// healthgate's identifier of the time base of `device`: its PhdDevice's identifier, the clock
    /// type and the correction (`A0-9E-1A-12-34-56/67975/-90000`).
    func identifier(device: PHDDeviceMapping.Entry) -> String {
        "\(device.identifiers.first?.value ?? "")/\(clock.code.code)/\(correctionMilliseconds)"
    }

    /// The system of that identifier.
    static let identifierSystem = "https://healthgate.dev/fhir/NamingSystem/coincident-time-stamp"

    /// The `fullUrl` of the Observation of `identifier`: a name-based uuid, the same in every batch.
    static func fullUrl(identifier: String) -> String {
        "urn:uuid:" + SampleID(syncIdentifier: "fhir-phd:CoincidentTimeStamp:\(identifier)", version: 1).uuidString
    }

    /// The Bundle entry for the reading's devices: `subject` the PhdDevice ("Reference to the PHD
    /// device for which the coincident timestamp measurement is reported"), `device` the
    /// PhgDevice; `status` final "(exactly)"; created unless the server holds one with its
    /// identifier.
    func entry(devices: (phd: PHDDeviceMapping.Entry, phg: PHDDeviceMapping.Entry)) -> (fullUrl: String, entry: JSONValue) {
        let value = identifier(device: devices.phd)
        let fullUrl = Self.fullUrl(identifier: value)
        let code = clock.code
        let resource: JSONValue = .object([
            "resourceType": .string("Observation"),
            "meta": .object(["profile": .array([.string(PHDGuide.Profile.coincidentTimeStamp.url)])]),
            "identifier": .array([.object(["system": .string(Self.identifierSystem), "value": .string(value)])]),
            "status": .string("final"),
            "code": .object(["coding": .array([PHDCoding.coding(code.code, reference: code.reference)]), "text": .string(code.text)]),
            "subject": .object(["reference": .string(devices.phd.fullUrl)]),
            "effectiveDateTime": .string(RFC3339.string(from: gatewayTime)),
            clock == .relative ? "valueQuantity" : "valueDateTime": deviceTime,
            "device": .object(["reference": .string(devices.phg.fullUrl)]),
        ])
        return (fullUrl, .object([
            "fullUrl": .string(fullUrl),
            "resource": resource,
            "request": .object([
                "method": .string("POST"), "url": .string("Observation"),
                "ifNoneExist": .string(PHDMapping.identifierSearch(system: Self.identifierSystem, value: value)),
            ]),
        ]))
    }
}
