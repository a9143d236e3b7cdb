import FoundationEssentials
import HealthModel

/// Home Assistant's MQTT discovery for the topics the sink publishes: for each device and each
/// quantity it reports, a retained `{prefix}/sensor/{node}/{object}/config` whose `state_topic`
/// is that device and type's topic, so Home Assistant shows the device with one sensor per
/// quantity without any YAML; an empty retained config removes the sensor.
///
/// Pure: records in, messages out. Which configs a connection has already carried is the
/// receiver's business (``HomeAssistantAnnouncements``).
///
/// Names follow Home Assistant's MQTT discovery documentation: `node` is
/// `healthgate_{gateway}` and `object` `{device}_{type}`, each reduced to `[A-Za-z0-9_-]`; the
/// sensor's `unique_id` is `healthgate_{gateway}_{device}_{type}`; the device block's identifier
/// `healthgate_{gateway}_{device}`. Units and device classes are Home Assistant's
/// (`bpm`, `°C`, `mmHg`, `mg/dL`…); a record in a unit Home Assistant's class does not accept
/// is announced in its own unit, without the class.
///
/// A record attributed to a person (``HealthModel/HealthRecord/person``) feeds the person's
/// sensors too, on their topic (``MQTTMessageEncoder/topic(person:type:)``): each person is a
/// device of their own in Home Assistant (identifier `healthgate_{gateway}_person_{level}`,
/// object `person_{level}_{type}`, `level` their topic level), so a household's dashboard shows
/// Ana's weight whichever scale weighed her.
struct HomeAssistantDiscovery: Sendable {
    /// The discovery prefix (Home Assistant's default is `homeassistant`).
    var prefix: String
    /// The sink's topics: state topics and the status topic come from it.
    var topics: MQTTMessageEncoder

    /// One sensor: where its config goes and what the config says. Compared as a value, so that
    /// a record whose sensor was announced costs no JSON encoding.
    struct Sensor: Sendable, Hashable {
        /// The config topic, `{prefix}/sensor/{node}/{object}/config`.
        var configTopic: String
        fileprivate var config: SensorConfig
        /// The topic its values arrive on.
        var stateTopic: String { config.stateTopic }

        /// The config's JSON.
        var payload: [UInt8] {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // A struct of strings and booleans always encodes.
            return (try? encoder.encode(config)).map(Array.init) ?? []
        }
    }

    /// The metadata key a device's battery level travels in.
    static let batteryKey = "healthgate.batteryLevel"

    /// What a record's sensors are made from: two records with the same source have the same
    /// sensors, so a connection derives them once per source (cheap to make and hash, unlike the
    /// sensors themselves).
    struct Source: Hashable, Sendable {
        var device: Device?
        var type: String
        var units: [String]
        var version: MetadataValue?
        var battery: Bool
        var person: String?
    }

    /// The source of `record`'s sensors; nil for a heartbeat series or a workout, which have none.
    func source(of record: HealthRecord) -> Source? {
        let metadata: Metadata
        let units: [String]
        switch record {
        case .quantity(let sample):
            metadata = sample.metadata
            units = [sample.quantity.unit.unitString]
        case .quantitySeries(let series):
            metadata = series.metadata
            units = [series.unit.unitString]
        case .correlation(let correlation):
            metadata = correlation.metadata
            units = correlation.objects.map(\.quantity.unit.unitString)
        case .heartbeatSeries, .workout:
            return nil
        }
        return Source(
            device: record.device, type: record.typeIdentifier, units: units, version: metadata[.gatewayVersion],
            battery: metadata[MetadataKey(rawValue: Self.batteryKey)] != nil, person: record.person)
    }

    /// The sensors `record` feeds: one per quantity type (a correlation's members each have one,
    /// on the correlation's topic), and the device's battery when the record carries it; the
    /// same quantity sensors for the record's person, on their topic. Heartbeat series and
    /// workouts have no single value to show and announce nothing.
    func sensors(for record: HealthRecord) -> [Sensor] {
        let metadata: Metadata
        // Each quantity: its type, unit, and its path in a correlation's objects.
        let quantities: [(type: String, unit: String, path: String?)]
        switch record {
        case .quantity(let sample):
            metadata = sample.metadata
            quantities = [(sample.type.identifier, sample.quantity.unit.unitString, nil)]
        case .quantitySeries(let series):
            metadata = series.metadata
            quantities = [(series.type.identifier, series.unit.unitString, nil)]
        case .correlation(let correlation):
            metadata = correlation.metadata
            quantities = correlation.objects.map { ($0.type.identifier, $0.quantity.unit.unitString, $0.type.identifier) }
        case .heartbeatSeries, .workout:
            return []
        }
        var owners = [Owner(device: record.device, stateTopic: topics.topic(for: record))]
        if let person = record.person {
            owners.append(Owner(person: person, topics: topics, type: record.typeIdentifier))
        }
        var sensors = owners.flatMap { owner in
            quantities.map { sensor(owner: owner, metadata: metadata, type: $0.type, unit: $0.unit, path: $0.path) }
        }
        if metadata[MetadataKey(rawValue: Self.batteryKey)] != nil {
            sensors.append(sensor(owner: owners[0], metadata: metadata, type: Self.batteryType, unit: "%", path: nil))
        }
        return sensors
    }

