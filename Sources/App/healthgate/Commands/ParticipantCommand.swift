import FoundationEssentials
import HealthModel
import GatewayRuntime
import Workouts
import WorkoutRuntime

/// `healthgate participant …`: who wears which device in group workouts.
enum ParticipantCommand {
    static let command = Command(
        name: "participant", summary: "Assign devices to participants of group workouts and list them.",
        usage: "participant assign DEVICE NAME [--keep] | participant list [--format table|json] | participant straps [--format table|json] "
            + "| participant attribute NAME (--id UUID... | --device NAME ...) | participant export NAME --output FILE "
            + "| participant erase NAME [--yes]",
        discussion: """
            A participant is a person with a profile and the devices they wear (the configuration's \
            'participants'). 'assign' moves a device (BLE address, Polar device id, ant:120:NUMBER, serial \
            number or name) to NAME at run time, creating the participant with the configuration's 'profile' \
            if NAME is new; the daemon commits it to its store before answering, so it survives a restart. A \
            workout in progress takes the device's readings from the assignment on (they are NAME's), and \
            the previous wearer's workout stops taking them.

            Signing in: while a class runs (a participant's workout is in progress, 'workout start --all'), \
            'assign' signs the strap in: NAME's workout starts, with the class's activity, from the strap's \
            first beat in the class, and the strap is freed when the class ends (the last participant's \
            workout ends) unless --keep is given. 'straps' lists the heart-rate straps nobody wears heard \
            in the last minute (the board's new-strap tiles), by the identity 'assign' takes.

            A participant's readings are theirs: every reading is stored with its person (metadata \
            healthgate.person) by who wore, owns or shares the device then (docs/data-model.md, "People \
            and attribution"); 'assign' hands a strap's readings over from the moment it is made. \
            'attribute' gives stored readings to a person afterwards, 'export' writes everything \
            stored of a person to one file, 'erase' deletes it all (the three on the store, like \
            'query' and 'delete').
            """,
        subcommands: [assign, list, straps, attribute, export, erase])

    static let assign = Command(
        name: "assign", summary: "Assign a device to a participant (during a class: sign it in).",
        usage: "participant assign DEVICE NAME [--keep] [--config FILE]",
        options: [OptionSpec(name: "keep", value: nil, help: "During a class: keep the strap assigned after the class ends.")]
            + ControlSocketPath.options
    ) { arguments, context in
        let device = try arguments.positional(0, "the DEVICE")
        let name = try arguments.positional(1, "the participant's NAME")
        let keep = arguments.flag("keep")
        let result = try await ControlSocketPath.send(
            "participant.assign",
            arguments: .object(["device": .string(device), "participant": .string(name), "keep": .bool(keep)]),
            options: arguments, context: context)
        let participants = try decode(result)
        let wearer = participants.first { $0.name.lowercased() == name.lowercased() }
        let devices = wearer?.devices ?? [device]
        let temporary = wearer?.untilClassEnd?.contains(device) ?? false
        context.print(
            "\(device) → \(wearer?.name ?? name) (wears \(devices.joined(separator: ", ")))"
                + (temporary ? "; signed in until the class ends" : "")
                + (wearer.map { $0.workoutState == .running ? "; workout running" : "" } ?? ""))
        return .success
    }

    static let straps = Command(
        name: "straps", summary: "List the heart-rate straps nobody wears, heard in the last minute.",
        usage: "participant straps [--format table|json] [--config FILE]",
        options: [OptionSpec(name: "format", value: "FORMAT", help: "table (default) or json.")] + ControlSocketPath.options
    ) { arguments, context in
        let format = try arguments.format(among: ["table", "json"])
        let result = try await ControlSocketPath.send("participant.straps", arguments: .object([:]), options: arguments, context: context)
        let straps = try decode([ClassSignIn.NewStrap].self, result, "strap list")
        context.print(try CommandOutput.list(
            straps, format: format, empty: "no new straps (every strap heard in the last minute is worn)"
        ) { straps in
            let rows = straps.map { strap in
                [
                    strap.identity, strap.radio?.label ?? "-", String(Int(strap.heartRate.rounded())),
                    RFC3339.string(from: strap.firstBeat), strap.name ?? "-",
                ]
            }
            return TextTable.render(header: ["STRAP", "RADIO", "HR", "FIRST BEAT", "NAME"], rows: rows)
        })
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
        context.print(try CommandOutput.list(participants, format: format, empty: "no participants") { participants in
            let rows = participants.map { participant in
                [
                    participant.name, participant.devices.isEmpty ? "-" : participant.devices.joined(separator: ","),
                    participant.maximumHeartRate.map { String(Int($0.rounded())) } ?? "-", participant.workoutState.rawValue,
                    participant.untilClassEnd.map { $0.joined(separator: ",") } ?? "-",
                ]
            }
            return TextTable.render(header: ["NAME", "DEVICES", "MAX HR", "WORKOUT", "FREED AT CLASS END"], rows: rows)
        })
        return .success
    }

    static func decode(_ value: JSONValue) throws -> [ParticipantWorkouts.ParticipantSummary] {
        try decode([ParticipantWorkouts.ParticipantSummary].self, value, "participant list")
    }

    /// The daemon's answer as `type`, or a data error naming `what` it should have been.
    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ what: String) throws -> T {
        do {
            return try value.decode(type)
        } catch {
            throw CommandError(.dataError, "the daemon's \(what) is not understood: \(error)")
        }
    }
}
