// BlueZ's API is stated in D-Bus's terms (a ``BlueZClient`` runs on a `DBusConnection`, and
// answers with `DBusValue`s and `DBusError`s), so every user of BlueZ uses the DBus module too:
// re-exported, so that importing BlueZ is enough to speak to bluetoothd.
public import DBus

/// BlueZ's D-Bus interface names (BlueZ doc/org.bluez.*.rst).
public enum BlueZInterface {
    /// A Bluetooth controller (/org/bluez/hciN).
    public static let adapter = "org.bluez.Adapter1"
    /// A remote device (…/dev_AA_BB_CC_DD_EE_FF).
    public static let device = "org.bluez.Device1"
    /// A GATT service exported below a connected device.
    public static let gattService = "org.bluez.GattService1"
    /// A GATT characteristic exported below its service.
    public static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    /// A GATT descriptor exported below its characteristic.
    public static let gattDescriptor = "org.bluez.GattDescriptor1"
    /// The battery level BlueZ reads from the Battery service itself.
    public static let battery = "org.bluez.Battery1"
    /// RegisterAgent, RequestDefaultAgent, UnregisterAgent (on /org/bluez).
    public static let agentManager = "org.bluez.AgentManager1"
    /// The pairing agent bluetoothd calls (exported by us).
    public static let agent = "org.bluez.Agent1"
    /// RegisterMonitor, UnregisterMonitor (on an adapter; experimental: bluetoothd -E).
    public static let advertisementMonitorManager = "org.bluez.AdvertisementMonitorManager1"
    /// An advertisement monitor bluetoothd calls (exported by us): Activate, Release,
    /// DeviceFound, DeviceLost.
    public static let advertisementMonitor = "org.bluez.AdvertisementMonitor1"
    /// GetManagedObjects, InterfacesAdded, InterfacesRemoved.
    public static let objectManager = "org.freedesktop.DBus.ObjectManager"
    /// Get, GetAll, Set, PropertiesChanged.
    public static let properties = "org.freedesktop.DBus.Properties"
}

extension DBusError {
    // Error names BlueZ replies with (BlueZ doc/org.bluez.Device.rst, GattCharacteristic.rst).
    /// Another operation (a Connect) on the object is running.
    public static let bluezInProgress = "org.bluez.Error.InProgress"
    /// Device1.Connect on a connected device.
    public static let bluezAlreadyConnected = "org.bluez.Error.AlreadyConnected"
    /// Device1.Pair on a device that is already paired.
    public static let bluezAlreadyExists = "org.bluez.Error.AlreadyExists"
    /// What an agent answers to refuse a request.
    public static let bluezRejected = "org.bluez.Error.Rejected"
    /// What an agent answers to a request it gave up on.
    public static let bluezCanceled = "org.bluez.Error.Canceled"
    /// A generic failure; Connect puts the reason in the message.
    public static let bluezFailed = "org.bluez.Error.Failed"
    /// The adapter is not powered or not initialised.
    public static let bluezNotReady = "org.bluez.Error.NotReady"
    /// The device is not connected.
    public static let bluezNotConnected = "org.bluez.Error.NotConnected"
    /// The operation is not supported (e.g. AcquireNotify).
    public static let bluezNotSupported = "org.bluez.Error.NotSupported"
    /// The operation is not permitted (e.g. notify already acquired).
    public static let bluezNotPermitted = "org.bluez.Error.NotPermitted"
    /// The object does not exist.
    public static let bluezDoesNotExist = "org.bluez.Error.DoesNotExist"
    /// The resource is not available.
    public static let bluezNotAvailable = "org.bluez.Error.NotAvailable"
}

/// A snapshot of BlueZ's object tree (ObjectManager.GetManagedObjects):
/// object path → interface → property → value.
public struct BlueZObjectTree: Sendable {
    /// Object path → interface name → property name → value (variants unwrapped).
    public var objects: [String: [String: [String: DBusValue]]]

    public init(objects: [String: [String: [String: DBusValue]]] = [:]) {
        self.objects = objects
    }