    /// Whose sensors: a device's or a person's; the first part of their object ids, their state
    /// topic and their device block.
    struct Owner {
        var key: String
        var name: String
        var manufacturer: String?
        var model: String?
        var swVersion: String?
        var hwVersion: String?
        var stateTopic: String

        init(device: Device?, stateTopic: String) {
            key = MQTTMessageEncoder.deviceLevel(device)
            name = device?.name ?? key
            manufacturer = device?.manufacturer
            model = device?.model
            swVersion = device?.firmwareVersion ?? device?.softwareVersion
            hwVersion = device?.hardwareVersion
            self.stateTopic = stateTopic
        }

        init(person: String, topics: MQTTMessageEncoder, type: String) {
            key = HomeAssistantDiscovery.personKey(person, topics: topics)
            name = person
            model = "healthgate person"
            stateTopic = topics.topic(person: person, type: type)
        }
    }

    /// The removals (empty retained configs) of the sensors of `device` and `type`: the type's
    /// own, or a correlation type's members'.
    func removals(device deviceKey: String, type: String) -> [String] {
        let types = CorrelationType.builtIn.first { $0.identifier == type }.map { $0.memberTypes.map(\.identifier) } ?? [type]
        return types.map { configTopic(deviceKey: deviceKey, type: $0) }
    }

    /// The removals of `person`'s sensors of `type` (``removals(device:type:)`` for the person's
    /// own device in Home Assistant).
    func removals(person: String, type: String) -> [String] {
        removals(device: Self.personKey(person, topics: topics), type: type)
    }

    /// The first part of `person`'s sensors' object ids: `person_{level}`.
    static func personKey(_ person: String, topics: MQTTMessageEncoder) -> String {
        "person_\(topics.personLevel(person))"
    }

    /// Whether records of `type` (a quantity or correlation type) have sensors.
    func announces(type: String) -> Bool {
        Self.kinds[type] != nil || CorrelationType.builtIn.contains { $0.identifier == type }
            || QuantityType.builtIn.contains { $0.identifier == type }
    }

    /// The topic the sink publishes `device`'s records of `type` on.
    func stateTopic(device deviceKey: String, type: String) -> String {
        topics.topic(device: deviceKey, type: type)
    }

    /// The config topic of the battery sensor of `device`.
    func batteryConfigTopic(device deviceKey: String) -> String {
        configTopic(deviceKey: deviceKey, type: Self.batteryType)
    }

    static let batteryType = "battery"

    private var node: String { "healthgate_\(Self.objectID(topics.gateway))" }

    private func configTopic(deviceKey: String, type: String) -> String {
        "\(prefix)/sensor/\(node)/\(Self.objectID(deviceKey))_\(Self.objectID(type))/config"
    }

    private func sensor(owner: Owner, metadata: Metadata, type: String, unit: String, path: String?) -> Sensor {
        let kind = Self.kinds[type] ?? SensorKind(name: Self.words(type), icon: nil, deviceClass: nil, units: [:])
        let homeAssistantUnit = kind.units[unit]
        let template: String
        if type == Self.batteryType {
            template = "{{ \(root).metadata['\(Self.batteryKey)'] }}"
        } else if let path {
            template = "{{ (\(root).objects | selectattr('type', 'equalto', '\(path)') | first).value }}"
        } else {
            // A quantity series' state is its last quantity's value, the latest reading; plain
            // samples of the type (a late reading, one with a sync identifier, the expand form)
            // come on the same topic, so one template reads both.
            template = "{{ \(root).quantities[-1].value if \(root).quantities is defined else \(root).value }}"
        }
        let config = SensorConfig(
            name: kind.name,
            uniqueID: "\(node)_\(Self.objectID(owner.key))_\(Self.objectID(type))",
            stateTopic: owner.stateTopic,
            valueTemplate: template,
            unitOfMeasurement: homeAssistantUnit.map { $0.isEmpty ? nil : $0 } ?? unit,
            deviceClass: homeAssistantUnit == nil ? nil : kind.deviceClass,
            stateClass: "measurement",
            icon: kind.icon,
            entityCategory: type == Self.batteryType ? "diagnostic" : nil,
            forceUpdate: type == Self.batteryType ? nil : true,
            availabilityTopic: topics.statusTopic,
            payloadAvailable: "online",
            payloadNotAvailable: "offline",
            device: DeviceBlock(
                identifiers: ["\(node)_\(Self.objectID(owner.key))"], name: owner.name, manufacturer: owner.manufacturer,
                model: owner.model, swVersion: owner.swVersion, hwVersion: owner.hwVersion),
            origin: Origin(
                name: "healthgate",
                swVersion: metadata[.gatewayVersion].flatMap { if case .string(let version) = $0 { version } else { nil } }))
        return Sensor(configTopic: configTopic(deviceKey: owner.key, type: type), config: config)
    }

