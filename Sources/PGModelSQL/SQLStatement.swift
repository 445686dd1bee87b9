import Foundation
import PGModelCore

/// SQL text with `$1…$n` placeholders and the values bound to them, in order.
///
/// ```swift
/// let statement = SQLStatement(sql: #"SELECT "id" FROM "public"."trip" WHERE "name" = $1"#, binds: [.string("Paris")])
/// ```
public struct SQLStatement: Hashable, Sendable, CustomStringConvertible {
    public var sql: String
    public var binds: [PGValue]

    public init(sql: String, binds: [PGValue] = []) {
        self.sql = sql
        self.binds = binds
    }

    /// The SQL and the kinds of its binds, never their values (they may be secrets).
    public var description: String {
        "\(sql) -- binds: [\(binds.map(\.kindName).joined(separator: ", "))]"
    }
}

/// Accumulates SQL text and numbers bind parameters as they are added.
struct SQLBuilder {
    var sql = ""
    var binds: [PGValue] = []
    /// Aliases handed out so far; the main table is `t0`.
    var aliasCount = 0

    /// A fresh table alias: `t1`, `t2`, …
    mutating func nextAlias() -> String {
        aliasCount += 1
        return "t\(aliasCount)"
    }

    /// Binds `ids` as one `uuid[]` parameter (its text form), so any number of ids is one bind.
    mutating func bindIDs(_ ids: [UUID]) -> String {
        bind(.string("{" + ids.map { $0.uuidString.lowercased() }.joined(separator: ",") + "}")) + "::uuid[]"
    }

    /// Appends `value` as the next bind and returns its placeholder.
    mutating func bind(_ value: PGValue) -> String {
        binds.append(value)
        return "$\(binds.count)"
    }

    var statement: SQLStatement { SQLStatement(sql: sql, binds: binds) }

    /// ``statement``, or `invalid_field` when it needs more binds than PostgreSQL takes in one statement
    /// (each operand of a predicate is one, so a hostile predicate can ask for more).
    func checkedStatement(model: String) throws -> SQLStatement {
        guard binds.count <= RequestLimits.maximumBindCount else {
            throw PGModelError(.invalidField, "a request for \(model) needs \(binds.count) values, more than the \(RequestLimits.maximumBindCount) PostgreSQL takes in one statement",
                               model: model)
        }
        return statement
    }
}
