/// The storage type of an attribute: decides the PostgreSQL column type and how values are bound.
///
/// ```swift
/// AttributeType.string.postgresType   // "text"
/// ```
public enum AttributeType: String, Codable, Hashable, Sendable, CaseIterable {
    case string, bool, int16, int32, int64, float, double, decimal, date, uuid, data, url
    /// A Codable value (struct, enum with associated values, `@Attribute(.codable)`) as `jsonb`, readable
    /// in psql; its fields can be used in predicates and sorts. Travels as JSON text in `.string`.
    case json
    /// Arrays of scalars as PostgreSQL arrays (`text[]`, `bigint[]`, `double precision[]`, `boolean[]`).
    /// They travel as JSON array text in `.string`.
    case stringArray, int64Array, doubleArray, boolArray

    /// The PostgreSQL column type.
    @_spi(PGModelInternals) public var postgresType: String {
        switch self {
        case .string, .url: return "text"
        case .bool: return "boolean"
        case .int16: return "smallint"
        case .int32: return "integer"
        case .int64: return "bigint"
        case .float: return "real"
        case .double: return "double precision"
        case .decimal: return "numeric"
        case .date: return "timestamptz"
        case .uuid: return "uuid"
        case .data: return "bytea"
        case .json: return "jsonb"
        case .stringArray: return "text[]"
        case .int64Array: return "bigint[]"
        case .doubleArray: return "double precision[]"
        case .boolArray: return "boolean[]"
        }
    }

    /// Whether values travel as JSON text and are converted by the database (jsonb and arrays).
    @_spi(PGModelInternals) public var isJSONTransported: Bool {
        switch self {
        case .json, .stringArray, .int64Array, .doubleArray, .boolArray: return true
        default: return false
        }
    }

    /// The element type of an array type.
    public var arrayElementType: AttributeType? {
        switch self {
        case .stringArray: return .string
        case .int64Array: return .int64
        case .doubleArray: return .double
        case .boolArray: return .bool
        default: return nil
        }
    }

    /// The SQL that turns bind `placeholder` (JSON text for jsonb and arrays) into a column value.
    @_spi(PGModelInternals) public func bindExpression(_ placeholder: String) -> String {
        switch self {
        case .json: return "\(placeholder)::jsonb"
        case .stringArray, .int64Array, .doubleArray, .boolArray:
            let element = arrayElementType?.postgresType ?? "text"
            return "ARRAY(SELECT e::\(element) FROM jsonb_array_elements_text(\(placeholder)::jsonb) AS e)::\(postgresType)"
        default: return placeholder
        }
    }

    /// The SQL that reads `column` in the form values travel in (JSON text for jsonb and arrays).
    @_spi(PGModelInternals) public func selectExpression(_ column: String) -> String {
        switch self {
        case .json: return "\(column)::text"
        case .stringArray, .int64Array, .doubleArray, .boolArray: return "to_jsonb(\(column))::text"
        default: return column
        }
    }

    /// Whether `value` may be stored in a column of this type, after ``coerce(_:)``.
    @_spi(PGModelInternals) public func accepts(_ value: PGValue) -> Bool {
        switch (self, value) {
        case (_, .null): return true
        case (.string, .string), (.url, .string): return true
        case (.bool, .bool): return true
        case (.int16, .int), (.int32, .int), (.int64, .int): return true
        case (.float, .double), (.double, .double): return true
        case (.decimal, .decimal): return true
        case (.date, .date), (.uuid, .uuid), (.data, .data): return true
        case (.json, .string), (.stringArray, .string), (.int64Array, .string), (.doubleArray, .string), (.boolArray, .string): return true
        default: return false
        }
    }

    /// Converts a value that JSON could not type exactly (an integral number for a double column,
    /// a number for a decimal column, a string for a uuid column) into the case this type stores.
    /// Returns `nil` when the value cannot represent this type; integers out of the column's range included.
    @_spi(PGModelInternals) public func coerce(_ value: PGValue) -> PGValue? {
        switch (self, value) {
        case (_, .null): return .null
        case (.int16, .int(let i)): return (Int64(Int16.min)...Int64(Int16.max)).contains(i) ? value : nil
        case (.int32, .int(let i)): return (Int64(Int32.min)...Int64(Int32.max)).contains(i) ? value : nil
        case (.float, .int(let i)), (.double, .int(let i)): return .double(Double(i))
        case (.decimal, .int(let i)): return .decimal(Decimal(i))
        case (.decimal, .double(let d)):
            // Decimal cannot hold every double (it becomes NaN beyond about 1e146), and NaN is not a number to store.
            let decimal = Decimal(d)
            return decimal.isNaN ? nil : .decimal(decimal)
        case (.decimal, .string(let s)):
            return Decimal(string: s, locale: nil).map(PGValue.decimal)
        case (.uuid, .string(let s)): return UUID(uuidString: s).map(PGValue.uuid)
        case (.date, .string(let s)): return PGValue.parseDate(s).map(PGValue.date)
        default: return accepts(value) ? value : nil
        }
    }
}

import Foundation
