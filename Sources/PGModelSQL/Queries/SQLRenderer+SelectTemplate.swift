import Foundation
@_spi(PGModelInternals) import PGModelCore

/// The select of every fetch request of one shape: its SQL text, where each of its binds comes from, and
/// its layout, worked out once (``SQLRenderer/selectTemplate(_:)``) and then filled in per request
/// (``statement(_:)``) without rendering again.
///
/// A request's *shape* is the request with every value that becomes a bind (the predicate's captured
/// values, `limit`, `offset`) replaced by a neutral value of its kind; its *parameters* are those values in
/// a fixed order (``FetchRequest/selectParameters()``). A point fetch by one column, called again and again
/// with a different key, is one shape.
///
/// ```swift
/// if let (shape, parameters) = request.selectParameters(), let template = try renderer.selectTemplate(shape),
///    let statement = template.statement(parameters) { … }
/// ```
@_spi(PGModelInternals) public struct SelectTemplate: Sendable {
    /// Where one bind's value comes from.
    public enum Bind: Hashable, Sendable {
        /// The request's parameter at this index.
        case parameter(Int)
        /// The same value for every request of the shape (e.g. the class names of an entity filter).
        case constant(PGValue)
    }

    /// The statement's SQL text, the same for every request of the shape.
    public let sql: String
    /// The statement's binds, in placeholder order.
    public let binds: [Bind]
    /// The columns the statement returns (``SQLRenderer/selectLayout(_:)``).
    public let layout: SelectLayout

    /// The statement for a request of this shape with `parameters`; nil when they do not fit the template.
    public func statement(_ parameters: [PGValue]) -> SQLStatement? {
        var values: [PGValue] = []
        values.reserveCapacity(binds.count)
        for bind in binds {
            switch bind {
            case .parameter(let index):
                guard index >= 0, index < parameters.count else { return nil }
                values.append(parameters[index])
            case .constant(let value):
                values.append(value)
            }
        }
        return SQLStatement(sql: sql, binds: values)
    }
}

@_spi(PGModelInternals) extension FetchRequest {
    /// This request's shape and parameters (see ``SelectTemplate``); nil for a request the templates do not
    /// cover (an id list, a related fetch, a keyset page, an aggregate over a relationship): those are
    /// rendered every time.
    ///
    /// Parameters are `limit`, then `offset`, then the predicate's values depth-first; `NULL` and booleans
    /// stay in the shape, since the SQL around them depends on them (`IS NULL`).
    public func selectParameters() -> (shape: FetchRequest, parameters: [PGValue])? {
        selectParameters { value, _ in value.neutralOfKind }
    }

    /// ``selectParameters()`` with each parameter replaced by `substitute(value, index)` in the shape.
    func selectParameters(_ substitute: (PGValue, Int) -> PGValue) -> (shape: FetchRequest, parameters: [PGValue])? {
        guard identifiers == nil, related == nil, after == nil else { return nil }
        var shape = self
        var parameters: [PGValue] = []
        if let limit {
            parameters.append(.int(Int64(limit)))
            guard case .int(let v) = substitute(.int(Int64(limit)), parameters.count - 1), let substituted = Int(exactly: v) else { return nil }
            shape.limit = substituted
        }
        if let offset {
            parameters.append(.int(Int64(offset)))
            guard case .int(let v) = substitute(.int(Int64(offset)), parameters.count - 1), let substituted = Int(exactly: v) else { return nil }
            shape.offset = substituted
        }
        if let predicate {
            guard let parameterized = Self.parameterize(predicate, &parameters, substitute) else { return nil }
            shape.predicate = parameterized
        }
        return (shape, parameters)
    }

    private static func parameterize(_ expression: QueryExpression, _ parameters: inout [PGValue],
                                     _ substitute: (PGValue, Int) -> PGValue) -> QueryExpression? {
        func value(_ v: PGValue) -> PGValue {
            guard v.isParameter else { return v }
            parameters.append(v)
            return substitute(v, parameters.count - 1)
        }
        func walk(_ e: QueryExpression) -> QueryExpression? {
            switch e {
            case .key, .isKind:
                return e
            case .value(let v):
                return .value(value(v))
            case .aggregate:
                // Its predicate and value render inside a subquery; not worth a template.
                return nil
            case .field(let document, let path, let type):
                return walk(document).map { .field($0, path, type) }
            case .arrayContains(let l, let r):
                guard let l = walk(l), let r = walk(r) else { return nil }
                return .arrayContains(l, r)
            case .arrayElement(let array, let index):
                // The index is rendered into the SQL, so it is part of the shape.
                return walk(array).map { .arrayElement($0, index) }
            case .arrayFold(let fold, let array):
                return walk(array).map { .arrayFold(fold, $0) }
            case .compare(let op, let l, let r):
                guard let l = walk(l), let r = walk(r) else { return nil }
                return .compare(op, l, r)
            case .arithmetic(let op, let l, let r):
                guard let l = walk(l), let r = walk(r) else { return nil }
                return .arithmetic(op, l, r)
            case .string(let op, let l, let r):
                guard let l = walk(l), let r = walk(r) else { return nil }
                return .string(op, l, r)
            case .coalesce(let l, let r):
                guard let l = walk(l), let r = walk(r) else { return nil }
                return .coalesce(l, r)
            case .and(let operands):
                var out: [QueryExpression] = []
                out.reserveCapacity(operands.count)
                for operand in operands {
                    guard let w = walk(operand) else { return nil }
                    out.append(w)
                }
                return .and(out)
            case .or(let operands):
                var out: [QueryExpression] = []
                out.reserveCapacity(operands.count)
                for operand in operands {
                    guard let w = walk(operand) else { return nil }
                    out.append(w)
                }
                return .or(out)
            case .not(let operand):
                return walk(operand).map { .not($0) }
            case .negate(let operand):
                return walk(operand).map { .negate($0) }
            case .conditional(let a, let b, let c):
                guard let a = walk(a), let b = walk(b), let c = walk(c) else { return nil }
                return .conditional(a, b, c)
            case .in(let needle, let values):
                guard let needle = walk(needle) else { return nil }
                return .in(needle, values.map(value))
            }
        }
        return walk(expression)
    }
}

