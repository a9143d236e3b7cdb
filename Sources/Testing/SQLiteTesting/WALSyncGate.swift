public import AsyncPrimitives
import CSQLite
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Holds a commit in the one place that makes it durable: the sync of the write-ahead log.
///
/// Installs, as SQLite's default VFS, a VFS that wraps the default unix VFS and passes every
/// call through, except one: while the gate is held (``hold()``), a sync of a WAL under the gated
/// directory that follows frames written since the WAL's last sync (a transaction's frames, not
/// the WAL's header alone) waits until ``release()``. A connection committing then waits inside
/// its commit, after its frames are written and before they are durable: whatever must not
/// happen before durability (a reader seeing the commit, a follower sending it, an answer) can
/// be checked against that moment. Files outside the gated directory are never held.
///
/// Only connections opened after ``init(gating:)`` go through it; ``uninstall()`` puts the
/// previous default back. The VFS structures are never freed: a connection keeps pointing at
/// them for as long as it is open, whenever that ends.
///
/// The wait blocks the committing thread, which for the store is its writer's own serial queue,
/// never Swift's cooperative pool.
public final class WALSyncGate: Sendable {
    private struct State {
        var held = false
        var waiting: [DispatchSemaphore] = []
        var framesSynced = 0
    }

    private let state = Mutex(State())
    /// How many syncs wait at the gate now: wait for 1 to know a commit is held in its sync.
    public let waitingSyncs = AsyncCondition(0)
    /// The gated directory, as given and as resolved (SQLite opens files by their full path).
    private let prefixes: [String]
    // Allocated once, never freed (see the type's documentation), and not changed after
    // `init`: SQLite reads them from whichever thread opens or uses a file.
    nonisolated(unsafe) private let vfs: UnsafeMutablePointer<sqlite3_vfs>
    nonisolated(unsafe) private let previous: UnsafeMutablePointer<sqlite3_vfs>
    nonisolated(unsafe) private let methods: UnsafeMutablePointer<sqlite3_io_methods>
    nonisolated(unsafe) private let name: UnsafeMutablePointer<CChar>

    /// Installs the gate as SQLite's default VFS, holding nothing yet; only WAL files under
    /// `directory` are ever held.
    public init(gating directory: String) {
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let real = realpath(directory, &resolved).map { String(cString: $0) }
        prefixes = Array(Set([directory, real].compactMap { $0 }.map { $0.hasSuffix("/") ? $0 : $0 + "/" }))
        // sqlite3_vfs_find(nil) is the default VFS ("unix" on Linux), always registered.
        guard let base = sqlite3_vfs_find(nil) else { preconditionFailure("SQLite has no default VFS") }
        previous = base
        name = strdup("healthgate-wal-sync-gate")
        methods = .allocate(capacity: 1)
        methods.initialize(to: Self.forwardingMethods())
        vfs = .allocate(capacity: 1)
        // The unix VFS's methods but xOpen, copied as they are: they ignore the VFS they are
        // called with (os_unix.c: UNUSED_PARAMETER), which is the wrapper here. xOpen reads the
        // unix VFS's pAppData (its locking style), so the wrapper's xOpen calls it with its own.
        var wrapper = base.pointee
        wrapper.pNext = nil
        wrapper.zName = UnsafePointer(name)
        wrapper.szOsFile = Int32(Self.realFileOffset) + base.pointee.szOsFile
        wrapper.xOpen = { vfs, path, file, flags, outFlags in WALSyncGate.open(vfs, path, file, flags, outFlags) }
        // Retained for good: a connection opened through the gate opens its WAL through it
        // later, whenever that is.
        wrapper.pAppData = Unmanaged.passRetained(self).toOpaque()
        vfs.initialize(to: wrapper)
        sqlite3_vfs_register(vfs, 1)
    }

    /// Puts the previous default VFS back. Connections opened through the gate keep using it.
    public func uninstall() {
        release()
        sqlite3_vfs_register(previous, 1)
        sqlite3_vfs_unregister(vfs)
    }

    /// From now on, a commit's sync of a gated WAL waits until ``release()``.
    public func hold() {
        state.withLock { $0.held = true }
    }

    /// Lets the syncs waiting at the gate, and every later one, go on.
    public func release() {
        let waiting = state.withLock { state -> [DispatchSemaphore] in
            state.held = false
            return takeWaiting(&state)
        }
        for semaphore in waiting { semaphore.signal() }
    }

    /// Lets the syncs waiting at the gate go on, and keeps holding the later ones.
    public func releaseWaiting() {
        let waiting = state.withLock { takeWaiting(&$0) }
        for semaphore in waiting { semaphore.signal() }
    }

    /// How many syncs of a gated WAL's frames went through the gate (held or not).
    public var framesSynced: Int { state.withLock { $0.framesSynced } }

    /// Empties the waiting list, under the state's lock so that ``waitingSyncs`` always counts it.
    private func takeWaiting(_ state: inout State) -> [DispatchSemaphore] {
        let waiting = state.waiting
        state.waiting = []
        waitingSyncs.update { $0 -= waiting.count }
        return waiting
    }

