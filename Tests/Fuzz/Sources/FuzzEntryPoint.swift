import Foundation

// libFuzzer's entry points (https://llvm.org/docs/LibFuzzer.html). The binary holds every
// target; HEALTHGATE_FUZZ_TARGET names the one this run exercises, so one build (one link of
// every plugin with the fuzzer and address sanitizer) serves them all. scripts/fuzz sets it.

/// libFuzzer's driver (`int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const
/// uint8_t *, size_t))`, in libclang_rt.fuzzer since LLVM 11): parses libFuzzer's flags and runs.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The program's entry. SwiftPM links an executable target with `--defsym main=<module>_main`
/// (so tests can link the module), which leaves libFuzzer's own `main` unused: this is the
/// `main` it points to, and it hands over to libFuzzer's driver.
@_cdecl("healthgate_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzerTestOneInput(data, size) }
}

/// Reads HEALTHGATE_FUZZ_TARGET once, before the first input; an unknown name stops the run.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> Int32 {
    let name = ProcessInfo.processInfo.environment["HEALTHGATE_FUZZ_TARGET"] ?? ""
    guard FuzzTarget(rawValue: name) != nil else {
        FileHandle.standardError.write(Data(
            "HEALTHGATE_FUZZ_TARGET must be one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
        exit(64)
    }
    return 0
}

/// Runs the selected target on one input. A crash, a trap or an address-sanitizer report is a
/// finding; returning is a pass.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selectedTarget?.run(bytes)
    return 0
}

/// The target HEALTHGATE_FUZZ_TARGET names: an immutable global, read once at the first input.
let selectedTarget = FuzzTarget(rawValue: ProcessInfo.processInfo.environment["HEALTHGATE_FUZZ_TARGET"] ?? "")
