import FoundationEssentials

/// `healthgate run`: the daemon.
enum RunCommand {
    static let command = Command(
        name: "run", summary: "Run the gateway (the daemon).",
        usage: "run [--config FILE] [--duration SECONDS]",
        discussion: """
            Reads the configuration from --config, else $XDG_CONFIG_HOME/healthgate/config.json, \
            else /etc/healthgate/config.json, else uses the embedded default: the SQLite store at \
            $XDG_DATA_HOME/healthgate/samples.sqlite with no sources.

            While it runs it keeps the store: store.retentionDays prunes old samples and series \
            hourly (a finished workout's too, unless store.keepWorkoutSamples; the workout keeps its \
            statistics and curves), quantity series whose device went quiet are closed, and a store \
            an earlier healthgate wrote is migrated in the background after it starts, without \
            holding up ingest: its progress is in the log and in 'healthgate status'.

            SIGINT, SIGTERM or SIGHUP stop the sources, drain and flush every sink, remove the \
            control socket and exit 0; no backoff or retry timer is waited out. A second signal, or \
            shutdownTimeoutSeconds (default 10) after the first, forces the exit: within 0.5 s, \
            status 1, whatever the gateway was blocked on. SIGHUP does not reload the configuration.
            A bad configuration exits 78 with the file, the key path and the reason.
            """,
        options: [
            ConfigurationLocator.option,
            OptionSpec(name: "duration", value: "SECONDS", help: "Stop gracefully after this many seconds."),
        ]
    ) { arguments, context in
        let configuration = try ConfigurationLocator.load(arguments, context: context)
        let duration = try arguments.double("duration")
        if let duration, duration <= 0 { throw CommandError(.usage, "--duration must be positive") }
        return try await GatewayRunner(context: context).run(configuration: configuration, duration: duration)
    }
}
