import Foundation
@_spi(PGModelInternals) import PGModelCore

// Relationships and inheritance: optional chaining through to-one relationships (`$0.album?.title`), casts and
// type checks against model subclasses (`$0 is PersonalTrip`, `$0 as? BusinessTrip`), and to-many
// relationships folded into aggregates (`$0.tracks.count`, `contains(where:)`, `allSatisfy`, `filter`).
//
// Nil handling follows Swift's evaluation: a dotted key through a missing relationship is NULL, which the IR's
// equality treats as `nil` (`$0.album?.title != "X"` is true without an album); anything else computed from an
// unwrapped model is guarded by the model's presence, so `if let a = $0.album { … } else { false }` is the
// else-branch for rows without an album, exactly as `Predicate.evaluate` decides.

/// A model an expression denotes: the fetched one, or one reached from it through to-one relationships.
struct ModelReference {
    /// The model's static class (after casts).
    var type: any PersistentModel.Type
    /// Relationship names from the scope's entity (empty for the scope's model itself).
    var path: [String]
    /// The closure the reference belongs to (``TranslationContext/scope``).
    var scope: Int
    /// Conditions under which a cast model exists (`.isKind("BusinessTrip")` for `$0 as? BusinessTrip`).
    var guards: [QueryExpression] = []

    /// The IR key of `name` on this model.
    func key(_ name: String) -> String { (path + [name]).joined(separator: ".") }

    /// When the model exists: its cast guards and, past a relationship, a related row; `nil` when always.
    var presence: QueryExpression? {
        var conditions = guards
        if !path.isEmpty { conditions.append(.compare(.notEqual, .key(path.joined(separator: ".")), .value(.null))) }
        return conditions.isEmpty ? nil : QueryExpression.folding(and: conditions)
    }
}

/// A to-many relationship an expression denotes, possibly filtered (`$0.tracks.filter { … }`).
struct ToManyReference {
    /// The relationship's key path from the scope's entity (`tracks`, `album.tracks`).
    var relationship: String
    var destination: any PersistentModel.Type
    /// The owning model's cast guards.
    var guards: [QueryExpression]
    /// `filter` conditions on the related models, over the destination's keys.
    var predicate: QueryExpression?

    func aggregate(_ function: Aggregate.Function, predicate extra: QueryExpression? = nil) -> QueryExpression {
        let conditions = [predicate, extra].compactMap { $0 }
        return .aggregate(Aggregate(function, relationship: relationship,
                                    predicate: conditions.isEmpty ? nil : QueryExpression.folding(and: conditions)))
    }
}

/// An expression that may denote a model rather than a value.
protocol ModelReferenceExpression {
    func modelReference(_ context: inout TranslationContext) throws -> ModelReference?
}

/// An expression that may denote a to-many relationship.
protocol ToManyReferenceExpression {
    func toManyReference(_ context: inout TranslationContext) throws -> ToManyReference?
}

extension TranslationContext {
    /// The model `expression` denotes, or `nil` when it denotes a value.
    mutating func modelReference(_ expression: any PredicateExpression) throws -> ModelReference? {
        guard let reference = expression as? any ModelReferenceExpression else { return nil }
        return try reference.modelReference(&self)
    }

    /// The to-many relationship `expression` denotes, or `nil`.
    mutating func toManyReference(_ expression: any PredicateExpression) throws -> ToManyReference? {
        guard let reference = expression as? any ToManyReferenceExpression else { return nil }
        return try reference.toManyReference(&self)
    }

    /// The stored property `keyPath` names on `model`'s class, or `unsupportedPredicate`.
    func property(_ keyPath: AnyKeyPath, of model: ModelReference) throws -> Schema.PropertyMetadata {
        let entity = ModelGraph.entity(for: model.type)
        guard let property = entity.property(for: keyPath) else {
            throw unsupported(
                construct: Self.keyPathDescription(keyPath),
                "only stored attributes and relationships of \(entity.name) can be used (not computed or transient properties)",
                keyPath: keyPath)
        }
        return property
    }

    /// The reference a variable denotes, checked to belong to the closure being translated.
    func reference(of variable: PredicateExpressions.VariableID, _ expression: Any) throws -> ModelReference? {
        guard let reference = modelVariables[variable] else { return nil }
        try checkScope(reference.scope, expression)
        return reference
    }

