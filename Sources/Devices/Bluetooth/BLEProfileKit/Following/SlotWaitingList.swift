import BLETransport

/// The devices of one ``PeripheralSupervisor`` that wait for a device slot, in the order they
/// began to wait, each with the adapters that hear it: a device is connected only through an
/// adapter that reported it (BlueZ knows a device on the adapter that discovered it). Values
/// only; the supervisor's loop drives it.
struct SlotWaitingList: Sendable {
    struct Entry: Sendable {
        var peripheral: DiscoveredPeripheral
        /// The radios (indices into the supervisor's) that report the device.
        var heardOn: Set<Int>
    }

    private(set) var order: [String] = []
    private var entries: [String: Entry] = [:]

    /// The devices waiting, first come first.
    var addresses: [String] { order }

    func entry(_ address: String) -> Entry? { entries[address] }

    /// Records that `radio` reports `peripheral` (upper-case `address`); returns whether the
    /// device has just begun to wait.
    @discardableResult
    mutating func heard(_ peripheral: DiscoveredPeripheral, address: String, on radio: Int) -> Bool {
        if var entry = entries[address] {
            entry.peripheral = peripheral
            entry.heardOn.insert(radio)
            entries[address] = entry
            return false
        }
        entries[address] = Entry(peripheral: peripheral, heardOn: [radio])
        order.append(address)
        return true
    }

    /// `radio` no longer reports the device: returns whether no radio does any more (the device
    /// then waits no longer).
    mutating func lost(_ address: String, on radio: Int) -> Bool {
        guard var entry = entries[address] else { return false }
        entry.heardOn.remove(radio)
        guard entry.heardOn.isEmpty else {
            entries[address] = entry
            return false
        }
        remove(address)
        return true
    }

    /// The device got a slot (or is given up).
    mutating func remove(_ address: String) {
        entries[address] = nil
        order.removeAll { $0 == address }
    }
}
