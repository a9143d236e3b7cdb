// The BlueZ module; see README.md for its role.
