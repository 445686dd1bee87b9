import Foundation
import NIOConcurrencyHelpers
@_spi(PGModelInternals) import PGModelCore

/// Translations of predicates and sort descriptors kept per container, so a fetch call site that runs
/// again and again with other captured values (`#Predicate { $0.rank == key }`) translates once.
///
/// A predicate's translation is a function of its *shape* — its expression's type (every node's kind and
/// operand types), the key paths and operators in it, and which captured values are `nil`, booleans or
/// empty strings (the translator folds those) — and of the other captured values, which the IR carries
/// unchanged as `.value`s. A shape's first translation becomes its template: the IR, and for each of its
/// values which captured value it is. Later predicates of the shape get the template with their own
/// values put in. A shape is never templated when its translation does not show each captured value
/// exactly once as itself (a value the translator computed, or dropped), and only expressions listed
/// below (``PredicateShapeCollecting``) have shapes: anything else is translated every time, as before.
///
/// ```swift
/// let ir = try container.translations.translate(predicate, with: translator)
/// ```
final class TranslationCache: Sendable {
    /// The most shapes kept; an app has as many as it has fetch call sites, not values.
    static let capacity = 512

    private enum Entry: Sendable {
        /// The IR of the shape's first translation, and for each parameter value in it (in IR order,
        /// see ``QueryExpression/parameterValues``) the index of the captured value it is.
        case template(QueryExpression, [Int])
        /// Translated every time: its IR depends on more than the shape.
        case translates
    }

    private let predicates = NIOLockedValueBox([PredicateShape: Entry]())
    private let sorts = NIOLockedValueBox([SortShape: [SortKey]]())

    /// `predicate`'s IR: its shape's template filled with its captured values, or `translator`'s own.
    func translate<Root>(_ predicate: Predicate<Root>, with translator: PredicateTranslator<Root>) throws -> QueryExpression {
        var collector = PredicateShapeCollector(shape: PredicateShape(expression: ObjectIdentifier(type(of: predicate.expression))))
        guard collector.collect(predicate.expression) else { return try translator.translate(predicate) }
        let shape = collector.shape
        let values = collector.values
        switch predicates.withLockedValue({ $0[shape] }) {
        case .template(let template, let order)?:
            if let filled = template.filling(order.map { values[$0] }) { return filled }
            return try translator.translate(predicate)
        case .translates?:
            return try translator.translate(predicate)
        case nil:
            let translated = try translator.translate(predicate)
            guard let entry = Self.entry(translated, values: values) else { return translated }
            predicates.withLockedValue { entries in
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
                entries[shape] = entry
            }
            return translated
        }
    }

    /// `sort`'s sort keys, translated once per list of key paths and directions.
    func translate<Root>(_ sort: [SortDescriptor<Root>], with translator: PredicateTranslator<Root>) throws -> [SortKey] {
        guard !sort.isEmpty else { return [] }
        var shape = SortShape()
        for descriptor in sort {
            // Without a key path the translator throws; nothing to keep.
            guard let keyPath = descriptor.keyPath else { return try translator.translate(sort) }
            shape.keys.append(keyPath)
            shape.forward.append(descriptor.order == .forward)
        }
        if let known = sorts.withLockedValue({ $0[shape] }) { return known }
        let keys = try translator.translate(sort)
        sorts.withLockedValue { entries in
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[shape] = keys
        }
        return keys
    }

    /// The entry for a shape whose first translation is `translated`, with captured `values`; nil when
    /// the values cannot tell (two are equal), so a later call tries again.
    private static func entry(_ translated: QueryExpression, values: [PGValue]) -> Entry? {
        guard Set(values).count == values.count else { return nil }
        var order: [Int] = []
        var used = Set<Int>()
        for value in translated.parameterValues {
            guard let index = values.firstIndex(of: value) else { return .translates }
            order.append(index)
            used.insert(index)
        }
        // A captured value the IR does not show was folded away or computed on: its translation may
        // differ with another value.
        guard used.count == values.count else { return .translates }
        return .template(translated, order)
    }
}

/// What identifies a predicate's translation apart from its captured values (see ``TranslationCache``).
struct PredicateShape: Hashable, Sendable {
    /// The expression's type: its nodes and their operand types.
    var expression: ObjectIdentifier
    /// Key paths on the fetched model, in the order met.
    // nonisolated(unsafe): key paths are immutable; `AnyKeyPath` is not marked Sendable.
    nonisolated(unsafe) var keyPaths: [AnyKeyPath] = []
    /// Comparison and arithmetic operators (stored in the nodes, not their types), in the order met.
    var operators: [UInt8] = []
    /// Each captured value: itself when the translation depends on it (`nil`, a boolean, `""`),
    /// otherwise a stand-in of its kind.
    var literals: [PGValue] = []

