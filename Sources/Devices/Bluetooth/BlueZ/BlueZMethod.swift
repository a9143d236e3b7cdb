/// Every method healthgate calls on bluetoothd, and every property it writes: the one table the
/// shipped D-Bus policy (udev-rules/dbus-healthgate.conf) grants. ``BlueZClient`` calls
/// bluetoothd only through a case of this table, so a new call is a new case here, then a rule
/// there; Tests/BlueZTests/DBusPolicyTests.swift checks with a real dbus-daemon that the
/// policy grants each case to the service user and the `bluetooth` group, and nothing else.
public enum BlueZMethod: CaseIterable, Sendable {
    /// ObjectManager.GetManagedObjects: the tree of adapters, devices and GATT objects.
    case getManagedObjects
    /// Properties.Get: one property read afresh.
    case getProperty
    /// Properties.Set: only the properties of ``BlueZWritableProperty``.
    case setProperty
    /// Adapter1.SetDiscoveryFilter: scan for LE devices of the profiles' services.
    case setDiscoveryFilter
    /// Adapter1.StartDiscovery.
    case startDiscovery
    /// Adapter1.StopDiscovery.
    case stopDiscovery
    /// Adapter1.RemoveDevice: `healthgate pair --forget`.
    case removeDevice
    /// Device1.Connect.
    case connect
    /// Device1.Disconnect.
    case disconnect
    /// Device1.Pair: devices whose matcher asks for pairing, and `healthgate pair`.
    case pair
    /// Device1.CancelPairing: a pairing given up on (timed out, or the gateway stopping).
    case cancelPairing
    /// AgentManager1.RegisterAgent: our agent answers passkey requests of our pairings.
    case registerAgent
    /// AdvertisementMonitorManager1.RegisterMonitor: the advertisement sources' monitor
    /// (passive scanning without the controller's duplicate filter; bluetoothd -E).
    case registerMonitor
    /// AdvertisementMonitorManager1.UnregisterMonitor: the scan ended.
    case unregisterMonitor
    /// GattCharacteristic1.ReadValue.
    case readValue
    /// GattCharacteristic1.WriteValue: control points, Current Time, RACP.
    case writeValue
    /// GattCharacteristic1.StartNotify.
    case startNotify
    /// GattCharacteristic1.StopNotify.
    case stopNotify
    /// GattCharacteristic1.AcquireNotify.
    case acquireNotify
    /// GattDescriptor1.ReadValue: a Generic Health Sensor's Observation Schedule and Valid Range
    /// and Accuracy descriptors.
    case readDescriptorValue
    /// GattDescriptor1.WriteValue: a Generic Health Sensor's Observation Schedule.
    case writeDescriptorValue

    /// The D-Bus interface the method belongs to.
    public var interface: String {
        switch self {
        case .getManagedObjects: BlueZInterface.objectManager
        case .getProperty, .setProperty: BlueZInterface.properties
        case .setDiscoveryFilter, .startDiscovery, .stopDiscovery, .removeDevice: BlueZInterface.adapter
        case .connect, .disconnect, .pair, .cancelPairing: BlueZInterface.device
        case .registerAgent: BlueZInterface.agentManager
        case .registerMonitor, .unregisterMonitor: BlueZInterface.advertisementMonitorManager
        case .readValue, .writeValue, .startNotify, .stopNotify, .acquireNotify: BlueZInterface.gattCharacteristic
        case .readDescriptorValue, .writeDescriptorValue: BlueZInterface.gattDescriptor
        }
    }

    /// The method's name on its interface.
    public var member: String {
        switch self {
        case .getManagedObjects: "GetManagedObjects"
        case .getProperty: "Get"
        case .setProperty: "Set"
        case .setDiscoveryFilter: "SetDiscoveryFilter"
        case .startDiscovery: "StartDiscovery"
        case .stopDiscovery: "StopDiscovery"
        case .removeDevice: "RemoveDevice"
        case .connect: "Connect"
        case .disconnect: "Disconnect"
        case .pair: "Pair"
        case .cancelPairing: "CancelPairing"
        case .registerAgent: "RegisterAgent"
        case .registerMonitor: "RegisterMonitor"
        case .unregisterMonitor: "UnregisterMonitor"
        case .readValue, .readDescriptorValue: "ReadValue"
        case .writeValue, .writeDescriptorValue: "WriteValue"
        case .startNotify: "StartNotify"
        case .stopNotify: "StopNotify"
        case .acquireNotify: "AcquireNotify"
        }
    }
}

/// The bluetoothd properties healthgate writes (Properties.Set). D-Bus policies cannot tell one
/// property from another, so the policy grants Set on org.bluez, and this list is what it is for.
public enum BlueZWritableProperty: CaseIterable, Sendable {
    /// Adapter1.Powered: the adapter watchdog power-cycles a wedged controller.
    case adapterPowered
    /// Device1.Trusted: a paired device reconnects without asking an agent.
    case deviceTrusted

    public var interface: String {
        switch self {
        case .adapterPowered: BlueZInterface.adapter
        case .deviceTrusted: BlueZInterface.device
        }
    }

    public var name: String {
        switch self {
        case .adapterPowered: "Powered"
        case .deviceTrusted: "Trusted"
        }
    }
}
