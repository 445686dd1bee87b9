import Foundation

// Like `localizedStandardContains` (see LocalizedStandardContains.swift), `caseInsensitiveCompare` is missing
// from predicates in the open-source Foundation; this supplies it under Apple's names and shape.
#if !canImport(Darwin)
extension PredicateExpressions {
    /// `root.caseInsensitiveCompare(other)`, yielding a `ComparisonResult`.
    ///
    /// The `#Predicate` macro builds it. The macro does not accept `.orderedSame` without its type, and key
    /// paths cannot name enum cases, so capture the result you compare with:
    /// ```swift
    /// let same = ComparisonResult.orderedSame
    /// let predicate = #Predicate<Trip> { $0.name.caseInsensitiveCompare(name) == same }
    /// ```
    public struct StringCaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
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
            String(try root.evaluate(bindings)).caseInsensitiveCompare(String(try other.evaluate(bindings)))
        }
    }

    /// What `#Predicate` expands `a.caseInsensitiveCompare(b)` to.
    ///
    /// ```swift
    /// let e = PredicateExpressions.build_caseInsensitiveCompare(PredicateExpressions.build_Arg("a"),
    ///                                                           PredicateExpressions.build_Arg("B"))
    /// ```
    public static func build_caseInsensitiveCompare<Root, Other>(_ root: Root, _ other: Other)
        -> StringCaseInsensitiveCompare<Root, Other> {
        StringCaseInsensitiveCompare(root: root, other: other)
    }
}

extension PredicateExpressions.StringCaseInsensitiveCompare: CustomStringConvertible {
    public var description: String { "StringCaseInsensitiveCompare(root: \(root), other: \(other))" }
}

extension PredicateExpressions.StringCaseInsensitiveCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringCaseInsensitiveCompare: Codable where Root: Codable, Other: Codable {
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

extension PredicateExpressions.StringCaseInsensitiveCompare: Sendable where Root: Sendable, Other: Sendable {}
#endif
