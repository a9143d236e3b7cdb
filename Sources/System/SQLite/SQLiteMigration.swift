/// One step of a schema migration, from version v to v + 1: SQL text, or Swift code over the
/// connection for a step that SQL alone cannot express (moving data into a form computed by a
/// Swift function, say).
///
/// Either kind runs inside the step's exclusive transaction (see ``SQLiteConnection/migrate(_:)-([SQLiteMigration])``):
/// everything it changes is committed together with the new `user_version`, or nothing is.
public enum SQLiteMigration: Sendable {
    /// One or more statements, run with ``SQLiteConnection/execute(_:)``.
    case sql(String)
    /// Code run with the connection, inside the step's transaction.
    ///
    /// Contract: the closure must not begin, commit or roll back a transaction (it is already in
    /// one) nor change `user_version` (the caller bumps it). Throwing rolls the whole step back and
    /// leaves the file at the version it had. It runs on the caller's thread (never async), so it
    /// may run blocking statements.
    case code(@Sendable (SQLiteConnection) throws(SQLiteError) -> Void)
}
