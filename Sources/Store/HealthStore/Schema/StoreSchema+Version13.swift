// Version 13: a device carries the identity of the radio its samples came by.
//
// - `devices.radio_identifier`: the Bluetooth address of a connected device, the Polar device id
//   of a broadcasting strap, or `ant:120:NUMBER` (``HealthModel/Device/radioIdentifier``), kept
//   also when a serial number is the local identifier, so that a participant assigned the
//   address follows the strap. NULL for devices stored before this version and for devices that
//   came by no radio.
// - `devices_identity` is made again with the new column: two devices that differ only by their
//   radio are two rows. Every existing row has NULL there, so the rows stay unique.
extension StoreSchema {
    static let version13 = """
        ALTER TABLE devices ADD COLUMN radio_identifier TEXT;
        DROP INDEX devices_identity;
        CREATE UNIQUE INDEX devices_identity ON devices (
            ifnull(name, x''), ifnull(manufacturer, x''), ifnull(model, x''),
            ifnull(hardware_version, x''), ifnull(firmware_version, x''),
            ifnull(software_version, x''), ifnull(local_identifier, x''),
            ifnull(udi_device_identifier, x''), ifnull(radio_identifier, x''));
        """
}
