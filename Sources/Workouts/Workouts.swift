// The Workouts module; see README.md for its role.
