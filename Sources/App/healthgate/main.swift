import FoundationEssentials
import GatewayRuntime
import LinuxSystem
#if canImport(Glibc)
import Glibc
#endif

// Entry point: everything else is injected from here.
MallocArenas.limit(variables: ProcessInfo.processInfo.environment)
let context = CommandContext(
    variables: ProcessInfo.processInfo.environment, output: .standardOutput, errors: .standardError,
    clock: SystemClock(), stdoutIsTerminal: isatty(1) == 1, stdinIsTerminal: isatty(0) == 1,
    terminalColumns: { TerminalWidth.columns(of: 1) }, errorColumns: { TerminalWidth.columns(of: 2) })
let status = await HealthgateCLI.main(CommandLine.arguments, context: context)
exit(status.rawValue)
