import Foundation
@_spi(PGModelInternals) import PGModelCore

/// SQL text with `$1…$n` placeholders and the values bound to them, in order.
///
/// ```swift
/// let statement = SQLStatement(sql: #"SELECT "id" FROM "public"."trip" WHERE "name" = $1"#, binds: [.string("Paris")])
/// ```
@_spi(PGModelInternals) public struct SQLStatement: Hashable, Sendable, CustomStringConvertible {
    public var sql: String
    public var binds: [PGValue]
    /// Parameters that are whole PostgreSQL arrays (one column of a set-based write), numbered after
    /// ``binds``: `$\(binds.count + 1)` is the first.
    public var arrays: [SQLArray]

    public init(sql: String, binds: [PGValue] = [], arrays: [SQLArray] = []) {
        self.sql = sql
        self.binds = binds
        self.arrays = arrays
    }

    /// The SQL and the kinds of its binds, never their values (they may be secrets).
    public var description: String {
        var text = "\(sql) -- binds: [\(binds.map(\.kindName).joined(separator: ", "))]"
        if !arrays.isEmpty {
            text += " arrays: [\(arrays.map { "\($0.element.rawValue)[\($0.values.count)]" }.joined(separator: ", "))]"
        }
        return text
    }
}

/// One array parameter: the values of one column for every row of a set-based write, `NULL`s included.
/// Sent in PostgreSQL's binary array format, each element encoded as a scalar bind of the same kind is.
///
/// ```swift
/// SQLArray(.text, [.string("Paris"), .null])   // $1::text[]
/// ```
@_spi(PGModelInternals) public struct SQLArray: Hashable, Sendable {
    /// The PostgreSQL element type, named as in SQL (`uuid`, `text`, `int8`, …).
    public enum Element: String, Hashable, Sendable {
        case bool, int8, float8, text, numeric, timestamptz, uuid, bytea

        /// The element type that carries values of an attribute of `type` (the kind ``PGValue`` a
        /// coerced value of that type has); the insert's assignment casts narrow it (`int8` to `int2`).
        public init(_ type: AttributeType) {
            switch type {
            case .string, .url, .json, .stringArray, .int64Array, .doubleArray, .boolArray: self = .text
            case .bool: self = .bool
            case .int16, .int32, .int64: self = .int8
            case .float, .double: self = .float8
            case .decimal: self = .numeric
            case .date: self = .timestamptz
            case .uuid: self = .uuid
            case .data: self = .bytea
            }
        }
    }

    public var element: Element
    public var values: [PGValue]

    public init(_ element: Element, _ values: [PGValue]) {
        self.element = element
        self.values = values
    }
}

/// Accumulates SQL text and numbers bind parameters as they are added.
struct SQLBuilder {
    var sql = ""
    var binds: [PGValue] = []
    /// Array parameters, numbered after every scalar bind (so a statement adds them last).
    var arrays: [SQLArray] = []
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

    /// Binds `ids` like ``bindIDs(_:)`` and returns them as a set to test membership in:
    /// `(SELECT unnest($1::uuid[]))`, for `"id" IN …`. The text-to-`uuid[]` cast is not immutable, so in
    /// `= ANY(…)` PostgreSQL evaluates it again for every row a scan filters (parsing the whole list each
    /// time: a 20,000-row delete took minutes); in a subquery it runs once and the test is a hash lookup.
    mutating func bindIDSet(_ ids: [UUID]) -> String {
        "(SELECT unnest(\(bindIDs(ids))))"
    }

    /// Appends `value` as the next bind and returns its placeholder.
    mutating func bind(_ value: PGValue) -> String {
        precondition(arrays.isEmpty, "scalar binds come before array binds")
        binds.append(value)
        return "$\(binds.count)"
    }

    /// Appends `array` as the next array parameter and returns its placeholder with its cast (`$3::uuid[]`).
    mutating func bind(_ array: SQLArray) -> String {
        arrays.append(array)
        return "$\(binds.count + arrays.count)::\(array.element.rawValue)[]"
    }

    var statement: SQLStatement { SQLStatement(sql: sql, binds: binds, arrays: arrays) }

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
