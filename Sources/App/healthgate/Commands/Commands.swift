/// Every command of the executable, in help order. Adding a command is one file in Commands/
/// and one line here.
enum Commands {
    static func all() -> [Command] {
        [
            RunCommand.command,
            DemoCommand.command,
            StatusCommand.command,
            WorkoutCommand.command,
            ParticipantCommand.command,
            UnitsCommand.command,
            DecodeCommand.command,
            ScanCommand.command,
            PairCommand.command,
            ConfigCommand.command,
            QueryCommand.command,
            DeleteCommand.command,
            PluginsCommand.command,
            DevicesCommand.command,
            DeadLettersCommand.command,
            AdapterCommand.command,
        ]
    }
}
