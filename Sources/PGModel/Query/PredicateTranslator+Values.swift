import Foundation
@_spi(PGModelInternals) import PGModelCore

// Leaves: key paths on the fetched model, captured values, and membership tests against captured collections.

extension PredicateExpressions.KeyPath: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        // `$0.tags.count`, `$0.tags.isEmpty`: an array attribute's length (a to-many relationship's is below).
        if let kind = collectionKind, kind != .other, !isCapturedValue,
           let collection = Root.Output.self as? any Collection.Type, !holdsModels(collection), !(Root.Output.self is any StringProtocol.Type),
           case .key(let name) = try context.translate(root) {
            let count = QueryExpression.arrayFold(.count, .key(name))
            return kind == .count ? count : .compare(.equal, count, .value(.int(0)))
        }
        // `$0.title`, `$0.album?.title` (through OptionalFlatMap's variable), `$0.album` (the related id).
        if let model = try context.modelReference(root) {
            return try context.member(keyPath, of: model)
        }
        // `$0.tracks.count`, `$0.tracks.filter { … }.isEmpty`.
        if let aggregate = try context.toManyProperty(root, kind: collectionKind, keyPath: keyPath) {
            return aggregate
        }
        if let variable = root as? any PredicateVariable, context.rootVariables.contains(variable.variableID) {
            guard let name = context.keyPathName(keyPath) else {
                throw context.unsupported(
                    construct: TranslationContext.keyPathDescription(keyPath),
                    "only stored attributes of \(context.entityName) can be used (not relationships, computed or transient properties)",
                    keyPath: keyPath)
            }
            return .key(name)
        }
        // `$0.location.latitude`, `loc.latitude` after `$0.location?`: a field inside a Codable document.
        if let variable = root as? any PredicateVariable, let document = context.documentVariables[variable.variableID] {
            return try context.field(keyPath, of: document, self)
        }
        if !isCapturedValue, let document = try? context.translate(root), document.isDocument {
            return try context.field(keyPath, of: document, self)
        }
        // `searchText.isEmpty`, `filter.minimum`: a property of a captured value is itself a captured value.
        if isCapturedValue {
            return .value(try context.capturedValue(try evaluate(PredicateBindings()), of: self))
        }
        // An untranslatable root (`$0.tags.filter { … }.count`) is the construct to report, not the property.
        _ = try context.translate(root)
        throw context.unsupported(
            construct: TranslationContext.keyPathDescription(keyPath),
            "only a stored attribute of \(context.entityName) itself can be used, not a property of another expression",
            keyPath: keyPath)
    }
}

extension PredicateExpressions.Value: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        .value(try context.capturedValue(value, of: self))
    }
}

extension PredicateExpressions.Variable: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        // A related model reached by optional binding (`if let a = $0.album { a == album }`) is its id.
        if let model = try context.reference(of: key, self) {
            return try context.identity(of: model, self)
        }
        // Comparing models themselves (`$0 == trip`) needs identity comparison, which the IR lacks.
        throw context.unsupported(self, "a model or collection element can only be used through one of its stored attributes")
    }
}

extension PredicateExpressions.SequenceContains: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        // `$0.tags.contains("x")`: an array attribute; the renderer checks that it is one.
        if !((sequence as? any CapturedValueExpression)?.isCapturedValue ?? false),
           case .key(let name)? = try? context.translate(sequence) {
            return .arrayContains(.key(name), try context.translate(element))
        }
        guard let captured = sequence as? any CapturedValueExpression, captured.isCapturedValue else {
            throw context.unsupported(self, "only a captured array (`names.contains($0.name)`) can be searched")
        }
        let elements = try sequence.evaluate(PredicateBindings())
        // A captured range is a bounds check, not a list: `(0..<1_000_000).contains($0.count)` must not
        // become a million bind parameters.
        if let range = elements as? any CapturedRange {
            return try context.rangeCheck(try context.translate(element), range, of: self)
        }
        var values: [PGValue] = []
        var seen = Set<PGValue>()
        var matchesNil = false
        for item in elements {
            let value = try context.capturedValue(item, of: self)
            if value.isNull { matchesNil = true } else if seen.insert(value).inserted { values.append(value) }
        }
        // A captured Set iterates in a per-process hash order: sort it, so the same predicate renders
        // the same SQL and binds in every run. An array keeps the caller's order.
        if !(elements is any RandomAccessCollection) {
            values.sort { String(describing: $0) < String(describing: $1) }
        }
        let needle = try context.translate(element)
        var alternatives: [QueryExpression] = []
        if !values.isEmpty { alternatives.append(.in(needle, values)) }
        // SQL's `x IN (NULL)` never matches; Swift's `[nil].contains(x)` does when x is nil.
        if matchesNil { alternatives.append(.compare(.equal, needle, .value(.null))) }
        return QueryExpression.folding(or: alternatives)
    }
}

