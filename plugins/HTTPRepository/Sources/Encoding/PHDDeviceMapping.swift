import HealthModel
import GatewayRuntime

/// The Device resources of the `fhir-phd` form: the device that measured as a PhdDevice
/// (StructureDefinition.PhdDevice.fsh), the gateway as a PhgDevice
/// (StructureDefinition.PhgDevice.fsh). Each is a transaction entry created conditionally by
/// its identifier (`POST Device`, `ifNoneExist: identifier=<system>|<value>`), so a server
/// holds one Device per device and gateway however many batches name it; the Observations
/// refer to it by its entry's `fullUrl`, which the server resolves to the Device it created
/// or found (R4 §3.1.0.11.2, transactions). A Device the server holds already is not changed:
/// what it said when first sent (a firmware version) stays. Pure.
enum PHDDeviceMapping {
    /// A Device entry: its `fullUrl`, the identifiers it is created by, and the resource.
    struct Entry: Hashable {
        var fullUrl: String
        /// The identifiers the server looks for: it creates the Device unless it holds one with
        /// any of them (the first names the `fullUrl`).
        var identifiers: [Identifier]
        var resource: JSONValue

        struct Identifier: Hashable {
            var system: String
            var value: String
        }

        init(identifiers: [Identifier], resource: JSONValue) {
            // The identifiers of an entry are never empty: each mapping builds one first.
            let first = identifiers.first ?? Identifier(system: "", value: "")
            fullUrl = PHDDeviceMapping.fullUrl(system: first.system, value: first.value)
            self.identifiers = identifiers
            self.resource = resource
        }

        /// The Bundle entry: the resource, created unless the server holds one with an identifier.
        var bundleEntry: JSONValue {
            .object([
                "fullUrl": .string(fullUrl),
                "resource": resource,
                "request": .object([
                    "method": .string("POST"), "url": .string("Device"),
                    "ifNoneExist": .string(PHDMapping.identifierSearch(identifiers.map { ($0.system, $0.value) })),
                ]),
            ])
        }
    }

    /// The system of the gateway's name as an identifier (its `gatewayName`), healthgate's own:
    /// what a fleet tells its gateways apart by, and the PhgDevice's only identifier when the
    /// machine's hardware address is not known.
    static let gatewayIdentifierSystem = "https://healthgate.dev/fhir/NamingSystem/gateway"

    /// The `fullUrl` of the Device created by `system` and `value`: a name-based uuid, the same
    /// in every batch.
    static func fullUrl(system: String, value: String) -> String {
        "urn:uuid:" + SampleID(syncIdentifier: "fhir-phd:Device:\(system)|\(value)", version: 1).uuidString
    }

    // MARK: PhdDevice

    /// The PhdDevice of `device`, with what a reading's `metadata` says of it (its serial
    /// number, its specializations); nil when the device has no identity to create it by.
    ///
    /// - `identifier` (1..): the Bluetooth address as the BTMAC slice (`A0-9E-1A-00-11-22`), by
    ///   which it is created; the local identifier when it is something else (a USB serial, a
    ///   `manufacturer/serial`), in healthgate's system, by which a device without an address
    ///   is created.
    /// - `manufacturer`, `modelNumber` (1..): Device Information's, or the data-absent-reason
    ///   extension `unknown` when the device did not say.
    /// - `type` (1..): MDC_MOC_VMS_MDS_SIMP, fixed by the profile.
    /// - `specialization` (1..): each one the reading's device lists
    ///   (``HealthModel/MetadataKey/mdcDeviceSpecializations``, `code:version`): a GHS sensor's
    ///   own, or the one an older profile's device is (``HealthModel/MDCDeviceSpecialization``,
    ///   version 1, as the guide's Bluetooth cuff example phd-711000FEFF5F49B0 has it); else
    ///   MDC_DEV_SPEC_PROFILE_GENERIC version 1: the gateway maps the device "as if it were" an
    ///   IEEE 11073-10206 device (Non11073PHDDevices.md) and knows no specialization of it (a
    ///   reading stored before readings carried theirs, a GHS sensor that lists none).
    /// - `version` (required binding MDCDeviceVersionTypes): the hardware, software and firmware
    ///   revisions the device reported, none when it reported none (``versions(_:)``).
    /// - `serialNumber`, `deviceName`, `udiCarrier.deviceIdentifier` when known.
    static func phd(_ device: Device, metadata: Metadata) -> Entry? {
        var identifiers: [JSONValue] = []
        var key: (system: String, value: String)?
        let address = PHDObservationIdentifier.bluetoothAddress(device)
        if let address {
            let value = address.split(separator: ":").joined(separator: "-")
            identifiers.append(.object([
                "type": .object(["coding": .array([.object([
                    "system": .string(PHDGuide.deviceIdentifierTypeSystem), "code": .string(PHDGuide.bluetoothAddressType),
                    "display": .string("Bluetooth MAC address"),
                ])])]),
                "system": .string(PHDGuide.bluetoothAddressSystem), "value": .string(value),
            ]))
            key = (PHDGuide.bluetoothAddressSystem, value)
        }
        for local in [device.localIdentifier, device.radioIdentifier].compactMap({ $0 })
        where DeviceIdentity(local).canonical != address && key?.value != local {
            identifiers.append(.object(["system": .string(FHIRMapping.localDeviceIdentifierSystem), "value": .string(local)]))
            key = key ?? (FHIRMapping.localDeviceIdentifierSystem, local)
        }
        guard let key else { return nil }
        var resource: [String: JSONValue] = [
            "resourceType": .string("Device"),
            "meta": .object(["profile": .array([.string(PHDGuide.Profile.phdDevice.url)])]),
            "identifier": .array(identifiers),
            "type": .object([
                "coding": .array([PHDCoding.coding(PHDGuide.phdDeviceType.code, reference: PHDGuide.phdDeviceType.reference)]),
                "text": .string("Personal health device"),
            ]),
            "specialization": .array(specializations(metadata)),
        ]
        let reported = versions(device)
        if !reported.isEmpty { resource["version"] = .array(reported) }
        setOrAbsent(&resource, "manufacturer", device.manufacturer)
        setOrAbsent(&resource, "modelNumber", device.model)
        if let serial = metadata.deviceSerialNumber { resource["serialNumber"] = .string(serial) }
        if let name = device.name {
            resource["deviceName"] = .array([.object(["name": .string(name), "type": .string("user-friendly-name")])])
        }
        if let udi = device.udiDeviceIdentifier {
            resource["udiCarrier"] = .array([.object(["deviceIdentifier": .string(udi)])])
        }
        return Entry(identifiers: [Entry.Identifier(system: key.system, value: key.value)], resource: .object(resource))
    }