    /// Parses the reply of GetManagedObjects (`a{oa{sa{sv}}}`). Throws on any other shape.
    public init(managedObjects value: DBusValue) throws(DBusError) {
        guard let byPath = value.dictionary else {
            throw DBusError(name: DBusError.invalidSignature, message: "GetManagedObjects returned \(value.signature)")
        }
        var objects: [String: [String: [String: DBusValue]]] = [:]
        for (path, interfacesValue) in byPath {
            objects[path] = try Self.interfaces(interfacesValue)
        }
        self.objects = objects
    }

    /// Parses `a{sa{sv}}` (the interfaces of one object, as in InterfacesAdded).
    public static func interfaces(_ value: DBusValue) throws(DBusError) -> [String: [String: DBusValue]] {
        guard let byInterface = value.dictionary else {
            throw DBusError(name: DBusError.invalidSignature, message: "expected a{sa{sv}}, got \(value.signature)")
        }
        var result: [String: [String: DBusValue]] = [:]
        for (interface, propertiesValue) in byInterface {
            guard let properties = propertiesValue.dictionary else {
                throw DBusError(name: DBusError.invalidSignature, message: "expected a{sv} for \(interface)")
            }
            result[interface] = properties.mapValues(\.unwrapped)
        }
        return result
    }

    /// Object paths of powered and unpowered adapters, sorted (`/org/bluez/hci0`, …).
    public var adapterPaths: [String] {
        objects.filter { $0.value[BlueZInterface.adapter] != nil }.keys.sorted()
    }

    /// The devices known to the adapter at `adapterPath` (all adapters when nil).
    public func devices(adapter adapterPath: String?) -> [BlueZDevice] {
        objects.compactMap { path, interfaces in
            guard let properties = interfaces[BlueZInterface.device] else { return nil }
            let device = BlueZDevice(path: path, properties: properties)
            if let adapterPath, device.adapterPath != adapterPath { return nil }
            return device
        }.sorted { $0.path < $1.path }
    }

    /// The device at `path` when it is one of the adapter at `adapterPath`'s; nil otherwise.
    public func device(at path: String, adapter adapterPath: String) -> BlueZDevice? {
        guard let properties = objects[path]?[BlueZInterface.device] else { return nil }
        let device = BlueZDevice(path: path, properties: properties)
        return device.adapterPath == adapterPath ? device : nil
    }

    /// The GATT characteristics exported below `devicePath`, with their service's UUID.
    public func characteristics(device devicePath: String) -> [BlueZCharacteristic] {
        let prefix = devicePath + "/"
        return objects.compactMap { path, interfaces in
            guard path.hasPrefix(prefix), let properties = interfaces[BlueZInterface.gattCharacteristic] else {
                return nil
            }
            let servicePath = properties["Service"]?.string ?? ""
            let serviceUUID = objects[servicePath]?[BlueZInterface.gattService]?["UUID"]?.string
            return BlueZCharacteristic(
                path: path, uuid: properties["UUID"]?.string?.lowercased() ?? "",
                flags: properties["Flags"]?.strings ?? [], servicePath: servicePath,
                serviceUUID: serviceUUID?.lowercased() ?? "")
        }.sorted { $0.path < $1.path }
    }

    /// The GATT descriptors of the characteristic at `characteristicPath`, in the GATT
    /// database's order: bluetoothd names each attribute's object by its handle in four hex
    /// digits (`…/char000d/desc000f`, BlueZ src/gatt-client.c), so the paths sort by handle.
    public func descriptors(characteristic characteristicPath: String) -> [BlueZDescriptor] {
        objects.compactMap { path, interfaces in
            guard let properties = interfaces[BlueZInterface.gattDescriptor] else { return nil }
            let owner = properties["Characteristic"]?.string ?? String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
            guard owner == characteristicPath else { return nil }
            return BlueZDescriptor(path: path, uuid: properties["UUID"]?.string?.lowercased() ?? "", characteristicPath: owner)
        }.sorted { $0.path < $1.path }
    }

