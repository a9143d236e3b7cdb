// The SQLiteStore plugin.
