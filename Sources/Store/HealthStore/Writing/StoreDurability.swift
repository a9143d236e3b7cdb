import LinuxSystem
import SQLite

/// The gateway's durability rule, stated and enforced here and nowhere else:
///
/// **Nothing leaves the box before the transaction that holds it is on stable storage.** A
/// remote sink sends only what a power cut cannot take back, and every answer that says
/// something is stored (`workout end`, `participant assign`, a sign-in on the board, `delete`,
/// `dead-letters retry`, a follower's cursor) comes after its commit is durable.
///
/// One setting enforces it: the store's writer connection, the only connection through which
/// anything is written, runs `synchronous=FULL`. In WAL mode SQLite then syncs the WAL at every
/// commit *before* it publishes the commit to other connections: `walFrames` (src/wal.c) writes
/// the transaction's frames, calls `sqlite3OsSync` on the WAL, and only then appends them to the
/// wal-index (`walIndexAppend`) and writes the wal-index header (`walIndexWriteHdr`), which is
/// what a reader's next transaction reads. Hence:
/// - **durable before visible**: every reader (the followers' reads of the change log,
///   `changes(since:)`, `workout end`'s look for the stored workout, `healthgate query` in
///   another process) sees only commits that are on disk; a follower therefore never sends
///   past a durable anchor, and anchors and versions never go back past what a follower sent;
/// - **durable before answered**: every write returns after its commit, and so after its sync.
///
/// With `synchronous=NORMAL` SQLite syncs only at checkpoints, so a commit would be visible
/// (and sent, and answered) long before it is durable. Checkpoints need nothing more: SQLite
/// syncs the WAL before copying it into the database and the database before it resets or
/// truncates the WAL. The `-shm` file (the wal-index) needs no sync: it is rebuilt from the WAL
/// after a crash. What SQLite does not sync is the directory entry of a new database file (it
/// syncs the directory of a new journal or WAL only): ``persistCreation(of:directories:)`` does.
///
/// The cost: one sync of the WAL per commit. The `sqlite` sink commits once per batch window,
/// so records pay one sync per window between them (`Benchmarks/RESULTS.md`, "ingest").
enum StoreDurability {
    /// The writer connection's `synchronous` setting (see the type's documentation).
    static let synchronous = SQLiteConnection.Synchronous.full

    /// Makes the name of a store file just created durable: syncs the directory that holds it
    /// and, for each directory created on the way (`directories`, the topmost first), the
    /// directory above it. Without it a power cut soon after the first start could leave a
    /// directory without the file, whatever the file's own syncs.
    static func persistCreation(of path: String, directories: [String]) throws(StoreError) {
        let holder = FileSystem.parentDirectory(of: path)
        for directory in directories.map(FileSystem.parentDirectory(of:)) + [holder] {
            do {
                try FileSystem.synchronizeDirectory(directory)
            } catch {
                throw StoreError(.ioError, path: path, message: "cannot flush the directory \(directory) to disk: \(error)")
            }
        }
    }
}
