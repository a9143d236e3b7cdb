public import GatewayRuntime

/// One request on the control socket: a single JSON object on one line.
///
/// `{"command": "status"}` or `{"command": "workout.start", "arguments": {"activity": "running"}}`
public struct ControlRequest: Codable, Sendable, Hashable {
    public var command: String
    public var arguments: JSONValue?

    public init(command: String, arguments: JSONValue? = nil) {
        self.command = command
        self.arguments = arguments
    }
}

/// The answer to one request: one JSON object on one line.
///
/// `{"ok": true, "result": …}` or `{"ok": false, "error": "…"}`
public struct ControlResponse: Codable, Sendable, Hashable {
    public var ok: Bool
    public var result: JSONValue?
    public var error: String?

    public init(ok: Bool, result: JSONValue? = nil, error: String? = nil) {
        self.ok = ok
        self.result = result
        self.error = error
    }
}

/// Handles one control command. Throwing ``ControlCommandError`` (or any error) produces an
/// `ok: false` response with the error's description.
public typealias ControlHandler = @Sendable (JSONValue) async throws -> JSONValue

/// A handler's refusal, with a message for the user (e.g. "no workout is running").
public struct ControlCommandError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
