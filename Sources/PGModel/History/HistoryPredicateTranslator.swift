import Foundation
@_spi(PGModelInternals) import PGModelCore

/// Turns a `HistoryDescriptor<DefaultHistoryTransaction>` into the store's ``HistoryRequest``.
///
/// History predicates have a small vocabulary — token, transaction identifier, author and timestamp
/// comparisons, and "has a change of entity X" — so they get their own translator instead of the model
/// one; anything outside it throws `unsupported_history_query` naming the construct.
///
/// ```swift
/// let request = try HistoryPredicateTranslator.request(for: descriptor)
/// // HistoryRequest(filter: .token(.greater, 4711))
/// ```
enum HistoryPredicateTranslator {
    static func request(for descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws -> HistoryRequest {
        var request = HistoryRequest()
        if let predicate = descriptor.predicate {
            let variable: PredicateExpressions.Variable<DefaultHistoryTransaction> = predicate.variable
            var context = HistoryTranslationContext(root: variable.key)
            request.filter = try context.filter(predicate.expression)
        }
        (request.sort, request.newestFirst) = try sort(descriptor.sortBy)
        if descriptor.fetchLimit > 0 { request.limit = descriptor.fetchLimit }
        return request
    }

    /// `sortBy` as the request's keys and token direction. Token, transactionIdentifier and timestamp
    /// all follow commit order: the first of them settles the order (every transaction has its own
    /// token), so keys after it change nothing. `author` sorts as Swift orders optionals (nil first), by
    /// the database's collation whatever the string comparator; `storeIdentifier` is one value per
    /// store and changes nothing. Any other key path throws `unsupported_history_query`.
    static func sort(_ descriptors: [SortDescriptor<DefaultHistoryTransaction>]) throws -> ([HistorySortKey], Bool) {
        let commitOrder: [PartialKeyPath<DefaultHistoryTransaction>] = [\.token, \.transactionIdentifier, \.timestamp]
        var keys: [HistorySortKey] = []
        for descriptor in descriptors {
            let reverse = descriptor.order == .reverse
            guard let keyPath = descriptor.keyPath else { throw unsupportedSort }
            if commitOrder.contains(keyPath) {
                return (keys, reverse)
            } else if keyPath == \DefaultHistoryTransaction.author {
                if !keys.contains(where: { $0.key == .author }) { keys.append(HistorySortKey(.author, ascending: !reverse)) }
            } else if keyPath != \DefaultHistoryTransaction.storeIdentifier {
                throw unsupportedSort
            }
        }
        return (keys, false)
    }

    private static var unsupportedSort: PGModelError {
        PGModelError(.unsupportedHistoryQuery,
            "PGModel can sort history by token, transactionIdentifier and timestamp (all three commit order), author and storeIdentifier",
            model: "DefaultHistoryTransaction")
    }
}

/// One translated operand of a history predicate.
enum HistoryOperand {
    case root
    case change
    case changeIdentifier
    case entityName
    case changes
    case key(Key)
    case value(Any)
    case nilValue
    case filter(HistoryFilter)

    enum Key: String { case token, transactionIdentifier, author, timestamp }
}

/// A `PredicateExpressions` node with a meaning in history predicates.
protocol HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand
}

struct HistoryTranslationContext {
    let root: PredicateExpressions.VariableID
    var changeVariables: Set<PredicateExpressions.VariableID> = []

    init(root: PredicateExpressions.VariableID) { self.root = root }

    mutating func operand(_ expression: any PredicateExpression) throws -> HistoryOperand {
        guard let convertible = expression as? any HistoryConvertibleExpression else {
            throw unsupported("`\(TranslationContext.expressionName(expression))`")
        }
        return try convertible.historyOperand(&self)
    }

    mutating func filter(_ expression: any PredicateExpression) throws -> HistoryFilter {
        switch try operand(expression) {
        case .filter(let filter): return filter
        case .value(let value as Bool): return value ? .all : .none
        default: throw unsupported("`\(TranslationContext.expressionName(expression))` where a condition is expected")
        }
    }

    func unsupported(_ construct: String) -> PGModelError {
        PGModelError(.unsupportedHistoryQuery,
            "PGModel cannot translate \(construct) in a history predicate: use token, transactionIdentifier, author and timestamp comparisons and changes.contains { names.contains($0.changedPersistentIdentifier.entityName) }",
            model: "DefaultHistoryTransaction")
    }

    /// `key <op> value` as a filter, or nil when the operands are not a key and a constant.
    func comparison(_ op: ComparisonOperator, _ lhs: HistoryOperand, _ rhs: HistoryOperand) throws -> HistoryFilter {
        switch (lhs, rhs) {
        case (.key(.author), .nilValue), (.nilValue, .key(.author)):
            guard op == .equal || op == .notEqual else { throw unsupported("ordering authors") }
            return .author(op, nil)
        case (.key(let key), .value(let value)): return try compare(key, op, value)
        case (.value(let value), .key(let key)): return try compare(key, op.flipped, value)
        case (.entityName, .value(let value as String)) where op == .equal,
             (.value(let value as String), .entityName) where op == .equal:
            return .entities([value])
        default: throw unsupported("a comparison that is not between a transaction property and a constant")
        }
    }

