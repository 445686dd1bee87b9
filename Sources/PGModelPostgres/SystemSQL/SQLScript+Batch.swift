import Foundation

@_spi(PGModelInternals) extension SQLScript {
    /// `statements` as one `DO` block that runs them in order with `EXECUTE`: one round trip instead of
    /// one per statement, for DDL sent while a lock is held (a registration's tables and row-level
    /// security). Each statement travels base64-encoded, so no quoting inside it (dollar quotes, DO
    /// blocks, function bodies) can end the block early. Only for statements without binds or results;
    /// an error in one stops the block with that statement's SQLSTATE.
    ///
    /// ```swift
    /// try await execute(SQLStatement(sql: SQLScript.batch(["CREATE SCHEMA a", "CREATE TABLE a.t (x int)"])), on: connection)
    /// ```
    public static func batch(_ statements: [String]) -> String {
        var block = "DO $pgmodel_batch$ BEGIN\n"
        for statement in statements {
            block += "EXECUTE convert_from(decode('\(Data(statement.utf8).base64EncodedString())', 'base64'), 'UTF8');\n"
        }
        return block + "END $pgmodel_batch$"
    }
}
