// Version 14: a device assignment may last only until the class it was made in ends.
//
// - `participant_devices.until_class_end`: 1 for a strap signed in during a class without
//   `--keep` (the class's end deletes the row, so the strap is free again); 0 for an assignment
//   that stays, as every row stored before this version.
extension StoreSchema {
    static let version14 = """
        ALTER TABLE participant_devices ADD COLUMN until_class_end INTEGER NOT NULL DEFAULT 0;
        """
}
