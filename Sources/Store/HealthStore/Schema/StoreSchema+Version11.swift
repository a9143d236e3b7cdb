// Version 11: a tombstone names the device of the object it replaces.
//
// - `tombstones.device`: the deleted object's device as a remote sink names it (its local
//   identifier, else its name; NULL for a workout or an object without a device). A follower
//   that publishes per device (the MQTT sink's Home Assistant discovery) learns from it which
//   device a deletion concerns after the object itself is gone. Tombstones written before this
//   version have none.
extension StoreSchema {
    static let version11 = """
        ALTER TABLE tombstones ADD COLUMN device TEXT;
        """
}