    /// Called on the committing thread before a gated WAL's frames are synced.
    private func syncingFrames() {
        let semaphore = state.withLock { state -> DispatchSemaphore? in
            state.framesSynced += 1
            guard state.held else { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            state.waiting.append(semaphore)
            waitingSyncs.update { $0 += 1 }
            return semaphore
        }
        semaphore?.wait()
    }

    private func gates(_ path: String) -> Bool {
        prefixes.contains { path.hasPrefix($0) }
    }

    // MARK: The files

    /// What the gate keeps in front of every file it opens: SQLite's `sqlite3_file` (its
    /// `pMethods`, the gate's methods), then the gate's own fields; the real file follows at
    /// ``realFileOffset``.
    private struct GatedFile {
        var base: sqlite3_file
        var gate: UnsafeMutableRawPointer?
        /// A WAL under the gated directory.
        var isGatedWAL: Bool
        /// Frames (writes past the WAL header) were written since the WAL's last sync.
        var wroteFrames: Bool
    }

    /// The WAL header's size (src/wal.c, WAL_HDRSIZE): a write at or past it writes frames.
    private static let walHeaderSize: Int64 = 32
    private static let realFileOffset = (MemoryLayout<GatedFile>.stride + 15) & ~15

    private static func gated(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<GatedFile> {
        // SQLite hands every method the pointer xOpen filled in: a GatedFile by construction.
        UnsafeMutableRawPointer(file!).assumingMemoryBound(to: GatedFile.self)
    }

    private static func real(_ file: UnsafeMutablePointer<sqlite3_file>?) -> UnsafeMutablePointer<sqlite3_file> {
        (UnsafeMutableRawPointer(file!) + realFileOffset).assumingMemoryBound(to: sqlite3_file.self)
    }

    /// The real file's methods: the unix VFS sets them whenever its xOpen succeeds.
    private static func realMethods(_ file: UnsafeMutablePointer<sqlite3_file>?) -> sqlite3_io_methods {
        real(file).pointee.pMethods!.pointee
    }

    private static func open(
        _ vfs: UnsafeMutablePointer<sqlite3_vfs>?, _ path: UnsafePointer<CChar>?, _ file: UnsafeMutablePointer<sqlite3_file>?,
        _ flags: Int32, _ outFlags: UnsafeMutablePointer<Int32>?
    ) -> Int32 {
        // SQLite calls xOpen with the VFS registered in init, whose pAppData is the gate.
        let gate = Unmanaged<WALSyncGate>.fromOpaque(vfs!.pointee.pAppData!).takeUnretainedValue()
        let realFile = real(file)
        // The real VFS's own pointer: the unix VFS reads its locking style from its pAppData.
        let rc = gate.previous.pointee.xOpen!(gate.previous, path, realFile, flags, outFlags)
        let isGatedWAL = flags & SQLITE_OPEN_WAL != 0 && path.map { gate.gates(String(cString: $0)) } == true
        gated(file).initialize(to: GatedFile(
            base: sqlite3_file(pMethods: realFile.pointee.pMethods == nil ? nil : UnsafePointer(gate.methods)),
            gate: vfs!.pointee.pAppData, isGatedWAL: isGatedWAL, wroteFrames: false))
        return rc
    }

    /// Every method passes through to the real file; xWrite notes frames and xSync waits at
    /// the gate. The unix VFS's files have every method of version 3, hence the `!`s.
    private static func forwardingMethods() -> sqlite3_io_methods {
        // The closures name the type (`Gate.`) rather than calling its static functions bare: a
        // bare call in a static method captures the metatype, and a C function pointer captures
        // nothing.
        typealias Gate = WALSyncGate
        return sqlite3_io_methods(
            iVersion: 3,
            xClose: { file in Gate.realMethods(file).xClose!(Gate.real(file)) },
            xRead: { file, buffer, count, offset in Gate.realMethods(file).xRead!(Gate.real(file), buffer, count, offset) },
            xWrite: { file, buffer, count, offset in
                let header = Gate.gated(file)
                if header.pointee.isGatedWAL, offset + Int64(count) > Gate.walHeaderSize { header.pointee.wroteFrames = true }
                return Gate.realMethods(file).xWrite!(Gate.real(file), buffer, count, offset)
            },
            xTruncate: { file, size in Gate.realMethods(file).xTruncate!(Gate.real(file), size) },
            xSync: { file, flags in
                let header = Gate.gated(file)
                if header.pointee.isGatedWAL, header.pointee.wroteFrames, let gate = header.pointee.gate {
                    header.pointee.wroteFrames = false
                    Unmanaged<WALSyncGate>.fromOpaque(gate).takeUnretainedValue().syncingFrames()
                }
                return Gate.realMethods(file).xSync!(Gate.real(file), flags)
            },
            xFileSize: { file, size in Gate.realMethods(file).xFileSize!(Gate.real(file), size) },
            xLock: { file, lock in Gate.realMethods(file).xLock!(Gate.real(file), lock) },
            xUnlock: { file, lock in Gate.realMethods(file).xUnlock!(Gate.real(file), lock) },
            xCheckReservedLock: { file, result in Gate.realMethods(file).xCheckReservedLock!(Gate.real(file), result) },
            xFileControl: { file, operation, argument in
                Gate.realMethods(file).xFileControl!(Gate.real(file), operation, argument)
            },
            xSectorSize: { file in Gate.realMethods(file).xSectorSize!(Gate.real(file)) },
            xDeviceCharacteristics: { file in Gate.realMethods(file).xDeviceCharacteristics!(Gate.real(file)) },
            xShmMap: { file, page, size, extend, mapped in
                Gate.realMethods(file).xShmMap!(Gate.real(file), page, size, extend, mapped)
            },
            xShmLock: { file, offset, count, flags in Gate.realMethods(file).xShmLock!(Gate.real(file), offset, count, flags) },
            xShmBarrier: { file in Gate.realMethods(file).xShmBarrier!(Gate.real(file)) },
            xShmUnmap: { file, delete in Gate.realMethods(file).xShmUnmap!(Gate.real(file), delete) },
            xFetch: { file, offset, count, pointer in Gate.realMethods(file).xFetch!(Gate.real(file), offset, count, pointer) },
            xUnfetch: { file, offset, pointer in Gate.realMethods(file).xUnfetch!(Gate.real(file), offset, pointer) })
    }
}