    /// Whether any GattService1 object is exported below `devicePath`.
    public func hasGattServices(device devicePath: String) -> Bool {
        let prefix = devicePath + "/"
        return objects.contains { $0.key.hasPrefix(prefix) && $0.value[BlueZInterface.gattService] != nil }
    }
}

/// The properties of an org.bluez.Device1 object that a central needs.
public struct BlueZDevice: Sendable, Hashable {
    /// The object path.
    public var path: String
    /// The adapter's object path ("Adapter").
    public var adapterPath: String
    /// `AA:BB:CC:DD:EE:FF` ("Address").
    public var address: String
    /// The advertised name ("Name"), if any.
    public var name: String?
    /// The name to show ("Alias"): the user's alias, else the name, else the address.
    public var alias: String?
    /// The last advertisement's signal strength in dBm ("RSSI"); nil when not seen lately.
    public var rssi: Int?
    /// Service UUIDs, lower-case 128-bit strings.
    public var uuids: [String]
    /// Whether BlueZ holds keys for the device ("Paired"); it keeps them across restarts.
    public var paired: Bool
    /// Whether the link is up ("Connected").
    public var connected: Bool
    /// Whether GATT discovery finished ("ServicesResolved"); verify against exported objects.
    public var servicesResolved: Bool

    /// Builds the device from its Device1 properties (variants already unwrapped or not).
    public init(path: String, properties: [String: DBusValue]) {
        self.path = path
        adapterPath = properties["Adapter"]?.string ?? String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        address = properties["Address"]?.string ?? ""
        name = properties["Name"]?.string
        alias = properties["Alias"]?.string
        // 127 means "RSSI is not available" (Core Specification Vol 4, Part E, §7.7.65.2).
        rssi = properties["RSSI"]?.integer.flatMap { $0 == 127 ? nil : $0 }
        uuids = (properties["UUIDs"]?.strings ?? []).map { $0.lowercased() }
        connected = properties["Connected"]?.bool ?? false
        paired = properties["Paired"]?.bool ?? false
        servicesResolved = properties["ServicesResolved"]?.bool ?? false
    }

    /// Applies a PropertiesChanged update of Device1.
    public mutating func apply(changed: [String: DBusValue], invalidated: [String]) {
        var merged: [String: DBusValue] = [:]
        merged["Adapter"] = .objectPath(adapterPath)
        merged["Address"] = .string(address)
        if let name { merged["Name"] = .string(name) }
        if let alias { merged["Alias"] = .string(alias) }
        if let rssi { merged["RSSI"] = .int16(Int16(clamping: rssi)) }
        merged["UUIDs"] = .stringArray(uuids)
        merged["Connected"] = .bool(connected)
        merged["ServicesResolved"] = .bool(servicesResolved)
        for key in invalidated { merged[key] = nil }
        for (key, value) in changed { merged[key] = value.unwrapped }
        self = BlueZDevice(path: path, properties: merged)
    }
}

/// An org.bluez.GattCharacteristic1 object.
public struct BlueZCharacteristic: Sendable, Hashable {
    /// The object path.
    public var path: String
    /// Lower-case 128-bit UUID.
    public var uuid: String
    /// `read`, `write`, `notify`, `indicate`, … (GattCharacteristic.rst, "Flags").
    public var flags: [String]
    /// The object path of its GattService1.
    public var servicePath: String
    /// Lower-case 128-bit UUID of the service it belongs to.
    public var serviceUUID: String
}

/// An org.bluez.GattDescriptor1 object.
public struct BlueZDescriptor: Sendable, Hashable {
    /// The object path.
    public var path: String
    /// Lower-case 128-bit UUID.
    public var uuid: String
    /// The object path of its GattCharacteristic1 ("Characteristic").
    public var characteristicPath: String
}

/// A typed client of bluetoothd's D-Bus API over one ``DBusConnection``.
///
/// Every method throws ``DBusError`` carrying BlueZ's error name (`org.bluez.Error.InProgress`,
/// …), or `org.freedesktop.DBus.Error.ServiceUnknown` when bluetoothd is not running.
public struct BlueZClient: Sendable {
    /// bluetoothd's well-known bus name.
    public static let serviceName = "org.bluez"

