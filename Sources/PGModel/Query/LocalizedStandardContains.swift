import Foundation

// Apple's Foundation provides `localizedStandardContains` in predicates; the open-source Foundation on Linux
// has neither the expression type nor the `build_` function the `#Predicate` macro expands to, so
// `#Predicate<Trip> { $0.name.localizedStandardContains(text) }` would not compile. This supplies both, under
// Apple's names and shape, so the translator's conformance is the same on every platform.
//
// Foundation documents `StandardPredicateExpression` as closed to new types; conforming is still required
// here because `#Predicate` only accepts standard expressions. The one consequence is that a predicate using
// it cannot be archived with `PredicateCodableConfiguration.standardConfiguration`.
#if !canImport(Darwin)
extension PredicateExpressions {
    /// `root.localizedStandardContains(other)`: a case- and diacritic-insensitive substring test.
    ///
    /// The `#Predicate` macro builds it; you write:
    /// ```swift
    /// let search = "zoe"
    /// let predicate = #Predicate<Trip> { $0.name.localizedStandardContains(search) }
    /// try predicate.evaluate(trip)   // true for "Zoë's trip"
    /// ```
    ///
    /// `evaluate` folds case and diacritics, which is what PGModel's SQL does, so in-memory evaluation and
    /// fetched results agree. As on Apple platforms, an empty search string matches nothing.
    public struct StringLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = Bool

        /// The string searched.
        public let root: Root
        /// The string searched for.
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            let haystack = String(try root.evaluate(bindings))
            let needle = String(try other.evaluate(bindings))
            guard !needle.isEmpty else { return false }
            return haystack.range(of: needle, options: [.caseInsensitive, .diacriticInsensitive]) != nil
        }
    }

    /// What `#Predicate` expands `a.localizedStandardContains(b)` to.
    ///
    /// ```swift
    /// let e = PredicateExpressions.build_localizedStandardContains(PredicateExpressions.build_Arg("Zoë"),
    ///                                                              PredicateExpressions.build_Arg("zoe"))
    /// ```
    public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other)
        -> StringLocalizedStandardContains<Root, Other> {
        StringLocalizedStandardContains(root: root, other: other)
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: CustomStringConvertible {
    public var description: String { "StringLocalizedStandardContains(root: \(root), other: \(other))" }
}

extension PredicateExpressions.StringLocalizedStandardContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}

extension PredicateExpressions.StringLocalizedStandardContains: Codable where Root: Codable, Other: Codable {
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

extension PredicateExpressions.StringLocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}
#endif