extension PredicateExpressions.RangeExpressionContains: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        let needle = try context.translate(element)
        if let bounds = range as? any RangeBoundsExpression {
            let (lower, upper, closed) = try bounds.bounds(&context)
            return QueryExpression.folding(and: [
                .compare(.greaterOrEqual, needle, lower),
                .compare(closed ? .lessOrEqual : .less, needle, upper),
            ])
        }
        guard let captured = range as? any CapturedValueExpression, captured.isCapturedValue,
              let value = try range.evaluate(PredicateBindings()) as? any CapturedRange else {
            throw context.unsupported(self, "only a literal or captured range can be tested")
        }
        return try context.rangeCheck(needle, value, of: self)
    }
}

extension PredicateExpressions.Range: RangeBoundsExpression {
    func bounds(_ context: inout TranslationContext) throws -> (QueryExpression, QueryExpression, Bool) {
        (try context.translate(lower), try context.translate(upper), false)
    }
}

extension PredicateExpressions.ClosedRange: RangeBoundsExpression {
    func bounds(_ context: inout TranslationContext) throws -> (QueryExpression, QueryExpression, Bool) {
        (try context.translate(lower), try context.translate(upper), true)
    }
}

/// `a..<b` or `a...b` written inside the predicate.
protocol RangeBoundsExpression {
    /// Lower bound, upper bound, and whether the upper bound is included.
    func bounds(_ context: inout TranslationContext) throws -> (QueryExpression, QueryExpression, Bool)
}

/// A `Variable` of any type, so key path roots can be matched against the fetched model's variable.
protocol PredicateVariable {
    var variableID: PredicateExpressions.VariableID { get }
}

extension PredicateExpressions.Variable: PredicateVariable {
    var variableID: PredicateExpressions.VariableID { key }
}

/// An expression that depends on no variable: a captured value, or a chain of properties of one. Such
/// expressions are evaluated once at translation time; nothing else is, so translation never runs
/// arithmetic that could trap.
protocol CapturedValueExpression {
    var isCapturedValue: Bool { get }
}

extension PredicateExpressions.Value: CapturedValueExpression {
    var isCapturedValue: Bool { true }
}

extension PredicateExpressions.KeyPath: CapturedValueExpression {
    var isCapturedValue: Bool { (root as? any CapturedValueExpression)?.isCapturedValue ?? false }
}

/// A Swift range type whose bounds can be bound as parameters.
protocol CapturedRange {
    var lowerBoundValue: Any? { get }
    var upperBoundValue: Any? { get }
    var includesUpperBound: Bool { get }
}

extension Range: CapturedRange {
    var lowerBoundValue: Any? { lowerBound }
    var upperBoundValue: Any? { upperBound }
    var includesUpperBound: Bool { false }
}

extension ClosedRange: CapturedRange {
    var lowerBoundValue: Any? { lowerBound }
    var upperBoundValue: Any? { upperBound }
    var includesUpperBound: Bool { true }
}

extension PartialRangeFrom: CapturedRange {
    var lowerBoundValue: Any? { lowerBound }
    var upperBoundValue: Any? { nil }
    var includesUpperBound: Bool { false }
}

extension PartialRangeThrough: CapturedRange {
    var lowerBoundValue: Any? { nil }
    var upperBoundValue: Any? { upperBound }
    var includesUpperBound: Bool { true }
}

extension PartialRangeUpTo: CapturedRange {
    var lowerBoundValue: Any? { nil }
    var upperBoundValue: Any? { upperBound }
    var includesUpperBound: Bool { false }
}

/// Lets `capturedValue` see through `Optional` without Swift's implicit unwrapping of `Any` casts.
protocol OptionalValue {
    var wrappedValue: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedValue: Any? {
        switch self {
        case .some(let wrapped): return wrapped
        case .none: return nil
        }
    }
}

extension TranslationContext {
    /// The stored form of a captured value, exactly as ``PersistableAttribute`` and the raw-value codecs store
    /// attributes, so a captured value and a column compare like for like.
    func capturedValue(_ value: Any, of expression: Any) throws -> PGValue {
        guard let stored = Self.storedForm(of: value) else {
            throw unsupported(expression, "a captured value of type \(type(of: value)) is not a stored attribute type")
        }
        return stored
    }

