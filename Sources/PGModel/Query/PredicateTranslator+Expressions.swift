import Foundation
@_spi(PGModelInternals) import PGModelCore

// Operators: comparison, logic, arithmetic, conditionals, nil-coalescing.
// Constant boolean operands are folded here so that a seed-style `text.isEmpty ? true : …` costs SQL nothing;
// every fold is exact under SQL's three-valued logic too (FALSE AND NULL is FALSE, TRUE OR NULL is TRUE).

extension PredicateExpressions.Equal: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .compare(.equal, try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.NotEqual: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .compare(.notEqual, try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.Comparison: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard let comparison = ComparisonOperator(op) else {
            throw context.unsupported(self, "the comparison operator \(op) is unknown to PGModel")
        }
        return .compare(comparison, try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.Conjunction: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        QueryExpression.folding(and: [try context.translate(lhs), try context.translate(rhs)])
    }
}

extension PredicateExpressions.Disjunction: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        QueryExpression.folding(or: [try context.translate(lhs), try context.translate(rhs)])
    }
}

extension PredicateExpressions.Negation: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        let operand = try context.translate(wrapped)
        if case .value(.bool(let b)) = operand { return .value(.bool(!b)) }
        // `!$0.tracks.isEmpty`: NOT NOT x is x, under three-valued logic too.
        if case .not(let inner) = operand { return inner }
        return .not(operand)
    }
}

extension PredicateExpressions.Conditional: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        let condition = try context.translate(test)
        // Both branches are translated even when the test is constant, so an untranslatable branch throws
        // whatever the captured value happens to be today.
        let whenTrue = try context.translate(trueBranch)
        let whenFalse = try context.translate(falseBranch)
        if case .value(.bool(let b)) = condition { return b ? whenTrue : whenFalse }
        return .conditional(condition, whenTrue, whenFalse)
    }
}

extension PredicateExpressions.Arithmetic: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        let arithmetic: ArithmeticOperator
        switch op {
        case .add: arithmetic = .add
        case .subtract: arithmetic = .subtract
        case .multiply: arithmetic = .multiply
        @unknown default:
            throw context.unsupported(self, "the arithmetic operator \(op) is unknown to PGModel")
        }
        return .arithmetic(arithmetic, try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.IntDivision: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .arithmetic(.divide, try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.IntRemainder: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .arithmetic(.remainder, try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.FloatDivision: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .arithmetic(.divide, try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.UnaryMinus: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .negate(try context.translate(wrapped))
    }
}

extension PredicateExpressions.NilCoalesce: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        // `if let a = $0.album { a.title == t } else { false }` and `($0 as? BusinessTrip)?.perdiem ?? 0`:
        // the default stands for a missing model directly.
        if let flatMap = lhs as? any OptionalFlatMapParts {
            let (presence, value, valueIsOptional) = try flatMap.parts(&context)
            let fallback = try context.translate(rhs)
            let present = valueIsOptional ? QueryExpression.coalesce(value, fallback) : value
            guard let presence else { return present }
            if case .value(.bool(let b)) = presence { return b ? present : fallback }
            return .conditional(presence, present, fallback)
        }
        return .coalesce(try context.translate(lhs), try context.translate(rhs))
    }
}

extension PredicateExpressions.NilLiteral: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .value(.null)
    }
}

extension QueryExpression {
    /// `&&` of `operands`, flattened, with constant operands folded away.
    static func folding(and operands: [QueryExpression]) -> QueryExpression {
        var kept: [QueryExpression] = []
        for operand in operands {
            switch operand {
            case .value(.bool(true)): continue
            case .value(.bool(false)): return .false
            case .and(let inner): kept.append(contentsOf: inner)
            default: kept.append(operand)
            }
        }
        switch kept.count {
        case 0: return .true
        case 1: return kept[0]
        default: return .and(kept)
        }
    }

    /// `||` of `operands`, flattened, with constant operands folded away.
    static func folding(or operands: [QueryExpression]) -> QueryExpression {
        var kept: [QueryExpression] = []
        for operand in operands {
            switch operand {
            case .value(.bool(false)): continue
            case .value(.bool(true)): return .true
            case .or(let inner): kept.append(contentsOf: inner)
            default: kept.append(operand)
            }
        }
        switch kept.count {
        case 0: return .false
        case 1: return kept[0]
        default: return .or(kept)
        }
    }
}

extension ComparisonOperator {
    /// The IR operator of a `#Predicate` ordering comparison; nil for one added to Foundation later.
    init?(_ op: PredicateExpressions.ComparisonOperator) {
        switch op {
        case .lessThan: self = .less
        case .lessThanOrEqual: self = .lessOrEqual
        case .greaterThan: self = .greater
        case .greaterThanOrEqual: self = .greaterOrEqual
        @unknown default: return nil
        }
    }
}