    func checkScope(_ scope: Int, _ expression: Any) throws {
        guard scope == self.scope else {
            throw unsupported(
                construct: "a reference to an enclosing closure's model",
                "inside `contains(where:)`, `allSatisfy` or `filter` over a relationship only the related model (`$0`) and captured values can be used")
        }
    }

    /// Translates `body` as a closure over the related models of `relationship`, `variable` being one of them.
    mutating func inRelatedScope(
        _ variable: PredicateExpressions.VariableID, of relationship: ToManyReference,
        _ body: (inout TranslationContext) throws -> QueryExpression
    ) throws -> QueryExpression {
        scope += 1
        defer { scope -= 1 }
        modelVariables[variable] = ModelReference(type: relationship.destination, path: [], scope: scope)
        return try body(&self)
    }

    /// A related model as a value: its id (`$0.album == album`, `$0.album == nil`).
    func identity(of model: ModelReference, _ expression: Any) throws -> QueryExpression {
        guard !model.path.isEmpty, model.guards.isEmpty else {
            // Comparing the fetched model itself (`$0 == trip`) needs identity comparison, which the IR lacks.
            throw unsupported(expression, "a model or collection element can only be used through one of its stored attributes")
        }
        return .key(model.path.joined(separator: "."))
    }

    /// The IR of a value read from a model reference through `keyPath`.
    func member(_ keyPath: AnyKeyPath, of model: ModelReference) throws -> QueryExpression {
        let property = try property(keyPath, of: model)
        if let relationship = property.relationship, relationship.isToMany {
            throw unsupported(
                construct: Self.keyPathDescription(keyPath),
                "the to-many relationship `\(property.name)` can only be used through `count`, `isEmpty`, `contains(where:)`, `allSatisfy` or `filter`",
                keyPath: keyPath)
        }
        // An attribute, or a to-one relationship standing for the related model's id.
        return .key(model.key(property.name))
    }
}

// MARK: Models

extension PredicateExpressions.Variable: ModelReferenceExpression {
    func modelReference(_ context: inout TranslationContext) throws -> ModelReference? {
        try context.reference(of: key, self)
    }
}

extension PredicateExpressions.Variable: ToManyReferenceExpression {
    func toManyReference(_ context: inout TranslationContext) throws -> ToManyReference? {
        context.toManyVariables[key]
    }
}

extension PredicateExpressions.KeyPath: ModelReferenceExpression {
    func modelReference(_ context: inout TranslationContext) throws -> ModelReference? {
        guard let owner = try context.modelReference(root) else { return nil }
        let property = try context.property(keyPath, of: owner)
        guard let relationship = property.relationship, !relationship.isToMany else { return nil }
        var related = owner
        related.path.append(property.name)
        related.type = relationship.destination
        return related
    }
}

extension PredicateExpressions.KeyPath: ToManyReferenceExpression {
    func toManyReference(_ context: inout TranslationContext) throws -> ToManyReference? {
        // `$0.tracks.first` and the like: a member of a to-many relationship other than count and isEmpty.
        if collectionKind == .other, try context.toManyReference(root) != nil {
            throw context.unsupported(
                construct: TranslationContext.keyPathDescription(keyPath),
                "a to-many relationship can only be used through `count`, `isEmpty`, `contains(where:)`, `allSatisfy` or `filter`",
                keyPath: keyPath)
        }
        guard let owner = try context.modelReference(root) else { return nil }
        let property = try context.property(keyPath, of: owner)
        guard let relationship = property.relationship, relationship.isToMany else { return nil }
        return ToManyReference(relationship: owner.key(property.name), destination: relationship.destination,
                               guards: owner.guards)
    }
}

extension PredicateExpressions.ForcedUnwrap: ModelReferenceExpression {
    func modelReference(_ context: inout TranslationContext) throws -> ModelReference? {
        try context.modelReference(inner)
    }
}

extension PredicateExpressions.ForcedUnwrap: IRConvertibleExpression {
    // `$0.album!.title`: Swift throws for a track without an album; SQL finds no such row instead. A forced
    // unwrap of a value (`$0.genre!`) has no IR form.
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard let model = try context.modelReference(inner) else {
            throw context.unsupported(self, "only a to-one relationship can be force-unwrapped")
        }
        return try context.identity(of: model, self)
    }
}