    /// The JSON value a template starts from: the record itself, or in `batch` mode the last
    /// record of the message's array (the newest).
    private var root: String { topics.mode == .batch ? "value_json[-1]" : "value_json" }

    /// A topic level or identifier reduced to what Home Assistant accepts in a discovery topic.
    static func objectID(_ text: String) -> String {
        let reduced = String(text.unicodeScalars.map { scalar -> Character in
            let allowed = (scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)))
                || scalar == "_" || scalar == "-"
            return allowed ? Character(scalar) : "_"
        })
        return reduced.isEmpty ? "_" : reduced
    }

    /// `heartRateVariabilitySDNN` → `Heart rate variability SDNN`.
    static func words(_ identifier: String) -> String {
        var words: [String] = []
        var current = ""
        let characters = Array(identifier)
        for (index, character) in characters.enumerated() {
            let next = index + 1 < characters.count ? characters[index + 1] : nil
            let startsWord = character.isUppercase && !current.isEmpty
                && (!(current.last?.isUppercase ?? false) || (next?.isLowercase ?? false))
            if startsWord {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words.enumerated().map { index, word in
            if word.count > 1, word.allSatisfy(\.isUppercase) { return word }
            return index == 0 ? word.prefix(1).uppercased() + word.dropFirst() : word.lowercased()
        }.joined(separator: " ")
    }

    /// What Home Assistant is told about a type: its name, icon, device class, and the units it
    /// accepts for that class (HealthKit's unit string → Home Assistant's).
    struct SensorKind: Sendable {
        var name: String
        var icon: String?
        var deviceClass: String?
        var units: [String: String]
    }

    private static let distance = ["m": "m", "km": "km", "cm": "cm", "mi": "mi", "ft": "ft", "yd": "yd", "in": "in"]
    private static let speed = ["m/s": "m/s", "km/hr": "km/h", "mi/hr": "mph"]

    /// Home Assistant's sensor device classes and units for the built-in types.
    static let kinds: [String: SensorKind] = [
        "heartRate": SensorKind(name: "Heart rate", icon: "mdi:heart-pulse", deviceClass: nil, units: ["count/min": "bpm"]),
        "stepCount": SensorKind(name: "Steps", icon: "mdi:shoe-print", deviceClass: nil, units: ["count": "steps"]),
        "distanceWalkingRunning": SensorKind(name: "Walking and running distance", icon: nil, deviceClass: "distance", units: distance),
        "runningSpeed": SensorKind(name: "Running speed", icon: nil, deviceClass: "speed", units: speed),
        "runningStrideLength": SensorKind(name: "Stride length", icon: nil, deviceClass: "distance", units: distance),
        "activeEnergyBurned": SensorKind(name: "Active energy", icon: "mdi:fire", deviceClass: nil, units: ["kcal": "kcal", "kJ": "kJ"]),
        "heartRateVariabilitySDNN": SensorKind(name: "Heart rate variability SDNN", icon: "mdi:heart-flash", deviceClass: "duration", units: ["ms": "ms"]),
        "heartRateVariabilityRMSSD": SensorKind(name: "Heart rate variability RMSSD", icon: "mdi:heart-flash", deviceClass: "duration", units: ["ms": "ms"]),
        "cyclingSpeed": SensorKind(name: "Cycling speed", icon: nil, deviceClass: "speed", units: speed),
        "cyclingCadence": SensorKind(name: "Cadence", icon: "mdi:rotate-right", deviceClass: nil, units: ["count/min": "rpm"]),
        "cyclingPower": SensorKind(name: "Cycling power", icon: nil, deviceClass: "power", units: ["W": "W"]),
        "distanceCycling": SensorKind(name: "Cycling distance", icon: nil, deviceClass: "distance", units: distance),
        "distanceRowing": SensorKind(name: "Rowing distance", icon: nil, deviceClass: "distance", units: distance),
        "rowingSpeed": SensorKind(name: "Rowing speed", icon: nil, deviceClass: "speed", units: speed),
        "runningPower": SensorKind(name: "Running power", icon: nil, deviceClass: "power", units: ["W": "W"]),
        "rowingPower": SensorKind(name: "Rowing power", icon: nil, deviceClass: "power", units: ["W": "W"]),
        "rowingStrokeRate": SensorKind(name: "Stroke rate", icon: "mdi:rowing", deviceClass: nil, units: ["count/min": "spm"]),
        "bodyMass": SensorKind(name: "Weight", icon: nil, deviceClass: "weight", units: ["kg": "kg", "lb": "lb", "g": "g"]),
        "bodyMassIndex": SensorKind(name: "Body mass index", icon: "mdi:human", deviceClass: nil, units: ["count": ""]),
        "height": SensorKind(name: "Height", icon: nil, deviceClass: "distance", units: distance),
        "bodyFatPercentage": SensorKind(name: "Body fat", icon: "mdi:percent", deviceClass: nil, units: ["%": "%"]),
        "leanBodyMass": SensorKind(name: "Lean body mass", icon: nil, deviceClass: "weight", units: ["kg": "kg", "lb": "lb", "g": "g"]),
        "bloodPressureSystolic": SensorKind(name: "Systolic blood pressure", icon: nil, deviceClass: "pressure", units: ["mmHg": "mmHg"]),
        "bloodPressureDiastolic": SensorKind(name: "Diastolic blood pressure", icon: nil, deviceClass: "pressure", units: ["mmHg": "mmHg"]),
        "bodyTemperature": SensorKind(name: "Body temperature", icon: nil, deviceClass: "temperature", units: ["degC": "°C", "degF": "°F"]),
        "oxygenSaturation": SensorKind(name: "Oxygen saturation", icon: "mdi:water-percent", deviceClass: nil, units: ["%": "%"]),
        "peripheralPerfusionIndex": SensorKind(name: "Perfusion index", icon: nil, deviceClass: nil, units: ["%": "%"]),
        "bloodGlucose": SensorKind(
            name: "Blood glucose", icon: nil, deviceClass: "blood_glucose_concentration",
            units: ["mg/dL": "mg/dL", "mmol<180.15588000005408>/L": "mmol/L"]),
        "respiratoryRate": SensorKind(name: "Respiratory rate", icon: "mdi:lungs", deviceClass: nil, units: ["count/min": "breaths/min"]),
        batteryType: SensorKind(name: "Battery", icon: nil, deviceClass: "battery", units: ["%": "%"]),
    ]

    fileprivate struct SensorConfig: Encodable, Hashable, Sendable {
        var name: String
        var uniqueID: String
        var stateTopic: String
        var valueTemplate: String
        var unitOfMeasurement: String?
        var deviceClass: String?
        var stateClass: String
        var icon: String?
        var entityCategory: String?
        var forceUpdate: Bool?
        var availabilityTopic: String
        var payloadAvailable: String
        var payloadNotAvailable: String
        var device: DeviceBlock
        var origin: Origin

        enum CodingKeys: String, CodingKey {
            case name, icon, device, origin
            case uniqueID = "unique_id", stateTopic = "state_topic", valueTemplate = "value_template"
            case unitOfMeasurement = "unit_of_measurement", deviceClass = "device_class", stateClass = "state_class"
            case entityCategory = "entity_category", forceUpdate = "force_update", availabilityTopic = "availability_topic"
            case payloadAvailable = "payload_available", payloadNotAvailable = "payload_not_available"
        }
    }

    fileprivate struct DeviceBlock: Encodable, Hashable, Sendable {
        var identifiers: [String]
        var name: String
        var manufacturer: String?
        var model: String?
        var swVersion: String?
        var hwVersion: String?

        enum CodingKeys: String, CodingKey {
            case identifiers, name, manufacturer, model
            case swVersion = "sw_version", hwVersion = "hw_version"
        }
    }

    fileprivate struct Origin: Encodable, Hashable, Sendable {
        var name: String
        var swVersion: String?

        enum CodingKeys: String, CodingKey {
            case name
            case swVersion = "sw_version"
        }
    }
}
