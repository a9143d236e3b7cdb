import HealthModel
import GatewayRuntime
import Workouts
import WorkoutRuntime

/// `healthgate participant …`: who wears which device in group workouts.
enum ParticipantCommand {
    static let command = Command(
        name: "participant", summary: "Assign devices to participants of group workouts and list them.",
        usage: "participant assign DEVICE NAME | participant list [--format table|json]",
        discussion: """
            A participant is a person with a profile and the devices they wear (the configuration's \
            'participants'). 'assign' moves a device (BLE address, serial number or name) to NAME at \
            run time, creating the participant with the configuration's 'profile' if NAME is new; the \
            daemon commits it to its store before answering, so it survives a restart. A workout \
            already running keeps its devices; the participant's next one uses the new device.
            """,
        subcommands: [assign, list])

    static let assign = Command(
        name: "assign", summary: "Assign a device to a participant.", usage: "participant assign DEVICE NAME [--config FILE]",
        options: ControlSocketPath.options
    ) { arguments, context in
        let device = try arguments.positional(0, "the DEVICE")
        let name = try arguments.positional(1, "the participant's NAME")
        let result = try await ControlSocketPath.send(
            "participant.assign", arguments: .object(["device": .string(device), "participant": .string(name)]),
            options: arguments, context: context)
        let participants = try decode(result)
        let devices = participants.first { $0.name == name }?.devices ?? [device]
        context.print("\(device) → \(name) (wears \(devices.joined(separator: ", ")))")
        return .success
    }

    static let list = Command(
        name: "list", summary: "List the participants, their devices and workout state.",
        usage: "participant list [--format table|json] [--config FILE]",
        options: [OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json.")] + ControlSocketPath.options
    ) { arguments, context in
        let format = try arguments.format(among: ["table", "json"])
        let participants = try decode(
            try await ControlSocketPath.send("participant.list", arguments: .object([:]), options: arguments, context: context))
        if format == "json" {
            try WorkoutCommand.printJSON(participants, context)
        } else if participants.isEmpty {
            context.print("no participants")
        } else {
            let rows = participants.map { participant in
                [
                    participant.name, participant.devices.isEmpty ? "-" : participant.devices.joined(separator: ","),
                    participant.maximumHeartRate.map { String(Int($0.rounded())) } ?? "-", participant.workoutState.rawValue,
                ]
            }
            context.print(TextTable.render(header: ["NAME", "DEVICES", "MAX HR", "WORKOUT"], rows: rows))
        }
        return .success
    }

    static func decode(_ value: JSONValue) throws -> [ParticipantWorkouts.ParticipantSummary] {
        do {
            return try value.decode([ParticipantWorkouts.ParticipantSummary].self)
        } catch {
            throw CommandError(.dataError, "the daemon's participant list is not understood: \(error)")
        }
    }
}