    /// The specializations the device listed (``PHDCoding/listedSpecializations(_:)``), else the
    /// generic one.
    static func specializations(_ metadata: Metadata) -> [JSONValue] {
        let listed = PHDCoding.listedSpecializations(metadata)
        if listed.isEmpty {
            // IEEE 11073-10206-2022 is the first edition of ACOM: a generic device's version is
            // the ACOM version (StructureDefinition.PhdDevice.fsh, specialization.version).
            return [.object([
                "systemType": .object(["coding": .array([
                    PHDCoding.coding(PHDGuide.genericSpecialization.code, reference: PHDGuide.genericSpecialization.reference),
                ])]),
                "version": .string("1"),
            ])]
        }
        return listed.map { specialization in
            .object([
                "systemType": .object(["coding": .array([PHDCoding.coding(specialization.code, reference: nil)])]),
                "version": .string(specialization.version),
            ])
        }
    }

    /// The hardware, software and firmware revisions the device reported, and nothing when it
    /// reported none. The guide's versions are what the device reports: "A separate version entry
    /// is needed for each of the versions reported by the PHD" (PhdDevice.fsh, `version`;
    /// ProfileConsumers.md: "Not all devices will expose all this information"). Its slice
    /// `version[MDCType] 1..*` presumes a device that reports one ("PHDs compliant to this IG
    /// report at least one of these versions"); R4's `version.value` is 1..1, so a version the
    /// device did not report could only be invented. The README says so.
    static func versions(_ device: Device) -> [JSONValue] {
        let known: [(PHDGuide.VersionType, String?)] = [
            (.hardware, device.hardwareVersion), (.software, device.softwareVersion), (.firmware, device.firmwareVersion),
        ]
        return known.compactMap { type, value in value.map { version(type, $0) } }
    }

    /// A `version` entry of `type` whose value is `value`.
    static func version(_ type: PHDGuide.VersionType, _ value: String) -> JSONValue {
        .object([
            "type": .object(["coding": .array([.object([
                "system": .string(PHDGuide.mdcSystem), "code": .string(type.code), "display": .string(type.reference),
            ])])]),
            "value": .string(value),
        ])
    }

    // MARK: PhgDevice

    /// The manufacturer of the PhgDevice: healthgate's, the software's maker (the profile's
    /// purpose: "the manufacturer and model number (of the software, not necessarily the
    /// hardware on which the application resides)").
    static let gatewayManufacturer = "healthgate project"

