import CLinuxSystem

/// How many malloc arenas the process keeps.
///
/// glibc gives each thread that allocates while another holds an arena an arena of its own, up to
/// eight per core, and each keeps the memory its thread freed for that thread. The gateway's
/// threads (Dispatch's workers, the store's queues) allocate little and rarely at once, so two
/// arenas serve them, and the freed memory of one thread is reused by the others instead of
/// staying resident in an arena per thread.
public enum MallocArenas {
    public static let limit: Int32 = 2

    /// Limits the arenas unless the user chose a limit (`MALLOC_ARENA_MAX`, or
    /// `glibc.malloc.arena_max` in `GLIBC_TUNABLES`). Call before any thread is started.
    public static func limit(variables: [String: String]) {
        if variables["MALLOC_ARENA_MAX"] != nil { return }
        // GLIBC_TUNABLES is `name=value:name=value` (tunables(7)). Split on the separator rather
        // than searched with `contains(_:)`, whose substring search would bring _StringProcessing's
        // code into every process for this one call (Benchmarks/README.md, "memory").
        let tunables = variables["GLIBC_TUNABLES", default: ""].split(separator: ":")
        if tunables.contains(where: { $0.split(separator: "=").first == "glibc.malloc.arena_max" }) { return }
        _ = mallopt(M_ARENA_MAX, limit)
    }
}
