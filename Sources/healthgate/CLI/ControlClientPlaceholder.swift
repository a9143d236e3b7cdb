import HealthModel
import SampleBus

// PLACEHOLDER (workouts branch): the lead owns the control client and may replace this file.
// The workout commands are written against `sendControlRequest(command:arguments:context:)`;
// here it forwards to the control client that landed on main (`ControlSocketPath.send`), with
// the default socket path (the configured `controlSocket`, else the runtime directory's).

/// Sends one control request to the running daemon and returns its result.
/// - Throws: ``CommandError`` with `.unavailable` (69) when no daemon answers, `.dataError` (65)
///   when the daemon refuses the command (its message is the daemon's error).
func sendControlRequest(command: String, arguments: JSONValue, context: CommandContext) async throws -> JSONValue {
    try await ControlSocketPath.send(command, arguments: arguments, socket: nil, context: context)
}
