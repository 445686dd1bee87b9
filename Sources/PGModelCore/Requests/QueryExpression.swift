/// The Query IR: a predicate or value expression over one entity's attributes, by name.
///
/// Both stores use it: the local store renders it to SQL directly; the remote store sends it as JSON
/// and the server renders the same IR under the caller's identity. Its JSON form is compact:
///
/// ```swift
/// // {"eq":[{"key":"destination"},{"value":"Paris"}]}
/// let ir: QueryExpression = .compare(.equal, .key("destination"), .value(.string("Paris")))
/// ```
@_spi(PGModelInternals) public indirect enum QueryExpression: Hashable, Sendable {
    /// An attribute of the fetched entity, by Swift property name. A dotted path follows to-one
    /// relationships: `album.title` is the title of the track's album (NULL when there is none). A key
    /// naming a to-one relationship is the related model's id (`album == nil`, `album == <uuid>`).
    case key(String)
    /// `$0 is PersonalTrip`: true for rows of that class or any of its subclasses. `{"is":"PersonalTrip"}`
    case isKind(String)
    /// A field inside a Codable (`jsonb`) attribute: `$0.location?.latitude` is
    /// `.field(.key("location"), ["latitude"], .double)`; NULL when the document or field is missing.
    /// `{"field":{"of":{"key":"location"},"path":["latitude"],"as":"double"}}`
    case field(QueryExpression, [String], AttributeType)
    /// `$0.tags.contains("x")` for an array attribute. `{"has":[{"key":"tags"},{"value":"x"}]}`
    case arrayContains(QueryExpression, QueryExpression)
    /// `$0.tags[0]`: an element of an array attribute by its zero-based index; NULL past the end (the
    /// comparison is then false). `{"at":{"of":{"key":"tags"},"index":0}}`
    case arrayElement(QueryExpression, Int)
    /// `$0.scores.max()` / `.min()` of an array attribute (NULL for an empty array), or its `count`.
    /// `{"arrayMax":{"key":"scores"}}`
    case arrayFold(ArrayFold, QueryExpression)
    /// A to-many relationship (reached by `relationship`, a key path whose last step is to-many) folded
    /// into one value: `.count`, `contains(where:)`, `allSatisfy`, `min()`/`max()` of a value. Keys inside
    /// `predicate` and `value` name the destination entity's properties.
    case aggregate(Aggregate)
    /// A literal or captured value; always rendered as a bind parameter (``PGValue/null`` as `NULL`).
    case value(PGValue)
    /// `==`, `!=`, `<`, `<=`, `>`, `>=`. Equality treats `nil == nil` as true, as Swift does.
    case compare(ComparisonOperator, QueryExpression, QueryExpression)
    /// `&&` over all operands.
    case and([QueryExpression])
    /// `||` over all operands.
    case or([QueryExpression])
    /// `!`.
    case not(QueryExpression)
    /// `+ - * / %`.
    case arithmetic(ArithmeticOperator, QueryExpression, QueryExpression)
    /// Unary minus.
    case negate(QueryExpression)
    /// `cond ? a : b`.
    case conditional(QueryExpression, QueryExpression, QueryExpression)
    /// A string operation between two string expressions.
    case string(StringOperator, QueryExpression, QueryExpression)
    /// `values.contains(expr)` for a captured array.
    case `in`(QueryExpression, [PGValue])
    /// `a ?? b`.
    case coalesce(QueryExpression, QueryExpression)

    /// The constant `true`.
    public static let `true` = QueryExpression.value(.bool(true))
    /// The constant `false`.
    public static let `false` = QueryExpression.value(.bool(false))
}