    init(expression: ObjectIdentifier) {
        self.expression = expression
    }
}

/// A sort's key paths and directions: all its translation depends on.
struct SortShape: Hashable, Sendable {
    // nonisolated(unsafe): as PredicateShape's.
    nonisolated(unsafe) var keys: [AnyKeyPath] = []
    var forward: [Bool] = []
}

/// Collects a predicate's shape and captured values in one walk.
struct PredicateShapeCollector {
    var shape: PredicateShape
    /// The captured values that are parameters of the shape, in the order met.
    var values: [PGValue] = []

    /// Adds `expression`; false when it has no shape (then the predicate is translated as before).
    mutating func collect(_ expression: Any) -> Bool {
        guard let node = expression as? any PredicateShapeCollecting else { return false }
        return node.collectShape(&self)
    }

    /// Adds a captured value, in the stored form the translator gives it.
    mutating func capture(_ value: Any) -> Bool {
        guard let stored = TranslationContext.storedForm(of: value) else { return false }
        if stored.foldsTranslation {
            shape.literals.append(stored)
        } else {
            shape.literals.append(stored.kindStandIn)
            values.append(stored)
        }
        return true
    }
}

/// An expression whose translation depends only on its shape and captured values.
protocol PredicateShapeCollecting {
    func collectShape(_ collector: inout PredicateShapeCollector) -> Bool
}

extension PredicateExpressions.Equal: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(lhs) && c.collect(rhs) }
}

extension PredicateExpressions.NotEqual: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(lhs) && c.collect(rhs) }
}

extension PredicateExpressions.Comparison: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool {
        switch op {
        case .lessThan: c.shape.operators.append(1)
        case .lessThanOrEqual: c.shape.operators.append(2)
        case .greaterThan: c.shape.operators.append(3)
        case .greaterThanOrEqual: c.shape.operators.append(4)
        @unknown default: return false
        }
        return c.collect(lhs) && c.collect(rhs)
    }
}

extension PredicateExpressions.Arithmetic: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool {
        switch op {
        case .add: c.shape.operators.append(11)
        case .subtract: c.shape.operators.append(12)
        case .multiply: c.shape.operators.append(13)
        @unknown default: return false
        }
        return c.collect(lhs) && c.collect(rhs)
    }
}

extension PredicateExpressions.Conjunction: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(lhs) && c.collect(rhs) }
}

extension PredicateExpressions.Disjunction: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(lhs) && c.collect(rhs) }
}

extension PredicateExpressions.Negation: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(wrapped) }
}

extension PredicateExpressions.Conditional: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool {
        c.collect(test) && c.collect(trueBranch) && c.collect(falseBranch)
    }
}

extension PredicateExpressions.NilLiteral: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { true }
}

extension PredicateExpressions.Value: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.capture(value) }
}

extension PredicateExpressions.Range: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(lower) && c.collect(upper) }
}

extension PredicateExpressions.ClosedRange: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(lower) && c.collect(upper) }
}

extension PredicateExpressions.RangeExpressionContains: PredicateShapeCollecting {
    // Only a range written in the predicate (`lo..<hi`): a captured range is not a stored value.
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(range) && c.collect(element) }
}

extension PredicateExpressions.CollectionContainsCollection: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(base) && c.collect(other) }
}

extension PredicateExpressions.SequenceStartsWith: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(base) && c.collect(prefix) }
}

extension PredicateExpressions.StringLocalizedStandardContains: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(root) && c.collect(other) }
}

extension PredicateExpressions.StringCaseInsensitiveCompare: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool { c.collect(root) && c.collect(other) }
}

extension PredicateExpressions.KeyPath: PredicateShapeCollecting {
    func collectShape(_ c: inout PredicateShapeCollector) -> Bool {
        // `$0.name`: the predicate's one variable (no expression above has a closure of its own).
        if root is any PredicateVariable {
            c.shape.keyPaths.append(keyPath)
            return true
        }
        // `filter.minimum`: a property of a captured value is a captured value, evaluated as the translator does.
        if isCapturedValue {
            guard let value = try? evaluate(PredicateBindings()) else { return false }
            return c.capture(value)
        }
        // `$0.location.latitude`, `$0.tracks.count`: a key path on a key path of the model.
        guard c.collect(root) else { return false }
        c.shape.keyPaths.append(keyPath)
        return true
    }
}

extension PGValue {
    /// Whether the translator's output depends on the value itself, not only its kind: `nil` (`IS NULL`),
    /// booleans (constant folding) and the empty string (`localizedStandardContains("")` is false).
    var foldsTranslation: Bool {
        switch self {
        case .null, .bool: return true
        case .string(let text): return text.isEmpty
        default: return false
        }
    }

