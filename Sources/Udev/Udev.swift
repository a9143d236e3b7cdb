// The Udev module; see README.md for its role.
