// The LinuxSystem module; see README.md for its role.
