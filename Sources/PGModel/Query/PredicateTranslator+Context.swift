import Foundation
@_spi(PGModelInternals) import PGModelCore

/// A `PredicateExpressions` node that has an IR form. Conformances are conditional where the meaning
/// depends on the operand types; dispatch casts to `any IRConvertibleExpression` at run time, so an
/// expression type without a conformance is reported instead of mistranslated.
protocol IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression
}

/// What translating one predicate needs to know: which variables denote the fetched model, how to name its
/// key paths, and which entity to name in errors.
struct TranslationContext {
    let entityName: String
    let keyPathName: (AnyKeyPath) -> String?
    /// Variables bound to the fetched model when it is not a `PersistentModel` (rows described only by
    /// `keyPathName`); `KeyPath` nodes on them become `.key(name)`.
    var rootVariables: Set<PredicateExpressions.VariableID>
    /// Variables that denote a model: the fetched one, one reached through to-one relationships or a cast
    /// (`OptionalFlatMap`'s variable), or an element of a to-many relationship inside a closure.
    var modelVariables: [PredicateExpressions.VariableID: ModelReference] = [:]
    /// Variables bound to a to-many relationship (`$0.tracks?.count` on an optional to-many).
    var toManyVariables: [PredicateExpressions.VariableID: ToManyReference] = [:]
    /// Variables bound to a Codable document (`$0.location` unwrapped by `?.`): their key paths are fields.
    var documentVariables: [PredicateExpressions.VariableID: QueryExpression] = [:]
    /// The closure being translated: 0 for the predicate itself, one more inside each `contains(where:)`,
    /// `allSatisfy` or `filter` over a relationship, whose keys are the destination entity's.
    var scope = 0

    init(entityName: String, keyPathName: @escaping (AnyKeyPath) -> String?,
         rootVariables: Set<PredicateExpressions.VariableID>) {
        self.entityName = entityName
        self.keyPathName = keyPathName
        self.rootVariables = rootVariables
    }

    /// The IR of `expression`, or `unsupportedPredicate` naming its type.
    mutating func translate(_ expression: any PredicateExpression) throws -> QueryExpression {
        guard let convertible = expression as? any IRConvertibleExpression else {
            throw unsupported(expression)
        }
        return try convertible.queryExpression(&self)
    }

    /// "PGModel cannot translate `PredicateExpressions.Filter` in a predicate on Trip[: detail]".
    func unsupported(_ expression: Any, _ detail: String? = nil) -> PGModelError {
        unsupported(construct: "`\(Self.expressionName(expression))`", detail)
    }

    /// "PGModel cannot translate <construct> in a predicate on Trip[: detail]".
    func unsupported(construct: String, _ detail: String? = nil, keyPath: AnyKeyPath? = nil) -> PGModelError {
        var message = "PGModel cannot translate \(construct) in a predicate on \(entityName)"
        if let detail { message += ": \(detail)" }
        return PGModelError(.unsupportedPredicate, message, model: entityName,
                            keyPath: keyPath.flatMap(Self.keyPathLiteral))
    }

    /// `PredicateExpressions.SequenceContainsWhere` for any specialization: generic arguments are noise in a
    /// message and can be very long.
    static func expressionName(_ expression: Any) -> String {
        var name = String(reflecting: type(of: expression))
        if let generic = name.firstIndex(of: "<") { name = String(name[..<generic]) }
        if let range = name.range(of: "PredicateExpressions.") { return String(name[range.lowerBound...]) }
        // Drop the module prefix of anything else.
        if let dot = name.firstIndex(of: ".") { return String(name[name.index(after: dot)...]) }
        return name
    }

    /// "the key path `\Trip.name`", or "a key path from Trip to String" when Swift can only describe it by its
    /// accessor's address (computed properties, which include every `@Model` property): addresses are noise.
    static func keyPathDescription(_ keyPath: AnyKeyPath) -> String {
        if let literal = keyPathLiteral(keyPath) { return "the key path `\(literal)`" }
        return "a key path from \(type(of: keyPath).rootType) to \(type(of: keyPath).valueType)"
    }

    /// `\Trip.name`, when the key path's description is one.
    static func keyPathLiteral(_ keyPath: AnyKeyPath) -> String? {
        let text = "\(keyPath)"
        return text.contains("<computed") ? nil : text
    }
}
