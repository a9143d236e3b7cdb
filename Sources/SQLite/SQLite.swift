// The SQLite module; see README.md for its role.
