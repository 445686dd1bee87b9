import Foundation

// Like `caseInsensitiveCompare` (see StringCaseInsensitiveCompare.swift), `localizedCompare` is missing
// from predicates in the open-source Foundation; this supplies it under Apple's names and shape.
#if !canImport(Darwin)
extension PredicateExpressions {
    /// `root.localizedCompare(other)`, yielding a `ComparisonResult`. In a fetch, PostgreSQL compares with
    /// the database's collation (the order `SortDescriptor` on a string uses).
    ///
    /// The `#Predicate` macro builds it. The macro does not accept `.orderedSame` without its type, and key
    /// paths cannot name enum cases, so capture the result you compare with:
    /// ```swift
    /// let before = ComparisonResult.orderedAscending
    /// let predicate = #Predicate<Trip> { $0.name.localizedCompare(name) == before }
    /// ```
    public struct StringLocalizedCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = ComparisonResult

        /// The receiver.
        public let root: Root
        /// The string compared with.
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            // Code-point order, as PostgreSQL compares under the C.UTF-8 collation the scripts create
            // databases with, so pending models filter as stored rows do.
            let (lhs, rhs) = (String(try root.evaluate(bindings)), String(try other.evaluate(bindings)))
            return lhs < rhs ? .orderedAscending : lhs > rhs ? .orderedDescending : .orderedSame
        }
    }

    /// What `#Predicate` expands `a.localizedCompare(b)` to.
    ///
    /// ```swift
    /// let e = PredicateExpressions.build_localizedCompare(PredicateExpressions.build_Arg("a"),
    ///                                                           PredicateExpressions.build_Arg("B"))
    /// ```
    public static func build_localizedCompare<Root, Other>(_ root: Root, _ other: Other)
        -> StringLocalizedCompare<Root, Other> {
        StringLocalizedCompare(root: root, other: other)
    }
}

extension PredicateExpressions.StringLocalizedCompare: CustomStringConvertible {
    public var description: String { "StringLocalizedCompare(root: \(root), other: \(other))" }
}

extension PredicateExpressions.StringLocalizedCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringLocalizedCompare: Codable where Root: Codable, Other: Codable {
    // Apple's encoding: an unkeyed pair.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(root)
        try container.encode(other)
    }

    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        root = try container.decode(Root.self)
        other = try container.decode(Other.self)
    }
}

extension PredicateExpressions.StringLocalizedCompare: Sendable where Root: Sendable, Other: Sendable {}
#endif