/// A to-many relationship folded into one value, rendered as a correlated subquery.
///
/// ```swift
/// // album.tracks.filter { $0.duration > 180 }.count  → {"count":{"rel":"tracks","where":{"gt":[…]}}}
/// Aggregate(.count, relationship: "tracks", predicate: .compare(.greater, .key("duration"), .value(.double(180))))
/// ```
@_spi(PGModelInternals) public struct Aggregate: Hashable, Sendable {
    /// What to compute.
    public enum Function: String, Codable, Hashable, Sendable, CaseIterable {
        /// The number of related models (matching ``predicate``).
        case count
        /// Whether any related model matches ``predicate`` (`contains(where:)`, `!isEmpty`).
        case any
        /// Whether every related model matches ``predicate`` (`allSatisfy`); true when there are none.
        case all
        /// The smallest ``value`` among related models (matching ``predicate``); NULL when there are none.
        case min
        /// The largest ``value``.
        case max
        /// The sum of ``value``; 0 when there are none.
        case sum
    }
    public var function: Function
    /// The to-many relationship, as a key path from the fetched entity (`tracks`, `album.tracks`).
    public var relationship: String
    /// A filter over the related models.
    public var predicate: QueryExpression?
    /// The value to fold for `min`, `max` and `sum`.
    public var value: QueryExpression?

    public init(_ function: Function, relationship: String, predicate: QueryExpression? = nil, value: QueryExpression? = nil) {
        self.function = function
        self.relationship = relationship
        self.predicate = predicate
        self.value = value
    }
}

extension Aggregate: Codable {
    private enum CodingKeys: String, CodingKey { case relationship = "rel", predicate = "where", value = "of" }

    // The function is the enclosing object's key, so the payload holds only its operands.
    init(function: Function, from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.function = function
        relationship = try c.decode(String.self, forKey: .relationship)
        predicate = try c.decodeIfPresent(QueryExpression.self, forKey: .predicate)
        value = try c.decodeIfPresent(QueryExpression.self, forKey: .value)
    }

    public init(from decoder: any Decoder) throws {
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "an aggregate is decoded by its enclosing expression"))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(relationship, forKey: .relationship)
        try c.encodeIfPresent(predicate, forKey: .predicate)
        try c.encodeIfPresent(value, forKey: .value)
    }
}

/// Comparison operators of ``QueryExpression/compare(_:_:_:)``.
@_spi(PGModelInternals) public enum ComparisonOperator: String, Codable, Hashable, Sendable, CaseIterable {
    case equal = "eq", notEqual = "ne", less = "lt", lessOrEqual = "le", greater = "gt", greaterOrEqual = "ge"
}

/// Arithmetic operators of ``QueryExpression/arithmetic(_:_:_:)``.
@_spi(PGModelInternals) public enum ArithmeticOperator: String, Codable, Hashable, Sendable, CaseIterable {
    case add, subtract = "sub", multiply = "mul", divide = "div", remainder = "mod"
}

/// What ``QueryExpression/arrayFold(_:_:)`` folds an array attribute into.
@_spi(PGModelInternals) public enum ArrayFold: String, Codable, Hashable, Sendable, CaseIterable {
    /// `array.min()`.
    case min = "arrayMin"
    /// `array.max()`.
    case max = "arrayMax"
    /// `array.count` (`isEmpty` is a count of 0).
    case count = "arrayCount"
}

/// String operators of ``QueryExpression/string(_:_:_:)``.
@_spi(PGModelInternals) public enum StringOperator: String, Codable, Hashable, Sendable, CaseIterable {
    /// `a.contains(b)`: case-sensitive substring test.
    case contains
    /// `a.starts(with: b)` / `a.hasPrefix(b)`.
    case startsWith
    /// `a.localizedStandardContains(b)`: case- and diacritic-insensitive substring test.
    case localizedStandardContains
    /// `a.caseInsensitiveCompare(b)`: -1, 0 or 1, like `ComparisonResult`'s raw values.
    case caseInsensitiveCompare
    /// `a.localizedCompare(b)`: -1, 0 or 1 in the database's collation.
    case localizedCompare
}