    /// The bus connection every call goes through.
    public let connection: DBusConnection

    public init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Every call to bluetoothd goes through here, named by its ``BlueZMethod``.
    private func call(
        _ path: String, _ method: BlueZMethod, _ arguments: [DBusValue] = [], timeout: Duration? = nil
    ) async throws -> [DBusValue] {
        try await connection.call(
            destination: Self.serviceName, path: path, interface: method.interface, member: method.member,
            arguments: arguments, timeout: timeout)
    }

    /// Properties.Set of one of the properties healthgate writes.
    private func set(_ property: BlueZWritableProperty, at path: String, _ value: DBusValue) async throws {
        _ = try await call(path, .setProperty, [.string(property.interface), .string(property.name), .variant(value)])
    }

    /// Every object bluetoothd exports.
    public func managedObjects() async throws -> BlueZObjectTree {
        let reply = try await call("/", .getManagedObjects)
        guard let first = reply.first else {
            throw DBusError(name: DBusError.invalidSignature, message: "GetManagedObjects returned nothing")
        }
        return try BlueZObjectTree(managedObjects: first)
    }

    /// Every signal bluetoothd sends (InterfacesAdded/Removed, PropertiesChanged), in order.
    /// Subscribe before reading state, then apply signals to the snapshot.
    public func signals() async throws -> AsyncThrowingStream<DBusSignal, any Error> {
        try await connection.signals(matching: DBusMatchRule(sender: Self.serviceName))
    }

    /// The signals about one object and the objects below it, in order: its and their
    /// PropertiesChanged, and the InterfacesAdded/Removed that name them. What a connection to
    /// one device follows. With every signal of bluetoothd, each connected device would decode and
    /// apply every other device's advertisements too: a cost of connected × advertising straps.
    public func signals(about path: String) async throws -> AsyncThrowingStream<DBusSignal, any Error> {
        let objectManager = "org.freedesktop.DBus.ObjectManager"
        return try await connection.signals(matchingAny: [
            DBusMatchRule(sender: Self.serviceName, pathNamespace: path),
            // arg0path without a trailing slash: the object itself (arg0 matches strings only,
            // and these arguments are object paths).
            DBusMatchRule(sender: Self.serviceName, interface: objectManager, arg0Path: path),
            DBusMatchRule(sender: Self.serviceName, interface: objectManager, arg0Path: path + "/"),
        ])
    }

    /// Adapter1.SetDiscoveryFilter for LE devices advertising `uuids` (128-bit strings).
    /// BlueZ merges the filters of all its clients, so results must still be filtered.
    public func setDiscoveryFilter(adapter: String, uuids: [String]) async throws {
        _ = try await call(
            adapter, .setDiscoveryFilter,
            [
                .properties([
                    ("Transport", .string("le")),
                    ("UUIDs", .stringArray(uuids)),
                    ("DuplicateData", .bool(false)),
                ])
            ])
    }

    /// Adapter1.SetDiscoveryFilter for advertisement scanning: LE, no UUIDs (every advertiser,
    /// non-discoverable ones too: BlueZ reports them only while a filter is set), and
    /// `DuplicateData` true so each changed advertisement is reported, as far as the kernel lets
    /// it (it may keep the controller's duplicate filter on).
    public func setAdvertisementDiscoveryFilter(adapter: String) async throws {
        _ = try await call(
            adapter, .setDiscoveryFilter,
            [.properties([("Transport", .string("le")), ("DuplicateData", .bool(true))])])
    }

    /// Sets Adapter1.Powered (org.freedesktop.DBus.Properties.Set): how an administrator turns a
    /// controller off and on, and what the adapter watchdog does to a wedged one.
    public func setPowered(adapter: String, _ powered: Bool) async throws {
        try await set(.adapterPowered, at: adapter, .bool(powered))
    }

    /// AdvertisementMonitorManager1.RegisterMonitor: bluetoothd reads the monitors below
    /// `application` (an ObjectManager this connection exports) with GetManagedObjects BEFORE it
    /// replies, so the caller must keep serving that object while it awaits this call.
    public func registerMonitor(adapter: String, application: String) async throws {
        _ = try await call(adapter, .registerMonitor, [.objectPath(application)], timeout: .seconds(15))
    }