extension PredicateExpressions.ConditionalCast: ModelReferenceExpression {
    func modelReference(_ context: inout TranslationContext) throws -> ModelReference? {
        try context.cast(input, to: Desired.self, self)
    }
}

extension PredicateExpressions.ForceCast: ModelReferenceExpression {
    // `($0 as! BusinessTrip).perdiem`: rows of other classes have no such value (NULL) instead of throwing.
    func modelReference(_ context: inout TranslationContext) throws -> ModelReference? {
        guard var model = try context.cast(input, to: Desired.self, self) else { return nil }
        model.guards = []
        return model
    }
}

extension PredicateExpressions.TypeCheck: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard let model = try context.modelReference(input) else {
            throw context.unsupported(self, "only the fetched model's class can be tested with `is`")
        }
        guard let desired = Desired.self as? any PersistentModel.Type else {
            throw context.unsupported(self, "\(Desired.self) is not a model class")
        }
        if model.type is Desired.Type { return .true }
        guard model.path.isEmpty, model.scope == 0 else {
            throw context.unsupported(self, "only the fetched model's class can be tested with `is`, not a related model's")
        }
        return .isKind(desired._$entityName)
    }
}

extension TranslationContext {
    /// `input as? Desired` for a model: the same row seen as the subclass, guarded by `.isKind`.
    mutating func cast(_ input: any PredicateExpression, to desired: Any.Type, _ expression: Any) throws -> ModelReference? {
        guard var model = try modelReference(input) else { return nil }
        guard let subclass = desired as? any PersistentModel.Type else {
            throw unsupported(expression, "\(desired) is not a model class")
        }
        if isSubclass(model.type, of: subclass) { return model }
        guard isSubclass(subclass, of: model.type) else {
            throw unsupported(expression, "\(subclass) is not a subclass of \(model.type)")
        }
        guard model.path.isEmpty, scope == 0 else {
            throw unsupported(expression, "only the fetched model can be cast to a subclass, not a related model")
        }
        model.type = subclass
        model.guards.append(.isKind(subclass._$entityName))
        return model
    }

    private func isSubclass(_ type: any PersistentModel.Type, of other: any PersistentModel.Type) -> Bool {
        var current: (any PersistentModel.Type)? = type
        while let candidate = current {
            if candidate == other { return true }
            current = candidate._$superentity
        }
        return false
    }
}

// MARK: Optional chaining

/// `OptionalFlatMap` split into the wrapped model's presence and the transform, so that `??` can supply the
/// value for a missing model directly.
protocol OptionalFlatMapParts {
    /// `(presence, transform, transform is optional)`; `presence` is `nil` when the transform needs no guard.
    func parts(_ context: inout TranslationContext) throws -> (QueryExpression?, QueryExpression, Bool)
}

extension PredicateExpressions.OptionalFlatMap: ModelReferenceExpression {
    func modelReference(_ context: inout TranslationContext) throws -> ModelReference? {
        guard let model = try context.modelReference(wrapped) else { return nil }
        context.modelVariables[variable.key] = model
        return try context.modelReference(transform)
    }
}

extension PredicateExpressions.OptionalFlatMap: ToManyReferenceExpression {
    func toManyReference(_ context: inout TranslationContext) throws -> ToManyReference? {
        guard let model = try context.modelReference(wrapped) else { return nil }
        context.modelVariables[variable.key] = model
        return try context.toManyReference(transform)
    }
}