    /// The PhgDevice of the gateway named `name` running healthgate `version`, with `facts` when
    /// it is this gateway (nil for a reading another gateway stamped with its name):
    /// - `identifier` (1..): the system id, an EUI-64 derived from the machine's permanent MAC
    ///   (``PHDGatewayFacts/systemIdentifier``; "PHGs are required to have a system
    ///   identifier", StructureDefinition-PhgDevice-notes.md), and that MAC as the
    ///   `macAddressIdentifier` slice, the transport address it comes from; and the gateway's
    ///   name in healthgate's system. It is created unless the server holds a Device with any of
    ///   them (a server that holds it by name keeps that one). Without a MAC, by its name alone.
    /// - `manufacturer` ``gatewayManufacturer``, `modelNumber` `healthgate`: the software, as the
    ///   profile's purpose asks; `deviceName` the gateway's name.
    /// - `type` (1..): MDC_MOC_VMS_MDS_AHD, fixed by the profile.
    /// - `specialization` (1..*): MDC_DEV_SPEC_PROFILE_GENERIC, without a version: the gateway
    ///   takes any device the one MDC table describes (StructureDefinition-PhgDevice-notes.md,
    ///   "Specializations": the generic code, "the `version` element can be left empty").
    /// - `version`: healthgate's version as software (MDC_ID_PROD_SPEC_SW), when the readings
    ///   say it (the gateway stamps each with it); none when they do not: the guide's notes list
    ///   it as "`Device.version` = *version* (optional)" (StructureDefinition-PhgDevice-notes.md,
    ///   "PHG Product Information"), its FSH as `version[MDCType] 1..*`; a version not known is
    ///   not invented.
    /// - `property[timeSyncProperty]`: MDC_TIME_SYNC_PROTOCOL (68220) and how the wall clock is
    ///   synchronised (``PHDGatewayFacts/TimeSync``): "The time synchronization is mapped to a
    ///   `property` element with as type the MDC code 68220" (StructureDefinition-PhgDevice-notes.md).
    static func phg(name: String, version softwareVersion: String?, facts: PHDGatewayFacts?) -> Entry {
        var identifiers: [Entry.Identifier] = []
        var identifierElements: [JSONValue] = []
        func identifier(type: (code: String, display: String)?, system: String, value: String) {
            identifiers.append(Entry.Identifier(system: system, value: value))
            var element: [String: JSONValue] = ["system": .string(system), "value": .string(value)]
            if let type {
                element["type"] = .object(["coding": .array([.object([
                    "system": .string(PHDGuide.deviceIdentifierTypeSystem), "code": .string(type.code), "display": .string(type.display),
                ])])])
            }
            identifierElements.append(.object(element))
        }
        if let systemID = facts?.systemIdentifier, let mac = facts?.eui48 {
            identifier(type: (PHDGuide.systemIdType, "IEEE 11073 System Identifier"), system: PHDGuide.systemIdSystem, value: systemID)
            identifier(type: (PHDGuide.ethernetAddressType, "Ethernet MAC address"), system: PHDGuide.ethernetAddressSystem, value: mac)
        }
        identifier(type: nil, system: gatewayIdentifierSystem, value: name)
        var resource: [String: JSONValue] = [
            "resourceType": .string("Device"),
            "meta": .object(["profile": .array([.string(PHDGuide.Profile.phgDevice.url)])]),
            "identifier": .array(identifierElements),
            "type": .object([
                "coding": .array([PHDCoding.coding(PHDGuide.phgDeviceType.code, reference: PHDGuide.phgDeviceType.reference)]),
                "text": .string("Personal health gateway"),
            ]),
            "deviceName": .array([.object(["name": .string(name), "type": .string("user-friendly-name")])]),
            "manufacturer": .string(gatewayManufacturer),
            "modelNumber": .string("healthgate"),
            "specialization": .array([.object([
                "systemType": .object(["coding": .array([
                    PHDCoding.coding(PHDGuide.genericSpecialization.code, reference: PHDGuide.genericSpecialization.reference),
                ])]),
            ])]),
        ]
        if let softwareVersion { resource["version"] = .array([version(.software, softwareVersion)]) }
        if let timeSync = facts?.timeSync.code {
            resource["property"] = .array([.object([
                "type": .object([
                    "coding": .array([PHDCoding.coding(PHDGuide.timeSyncProperty.code, reference: PHDGuide.timeSyncProperty.reference)]),
                ]),
                "valueCode": .array([.object(["coding": .array([PHDCoding.coding(timeSync.code, reference: timeSync.reference)])])]),
            ])])
        }
        return Entry(identifiers: identifiers, resource: .object(resource))
    }

    /// Sets the primitive `key` to `value`, or, when it is nil, gives it the data-absent-reason
    /// extension `unknown` instead (`_key`, R4 JSON's form of a primitive's extensions): how a
    /// required element the gateway does not know is sent.
    static func setOrAbsent(_ fields: inout [String: JSONValue], _ key: String, _ value: String?) {
        if let value {
            fields[key] = .string(value)
        } else {
            fields["_" + key] = .object(["extension": .array([.object([
                "url": .string(PHDGuide.dataAbsentReasonExtension), "valueCode": .string("unknown"),
            ])])])
        }
    }
}
