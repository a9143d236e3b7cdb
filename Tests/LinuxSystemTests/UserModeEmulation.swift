#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Whether this test process is an emulated program on a kernel of another architecture
/// (qemu-user through binfmt_misc, as `scripts/build-arm64 arm64-tests` runs the arm64 tests on
/// x86-64), told from two facts rather than from anything the runner sets: uname(2) answers with
/// the machine the process sees (qemu-user's `uname` reports the emulated one, `aarch64`), and
/// `/proc/sys/kernel/arch` (Linux 6.1 and later) is the kernel's own machine, which qemu-user
/// passes through unchanged (`x86_64`). On a kernel of the process's own architecture the two
/// agree.
struct UserModeEmulation: Equatable {
    /// The kernel's machine from `/proc/sys/kernel/arch`; nil before Linux 6.1.
    var kernelMachine: String?
    /// The machine uname(2) reports to this process.
    var processMachine: String

    /// The facts as this process reads them.
    static func current() -> UserModeEmulation {
        var name = utsname()
        _ = uname(&name)
        let machine = withUnsafeBytes(of: name.machine) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        let kernel = (try? String(contentsOfFile: "/proc/sys/kernel/arch", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return UserModeEmulation(kernelMachine: kernel, processMachine: machine)
    }

    /// "aarch64 emulated on an x86_64 kernel" when the two machines differ; nil when they agree
    /// or the kernel's is unknown (then the process is taken to run natively).
    var emulation: String? {
        guard let kernelMachine, !kernelMachine.isEmpty, kernelMachine != processMachine else { return nil }
        return "\(processMachine) emulated on an \(kernelMachine) kernel"
    }
}
