// Version 6: correlations (HealthKit's HKCorrelation), such as blood pressure.
//
// A correlation's members are ordinary quantity samples in `samples`, so statistics and queries
// of `bloodPressureSystolic` see every reading; `correlations` holds the record that groups
// them and `correlation_members` which samples it holds, in the order of the correlation
// type's member types. A correlation replaced through its sync identifier takes its members
// with it (the writer deletes them), so a reading downloaded again with a higher sync version
// leaves one systolic and one diastolic sample.
extension StoreSchema {
    static let version6 = """
        CREATE TABLE correlations (
            uuid BLOB NOT NULL PRIMARY KEY,
            type TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER NOT NULL,
            device_id INTEGER REFERENCES devices (id),
            sync_identifier TEXT,
            sync_version INTEGER,
            metadata_set_id INTEGER REFERENCES metadata_sets (id)
        ) WITHOUT ROWID;
        CREATE INDEX correlations_type_start ON correlations (type, start_us);
        CREATE UNIQUE INDEX correlations_sync ON correlations (sync_identifier)
            WHERE sync_identifier IS NOT NULL;

        CREATE TABLE correlation_members (
            correlation_uuid BLOB NOT NULL REFERENCES correlations (uuid) ON DELETE CASCADE,
            member_index INTEGER NOT NULL,
            sample_uuid BLOB NOT NULL,
            PRIMARY KEY (correlation_uuid, member_index)
        ) WITHOUT ROWID;
        CREATE INDEX correlation_members_sample ON correlation_members (sample_uuid);
        """
}
