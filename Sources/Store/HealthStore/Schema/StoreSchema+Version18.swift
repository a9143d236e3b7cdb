// Version 18: whose reading it is (issue 65).
//
// `wear_intervals` keeps every run-time assignment of a device to a person with when it began
// and ended (`end_us` NULL while it holds), so that a reading is attributed to whoever wore the
// device at its time (HealthModel's PersonAttribution), also after a restart and for readings a
// device sends later (stored records fetched when it reconnects). `participant_devices` stays
// what a restart replays: the assignments that hold now.
//
// The assignments a store of version 17 holds become intervals from when they were made; the
// ones ended before this version are not known.
extension StoreSchema {
    static let version18 = """
        CREATE TABLE wear_intervals (
            device TEXT NOT NULL,
            participant TEXT NOT NULL,
            start_us INTEGER NOT NULL,
            end_us INTEGER
        );
        CREATE INDEX wear_intervals_device ON wear_intervals (device, start_us);
        INSERT INTO wear_intervals (device, participant, start_us)
            SELECT device, participant, assigned_us FROM participant_devices ORDER BY assigned_us, device;
        """
}
