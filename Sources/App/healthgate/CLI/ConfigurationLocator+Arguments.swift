import SampleBus

/// `--config FILE`: declared once, for `run` and every command that reaches the daemon or opens
/// the store, so each finds the configuration the same way `run` does.
extension ConfigurationLocator {
    /// The `--config` option.
    static let option = OptionSpec(
        name: "config", value: "FILE",
        help: "The configuration file (default: as 'run' finds it: $CONFIGURATION_DIRECTORY/config.json, "
            + "$XDG_CONFIG_HOME/healthgate/config.json, /etc/healthgate/config.json).")

    /// The configuration `--config` names, else the one ``candidates(_:)`` finds first, else the
    /// embedded default: ``load(explicit:variables:)`` with the command's arguments.
    /// - Throws: as ``load(explicit:variables:)``: 66 when `--config` names no file, 78 when the
    ///   file is wrong.
    static func load(_ arguments: ParsedArguments, context: CommandContext) throws -> GatewayConfiguration {
        try load(explicit: arguments.value("config"), variables: context.variables)
    }
}
