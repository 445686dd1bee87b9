import Foundation
@_spi(PGModelInternals) import PGModelCore

// String operations. `contains` and `starts(with:)` build generic collection expressions, which also match
// arrays (`$0.tags.contains(["a"])`); only string operands have an IR form.

extension PredicateExpressions.CollectionContainsCollection: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard Base.Output.self is any StringProtocol.Type, Other.Output.self is any StringProtocol.Type else {
            throw context.unsupported(self, "only strings can be searched with contains(_:), not \(Base.Output.self)")
        }
        return .string(.contains, try context.translate(base), try context.translate(other))
    }
}

extension PredicateExpressions.SequenceStartsWith: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard Base.Output.self is any StringProtocol.Type, Prefix.Output.self is any StringProtocol.Type else {
            throw context.unsupported(self, "only strings can be tested with starts(with:), not \(Base.Output.self)")
        }
        return .string(.startsWith, try context.translate(base), try context.translate(prefix))
    }
}

extension PredicateExpressions.StringLocalizedStandardContains: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        let haystack = try context.translate(root)
        let needle = try context.translate(other)
        // Foundation finds no empty string (Apple's `"abc".localizedStandardContains("")` is false), while a
        // SQL substring search finds it everywhere; a captured empty search string is settled here.
        if case .value(.string("")) = needle { return .false }
        return .string(.localizedStandardContains, haystack, needle)
    }
}

extension PredicateExpressions.StringCaseInsensitiveCompare: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        // Its ComparisonResult is compared with a captured ComparisonResult, whose raw value -1, 0 or 1 is
        // what the IR operation yields.
        .string(.caseInsensitiveCompare, try context.translate(root), try context.translate(other))
    }
}

extension PredicateExpressions.StringLocalizedCompare: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .string(.localizedCompare, try context.translate(root), try context.translate(other))
    }
}