    /// How long UnregisterMonitor waits by default: bluetoothd calls back each monitor first.
    public static let unregisterMonitorTimeout: Duration = .seconds(15)

    /// AdvertisementMonitorManager1.UnregisterMonitor: bluetoothd calls each monitor's Release
    /// before it replies, so the caller keeps serving the monitors while it awaits this call.
    public func unregisterMonitor(adapter: String, application: String, timeout: Duration = unregisterMonitorTimeout) async throws {
        _ = try await call(adapter, .unregisterMonitor, [.objectPath(application)], timeout: timeout)
    }

    /// Adapter1.StartDiscovery.
    public func startDiscovery(adapter: String) async throws {
        _ = try await call(adapter, .startDiscovery)
    }

    /// Adapter1.StopDiscovery; `timeout` nil is the bus's default.
    public func stopDiscovery(adapter: String, timeout: Duration? = nil) async throws {
        _ = try await call(adapter, .stopDiscovery, timeout: timeout)
    }

    /// Device1.Connect. BlueZ replies once the link is up (services may still be resolving).
    public func connect(device: String) async throws {
        _ = try await call(device, .connect, timeout: .seconds(60))
    }

    /// AgentManager1.RegisterAgent: bluetoothd asks the agent at `path` on this connection for
    /// passkeys and confirmations of the pairings this connection starts. `capability` is one of
    /// DisplayOnly, DisplayYesNo, KeyboardOnly, NoInputNoOutput, KeyboardDisplay.
    public func registerAgent(path: String, capability: String) async throws {
        _ = try await call("/org/bluez", .registerAgent, [.objectPath(path), .string(capability)])
    }

    /// Device1.Pair: pairs and bonds (BlueZ stores the keys). Replies when pairing ended; a
    /// device that asks for a passkey waits for the agent, so the timeout is generous.
    public func pair(device: String, timeout: Duration = .seconds(90)) async throws {
        _ = try await call(device, .pair, timeout: timeout)
    }

    /// Sets Device1.Trusted: bluetoothd then accepts the device's reconnections without asking
    /// an agent.
    public func setTrusted(device: String, _ trusted: Bool) async throws {
        try await set(.deviceTrusted, at: device, .bool(trusted))
    }

    /// Device1.CancelPairing: gives up a pairing this connection started.
    public func cancelPairing(device: String) async throws {
        _ = try await call(device, .cancelPairing)
    }

    /// Adapter1.RemoveDevice: forgets the device and its keys.
    public func removeDevice(adapter: String, device: String) async throws {
        _ = try await call(adapter, .removeDevice, [.objectPath(device)])
    }

    /// Device1.Disconnect; `timeout` nil is the bus's default.
    public func disconnect(device: String, timeout: Duration? = nil) async throws {
        _ = try await call(device, .disconnect, timeout: timeout)
    }

    /// GattCharacteristic1.ReadValue({}).
    public func readValue(characteristic: String) async throws -> [UInt8] {
        let reply = try await call(characteristic, .readValue, [.properties([])])
        guard let bytes = reply.first?.bytes else {
            throw DBusError(name: DBusError.invalidSignature, message: "ReadValue did not return ay", context: characteristic)
        }
        return bytes
    }

    /// GattCharacteristic1.WriteValue(value, {"type": "request"}): a write with response.
    public func writeValue(characteristic: String, value: [UInt8]) async throws {
        _ = try await call(
            characteristic, .writeValue,
            [.byteArray(value), .properties([("type", .string("request"))])])
    }

    /// GattDescriptor1.ReadValue({}).
    public func readValue(descriptor: String) async throws -> [UInt8] {
        let reply = try await call(descriptor, .readDescriptorValue, [.properties([])])
        guard let bytes = reply.first?.bytes else {
            throw DBusError(name: DBusError.invalidSignature, message: "ReadValue did not return ay", context: descriptor)
        }
        return bytes
    }