    static func storedForm(of value: Any) -> PGValue? {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrappedValue else { return .null }
            return storedForm(of: wrapped)
        }
        if let attribute = value as? any PersistableAttribute { return attribute.pgValue }
        // A captured model compares with a to-one relationship by identity.
        if let model = value as? any PersistentModel { return .uuid(model._$backingData.id) }
        if let enumValue = value as? any RawRepresentable { return storedForm(of: enumValue.rawValue) }
        return nil
    }

    /// `needle` within a captured range's bounds.
    func rangeCheck(_ needle: QueryExpression, _ range: any CapturedRange, of expression: Any) throws -> QueryExpression {
        var checks: [QueryExpression] = []
        if let lower = range.lowerBoundValue {
            checks.append(.compare(.greaterOrEqual, needle, .value(try capturedValue(lower, of: expression))))
        }
        if let upper = range.upperBoundValue {
            let op: ComparisonOperator = range.includesUpperBound ? .lessOrEqual : .less
            checks.append(.compare(op, needle, .value(try capturedValue(upper, of: expression))))
        }
        return QueryExpression.folding(and: checks)
    }
}

extension QueryExpression {
    /// A key or field that may hold a Codable document (the renderer checks the attribute's type).
    var isDocument: Bool {
        switch self {
        case .key, .field: return true
        default: return false
        }
    }
}

extension TranslationContext {
    /// `document.<field>` for a stored property of a Codable struct: the field name comes from the key
    /// path (a stored property's description names it), the comparison type from its value type.
    func field(_ keyPath: AnyKeyPath, of document: QueryExpression, _ expression: Any) throws -> QueryExpression {
        let description = "\(keyPath)"
        guard let name = description.split(separator: ".").last.map(String.init),
              !name.contains("<"), !name.contains("?"), !name.contains("!"),
              Naming.isValidIdentifier(name) else {
            throw unsupported(construct: Self.keyPathDescription(keyPath),
                              "only a stored attribute, or a stored field of a Codable attribute, can be used", keyPath: keyPath)
        }
        let type = Self.fieldType(Swift.type(of: keyPath).valueType)
        switch document {
        case .field(let base, let path, _): return .field(base, path + [name], type)
        default: return .field(document, [name], type)
        }
    }

    /// How a field's JSON text compares: as the field's Swift type.
    static func fieldType(_ type: Any.Type) -> AttributeType {
        if let optional = type as? any _OptionalMarker.Type { return fieldType(optional.wrappedType) }
        if let persistable = type as? any PersistableAttribute.Type {
            switch persistable.attributeType {
            case .int16, .int32, .int64: return .int64
            case .float, .double: return .double
            case .bool: return .bool
            case .decimal: return .decimal
            case .string, .url: return .string
            default: return .json
            }
        }
        if let raw = type as? any RawRepresentable.Type { return fieldType(raw.rawValueType) }
        return .json
    }
}

extension RawRepresentable {
    static var rawValueType: Any.Type { RawValue.self }
}

extension PredicateExpressions.CollectionIndexSubscript: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        // `$0.tags[0]`: an array attribute at a captured or literal index.
        guard case .key(let name) = try context.translate(wrapped) else {
            throw context.unsupported(self, "only a stored array attribute can be subscripted (`$0.tags[0]`)")
        }
        guard let captured = index as? any CapturedValueExpression, captured.isCapturedValue,
              let position = try index.evaluate(PredicateBindings()) as? Int else {
            throw context.unsupported(self, "an array subscript needs a literal or captured Int index")
        }
        return .arrayElement(.key(name), position)
    }
}

extension PredicateExpressions.SequenceMaximum: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard case .key(let name) = try context.translate(elements) else {
            throw context.unsupported(self, "max() folds a stored array attribute (`$0.scores.max()`); for a to-many relationship's values, compare with contains(where:) or allSatisfy")
        }
        return .arrayFold(.max, .key(name))
    }
}

extension PredicateExpressions.SequenceMinimum: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard case .key(let name) = try context.translate(elements) else {
            throw context.unsupported(self, "min() folds a stored array attribute (`$0.scores.min()`); for a to-many relationship's values, compare with contains(where:) or allSatisfy")
        }
        return .arrayFold(.min, .key(name))
    }
}

/// Whether a collection type's elements are models (a to-many relationship) rather than stored values.
private func holdsModels<C: Collection>(_ type: C.Type) -> Bool {
    C.Element.self is any PersistentModel.Type
}