extension PredicateExpressions.OptionalFlatMap: OptionalFlatMapParts {
    func parts(_ context: inout TranslationContext) throws -> (QueryExpression?, QueryExpression, Bool) {
        let transformIsOptional = RHS.Output.self is any OptionalValue.Type
        if let model = try context.modelReference(wrapped) {
            context.modelVariables[variable.key] = model
            let value = try context.translate(transform)
            // A key through the unwrapped model is NULL without it: no guard needed.
            if model.guards.isEmpty, case .key(let key) = value,
               key.hasPrefix(model.path.joined(separator: ".") + ".") {
                return (nil, value, true)
            }
            return (model.presence, value, transformIsOptional)
        }
        // `$0.location?.latitude`: a field of an optional Codable document, NULL without the document.
        if let document = try? context.translate(wrapped), document.isDocument {
            context.documentVariables[variable.key] = document
            return (nil, try context.translate(transform), true)
        }
        // `$0.tracks?.count` on an optional to-many: PGModel stores no difference between nil and empty.
        if let relationship = try context.toManyReference(wrapped) {
            context.toManyVariables[variable.key] = relationship
            return (nil, try context.translate(transform), transformIsOptional)
        }
        throw context.unsupported(self, "only optional to-one relationships and model casts can be unwrapped")
    }
}

extension PredicateExpressions.OptionalFlatMap: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        let (presence, value, _) = try parts(&context)
        guard let presence else { return value }
        if case .value(.bool(let b)) = presence { return b ? value : .value(.null) }
        return .conditional(presence, value, .value(.null))
    }
}

extension PredicateExpressions.ConditionalCast: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        if try context.modelReference(input) != nil {
            throw context.unsupported(self, "a cast model can only be used through one of its stored attributes")
        }
        throw context.unsupported(self, "only the fetched model can be cast, to one of its subclasses")
    }
}

// MARK: To-many relationships

extension PredicateExpressions.Filter: ToManyReferenceExpression {
    func toManyReference(_ context: inout TranslationContext) throws -> ToManyReference? {
        guard var relationship = try context.toManyReference(sequence) else { return nil }
        let condition = try context.inRelatedScope(variable.key, of: relationship) { try $0.translate(filter) }
        relationship.predicate = QueryExpression.folding(and: [relationship.predicate, condition].compactMap { $0 })
        return relationship
    }
}

extension PredicateExpressions.SequenceContainsWhere: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard let relationship = try context.toManyReference(sequence) else {
            throw context.unsupported(self, "only a to-many relationship can be searched with contains(where:)")
        }
        let condition = try context.inRelatedScope(variable.key, of: relationship) { try $0.translate(test) }
        return relationship.aggregate(.any, predicate: condition)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard var relationship = try context.toManyReference(sequence) else {
            throw context.unsupported(self, "only a to-many relationship can be tested with allSatisfy")
        }
        let condition = try context.inRelatedScope(variable.key, of: relationship) { try $0.translate(test) }
        // Every filtered model satisfies the test: every model fails the filter or satisfies the test.
        let filter = relationship.predicate
        relationship.predicate = nil
        let combined = filter.map { QueryExpression.folding(or: [.not($0), condition]) } ?? condition
        return relationship.aggregate(.all, predicate: combined)
    }
}

extension PredicateExpressions.Filter: IRConvertibleExpression {
    func queryExpression(_ context: inout TranslationContext) throws -> QueryExpression {
        guard try context.toManyReference(self) != nil else {
            throw context.unsupported(self, "only a to-many relationship can be filtered")
        }
        throw context.unsupported(self, "a filtered relationship can only be used through `count`, `isEmpty`, `contains(where:)` or `allSatisfy`")
    }
}

extension TranslationContext {
    /// `count`, `isEmpty` and the like on a to-many relationship; `nil` when `expression` is not one.
    mutating func toManyProperty(_ root: any PredicateExpression, kind: CollectionKeyPathKind?,
                                 keyPath: AnyKeyPath) throws -> QueryExpression? {
        guard let relationship = try toManyReference(root) else { return nil }
        switch kind {
        case .count: return relationship.aggregate(.count)
        case .isEmpty: return .not(relationship.aggregate(.any))
        default:
            throw unsupported(
                construct: Self.keyPathDescription(keyPath),
                "a to-many relationship can only be used through `count`, `isEmpty`, `contains(where:)`, `allSatisfy` or `filter`",
                keyPath: keyPath)
        }
    }
}

/// The collection properties a to-many relationship supports.
enum CollectionKeyPathKind { case count, isEmpty, other }

extension PredicateExpressions.KeyPath {
    var collectionKind: CollectionKeyPathKind? {
        switch kind {
        case .collectionCount: return .count
        case .collectionIsEmpty: return .isEmpty
        case .none: return nil
        default: return .other
        }
    }
}
