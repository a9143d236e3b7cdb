import BLETransport

/// The management commands the advertisement path sends (BlueZ `doc/mgmt-api.txt`): a 6-byte
/// header (opcode, controller index, parameter length, little-endian), then the parameters.
///
/// Only a trusted socket (bound with `CAP_NET_ADMIN`) may send them.
enum ManagementCommand {
    /// Add Advertisement Patterns Monitor (mgmt-api.txt; kernel 5.10 and later).
    static let addAdvertisementPatternsMonitor: UInt16 = 0x0052
    /// Remove Advertisement Monitor: 0x0053 (mgmt-api.txt; include/net/bluetooth/mgmt.h
    /// `MGMT_OP_REMOVE_ADV_MONITOR`). 0x0054 is Add Extended Advertising Parameters, whose
    /// minimum length the kernel checks first: sent by mistake, it was refused at once with
    /// Invalid Parameters (0x0D, a Command Status) and the monitor stayed.
    static let removeAdvertisementMonitor: UInt16 = 0x0053
    /// A pattern's Value field: always 31 octets (HCI_MAX_AD_LENGTH), the unused ones zero.
    static let patternValueLength = 31

    /// Add Advertisement Patterns Monitor for `patterns` on `controller`: Pattern_Count, then per
    /// pattern AD_Type, Offset, Length and a 31-octet Value (`struct mgmt_adv_pattern`, 34 bytes;
    /// the kernel refuses a command whose length is not exactly that). Nil when there are no
    /// patterns, more than 255, or one the kernel would refuse (empty, or past 31 octets).
    ///
    /// While any monitor is registered the kernel scans with the controller's duplicate filter
    /// off, also during discovery (net/bluetooth/hci_sync.c, hci_active_scan_sync:
    /// `hci_is_adv_monitoring`), so that every advertisement reaches the Device Found events.
    static func addMonitor(controller: UInt16, patterns: [AdvertisingDataPattern]) -> [UInt8]? {
        guard !patterns.isEmpty, patterns.count <= 255 else { return nil }
        var parameters: [UInt8] = [UInt8(patterns.count)]
        for pattern in patterns {
            guard !pattern.content.isEmpty, Int(pattern.start) + pattern.content.count <= patternValueLength else { return nil }
            parameters += [pattern.type, pattern.start, UInt8(pattern.content.count)]
            parameters += pattern.content + [UInt8](repeating: 0, count: patternValueLength - pattern.content.count)
        }
        return packet(addAdvertisementPatternsMonitor, controller: controller, parameters)
    }

    /// Remove Advertisement Monitor `handle` on `controller` (handle 0 would remove every monitor,
    /// bluetoothd's too: never sent).
    static func removeMonitor(controller: UInt16, handle: UInt16) -> [UInt8] {
        packet(removeAdvertisementMonitor, controller: controller, [UInt8(handle & 0xFF), UInt8(handle >> 8)])
    }

    static func packet(_ opcode: UInt16, controller: UInt16, _ parameters: [UInt8]) -> [UInt8] {
        func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        return le16(opcode) + le16(controller) + le16(UInt16(parameters.count)) + parameters
    }
}
