import SQLite

/// A statement's rows in anchor order (the anchor in its column 0), stepped one at a time: a
/// reader that merges several tables by anchor looks at each table's next anchor and decodes a
/// row only when it takes it (``HealthStore/changes(since:type:limit:includingCorrelationMembers:)``).
///
/// The statement is the connection's cached one for its SQL: while the cursor is open, nothing
/// else on the connection may run the same SQL. ``close()`` resets it.
struct RowCursor {
    /// The statement, on the current row while ``anchor`` is not nil.
    let statement: SQLiteStatement
    /// The current row's anchor; nil once the rows are done.
    private(set) var anchor: Int64?
    private let path: String

    /// Runs `sql` with `bindings` and steps to its first row.
    init(_ connection: SQLiteConnection, _ sql: String, _ bindings: [SQLiteValue], path: String) throws(StoreError) {
        do {
            statement = try connection.statement(sql)
            try statement.bind(bindings)
        } catch {
            throw StoreError(error, path: path)
        }
        self.path = path
        try advance()
    }

    /// Steps to the next row.
    mutating func advance() throws(StoreError) {
        // The anchor is the table's INTEGER PRIMARY KEY: never NULL.
        anchor = try RowDecoder.step(statement, path: path) ? statement.int64(0) : nil
    }

    /// Resets the statement: a cursor left on a row would keep reading when its statement is
    /// next used.
    func close() {
        statement.reset()
    }
}
