// The HTTPRepository plugin.