extension PGValue {
    /// Whether the value becomes a bind of its own wherever it stands, whatever it is: `NULL` and booleans
    /// do not (`IS NULL`; constant folding), so they are part of a request's shape.
    var isParameter: Bool {
        switch self {
        case .null, .bool: return false
        case .int, .double, .string, .decimal, .date, .uuid, .data: return true
        }
    }

    /// A fixed value of the same kind, standing for any value of it in a request's shape.
    var neutralOfKind: PGValue {
        switch self {
        case .null, .bool: return self
        case .int: return .int(0)
        case .double: return .double(0)
        case .string: return .string("")
        case .decimal: return .decimal(0)
        case .date: return .date(Date(timeIntervalSince1970: 0))
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .data: return .data(Data())
        }
    }

    /// A value of the same kind that no request plausibly holds, distinct for each `index` and `round`:
    /// rendering a shape with these shows which bind each parameter became.
    func marker(_ index: Int, round: Int) -> PGValue {
        // Positive and well inside every kind's range, so no check on the way rejects it.
        let n = 0x5047_0000 + index * 4 + round
        switch self {
        case .null, .bool: return self
        case .int: return .int(Int64(n))
        case .double: return .double(Double(n) + 0.5)
        case .string: return .string("\u{1}pgmodel.marker.\(round).\(index)")
        case .decimal: return .decimal(Decimal(n) + Decimal(sign: .plus, exponent: -1, significand: 5))
        case .date: return .date(Date(timeIntervalSince1970: Double(n)))
        case .uuid:
            let b = withUnsafeBytes(of: UInt64(n).bigEndian) { Array($0) }
            return .uuid(UUID(uuid: (0x50, 0x47, 0x4d, 0x4b, 0, 0, 0x40, 0, 0x80, 0, b[2], b[3], b[4], b[5], b[6], b[7])))
        case .data: return .data(Data("pgmodel.marker.\(round).\(index)".utf8))
        }
    }
}

@_spi(PGModelInternals) extension SQLRenderer {
    /// The template of `shape`'s select (``SelectTemplate``), or nil when its SQL depends on more than the
    /// shape: the shape is rendered twice, with two sets of distinct marker values, and every bind must be
    /// one parameter's marker in both (the same parameter) or the same constant in both, with identical SQL
    /// text. A bind computed from a value (or SQL that changes with one) fails that, and the shape is then
    /// rendered per request as before. Throws what rendering the shape throws.
    ///
    /// ```swift
    /// let template = try renderer.selectTemplate(shape)
    /// ```
    public func selectTemplate(_ shape: FetchRequest) throws -> SelectTemplate? {
        guard let (first, firstParameters) = shape.selectParameters({ $0.marker($1, round: 1) }),
              let (second, secondParameters) = shape.selectParameters({ $0.marker($1, round: 2) }) else { return nil }
        // The shape's parameters are neutral values of each kind: the markers are of the same kinds.
        let firstMarkers = firstParameters.enumerated().map { $0.element.marker($0.offset, round: 1) }
        let secondMarkers = secondParameters.enumerated().map { $0.element.marker($0.offset, round: 2) }
        let layout = try selectLayout(first)
        let a = try select(first, layout: layout)
        let b = try select(second, layout: layout)
        guard a.sql == b.sql, a.binds.count == b.binds.count, a.arrays.isEmpty, b.arrays.isEmpty else { return nil }
        var binds: [SelectTemplate.Bind] = []
        binds.reserveCapacity(a.binds.count)
        for (x, y) in zip(a.binds, b.binds) {
            if let i = firstMarkers.firstIndex(of: x) {
                guard i < secondMarkers.count, secondMarkers[i] == y else { return nil }
                binds.append(.parameter(i))
            } else {
                guard x == y, !secondMarkers.contains(y) else { return nil }
                binds.append(.constant(x))
            }
        }
        return SelectTemplate(sql: a.sql, binds: binds, layout: layout)
    }
}