extension QueryExpression: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private struct ElementOperands: Codable, Hashable {
        var of: QueryExpression
        var index: Int
    }

    private struct FieldOperands: Codable, Hashable {
        var of: QueryExpression
        var path: [String]
        var `as`: AttributeType
    }

    private struct InOperands: Codable, Hashable {
        var lhs: QueryExpression
        var values: [PGValue]
    }

    /// How deep a decoded expression may nest: far beyond any predicate a person writes, far below what
    /// would exhaust a thread's stack in the decoder or the renderer.
    public static let maximumDecodingDepth = 128

    public init(from decoder: any Decoder) throws {
        guard decoder.codingPath.count <= Self.maximumDecodingDepth else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "an expression may nest at most \(Self.maximumDecodingDepth) levels deep"))
        }
        let c = try decoder.container(keyedBy: Key.self)
        guard c.allKeys.count == 1, let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                debugDescription: "an expression is an object with exactly one operator key"))
        }
        func pair() throws -> (QueryExpression, QueryExpression) {
            let ops = try c.decode([QueryExpression].self, forKey: key)
            guard ops.count == 2 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "'\(key.stringValue)' takes 2 operands")
            }
            return (ops[0], ops[1])
        }
        let name = key.stringValue
        if let op = ComparisonOperator(rawValue: name) {
            let (a, b) = try pair(); self = .compare(op, a, b); return
        }
        if let op = ArithmeticOperator(rawValue: name) {
            let (a, b) = try pair(); self = .arithmetic(op, a, b); return
        }
        if let op = StringOperator(rawValue: name) {
            let (a, b) = try pair(); self = .string(op, a, b); return
        }
        if let fold = ArrayFold(rawValue: name) {
            self = .arrayFold(fold, try c.decode(QueryExpression.self, forKey: key)); return
        }
        if let function = Aggregate.Function(rawValue: name) {
            self = .aggregate(try Aggregate(function: function, from: c.superDecoder(forKey: key))); return
        }
        switch name {
        case "key": self = .key(try c.decode(String.self, forKey: key))
        case "is": self = .isKind(try c.decode(String.self, forKey: key))
        case "field":
            let f = try c.decode(FieldOperands.self, forKey: key)
            self = .field(f.of, f.path, f.as)
        case "has": let (a, b) = try pair(); self = .arrayContains(a, b)
        case "at":
            let o = try c.decode(ElementOperands.self, forKey: key)
            self = .arrayElement(o.of, o.index)
        case "value": self = .value(try c.decode(PGValue.self, forKey: key))
        case "and": self = .and(try c.decode([QueryExpression].self, forKey: key))
        case "or": self = .or(try c.decode([QueryExpression].self, forKey: key))
        case "not": self = .not(try c.decode(QueryExpression.self, forKey: key))
        case "neg": self = .negate(try c.decode(QueryExpression.self, forKey: key))
        case "coalesce": let (a, b) = try pair(); self = .coalesce(a, b)
        case "if":
            let ops = try c.decode([QueryExpression].self, forKey: key)
            guard ops.count == 3 else {
                throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "'if' takes 3 operands")
            }
            self = .conditional(ops[0], ops[1], ops[2])
        case "in":
            let o = try c.decode(InOperands.self, forKey: key)
            self = .in(o.lhs, o.values)
        default:
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "unknown operator '\(name)'")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        switch self {
        case .key(let k): try c.encode(k, forKey: Key("key"))
        case .isKind(let name): try c.encode(name, forKey: Key("is"))
        case .field(let of, let path, let type): try c.encode(FieldOperands(of: of, path: path, as: type), forKey: Key("field"))
        case .arrayContains(let a, let b): try c.encode([a, b], forKey: Key("has"))
        case .arrayElement(let a, let index): try c.encode(ElementOperands(of: a, index: index), forKey: Key("at"))
        case .arrayFold(let fold, let a): try c.encode(a, forKey: Key(fold.rawValue))
        case .aggregate(let a): try c.encode(a, forKey: Key(a.function.rawValue))
        case .value(let v): try c.encode(v, forKey: Key("value"))
        case .compare(let op, let a, let b): try c.encode([a, b], forKey: Key(op.rawValue))
        case .and(let ops): try c.encode(ops, forKey: Key("and"))
        case .or(let ops): try c.encode(ops, forKey: Key("or"))
        case .not(let a): try c.encode(a, forKey: Key("not"))
        case .arithmetic(let op, let a, let b): try c.encode([a, b], forKey: Key(op.rawValue))
        case .negate(let a): try c.encode(a, forKey: Key("neg"))
        case .conditional(let a, let b, let d): try c.encode([a, b, d], forKey: Key("if"))
        case .string(let op, let a, let b): try c.encode([a, b], forKey: Key(op.rawValue))
        case .in(let a, let values): try c.encode(InOperands(lhs: a, values: values), forKey: Key("in"))
        case .coalesce(let a, let b): try c.encode([a, b], forKey: Key("coalesce"))
        }
    }
}