    /// GattDescriptor1.WriteValue(value, {}): a descriptor is always written with a request
    /// (ATT Write Request), so there is no "type" option (BlueZ doc/org.bluez.GattDescriptor.rst).
    public func writeValue(descriptor: String, value: [UInt8]) async throws {
        _ = try await call(descriptor, .writeDescriptorValue, [.byteArray(value), .properties([])])
    }

    /// GattCharacteristic1.StartNotify: values then arrive as PropertiesChanged "Value".
    public func startNotify(characteristic: String) async throws {
        _ = try await call(characteristic, .startNotify)
    }

    /// GattCharacteristic1.StopNotify.
    public func stopNotify(characteristic: String) async throws {
        _ = try await call(characteristic, .stopNotify)
    }

    /// GattCharacteristic1.AcquireNotify({}): a socket on which each notification arrives as
    /// one datagram of at most `mtu` bytes. Closing the fd stops the notifications.
    public func acquireNotify(characteristic: String) async throws -> (descriptor: DBusUnixFD, mtu: Int) {
        let reply = try await call(
            characteristic, .acquireNotify, [.properties([])])
        guard reply.count == 2, case .unixFD(let descriptor) = reply[0], let mtu = reply[1].integer else {
            throw DBusError(
                name: DBusError.invalidSignature, message: "AcquireNotify did not return (h, q)",
                context: characteristic)
        }
        return (descriptor, mtu)
    }

    /// Reads one property with org.freedesktop.DBus.Properties.Get.
    public func property(_ name: String, of interface: String, at path: String) async throws -> DBusValue {
        let reply = try await call(path, .getProperty, [.string(interface), .string(name)])
        guard let value = reply.first else {
            throw DBusError(name: DBusError.invalidSignature, message: "Get returned nothing", context: path)
        }
        return value.unwrapped
    }
}

extension DBusSignal {
    /// For PropertiesChanged: the interface, the changed values (unwrapped) and the invalidated names.
    public var propertiesChanged: (interface: String, changed: [String: DBusValue], invalidated: [String])? {
        guard interface == BlueZInterface.properties, member == "PropertiesChanged", arguments.count >= 2,
            let name = arguments[0].string, let changed = arguments[1].dictionary
        else { return nil }
        let invalidated = arguments.count > 2 ? arguments[2].strings ?? [] : []
        return (name, changed.mapValues(\.unwrapped), invalidated)
    }

    /// For InterfacesAdded: the object path and its interfaces with their properties.
    public var interfacesAdded: (path: String, interfaces: [String: [String: DBusValue]])? {
        guard interface == BlueZInterface.objectManager, member == "InterfacesAdded", arguments.count == 2,
            let path = arguments[0].string, let interfaces = try? BlueZObjectTree.interfaces(arguments[1])
        else { return nil }
        return (path, interfaces)
    }

    /// For InterfacesRemoved: the object path and the interface names removed.
    public var interfacesRemoved: (path: String, interfaces: [String])? {
        guard interface == BlueZInterface.objectManager, member == "InterfacesRemoved", arguments.count == 2,
            let path = arguments[0].string, let names = arguments[1].strings
        else { return nil }
        return (path, names)
    }
}

extension BlueZObjectTree {
    /// Applies InterfacesAdded, InterfacesRemoved and PropertiesChanged signals, so that a
    /// snapshot taken after subscribing stays current. Other signals are ignored.
    public mutating func apply(_ signal: DBusSignal) {
        if let added = signal.interfacesAdded {
            for (interface, properties) in added.interfaces {
                objects[added.path, default: [:]][interface] = properties
            }
        } else if let removed = signal.interfacesRemoved {
            for interface in removed.interfaces {
                objects[removed.path]?[interface] = nil
            }
            if objects[removed.path]?.isEmpty == true { objects[removed.path] = nil }
        } else if let change = signal.propertiesChanged, objects[signal.path]?[change.interface] != nil {
            for key in change.invalidated { objects[signal.path]?[change.interface]?[key] = nil }
            for (key, value) in change.changed { objects[signal.path]?[change.interface]?[key] = value }
        }
    }
}