    private func compare(_ key: HistoryOperand.Key, _ op: ComparisonOperator, _ value: Any) throws -> HistoryFilter {
        switch key {
        case .token:
            guard let token = value as? DefaultHistoryToken else { throw unsupported("a token comparison with a \(type(of: value))") }
            return .token(op, token.value)
        case .transactionIdentifier:
            if let id = value as? Int64 { return .transactionIdentifier(op, id) }
            if let id = value as? Int { return .transactionIdentifier(op, Int64(id)) }
            throw unsupported("a transactionIdentifier comparison with a \(type(of: value))")
        case .author:
            guard op == .equal || op == .notEqual else { throw unsupported("ordering authors") }
            if let author = value as? String { return .author(op, author) }
            if let author = value as? String?, author == nil { return .author(op, nil) }
            throw unsupported("an author comparison with a \(type(of: value))")
        case .timestamp:
            guard let date = value as? Date else { throw unsupported("a timestamp comparison with a \(type(of: value))") }
            return .timestamp(op, date)
        }
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped: `5 < x` is `x > 5`.
    var flipped: ComparisonOperator {
        switch self {
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        case .equal, .notEqual: self
        }
    }
}

extension PredicateExpressions.Variable: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        if key == context.root { return .root }
        if context.changeVariables.contains(key) { return .change }
        throw context.unsupported("a variable that is neither the transaction nor one of its changes")
    }
}

extension PredicateExpressions.KeyPath: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        let path: AnyKeyPath = keyPath
        switch try context.operand(root) {
        case .root:
            switch path {
            case \DefaultHistoryTransaction.token: return .key(.token)
            case \DefaultHistoryTransaction.transactionIdentifier: return .key(.transactionIdentifier)
            case \DefaultHistoryTransaction.author: return .key(.author)
            case \DefaultHistoryTransaction.timestamp: return .key(.timestamp)
            case \DefaultHistoryTransaction.changes: return .changes
            default: break
            }
        case .change:
            if path == \HistoryChange.changedPersistentIdentifier { return .changeIdentifier }
            if path == \HistoryChange.changedPersistentIdentifier.entityName { return .entityName }
        case .changeIdentifier:
            if path == \PersistentIdentifier.entityName { return .entityName }
        default: break
        }
        throw context.unsupported("the key path \(TranslationContext.keyPathDescription(path))")
    }
}

extension PredicateExpressions.Value: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand { .value(value) }
}

extension PredicateExpressions.NilLiteral: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand { .nilValue }
}

extension PredicateExpressions.Equal: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        .filter(try context.comparison(.equal, try context.operand(lhs), try context.operand(rhs)))
    }
}

extension PredicateExpressions.NotEqual: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        .filter(try context.comparison(.notEqual, try context.operand(lhs), try context.operand(rhs)))
    }
}

extension PredicateExpressions.Comparison: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        guard let comparison = ComparisonOperator(op) else { throw context.unsupported("the comparison operator \(op)") }
        return .filter(try context.comparison(comparison, try context.operand(lhs), try context.operand(rhs)))
    }
}

extension PredicateExpressions.Conjunction: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        let parts = [try context.filter(lhs), try context.filter(rhs)]
        if parts.contains(.none) { return .filter(.none) }
        let kept = parts.filter { $0 != .all }
        return .filter(kept.isEmpty ? .all : kept.count == 1 ? kept[0] : .and(kept))
    }
}

extension PredicateExpressions.Disjunction: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        let parts = [try context.filter(lhs), try context.filter(rhs)]
        if parts.contains(.all) { return .filter(.all) }
        let kept = parts.filter { $0 != .none }
        if kept.count == 2, case .entities(let a) = kept[0], case .entities(let b) = kept[1] {
            return .filter(.entities(a + b.filter { !a.contains($0) }))
        }
        return .filter(kept.isEmpty ? .none : kept.count == 1 ? kept[0] : .or(kept))
    }
}

extension PredicateExpressions.Negation: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        .filter(.not(try context.filter(wrapped)))
    }
}

extension PredicateExpressions.SequenceContains: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        guard case .value(let sequence) = try context.operand(self.sequence) else {
            throw context.unsupported("`contains` on something other than a captured array")
        }
        let names = (sequence as? [String]) ?? (sequence as? Set<String>).map { $0.sorted() }
        guard let names else { throw context.unsupported("`contains` on a \(type(of: sequence))") }
        switch try context.operand(element) {
        case .entityName: return .filter(.entities(names))
        case .key(.author): return .filter(.authorIn(names))
        default: throw context.unsupported("`contains` of something other than an entity name or the author")
        }
    }
}

extension PredicateExpressions.SequenceContainsWhere: HistoryConvertibleExpression {
    func historyOperand(_ context: inout HistoryTranslationContext) throws -> HistoryOperand {
        guard case .changes = try context.operand(sequence) else {
            throw context.unsupported("`contains(where:)` on something other than `changes`")
        }
        context.changeVariables.insert(variable.key)
        defer { context.changeVariables.remove(variable.key) }
        let inner = try context.filter(test)
        switch inner {
        case .entities, .all, .none: return .filter(inner)
        default: throw context.unsupported("a condition on a change other than its entity name")
        }
    }
}