    /// A fixed value of the same kind, standing for any value of it in a shape.
    var kindStandIn: PGValue {
        switch self {
        case .null, .bool: return self
        case .int: return .int(0)
        case .double: return .double(0)
        // Not "", which is a literal of its own.
        case .string: return .string("\u{1}")
        case .decimal: return .decimal(0)
        case .date: return .date(Date(timeIntervalSince1970: 0))
        case .uuid: return .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .data: return .data(Data())
        }
    }
}

extension QueryExpression {
    /// The values in this expression that may be captured values (see ``PGValue/foldsTranslation``), in
    /// the order ``filling(_:)`` replaces them.
    var parameterValues: [PGValue] {
        var out: [PGValue] = []
        func walk(_ e: QueryExpression) {
            switch e {
            case .key, .isKind: break
            case .value(let v): if !v.foldsTranslation { out.append(v) }
            case .field(let d, _, _), .arrayElement(let d, _), .arrayFold(_, let d): walk(d)
            case .aggregate(let a):
                if let p = a.predicate { walk(p) }
                if let v = a.value { walk(v) }
            case .arrayContains(let l, let r), .compare(_, let l, let r), .arithmetic(_, let l, let r),
                 .string(_, let l, let r), .coalesce(let l, let r):
                walk(l)
                walk(r)
            case .and(let operands), .or(let operands): operands.forEach(walk)
            case .not(let o), .negate(let o): walk(o)
            case .conditional(let a, let b, let c):
                walk(a)
                walk(b)
                walk(c)
            case .in(let needle, let values):
                walk(needle)
                for v in values where !v.foldsTranslation { out.append(v) }
            }
        }
        walk(self)
        return out
    }

    /// This expression with its ``parameterValues`` replaced, in order, by `values`; nil if the counts
    /// differ.
    func filling(_ values: [PGValue]) -> QueryExpression? {
        var next = 0
        func take() -> PGValue? {
            guard next < values.count else { return nil }
            defer { next += 1 }
            return values[next]
        }
        func fill(_ e: QueryExpression) -> QueryExpression? {
            switch e {
            case .key, .isKind: return e
            case .value(let v):
                guard !v.foldsTranslation else { return e }
                return take().map { .value($0) }
            case .field(let d, let path, let type): return fill(d).map { .field($0, path, type) }
            case .arrayElement(let d, let index): return fill(d).map { .arrayElement($0, index) }
            case .arrayFold(let fold, let d): return fill(d).map { .arrayFold(fold, $0) }
            case .aggregate(var a):
                if let p = a.predicate {
                    guard let filled = fill(p) else { return nil }
                    a.predicate = filled
                }
                if let v = a.value {
                    guard let filled = fill(v) else { return nil }
                    a.value = filled
                }
                return .aggregate(a)
            case .arrayContains(let l, let r):
                guard let l = fill(l), let r = fill(r) else { return nil }
                return .arrayContains(l, r)
            case .compare(let op, let l, let r):
                guard let l = fill(l), let r = fill(r) else { return nil }
                return .compare(op, l, r)
            case .arithmetic(let op, let l, let r):
                guard let l = fill(l), let r = fill(r) else { return nil }
                return .arithmetic(op, l, r)
            case .string(let op, let l, let r):
                guard let l = fill(l), let r = fill(r) else { return nil }
                return .string(op, l, r)
            case .coalesce(let l, let r):
                guard let l = fill(l), let r = fill(r) else { return nil }
                return .coalesce(l, r)
            case .and(let operands):
                var out: [QueryExpression] = []
                for o in operands {
                    guard let f = fill(o) else { return nil }
                    out.append(f)
                }
                return .and(out)
            case .or(let operands):
                var out: [QueryExpression] = []
                for o in operands {
                    guard let f = fill(o) else { return nil }
                    out.append(f)
                }
                return .or(out)
            case .not(let o): return fill(o).map { .not($0) }
            case .negate(let o): return fill(o).map { .negate($0) }
            case .conditional(let a, let b, let c):
                guard let a = fill(a), let b = fill(b), let c = fill(c) else { return nil }
                return .conditional(a, b, c)
            case .in(let needle, let list):
                guard let needle = fill(needle) else { return nil }
                var out: [PGValue] = []
                for v in list {
                    if v.foldsTranslation {
                        out.append(v)
                    } else {
                        guard let taken = take() else { return nil }
                        out.append(taken)
                    }
                }
                return .in(needle, out)
            }
        }
        guard let filled = fill(self), next == values.count else { return nil }
        return filled
    }
}
