// The HeartRateMonitor plugin.
